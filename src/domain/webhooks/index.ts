// Webhook endpoints and event delivery (Standard Webhooks).
//
// Each event is scheduled for every subscribed active endpoint in the transaction that records it
// (outbox.ts). A delivery job sends one attempt; a failed attempt schedules the next one after
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts in all), on the merchant's clock. An
// endpoint whose deliveries have all failed for 5 days is disabled. Delivery is at least once:
// receivers dedupe by the webhook-id header (the event id).
import type { DeliveryAttempt, Event, PrismaClient, WebhookEndpoint } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/tenant.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { freeText, parse, z, listQuery } from '../../platform/validation.ts';
import { cancelJobs, DeferJob, type JobCtx } from '../../platform/jobs.ts';
import { clockNow } from '../../platform/clock.ts';
import { eventToJSON, getEvent, recordEvent } from '../events/index.ts';
import { EVENT_TYPE_RULE, EVENT_TYPES } from '../events/types.ts';
import { scheduleDeliveries } from '../events/outbox.ts';
import { rawQuery } from '../../platform/db/raw.ts';
import { sendWebhook } from './send.ts';
import { inSpan, SpanKind, SpanStatusCode } from '../../platform/tracing.ts';
import { newSecret, signatureHeader } from './signing.ts';
import { checkEndpointUrl } from './ssrf.ts';
import { countWebhookDelivery } from '../../platform/metrics.ts';
import {
  countAttempts,
  countLiveEndpoints,
  failPendingAttempt,
  failPendingAttemptsOfEndpoint,
  findAttemptsByIds,
  findAttemptsByIdsNewestFirst,
  findAttempts,
  findEndpointOrThrow,
  findLiveEndpoint,
  findLiveEndpoints,
  findPendingAttempt,
  findSubscribedEndpoints,
  findLiveEndpointsByIds,
  insertEndpoint,
  markAttemptFailed,
  markAttemptSucceeded,
  markEndpointDeleted,
  markEndpointDisabled,
  markEndpointFailing,
  replaceEndpointSecret,
  updateEndpointFields,
  type FullAttempt,
  deleteFinishedAttempts,
} from './store.ts';

export { DELIVER_JOB } from '../events/types.ts';

/** Delays after failed attempts 1..7; attempt 8 is the last. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const DISABLE_AFTER_MS = 5 * 24 * 3600_000;
export const SECRET_OVERLAP_MS = 24 * 3600_000;
/** Deliveries to one endpoint in flight at once, per process; more wait for a free slot. */
export const PER_ENDPOINT_CONCURRENCY = 8;

const eventTypes = z
  .array(z.enum(EVENT_TYPES, { error: EVENT_TYPE_RULE }))
  .max(EVENT_TYPES.length)
  .meta({ description: 'Subscribed event types; omitted or empty = all.' });
const url = z.string().max(2048).meta({ description: 'https:// (http:// to loopback only with BILLING_ALLOW_HTTP_WEBHOOKS=1).', format: 'uri', example: 'https://shop.example.com/webhooks/billing' });
const description = freeText(500, { allowEmpty: true }).meta({ example: 'Order service' });

export const ENDPOINT_STATUSES = ['active', 'disabled'] as const;
export const ATTEMPT_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const endpointCreate = z.strictObject({ url, events: eventTypes.optional(), description: description.optional() });
export const endpointUpdate = z.strictObject({
  url: url.optional(),
  events: eventTypes.optional(),
  description: description.nullable().optional(),
  status: z.enum(ENDPOINT_STATUSES).optional().meta({ description: 'disabled stops deliveries; active re-enables.' }),
});
export const endpointListQuery = z.strictObject({ ...listQuery });
export const attemptListQuery = z.strictObject({ endpoint_id: z.string().max(64).optional(), ...listQuery });
export type EndpointCreateInput = z.input<typeof endpointCreate>;
export type EndpointUpdateInput = z.input<typeof endpointUpdate>;
export const endpointAttemptListQuery = z.strictObject({
  status: z.enum(ATTEMPT_STATUSES).optional().meta({ description: 'Only the attempts with this status.' }),
  ...listQuery,
});
export type AttemptListQuery = z.output<typeof attemptListQuery>;
export type EndpointAttemptListQuery = z.output<typeof endpointAttemptListQuery>;

