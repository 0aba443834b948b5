// The webhook outbox: called by recordEvent inside the transaction that records the event, so a
// delivery exists exactly when its event does. One pending attempt (and its job) per subscribed
// active endpoint.
import type { Event } from '../../generated/prisma/client.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { newId } from '../../platform/ids.ts';
import { enqueueJobs } from '../../jobs/queue.ts';

export const DELIVER_JOB = 'webhook.deliver';

/** Endpoints of the merchant subscribed to `type` (all types when their list is empty). */
export function subscribedEndpoints(db: Db, merchantId: string, type: string) {
  return db.webhookEndpoint.findMany({
    where: { merchantId, status: 'active', deletedAt: null, OR: [{ events: { isEmpty: true } }, { events: { has: type } }] },
    select: { id: true },
  });
}

/** Creates the pending first attempt and its job for each endpoint. Returns the attempt ids. */
export async function scheduleDeliveries(db: Db, event: Pick<Event, 'id' | 'merchantId'>, endpointIds: string[], at: Date, attemptNumber = 1): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const attempts = endpointIds.map((endpointId) => ({
    id: newId('delivery_attempt'),
    merchantId: event.merchantId,
    eventId: event.id,
    endpointId,
    attemptNumber,
    scheduledAt: at,
  }));
  await db.deliveryAttempt.createMany({ data: attempts });
  await enqueueJobs(
    db,
    attempts.map((a) => ({ merchantId: a.merchantId, kind: DELIVER_JOB, runAt: at, ref: a.endpointId, key: a.id, payload: { attempt_id: a.id } })),
  );
  return attempts.map((a) => a.id);
}
