// The webhook outbox: called by recordEvent inside the transaction that records the event, so a
// delivery exists exactly when its event does. One pending attempt (and its job) per subscribed
// active endpoint.
import type { Event } from '../../generated/prisma/client.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { newId } from '../../platform/ids.ts';
import { wake } from '../../platform/jobs.ts';
import { asRawTx, merchantSql, type RawTx } from '../../platform/db/raw.ts';

export const DELIVER_JOB = 'webhook.deliver';

/** Endpoints subscribed to an event type (all types when their list is empty), as SQL over alias `e`; $1 is the merchant. */
export const subscribedEndpointsWhere = (typeParam: string) =>
  `e.merchant_id = $1 AND e.status = 'active' AND e.deleted_at IS NULL AND (cardinality(e.events) = 0 OR ${typeParam} = ANY(e.events))`;

/**
 * The outbox rows as two CTEs (`att`, `jb`): a pending attempt and its job for each row of
 * `source` (columns id, endpoint_id, at) of event `eventId`; $1 is the merchant.
 */
export function outboxCtes(source: string, eventId: string, attemptNumber: string): string[] {
  return [
    `att AS (INSERT INTO delivery_attempts (id, merchant_id, event_id, endpoint_id, attempt_number, scheduled_at, created_at, updated_at)
             SELECT s.id, $1, ${eventId}, s.endpoint_id, ${attemptNumber}, s.at, now(), now() FROM ${source} s
             RETURNING id, endpoint_id, scheduled_at)`,
    `jb AS (INSERT INTO jobs (merchant_id, kind, run_at, payload, key, ref, created_at, updated_at)
            SELECT $1, '${DELIVER_JOB}', att.scheduled_at, jsonb_build_object('attempt_id', att.id), att.id, att.endpoint_id, now(), now() FROM att
            ON CONFLICT (kind, key) DO NOTHING)`,
  ];
}

/**
 * Creates the pending attempt and its job for each endpoint, in one statement of the caller's
 * transaction; the worker is woken after the commit. Returns the attempt ids.
 */
export async function scheduleDeliveries(db: Db | RawTx, event: Pick<Event, 'id' | 'merchantId'>, endpointIds: string[], at: Date, attemptNumber = 1): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const tx = asRawTx(db);
  const ids = endpointIds.map(() => newId('delivery_attempt'));
  await merchantSql(tx.raw, event.merchantId)(
    `WITH src AS (SELECT x.id, x.endpoint_id, $4::timestamptz AS at FROM unnest($5::text[], $6::text[]) AS x(id, endpoint_id)),
     ${outboxCtes('src', '$2', '$3::int').join(',\n     ')}
     SELECT count(*) FROM att`,
    [event.id, attemptNumber, at, ids, endpointIds],
  );
  tx.afterCommit(wake);
  return ids;
}
