import * as webhooks from '../domain/webhooks/index.ts';
import { route, listEnvelope } from './route.ts';
import { deletedObject, deliveryAttemptObject, idParam, listOf, webhookEndpointObject } from './schemas.ts';

const tag = 'Webhook endpoints';
const attemptList = listOf(deliveryAttemptObject, 'DeliveryAttemptList');

export const webhookRoutes = [
  route({
    method: 'post', path: '/v1/webhook-endpoints', operationId: 'createWebhookEndpoint', tag, summary: 'Register a webhook endpoint',
    example: { url: 'https://shop.example.com/webhooks/billing', events: ['payment.succeeded', 'refund.succeeded'], description: 'Order fulfilment' },
    description: 'The response carries `secret` (whsec_…), shown only here: verify deliveries with it (Standard Webhooks).',
    body: webhooks.endpointCreate,
    response: { status: 201, description: 'The endpoint with its secret.', schema: webhookEndpointObject },
    handler: async (ctx, { body }) => webhooks.endpointToJSON(await webhooks.createEndpoint(ctx, body), true),
  }),
  route({
    method: 'get', path: '/v1/webhook-endpoints/{id}', operationId: 'getWebhookEndpoint', tag, summary: 'Retrieve a webhook endpoint',
    params: idParam,
    response: { status: 200, description: 'The endpoint (no secret).', schema: webhookEndpointObject },
    handler: async (ctx, { params }) => webhooks.endpointToJSON(await webhooks.getEndpoint(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/webhook-endpoints', operationId: 'listWebhookEndpoints', tag, summary: 'List webhook endpoints, newest first',
    query: webhooks.endpointListQuery,
    response: { status: 200, description: 'A page of endpoints.', schema: listOf(webhookEndpointObject, 'WebhookEndpointList') },
    handler: async (ctx, { query }) => listEnvelope(await webhooks.listEndpoints(ctx, query), (e) => webhooks.endpointToJSON(e)),
  }),
  route({
    method: 'patch', path: '/v1/webhook-endpoints/{id}', operationId: 'updateWebhookEndpoint', tag, summary: 'Change url, events, description or status',
    example: { events: ['payment.succeeded', 'payment.failed'] },
    params: idParam, body: webhooks.endpointUpdate,
    response: { status: 200, description: 'The endpoint.', schema: webhookEndpointObject },
    handler: async (ctx, { params, body }) => webhooks.endpointToJSON(await webhooks.updateEndpoint(ctx, params.id, body)),
  }),
  route({
    method: 'delete', path: '/v1/webhook-endpoints/{id}', operationId: 'deleteWebhookEndpoint', tag, summary: 'Delete an endpoint: pending retries are cancelled at once',
    params: idParam,
    response: { status: 200, description: 'The deleted endpoint stub.', schema: deletedObject },
    handler: async (ctx, { params }) => {
      const e = await webhooks.deleteEndpoint(ctx, params.id);
      return { id: e.id, object: 'webhook_endpoint', deleted: true as const };
    },
  }),
  route({
    method: 'post', path: '/v1/webhook-endpoints/{id}/rotate-secret', operationId: 'rotateWebhookEndpointSecret', tag,
    summary: 'Issue a new secret; the old one keeps signing alongside for 24 h',
    params: idParam,
    response: { status: 200, description: 'The endpoint with its new secret.', schema: webhookEndpointObject },
    handler: async (ctx, { params }) => webhooks.endpointToJSON(await webhooks.rotateSecret(ctx, params.id), true),
  }),
  route({
    method: 'get', path: '/v1/webhook-endpoints/{id}/delivery-attempts', operationId: 'listWebhookEndpointDeliveryAttempts', tag,
    summary: "The endpoint's delivery attempts, newest first",
    description: 'Every attempt to send an event to this endpoint (any event), a list envelope paginated like every list, optionally filtered by status. An unknown or deleted endpoint is a 404.',
    params: idParam, query: webhooks.endpointAttemptListQuery,
    response: { status: 200, description: 'A page of attempts.', schema: attemptList },
    handler: async (ctx, { params, query }) => listEnvelope(await webhooks.listAttemptsOfEndpoint(ctx, params.id, query), webhooks.attemptToJSON),
  }),
  route({
    method: 'get', path: '/v1/events/{id}/delivery-attempts', operationId: 'listDeliveryAttempts', tag: 'Events',
    summary: "The event's delivery attempts, newest first",
    description: 'A list envelope (paginated like every list), optionally filtered by endpoint_id.',
    params: idParam, query: webhooks.attemptListQuery,
    response: { status: 200, description: 'A page of attempts.', schema: attemptList },
    handler: async (ctx, { params, query }) => listEnvelope(await webhooks.listAttempts(ctx, params.id, query), webhooks.attemptToJSON),
  }),
  route({
    method: 'post', path: '/v1/events/{id}/replay', operationId: 'replayEvent', tag: 'Events',
    summary: 'Deliver the event again, now, to every active endpoint subscribed to its type',
    params: idParam,
    response: { status: 200, description: 'The attempts created (pending).', schema: listOf(deliveryAttemptObject, 'ReplayedAttempts') },
    handler: async (ctx, { params }) => {
      const { attempts } = await webhooks.replayEvent(ctx, params.id);
      return listEnvelope({ data: attempts, hasMore: false, nextCursor: null }, webhooks.attemptToJSON);
    },
  }),
];
