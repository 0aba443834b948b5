// The webhook outbox: called by recordEvent inside the transaction that records the event, so a
// delivery exists exactly when its event does. One pending attempt (and its job) per subscribed
// active endpoint.
import type { Event } from '../../generated/prisma/client.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { newId } from '../../platform/ids.ts';
import { wake } from '../../jobs/queue.ts';
import { asRawTx, merchantSql, type RawTx } from '../../platform/db/raw.ts';

export const DELIVER_JOB = 'webhook.deliver';

/** Endpoints of the merchant subscribed to `type` (all types when their list is empty). */
export function subscribedEndpoints(db: Db, merchantId: string, type: string) {
  return db.webhookEndpoint.findMany({
    where: { merchantId, status: 'active', deletedAt: null, OR: [{ events: { isEmpty: true } }, { events: { has: type } }] },
    select: { id: true },
  });
}

/** The same rule in SQL (recordEvent finds the endpoints in the statement that inserts the event); $1 is the merchant. */
export const subscribedEndpointsWhere = (typeParam: string) =>
  `e.merchant_id = $1 AND e.status = 'active' AND e.deleted_at IS NULL AND (cardinality(e.events) = 0 OR ${typeParam} = ANY(e.events))`;

/**
 * Creates the pending attempt and its job for each endpoint, in one statement of the caller's
 * transaction; the worker is woken after the commit. Returns the attempt ids.
 */
export async function scheduleDeliveries(db: Db | RawTx, event: Pick<Event, 'id' | 'merchantId'>, endpointIds: string[], at: Date, attemptNumber = 1): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const tx = asRawTx(db);
  const ids = endpointIds.map(() => newId('delivery_attempt'));
  await merchantSql(tx.raw, event.merchantId)(
    `WITH a AS (
       INSERT INTO delivery_attempts (id, merchant_id, event_id, endpoint_id, attempt_number, scheduled_at, created_at, updated_at)
       SELECT x.id, $1, $2, x.endpoint_id, $3, $4, now(), now() FROM unnest($5::text[], $6::text[]) AS x(id, endpoint_id)
     )
     INSERT INTO jobs (merchant_id, kind, run_at, payload, key, ref, created_at, updated_at)
     SELECT $1, '${DELIVER_JOB}', $4, jsonb_build_object('attempt_id', x.id), x.id, x.endpoint_id, now(), now()
     FROM unnest($5::text[], $6::text[]) AS x(id, endpoint_id)
     ON CONFLICT (kind, key) DO NOTHING`,
    [event.id, attemptNumber, at, ids, endpointIds],
  );
  tx.afterCommit(wake);
  return ids;
}
