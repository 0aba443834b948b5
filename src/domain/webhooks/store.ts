// Statements about webhook endpoints and delivery attempts. The rules (and delivery itself) are in
// index.ts.
import type { DeliveryAttempt, Event, PrismaClient, WebhookEndpoint } from '../../generated/prisma/client.ts';
import { jsonRows, merchantSql, type RawQuery } from '../../platform/db/raw.ts';
import type { Prisma, Db, TenantTx } from '../../platform/db/tenant.ts';
import type { PageQuery } from '../../platform/pagination.ts';

/** One keyset page as `paginate` asks for it: the cursor's where fragment, the order, how many. */

// ---------------------------------------------------------------- endpoints

export function insertEndpoint(tx: TenantTx, data: Prisma.WebhookEndpointUncheckedCreateInput): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.create({ data });
}

/** An endpoint that is not deleted; null otherwise. */
export function findLiveEndpoint(db: Db, id: string): Promise<WebhookEndpoint | null> {
  return db.webhookEndpoint.findFirst({ where: { id, deletedAt: null } });
}

export function findEndpointOrThrow(tx: TenantTx, id: string): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.findUniqueOrThrow({ where: { id } });
}

/** One page of the endpoints that are not deleted. */
export function findLiveEndpoints(db: Db, { where, ...page }: PageQuery): Promise<WebhookEndpoint[]> {
  return db.webhookEndpoint.findMany({ where: { AND: [where, { deletedAt: null }] }, ...page });
}

export function countLiveEndpoints(db: Db): Promise<number> {
  return db.webhookEndpoint.count({ where: { deletedAt: null } });
}