export function endpointToJSON(e: WebhookEndpoint, withSecret = false) {
  return {
    id: e.id,
    object: 'webhook_endpoint' as const,
    url: e.url,
    events: e.events,
    description: e.description,
    status: e.status as (typeof ENDPOINT_STATUSES)[number],
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
    ...(withSecret ? { secret: e.secret } : {}),
  };
}

export function attemptToJSON(a: DeliveryAttempt) {
  return {
    id: a.id,
    object: 'delivery_attempt' as const,
    event_id: a.eventId,
    endpoint_id: a.endpointId,
    status: a.status as (typeof ATTEMPT_STATUSES)[number],
    attempt_number: a.attemptNumber,
    response_status: a.responseStatus,
    response_body: a.responseBody,
    scheduled_at: a.scheduledAt.toISOString(),
    attempted_at: a.attemptedAt?.toISOString() ?? null,
    next_retry_at: a.nextRetryAt?.toISOString() ?? null,
    duration_ms: a.durationMs,
    created_at: a.createdAt.toISOString(),
  };
}

function checkUrl(ctx: Ctx, value: string) {
  const problem = checkEndpointUrl(value, ctx.runtime.config.BILLING_ALLOW_HTTP_WEBHOOKS);
  if (problem) throw new ValidationError('parameter_invalid', `Invalid url: ${problem}.`, 'url');
}

export async function createEndpoint(ctx: Ctx, input: EndpointCreateInput): Promise<WebhookEndpoint> {
  const data = parse(endpointCreate, input);
  checkUrl(ctx, data.url);
  return inTransaction(ctx.db, async (tx) =>
    insertEndpoint(tx, {
      id: newId('webhook_endpoint'),
      merchantId: ctx.merchant.id,
      url: data.url,
      events: [...new Set(data.events ?? [])],
      description: data.description ?? null,
      secret: newSecret(),
      createdAt: await clockNow({ ...ctx, db: tx }),
    }),
  );
}

export async function getEndpoint(ctx: Ctx, id: string, db = ctx.db, param = 'id'): Promise<WebhookEndpoint> {
  const e = await findLiveEndpoint(db, id);
  if (!e) throw new NotFoundError('webhook endpoint', id, param);
  return e;
}

export async function listEndpoints(ctx: Ctx, q: z.output<typeof endpointListQuery>): Promise<Page<WebhookEndpoint>> {
  return paginate(
    q,
    (page) => findLiveEndpoints(ctx.db, page),
    () => countLiveEndpoints(ctx.db),
  );
}

export async function updateEndpoint(ctx: Ctx, id: string, input: EndpointUpdateInput): Promise<WebhookEndpoint> {
  const data = parse(endpointUpdate, input);
  if (data.url !== undefined) checkUrl(ctx, data.url);
  return inTransaction(ctx.db, async (tx) => {
    const before = await getEndpoint(ctx, id, tx);
    const reenable = data.status === 'active' && before.status !== 'active';
    const after = await updateEndpointFields(tx, id, {
      url: data.url,
      events: data.events ? [...new Set(data.events)] : undefined,
      description: data.description,
      status: data.status,
      ...(reenable ? { failingSince: null, disabledAt: null } : {}),
      ...(data.status === 'disabled' && before.status !== 'disabled' ? { disabledAt: await clockNow({ ...ctx, db: tx }) } : {}),
    });
    if (data.status === 'disabled') await cancelPending(ctx, tx, id, 'cancelled: endpoint disabled');
    return after;
  });
}

