import * as events from '../domain/events/index.ts';
import { route, listEnvelope } from './route.ts';
import { eventObject, idParam, listOf } from './schemas.ts';

const tag = 'Events';

export const eventRoutes = [
  route({
    method: 'get', path: '/v1/events', operationId: 'listEvents', tag, summary: 'List events, newest first',
    query: events.eventListQuery,
    response: { status: 200, description: 'A page of events.', schema: listOf(eventObject, 'EventList') },
    handler: async (ctx, { query }) => listEnvelope(await events.listEvents(ctx, query), events.eventToJSON),
  }),
  route({
    method: 'get', path: '/v1/events/{id}', operationId: 'getEvent', tag, summary: 'Retrieve an event',
    params: idParam,
    response: { status: 200, description: 'The event.', schema: eventObject },
    handler: async (ctx, { params }) => events.eventToJSON(await events.getEvent(ctx, params.id)),
  }),
];