/** The endpoints (active and disabled, not deleted) subscribed to an event type (an empty list of events subscribes to all), oldest first. */
export function findSubscribedEndpoints(tx: TenantTx, eventType: string): Promise<{ id: string; status: string }[]> {
  return tx.webhookEndpoint.findMany({
    where: { deletedAt: null, OR: [{ events: { isEmpty: true } }, { events: { has: eventType } }] },
    select: { id: true, status: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

/** The endpoints with these ids that are not deleted, oldest first. */
export function findLiveEndpointsByIds(db: Db, ids: string[]): Promise<WebhookEndpoint[]> {
  return db.webhookEndpoint.findMany({ where: { id: { in: ids }, deletedAt: null }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

export function updateEndpointFields(tx: TenantTx, id: string, data: Prisma.WebhookEndpointUncheckedUpdateInput): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.update({ where: { id }, data });
}

export function markEndpointDeleted(tx: TenantTx, id: string, deletedAt: Date): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.update({ where: { id }, data: { deletedAt, status: 'disabled' } });
}

/** A new secret; the old one is kept as the previous secret until `previousSecretExpiresAt`. */
export function replaceEndpointSecret(
  tx: TenantTx,
  id: string,
  data: { secret: string; previousSecret: string; previousSecretExpiresAt: Date },
): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.update({ where: { id }, data });
}

export function markEndpointFailing(tx: TenantTx, id: string, failingSince: Date): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.update({ where: { id }, data: { failingSince } });
}

export function markEndpointDisabled(tx: TenantTx, id: string, disabledAt: Date): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.update({ where: { id }, data: { status: 'disabled', disabledAt } });
}

// ---------------------------------------------------------------- delivery attempts

/** Which attempts a list shows: an event's, an endpoint's, or both (an event's to one endpoint), optionally of one status. */
export interface AttemptFilter {
  eventId?: string | undefined;
  endpointId?: string | undefined;
  status?: string | undefined;
}

/**
 * One keyset page of attempts, newest first (created_at DESC, id DESC): an event's
 * (delivery_attempts_event_id_created_at_id_idx) or an endpoint's
 * (delivery_attempts_endpoint_id_created_at_id_idx; with a status,
 * delivery_attempts_endpoint_id_status_created_at_id_idx).
 */
export function findAttempts(db: Db, filter: AttemptFilter, { where, ...page }: PageQuery): Promise<DeliveryAttempt[]> {
  return db.deliveryAttempt.findMany({ where: { AND: [where, attemptWhere(filter)] }, ...page });
}

export function countAttempts(db: Db, filter: AttemptFilter): Promise<number> {
  return db.deliveryAttempt.count({ where: attemptWhere(filter) });
}

function attemptWhere({ eventId, endpointId, status }: AttemptFilter) {
  return { ...(eventId ? { eventId } : {}), ...(endpointId ? { endpointId } : {}), ...(status ? { status } : {}) };
}

export function findAttemptsByIds(db: Db, ids: string[]): Promise<DeliveryAttempt[]> {
  return db.deliveryAttempt.findMany({ where: { id: { in: ids } } });
}

export function findAttemptsByIdsNewestFirst(tx: TenantTx, ids: string[]): Promise<DeliveryAttempt[]> {
  return tx.deliveryAttempt.findMany({ where: { id: { in: ids } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

export type FullAttempt = DeliveryAttempt & { endpoint: WebhookEndpoint; event: Event };

/** A pending attempt with its endpoint and event, in one statement (the delivery hot path). */
export async function findPendingAttempt(q: RawQuery, merchantId: string, attemptId: string): Promise<FullAttempt | null> {
  const [row] = await merchantSql(q, merchantId)<DeliveryAttempt & { endpointRow: unknown; eventRow: unknown }>(
    `SELECT a.*, to_jsonb(e.*) AS endpoint_row, to_jsonb(ev.*) AS event_row
     FROM delivery_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id JOIN events ev ON ev.id = a.event_id
     WHERE a.merchant_id = $1 AND a.id = $2 AND a.status = 'pending'`,
    [attemptId],
  );
  if (!row) return null;
  const { endpointRow, eventRow, ...attempt } = row;
  return { ...attempt, endpoint: jsonRows<WebhookEndpoint>('WebhookEndpoint', [endpointRow])[0]!, event: jsonRows<Event>('Event', [eventRow])[0]! };
}

/** Fails an endpoint's pending attempts (their jobs are the caller's), with the reason as the response body. */
export function failPendingAttemptsOfEndpoint(tx: TenantTx, endpointId: string, reason: string): Promise<Prisma.BatchPayload> {
  return tx.deliveryAttempt.updateMany({ where: { endpointId, status: 'pending' }, data: { status: 'failed', responseBody: reason, nextRetryAt: null } });
}

/** Fails one attempt if it is still pending, with the reason as the response body. */
export function failPendingAttempt(db: Db, id: string, reason: string): Promise<Prisma.BatchPayload> {
  return db.deliveryAttempt.updateMany({ where: { id, status: 'pending' }, data: { status: 'failed', responseBody: reason } });
}

export interface AttemptResult {
  responseStatus: number | null;
  responseBody: string;
  attemptedAt: Date;
  durationMs: number;
}

/**
 * A success is one statement: the attempt (still pending: not cancelled meanwhile), the endpoint's
 * failing streak if it had one, and the job (the platform's jobs table: marked done when `jobId`
 * is given).
 */
export async function markAttemptSucceeded(q: RawQuery, merchantId: string, id: string, r: AttemptResult, jobId: bigint | undefined): Promise<void> {
  await merchantSql(q, merchantId)(
    `WITH a AS (
         UPDATE delivery_attempts SET status = 'succeeded', response_status = $3, response_body = $4, attempted_at = $5,
           duration_ms = $6, next_retry_at = NULL, updated_at = now()
         WHERE merchant_id = $1 AND id = $2 AND status = 'pending' RETURNING endpoint_id
       ), j AS (
         UPDATE jobs SET status = 'done', locked_until = NULL, last_error = NULL, updated_at = now()
         WHERE merchant_id = $1 AND id = $7 AND status = 'running'
       )
       UPDATE webhook_endpoints e SET failing_since = NULL, updated_at = now() FROM a
       WHERE e.merchant_id = $1 AND e.id = a.endpoint_id AND e.failing_since IS NOT NULL`,
    [id, r.responseStatus, r.responseBody, r.attemptedAt, r.durationMs, jobId ?? null],
  );
}

/** Records a failed attempt if it is still pending; a count of 0 means it was cancelled meanwhile. */
export function markAttemptFailed(tx: TenantTx, id: string, r: AttemptResult, nextRetryAt: Date | null): Promise<Prisma.BatchPayload> {
  return tx.deliveryAttempt.updateMany({
    where: { id, status: 'pending' },
    data: {
      status: 'failed',
      responseStatus: r.responseStatus,
      responseBody: r.responseBody,
      attemptedAt: r.attemptedAt,
      durationMs: r.durationMs,
      nextRetryAt,
    },
  });
}

/**
 * Deletes up to `limit` finished delivery attempts (succeeded or failed; never pending) created
 * before `before` (real time), oldest first, through the partial index
 * delivery_attempts_finished_created_at_idx; how many. System work (every merchant's).
 */
export function deleteFinishedAttempts(prisma: PrismaClient, before: Date, limit: number): Promise<number> {
  return prisma.$executeRawUnsafe(
    `DELETE FROM delivery_attempts WHERE id IN (
       SELECT id FROM delivery_attempts WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)`,
    before,
    limit,
  );
}