async function cancelPending(ctx: Ctx, tx: Parameters<Parameters<typeof inTransaction>[1]>[0], endpointId: string, reason: string) {
  await cancelJobs(tx, { ref: endpointId });
  await failPendingAttemptsOfEndpoint(tx, endpointId, reason);
}

export async function deleteEndpoint(ctx: Ctx, id: string): Promise<WebhookEndpoint> {
  return inTransaction(ctx.db, async (tx) => {
    await getEndpoint(ctx, id, tx);
    const e = await markEndpointDeleted(tx, id, await clockNow({ ...ctx, db: tx }));
    await cancelPending(ctx, tx, id, 'cancelled: endpoint deleted');
    return e;
  });
}

/** A new secret; the old one keeps signing alongside for 24 h. */
export async function rotateSecret(ctx: Ctx, id: string): Promise<WebhookEndpoint> {
  return inTransaction(ctx.db, async (tx) => {
    const e = await getEndpoint(ctx, id, tx);
    return replaceEndpointSecret(tx, id, { secret: newSecret(), previousSecret: e.secret, previousSecretExpiresAt: new Date(Date.now() + SECRET_OVERLAP_MS) });
  });
}

export async function listAttempts(ctx: Ctx, eventId: string, q: AttemptListQuery): Promise<Page<DeliveryAttempt>> {
  await getEvent(ctx, eventId);
  const filter = { eventId, endpointId: q.endpoint_id };
  return paginate(
    q,
    (page) => findAttempts(ctx.db, filter, page),
    () => countAttempts(ctx.db, filter),
  );
}

/** One page of an endpoint's own attempts, newest first, optionally of one status; 404 for an unknown (or deleted, or other merchant's) endpoint. */
export async function listAttemptsOfEndpoint(ctx: Ctx, endpointId: string, q: EndpointAttemptListQuery): Promise<Page<DeliveryAttempt>> {
  await getEndpoint(ctx, endpointId);
  const filter = { endpointId, status: q.status };
  return paginate(
    q,
    (page) => findAttempts(ctx.db, filter, page),
    () => countAttempts(ctx.db, filter),
  );
}

const ATTEMPTS_OF_EVENT = { table: 'delivery_attempts', parent: 'event_id' };
const ATTEMPTS_OF_ENDPOINT = { table: 'delivery_attempts', parent: 'endpoint_id' };

/** One page of delivery attempts per event, in two queries for all of them. */
export function listAttemptsOfEvents(ctx: Ctx, eventIds: readonly string[], q: AttemptListQuery) {
  return pagesByParent(ctx, ATTEMPTS_OF_EVENT, eventIds, { ...q, filters: { endpoint_id: q.endpoint_id } }, (ids) => findAttemptsByIds(ctx.db, ids));
}

export function countAttemptsOfEvents(ctx: Ctx, eventIds: readonly string[], q: Pick<AttemptListQuery, 'endpoint_id'>) {
  return countsByParent(ctx, ATTEMPTS_OF_EVENT, eventIds, { endpoint_id: q.endpoint_id });
}

/** One page of delivery attempts per endpoint (optionally of one status), in two queries for all of them (GraphQL). */
export function listAttemptsOfEndpoints(ctx: Ctx, endpointIds: readonly string[], q: EndpointAttemptListQuery) {
  return pagesByParent(ctx, ATTEMPTS_OF_ENDPOINT, endpointIds, { ...q, filters: { status: q.status } }, (ids) => findAttemptsByIds(ctx.db, ids));
}

export function countAttemptsOfEndpoints(ctx: Ctx, endpointIds: readonly string[], q: Pick<EndpointAttemptListQuery, 'status'>) {
  return countsByParent(ctx, ATTEMPTS_OF_ENDPOINT, endpointIds, { status: q.status });
}

/** What a replay did: the new attempts, and the endpoints subscribed to the event's type that got none because they are disabled. */
export interface Replay {
  attempts: DeliveryAttempt[];
  disabledEndpointIds: string[];
}

