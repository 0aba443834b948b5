// The webhook outbox: called by recordEvent inside the transaction that records the event, so a
// delivery exists exactly when its event does. One pending attempt (and its job) per subscribed
// active endpoint.
import type { Event } from '../../generated/prisma/client.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { newId } from '../../platform/ids.ts';
import { wake } from '../../platform/jobs.ts';
import { asRawTx, type RawTx } from '../../platform/db/raw.ts';
import { insertDeliveries } from './store.ts';

/**
 * Creates the pending attempt and its job for each endpoint, in one statement of the caller's
 * transaction; the worker is woken after the commit. Returns the attempt ids.
 */
export async function scheduleDeliveries(db: Db | RawTx, event: Pick<Event, 'id' | 'merchantId'>, endpointIds: string[], at: Date, attemptNumber = 1): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const tx = asRawTx(db);
  const ids = endpointIds.map(() => newId('delivery_attempt'));
  await insertDeliveries(tx, event, ids, endpointIds, at, attemptNumber);
  tx.afterCommit(wake);
  return ids;
}
