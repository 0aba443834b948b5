import type { WebhookEndpoint as EndpointRow } from '../generated/prisma/client.ts';
import * as webhooks from '../domain/webhooks/index.ts';
import type { Ctx } from '../platform/context.ts';
import { NotFoundError } from '../platform/errors.ts';
import { builder, connectionComplexity, nodeKind } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, nestedConnection, orNull, toConnection } from './helpers.ts';
import './events.ts';

const WebhookEndpointStatus = builder.enumType('WebhookEndpointStatus', {
  description: 'disabled: no deliveries (set by you, or after 5 days of failures).',
  values: webhooks.ENDPOINT_STATUSES,
});
const DeliveryAttemptStatus = builder.enumType('DeliveryAttemptStatus', { values: webhooks.ATTEMPT_STATUSES });

const WebhookEndpoint = builder.prismaNode('WebhookEndpoint', {
  id: { field: 'id' },
  findUnique: (id) => ({ id, deletedAt: null }),
  fields: (t) => ({
    url: t.exposeString('url'),
    events: t.exposeStringList('events', { description: 'Subscribed event types; empty = all.' }),
    description: t.exposeString('description', { nullable: true }),
    status: t.field({ type: WebhookEndpointStatus, resolve: (e) => e.status as (typeof webhooks.ENDPOINT_STATUSES)[number] }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});
nodeKind('webhook_endpoint', WebhookEndpoint);

const DeliveryAttempt = builder.prismaNode('DeliveryAttempt', {
  id: { field: 'id' },
  fields: (t) => ({
    event: t.relation('event'),
    endpoint: t.relation('endpoint'),
    status: t.field({ type: DeliveryAttemptStatus, resolve: (a) => a.status as (typeof webhooks.ATTEMPT_STATUSES)[number] }),
    attemptNumber: t.exposeInt('attemptNumber'),
    responseStatus: t.exposeInt('responseStatus', { nullable: true }),
    responseBody: t.exposeString('responseBody', { nullable: true }),
    scheduledAt: t.expose('scheduledAt', { type: 'DateTime' }),
    attemptedAt: t.expose('attemptedAt', { type: 'DateTime', nullable: true }),
    nextRetryAt: t.expose('nextRetryAt', { type: 'DateTime', nullable: true }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('delivery_attempt', DeliveryAttempt);

const EndpointConnection = connectionType(WebhookEndpoint, 'WebhookEndpoint');
const AttemptConnection = connectionType(DeliveryAttempt, 'DeliveryAttempt');

builder.prismaObjectField('Event', 'deliveryAttempts', (t) =>
  t.field({
    type: AttemptConnection,
    complexity: connectionComplexity,
    description: 'Delivery attempts of this event, newest first.',
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), endpointId: t.arg.id() },
    resolve: (e, a, gctx) =>
      nestedConnection(gctx, 'Event.deliveryAttempts', e.id, listArgs(webhooks.attemptListQuery, a), webhooks.listAttemptsOfEvents, webhooks.countAttemptsOfEvents),
  }),
);

builder.prismaObjectField('WebhookEndpoint', 'deliveryAttempts', (t) =>
  t.field({
    type: AttemptConnection,
    complexity: connectionComplexity,
    description: 'This endpoint’s delivery attempts (of any event), newest first; `status` keeps one status.',
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), status: t.arg({ type: DeliveryAttemptStatus }) },
    resolve: (e, a, gctx) =>
      nestedConnection(gctx, 'WebhookEndpoint.deliveryAttempts', e.id, listArgs(webhooks.endpointAttemptListQuery, a), webhooks.listAttemptsOfEndpoints, webhooks.countAttemptsOfEndpoints),
  }),
);

builder.queryFields((t) => ({
  webhookEndpoint: t.field({
    type: WebhookEndpoint,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, { ctx }) => orNull(webhooks.getEndpoint(ctx, String(id))),
  }),
  webhookEndpoints: t.field({
    type: EndpointConnection,
    complexity: connectionComplexity,
    description: 'Webhook endpoints, newest first.',
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string() },
    resolve: async (_, a, { ctx }) => toConnection(await webhooks.listEndpoints(ctx, listArgs(webhooks.endpointListQuery, a))),
  }),
}));

/** The endpoint together with its secret: returned once, by create and rotate. */
const WebhookEndpointWithSecret = builder.objectRef<EndpointRow>('WebhookEndpointWithSecret').implement({
  description: 'The endpoint and its signing secret (whsec_…), shown only in this result.',
  fields: (t) => ({
    webhookEndpoint: t.field({ type: WebhookEndpoint, resolve: (e) => e }),
    secret: t.exposeString('secret'),
  }),
});

const CreateWebhookEndpointInput = builder.inputType('CreateWebhookEndpointInput', {
  fields: (t) => ({ url: t.string({ required: true }), events: t.stringList(), description: t.string(), idempotencyKey: t.string() }),
});
const UpdateWebhookEndpointInput = builder.inputType('UpdateWebhookEndpointInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    url: t.string(),
    events: t.stringList(),
    description: t.string(),
    status: t.field({ type: WebhookEndpointStatus }),
    idempotencyKey: t.string(),
  }),
});
const EndpointIdInput = builder.inputType('WebhookEndpointIdInput', { fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }) });
const ReplayEventInput = builder.inputType('ReplayEventInput', { fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }) });

