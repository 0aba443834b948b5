import * as events from '../domain/events/index.ts';
import { builder, connectionComplexity, nodeKind } from './builder.ts';
import { connectionType, listArgs, orNull, toConnection } from './helpers.ts';

type EventData = { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };

const EventDataType = builder.objectRef<EventData>('EventData').implement({
  description:
    'What changed. `object` is the record after the change exactly as REST and webhooks show it (snake_case); `objectId` fetches the live record with node(id:).',
  fields: (t) => ({
    objectType: t.string({ description: 'e.g. payment, wallet_transaction', resolve: (d) => String(d.object.object ?? '') }),
    objectId: t.id({ resolve: (d) => String(d.object.id ?? '') }),
    object: t.field({ type: 'JSON', resolve: (d) => d.object }),
    previousAttributes: t.field({
      type: 'JSON',
      nullable: true,
      description: 'For updates: the changed fields with their values before the change.',
      resolve: (d) => d.previous_attributes ?? null,
    }),
  }),
});

export const Event = builder.prismaNode('Event', {
  id: { field: 'id' },
  fields: (t) => ({
    type: t.exposeString('type', { description: 'e.g. customer.created' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    data: t.field({ type: EventDataType, resolve: (e) => e.data as EventData }),
  }),
});
nodeKind('event', Event);

export const EventConnection = connectionType(Event, 'Event');

builder.queryFields((t) => ({
  event: t.field({
    type: Event,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, { ctx }) => orNull(events.getEvent(ctx, String(id))),
  }),
  events: t.field({
    type: EventConnection,
    description: 'Events, newest first.',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      type: t.arg.string({ description: 'Exact type, or a prefix ending in .* (customer.*); a type the catalogue does not have, or a prefix of none, is refused (parameter_invalid).' }),
      objectId: t.arg.id({ description: 'Only the events about this record (data.objectId): a customer, a payment, an invoice …' }),
      createdAfter: t.arg({ type: 'DateTime', description: 'Exclusive lower bound on createdAt.' }),
      createdBefore: t.arg({ type: 'DateTime', description: 'Exclusive upper bound on createdAt.' }),
    },
    resolve: async (_, a, { ctx }) => toConnection(await events.listEvents(ctx, listArgs(events.eventListQuery, a))),
  }),
}));