/**
 * Sends the event again, now, to every active endpoint subscribed to its type. The disabled ones
 * subscribed to it are named, so that a client can say why nothing (or less) was sent.
 */
export async function replayEvent(ctx: Ctx, eventId: string): Promise<Replay> {
  return inTransaction(ctx.db, async (tx) => {
    const event = await getEvent({ ...ctx, db: tx }, eventId);
    const endpoints = await findSubscribedEndpoints(tx, event.type);
    const active = endpoints.filter((e) => e.status === 'active').map((e) => e.id);
    const ids = await scheduleDeliveries(tx, event, active, await clockNow({ ...ctx, db: tx }));
    return { attempts: await findAttemptsByIdsNewestFirst(tx, ids), disabledEndpointIds: endpoints.filter((e) => e.status !== 'active').map((e) => e.id) };
  });
}

/** Endpoints by id (deleted ones left out), oldest first. */
export function endpointsByIds(ctx: Ctx, ids: readonly string[]): Promise<WebhookEndpoint[]> {
  return ids.length === 0 ? Promise.resolve([]) : findLiveEndpointsByIds(ctx.db, [...ids]);
}

// ------------------------------------------------------------------------------------ delivery

// Deliveries in flight per endpoint, in this process. A delivery that finds its endpoint at the
// cap waits up to SLOT_WAIT_MS for a slot (one finishing hands it over) rather than going back to
// the queue at once: bouncing cost a round trip and 100 ms for each of half a burst's jobs.
// Past that wait (a slow or black-holed endpoint) the job is deferred and frees its worker slot.
const SLOT_WAIT_MS = 1000;
const slots = new Map<string, { active: number; waiters: (() => void)[] }>();

function acquireSlot(endpointId: string): Promise<boolean> {
  let s = slots.get(endpointId);
  if (!s) slots.set(endpointId, (s = { active: 0, waiters: [] }));
  if (s.active < PER_ENDPOINT_CONCURRENCY) {
    s.active++;
    return Promise.resolve(true);
  }
  const slot = s;
  return new Promise((resolve) => {
    const take = () => {
      clearTimeout(timer);
      resolve(true); // the releasing delivery passed its slot on: active is unchanged
    };
    const timer = setTimeout(() => {
      slot.waiters.splice(slot.waiters.indexOf(take), 1);
      resolve(false);
    }, SLOT_WAIT_MS);
    slot.waiters.push(take);
  });
}

function releaseSlot(endpointId: string): void {
  const s = slots.get(endpointId);
  if (!s) return;
  const next = s.waiters.shift();
  if (next) return next();
  s.active--;
  if (s.active <= 0) slots.delete(endpointId);
}

/** Thrown when an endpoint stayed at its maximum of deliveries in flight: run the job again shortly. */
export class EndpointBusy extends DeferJob {
  constructor(endpointId: string) {
    super(100, `endpoint ${endpointId} has ${PER_ENDPOINT_CONCURRENCY} deliveries in flight`);
  }
}

/**
 * The delivery job: sends one pending attempt and records the outcome (and the next attempt).
 * Given the job's id, a success also marks the job done in the same statement and returns true.
 */
export async function deliverAttempt(ctx: JobCtx, attemptId: string, jobId?: bigint): Promise<boolean> {
  const attempt = await findPendingAttempt(rawQuery(ctx.db), ctx.merchant.id, attemptId);
  if (!attempt) return false;
  const endpoint = attempt.endpoint;
  if (endpoint.deletedAt || endpoint.status !== 'active') {
    await failPendingAttempt(ctx.db, attemptId, 'cancelled: endpoint not active');
    countWebhookDelivery('cancelled');
    return false;
  }
  if (!(await acquireSlot(endpoint.id))) throw new EndpointBusy(endpoint.id);
  let result;
  try {
    result = await send(ctx, endpoint, attempt.event);
  } finally {
    releaseSlot(endpoint.id);
  }
  return recordOutcome(ctx, attempt, result, jobId);
}