const ReplayEventSuccess = builder.objectRef<webhooks.Replay>('ReplayEventSuccess').implement({
  fields: (t) => ({
    attempts: t.field({ type: [DeliveryAttempt], description: 'One new (pending) attempt per active endpoint subscribed to the event’s type.', resolve: (r) => r.attempts }),
    disabledEndpoints: t.field({
      type: [WebhookEndpoint],
      description: 'The endpoints subscribed to the event’s type that are disabled: nothing was sent to them (enable one, then replay). With no attempt and none here, no endpoint is subscribed to the type.',
      resolve: (r, _, { ctx }) => webhooks.endpointsByIds(ctx, r.disabledEndpointIds),
    }),
  }),
});

const ERRORS = [...COMMON_ERRORS, NotFoundError];

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: WebhookEndpointWithSecret,
    errors: { types: COMMON_ERRORS, directResult: true, union: { name: 'CreateWebhookEndpointResult' } },
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createWebhookEndpoint', input, (ctx, fields) => webhooks.createEndpoint(ctx, domainInput(webhooks.endpointCreate, fields))),
  }),
  updateWebhookEndpoint: t.field({
    type: WebhookEndpoint,
    errors: { types: ERRORS, dataField: { name: 'webhookEndpoint' }, result: { name: 'UpdateWebhookEndpointSuccess' }, union: { name: 'UpdateWebhookEndpointResult' } },
    args: { input: t.arg({ type: UpdateWebhookEndpointInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'updateWebhookEndpoint', input, (ctx, { id, ...fields }) => webhooks.updateEndpoint(ctx, id, domainInput(webhooks.endpointUpdate, fields))),
  }),
  deleteWebhookEndpoint: t.field({
    type: WebhookEndpoint,
    errors: { types: ERRORS, dataField: { name: 'webhookEndpoint' }, result: { name: 'DeleteWebhookEndpointSuccess' }, union: { name: 'DeleteWebhookEndpointResult' } },
    args: { input: t.arg({ type: EndpointIdInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'deleteWebhookEndpoint', input, (ctx, { id }) => webhooks.deleteEndpoint(ctx, id)),
  }),
  rotateWebhookEndpointSecret: t.field({
    type: WebhookEndpointWithSecret,
    errors: { types: ERRORS, directResult: true, union: { name: 'RotateWebhookEndpointSecretResult' } },
    args: { input: t.arg({ type: EndpointIdInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'rotateWebhookEndpointSecret', input, (ctx, { id }) => webhooks.rotateSecret(ctx, id)),
  }),
  replayEvent: t.field({
    type: ReplayEventSuccess,
    errors: { types: ERRORS, directResult: true, union: { name: 'ReplayEventResult' } },
    args: { input: t.arg({ type: ReplayEventInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'replayEvent', input, (ctx, { id }) => webhooks.replayEvent(ctx, id)),
  }),
}));
