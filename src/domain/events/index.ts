// Events: an append-only record of every state change, written by `recordEvent` inside the
// transaction that makes the change, so there is never an event without its change or a
// change without its event. Webhook delivery reads from here.
import type { Event, Prisma } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { isGuarded, isTransaction, type Db } from '../../platform/db/tenant.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { exampleId, newId } from '../../platform/ids.ts';
import { createdBetween, paginate, type Page } from '../../platform/pagination.ts';
import { z, listQuery, timestamp } from '../../platform/validation.ts';
import { emailsAbout, EVENT_TYPE_RULE, EVENT_TYPES, isEventType, type EventType } from './types.ts';
import { scheduleDeliveries } from './outbox.ts';
import { wake } from '../../platform/jobs.ts';
import { asRawTx, type RawTx } from '../../platform/db/raw.ts';
import { clockOf, type ClockMerchant, type Clock } from '../../platform/clock.ts';
import { countEvents, findActiveEndpoints, findEvent, findEvents, IDS_PER_EVENT, insertEvents, insertEventWithDeliveries, type EventRow, type Statement } from './store.ts';
import { countEvent } from '../../platform/metrics.ts';
import { operatorLine, writeOperatorLine, type OperatorLine } from './operator-log.ts';
import type { Logger } from '../../platform/logger.ts';

export { EVENT_TYPES, type EventType, type Statement };

