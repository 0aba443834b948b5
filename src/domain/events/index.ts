// Events: an append-only record of every state change, written by `recordEvent` inside the
// transaction that makes the change, so there is never an event without its change or a
// change without its event. Webhook delivery reads from here.
import type { Event, Prisma } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { createdBetween, paginate, type Page } from '../../platform/pagination.ts';
import { z, listQuery, timestamp } from '../../platform/validation.ts';
import { EVENT_TYPES, type EventType } from './types.ts';
import { scheduleDeliveries, SUBSCRIBED_ENDPOINTS_WHERE } from '../webhooks/outbox.ts';
import { asRawTx, merchantSql, type RawTx } from '../../platform/db/raw.ts';
import { billingTime } from '../clock/index.ts';

export { EVENT_TYPES, type EventType };

export interface EventJSON {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

/**
 * Records one event and, in the same transaction, schedules its delivery to every subscribed
 * active webhook endpoint (the outbox). `db` must be the transaction that makes the change;
 * `object` is the record's API representation after the change. One statement inserts the event
 * and finds the endpoints (with the merchant's clock); a second, only when there are endpoints,
 * creates the attempts and their jobs.
 */
export async function recordEvent(
  db: Db | RawTx,
  merchantId: string,
  type: EventType,
  object: object,
  previousAttributes?: Record<string, unknown>,
): Promise<Event> {
  const tx = asRawTx(db);
  const data: EventJSON['data'] = { object: object as Record<string, unknown> };
  if (previousAttributes && Object.keys(previousAttributes).length > 0) data.previous_attributes = previousAttributes;
  const event: Event = { id: newId('event'), merchantId, type, data: data as Prisma.JsonObject, createdAt: new Date() };
  const rows = await merchantSql(tx.raw, merchantId)<{ id: string; mode: string; clockOffsetMs: bigint }>(
    `WITH ev AS (INSERT INTO events (id, merchant_id, type, data, created_at) VALUES ($3, $1, $2, $4::jsonb, $5))
     SELECT e.id, m.mode, m.clock_offset_ms FROM webhook_endpoints e JOIN merchants m ON m.id = e.merchant_id
     WHERE ${SUBSCRIBED_ENDPOINTS_WHERE}`,
    [type, event.id, JSON.stringify(data), event.createdAt],
  );
  // An endpoint is not told about its own disabling (it is failing anyway).
  const endpoints = rows.filter((e) => !(type === 'webhook_endpoint.disabled' && e.id === (object as { id?: string }).id));
  if (endpoints.length > 0) {
    const at = billingTime(endpoints[0]!.mode, endpoints[0]!.clockOffsetMs);
    await scheduleDeliveries(tx, event, endpoints.map((e) => e.id), at);
  }
  return event;
}

export function eventToJSON(e: Event): EventJSON {
  return { id: e.id, object: 'event', type: e.type, created_at: e.createdAt.toISOString(), data: e.data as EventJSON['data'] };
}

/** An exact event type, or a prefix of whole segments ending in `.*`. */
const EVENT_TYPE_FILTER = /^[a-z_]+(\.[a-z_]+)*(\.\*)?$/;
const TYPE_FILTER_RULE = 'must be an event type such as customer.created, or a prefix ending in .* such as customer.*';

export const eventListQuery = z.strictObject({
  type: z
    .string()
    .max(100)
    .regex(EVENT_TYPE_FILTER, { error: TYPE_FILTER_RULE })
    .meta({ description: 'Exact event type, or a prefix ending in `.*` (e.g. `customer.*`).', example: 'customer.created' })
    .optional(),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  ...listQuery,
});
export type EventListQuery = z.output<typeof eventListQuery>;

export async function listEvents(ctx: Ctx, q: EventListQuery): Promise<Page<Event>> {
  if (q.type !== undefined && !EVENT_TYPE_FILTER.test(q.type)) throw new ValidationError('parameter_invalid', `Invalid type: ${TYPE_FILTER_RULE}.`, 'type');
  // A prefix is a range, not a LIKE pattern: 'customer.' <= type < 'customer/' ('/' follows '.').
  const type = q.type?.endsWith('.*') ? { gte: q.type.slice(0, -1), lt: `${q.type.slice(0, -2)}/` } : q.type;
  const filters = [type ? { type } : {}, createdBetween(q.created_after, q.created_before)];
  return paginate(
    q,
    ({ where, ...page }) => ctx.db.event.findMany({ where: { AND: [where, ...filters] }, ...page }),
    () => ctx.db.event.count({ where: { AND: filters } }),
  );
}

export async function getEvent(ctx: Ctx, id: string): Promise<Event> {
  const e = await ctx.db.event.findUnique({ where: { id } });
  if (!e) throw new NotFoundError('event', id);
  return e;
}

/** Changed fields between two API representations: the values before the change. */
export function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const prev: Record<string, unknown> = {};
  for (const k of Object.keys(after)) {
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) prev[k] = before[k] ?? null;
  }
  return prev;
}