async function send(ctx: Ctx, endpoint: WebhookEndpoint, event: Event) {
  const body = JSON.stringify(eventToJSON(event));
  // Receivers check the timestamp against their own clock: it is real time, not the test clock.
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'open-billing-webhooks/1',
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(endpoint, event.id, timestamp, body),
  };
  // A CLIENT span when tracing (src/platform/tracing.ts): the endpoint and the answer's status, not the URL's path or the body.
  return inSpan('webhook.deliver', { 'billing.webhook_endpoint_id': endpoint.id, 'billing.event_id': event.id, 'server.address': hostOf(endpoint.url) }, async (span) => {
    const result = await sendWebhook(endpoint.url, headers, body, ctx.runtime.config.BILLING_ALLOW_HTTP_WEBHOOKS, ctx.runtime.config.WEBHOOK_TIMEOUT_MS);
    if (result.status !== null) span?.setAttribute('http.response.status_code', result.status);
    if (!result.ok) span?.setStatus({ code: SpanStatusCode.ERROR });
    return result;
  }, { kind: SpanKind.CLIENT });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

async function recordOutcome(ctx: JobCtx, attempt: FullAttempt, result: Awaited<ReturnType<typeof send>>, jobId?: bigint): Promise<boolean> {
  const now = ctx.clock.at;
  const outcome = { responseStatus: result.status, responseBody: result.body, attemptedAt: now, durationMs: result.durationMs };
  if (result.ok) {
    await markAttemptSucceeded(rawQuery(ctx.db), ctx.merchant.id, attempt.id, outcome, jobId);
    countWebhookDelivery('succeeded');
    return jobId !== undefined;
  }
  countWebhookDelivery(attempt.attemptNumber >= MAX_ATTEMPTS ? 'gave_up' : 'failed');
  await inTransaction(ctx.db, async (tx) => {
    const last = attempt.attemptNumber >= MAX_ATTEMPTS;
    const delay = RETRY_DELAYS_MS[attempt.attemptNumber - 1] ?? 0;
    // Small jitter in live mode spreads retries; none in test mode so the schedule is exact.
    const jitter = ctx.merchant.mode === 'live' ? Math.floor(Math.random() * Math.min(delay * 0.1, 60_000)) : 0;
    const next = last ? null : new Date(now.getTime() + delay + jitter);
    const updated = await markAttemptFailed(tx, attempt.id, outcome, next);
    if (updated.count === 0) return; // cancelled meanwhile (endpoint deleted)
    const endpoint = await findEndpointOrThrow(tx, attempt.endpointId);
    const failingSince = endpoint.failingSince ?? now;
    if (!endpoint.failingSince) await markEndpointFailing(tx, endpoint.id, failingSince);
    if (endpoint.status === 'active' && !endpoint.deletedAt && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS) {
      const disabled = await markEndpointDisabled(tx, endpoint.id, now);
      await cancelPending(ctx, tx, endpoint.id, 'cancelled: endpoint disabled after 5 days of failures');
      await recordEvent(tx, ctx, 'webhook_endpoint.disabled', endpointToJSON(disabled), { status: 'active' });
      return;
    }
    if (next && endpoint.status === 'active' && !endpoint.deletedAt) {
      await scheduleDeliveries(tx, attempt.event, [attempt.endpointId], next, attempt.attemptNumber + 1);
    }
  });
  return false;
}

/**
 * Housekeeping (src/jobs/maintenance.ts): deletes the finished delivery attempts (succeeded or
 * failed, never pending) created before `before`, `batch` rows per statement; how many.
 */
export async function purgeOldDeliveryAttempts(prisma: PrismaClient, before: Date, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteFinishedAttempts(prisma, before, batch);
    total += n;
    if (n < batch) return total;
  }
}