export interface EventJSON {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

/** Who an event is recorded for: the merchant, and the request's or job's clock (a Ctx). */
export interface EventScope {
  merchant: ClockMerchant;
  clock?: Clock | undefined;
  /** where the operator's line of the event goes (operator-log.ts), after the change commits */
  log?: Logger | undefined;
}

/**
 * Records one event and, in the same transaction, schedules its delivery to every subscribed
 * active webhook endpoint (the outbox). `db` must be the transaction that makes the change;
 * `object` is the record's API representation after the change. It is one statement: the
 * change's own row (`opts.with`, e.g. the new customer or ledger row), the event, and a pending
 * attempt with its job for each endpoint subscribed to the type.
 *
 * The event's `created_at` is now on the billing clock of `on` (the request's or job's clock):
 * the clock's value when it is known without a read, else `billingNowSql` in the statement
 * itself (a test merchant whose offset the request has not read: no extra round trip). The
 * statement's time is `clock.at`: `opts.with` statements may use `(SELECT at FROM clock)`, and
 * `opts.stamp` names fields of `object` that are set to it in the event (a record created in the
 * same statement); the returned event carries it as `createdAt`.
 */
export async function recordEvent(
  db: Db | RawTx,
  on: EventScope,
  type: EventType,
  object: object,
  previousAttributes?: Record<string, unknown>,
  /** `email`: whether the event has a customer e-mail to send, when the caller knows better than its type and object (emailsAbout) */
  opts: { with?: Statement[]; stamp?: string[]; email?: boolean } = {},
): Promise<Event> {
  return (await writeEvent(asRawTx(db), on, type, object, previousAttributes, opts))!.event;
}

/**
 * recordEvent's one statement sent on its own, as one autocommit statement (one round trip where
 * BEGIN, the statement and COMMIT are three): the change (`with`, which must select FROM clock)
 * and its event commit together because they are one statement. `lead` is a read that goes first
 * (e.g. the row's lock with the change's conditions): nothing is written when it finds no row,
 * and its columns come back in `lead` (they must not be named id, n or at); with `notBefore`, its
 * column `not_before` is a lower bound of the statement's time. Returns null, having
 * written nothing, when `db` is a transaction or carries an idempotency guard (the work belongs in
 * that transaction), when `lead` found no row, or when more than IDS_PER_EVENT endpoints are
 * subscribed: the caller then does the change in a transaction (recordEvent).
 */
export async function recordEventAlone<L extends object = object>(
  db: Db,
  on: EventScope,
  type: EventType,
  object: object,
  /** `set`: fields of `object` that the statement sets in the event to SQL expressions over `clock` (the caller sets them in its copy from `lead`) */
  opts: { with: Statement[]; stamp?: string[]; lead?: Statement; set?: Record<string, string>; notBefore?: boolean },
): Promise<{ event: Event; lead: L } | null> {
  if (isTransaction(db) || isGuarded(db)) return null;
  return writeEvent<L>(asRawTx(db), on, type, object, undefined, { ...opts, alone: true });
}

/** The events.object_id PostgreSQL generates from the data: the object's id as text (its `id` field). */
function objectIdOf(object: object): string | null {
  const id = (object as { id?: unknown }).id;
  return id === undefined || id === null ? null : String(id);
}

async function writeEvent<L extends object>(
  tx: RawTx,
  on: EventScope,
  type: EventType,
  object: object,
  previousAttributes: Record<string, unknown> | undefined,
  opts: { with?: Statement[]; stamp?: string[]; lead?: Statement; set?: Record<string, string>; notBefore?: boolean; alone?: boolean; email?: boolean },
): Promise<{ event: Event; lead: L } | null> {
  const merchantId = on.merchant.id;
  const data: EventJSON['data'] = { object: object as Record<string, unknown> };
  if (previousAttributes && Object.keys(previousAttributes).length > 0) data.previous_attributes = previousAttributes;
  const event: Event = { id: newId('event'), merchantId, type, data: data as Prisma.JsonObject, objectId: objectIdOf(object), createdAt: new Date(0) };
  const at = clockOf(on).peek();
  const ids = Array.from({ length: IDS_PER_EVENT }, () => newId('delivery_attempt'));
  // An endpoint is not told about its own disabling (it is failing anyway).
  const excluded = type === 'webhook_endpoint.disabled' ? [(object as { id?: string }).id ?? ''] : [];
  const email = opts.email ?? emailsAbout(type, object);
  const rows = await insertEventWithDeliveries(tx, {
    event, data, at, with: opts.with ?? [], stamp: opts.stamp ?? [], attemptIds: ids, excludedEndpoints: excluded, email,
    lead: opts.lead, alone: opts.alone, set: opts.set, notBefore: opts.notBefore,
  });
  if (rows.length === 0) return null; // alone or with a lead: nothing was written
  const { id: _id, n: _n, at: createdAt, ...lead } = rows[0]!;
  event.createdAt = createdAt;
  for (const field of opts.stamp ?? []) data.object[field] = event.createdAt.toISOString();
  if (rows.some((r) => r.id !== null) || email) tx.afterCommit(wake);
  tellOperator(tx, on, [{ id: event.id, type, data }]);
  const rest = rows.filter((r) => r.n !== null && Number(r.n) > IDS_PER_EVENT);
  if (rest.length > 0) await scheduleDeliveries(tx, event, rest.map((r) => r.id!), event.createdAt);
  return { event, lead: lead as L };
}

/** One event of recordEvents: as recordEvent's arguments, with its time (each event of a batch has its own). */
export interface NewEvent {
  type: EventType;
  object: object;
  previousAttributes?: Record<string, unknown>;
  at: Date;
  /** as recordEvent's `email` */
  email?: boolean;
}

/**
 * Records many events of one merchant in the caller's transaction, each as recordEvent would (its
 * deliveries to the active endpoints subscribed to its type, its customer e-mail), in two
 * statements whatever their number: the endpoints, then everything else (insertEvents).
 */
export async function recordEvents(db: Db | RawTx, on: EventScope, list: NewEvent[]): Promise<Event[]> {
  if (list.length === 0) return [];
  const tx = asRawTx(db);
  const merchantId = on.merchant.id;
  const endpoints = await findActiveEndpoints(tx, merchantId);
  const rows: EventRow[] = list.map((n) => {
    const data: EventJSON['data'] = { object: n.object as Record<string, unknown> };
    if (n.previousAttributes && Object.keys(n.previousAttributes).length > 0) data.previous_attributes = n.previousAttributes;
    const excluded = n.type === 'webhook_endpoint.disabled' ? (n.object as { id?: string }).id : undefined;
    const to = endpoints.filter((e) => e.id !== excluded && (e.events.length === 0 || e.events.includes(n.type)));
    return {
      id: newId('event'),
      type: n.type,
      data,
      at: n.at,
      deliveries: to.map((e) => ({ id: newId('delivery_attempt'), endpointId: e.id })),
      email: n.email ?? emailsAbout(n.type, n.object),
    };
  });
  await insertEvents(tx, merchantId, rows);
  if (rows.some((r) => r.deliveries.length > 0 || r.email)) tx.afterCommit(wake);
  tellOperator(tx, on, rows as { id: string; type: string; data: EventJSON['data'] }[]);
  return rows.map((r) => ({ id: r.id, merchantId, type: r.type, data: r.data as Prisma.JsonObject, objectId: objectIdOf((r.data as EventJSON['data']).object), createdAt: r.at }));
}

/** After the change commits, the operator's log line of each event that has one (operator-log.ts). */
function tellOperator(tx: RawTx, on: EventScope, events: { id: string; type: string; data: EventJSON['data'] }[]): void {
  const lines: { id: string; type: string; line: OperatorLine; object: Record<string, unknown>; previous?: Record<string, unknown> }[] = [];
  for (const e of events) {
    const line = operatorLine(e.type, e.data.object, e.data.previous_attributes);
    if (line) lines.push({ id: e.id, type: e.type, line, object: e.data.object, previous: e.data.previous_attributes });
  }
  if (lines.length === 0) return;
  tx.afterCommit(() => {
    for (const l of lines) {
      writeOperatorLine(on.log, on.merchant.id, l, l.line);
      // The same events are what the metrics count (failed payments, dunning outcomes).
      countEvent(l.type, l.object, l.previous);
    }
  });
}

export function eventToJSON(e: Event): EventJSON {
  return { id: e.id, object: 'event', type: e.type, created_at: e.createdAt.toISOString(), data: e.data as EventJSON['data'] };
}

/** An exact event type, or a prefix of whole segments ending in `.*`. */
const EVENT_TYPE_FILTER = /^[a-z_]+(\.[a-z_]+)*(\.\*)?$/;
const TYPE_FILTER_RULE = 'must be an event type such as customer.created, or a prefix ending in .* such as customer.*';

/**
 * The `type` filter names the catalogue, as a webhook endpoint's `events` must: an unknown exact
 * type, or a prefix no type of the catalogue starts with, is refused (400 parameter_invalid, with
 * the endpoint's message) rather than answered with an empty list.
 */
function checkTypeFilter(type: string): void {
  if (!EVENT_TYPE_FILTER.test(type)) throw new ValidationError('parameter_invalid', `Invalid type: ${TYPE_FILTER_RULE}.`, 'type');
  const known = type.endsWith('.*') ? EVENT_TYPES.some((t) => t.startsWith(type.slice(0, -1))) : isEventType(type);
  if (!known) throw new ValidationError('parameter_invalid', `Invalid type: ${EVENT_TYPE_RULE}.`, 'type');
}

export const eventListQuery = z.strictObject({
  type: z
    .string()
    .max(100)
    .regex(EVENT_TYPE_FILTER, { error: TYPE_FILTER_RULE })
    .meta({ description: 'Exact event type, or a prefix ending in `.*` (e.g. `customer.*`); a type the catalogue does not have, or a prefix none of its types starts with, is refused (400 `parameter_invalid`).', example: 'customer.created' })
    .optional(),
  object_id: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: 'Only the events about this record: `data.object.id` equals it (a customer, a payment, an invoice …).', example: exampleId('customer') })
    .optional(),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  ...listQuery,
});
export type EventListQuery = z.output<typeof eventListQuery>;

export async function listEvents(ctx: Ctx, q: EventListQuery): Promise<Page<Event>> {
  if (q.type !== undefined) checkTypeFilter(q.type);
  // A prefix is a range, not a LIKE pattern: 'customer.' <= type < 'customer/' ('/' follows '.').
  const type = q.type?.endsWith('.*') ? { gte: q.type.slice(0, -1), lt: `${q.type.slice(0, -2)}/` } : q.type;
  const filters = [type ? { type } : {}, q.object_id === undefined ? {} : { objectId: q.object_id }, createdBetween(q.created_after, q.created_before)];
  return paginate(
    q,
    ({ where, ...page }) => findEvents(ctx.db, { AND: [where, ...filters] }, page),
    () => countEvents(ctx.db, { AND: filters }),
  );
}

export async function getEvent(ctx: Ctx, id: string): Promise<Event> {
  const e = await findEvent(ctx.db, id);
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
