import * as events from '../domain/events/index.ts';
import { builder, connectionComplexity } from './builder.ts';
import { connectionType, listArgs, orNull, toConnection } from './helpers.ts';

export const Event = builder.prismaNode('Event', {
  id: { field: 'id' },
  fields: (t) => ({
    type: t.exposeString('type', { description: 'e.g. customer.created' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    data: t.field({
      type: 'JSON',
      description: '{ object: the record after the change (REST representation), previous_attributes?: changed fields before the change }',
      resolve: (e) => e.data,
    }),
  }),
});

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
      type: t.arg.string({ description: 'Exact type, or a prefix ending in .* (customer.*).' }),
      createdAfter: t.arg({ type: 'DateTime', description: 'Exclusive lower bound on createdAt.' }),
      createdBefore: t.arg({ type: 'DateTime', description: 'Exclusive upper bound on createdAt.' }),
    },
    resolve: async (_, a, { ctx }) => toConnection(await events.listEvents(ctx, listArgs(events.eventListQuery, a))),
  }),
}));
