// The events' statements: the event with its outbox (one statement, the hottest write: see
// recordEvent in index.ts), the outbox's own statement, and the reads of events. The rules are
// in index.ts and outbox.ts.
import type { Event, Prisma } from '../../generated/prisma/client.ts';
import { billingNowSql } from '../../platform/clock.store.ts';
import { merchantSql, type RawTx } from '../../platform/db/raw.ts';
import { currentTraceparent } from '../../platform/tracing.ts';
import type { PageSlice } from '../../platform/pagination.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { DELIVER_JOB, EMAIL_JOB, type OptInEmailSwitch } from './types.ts';

/** A statement of a merchant for recordEvent to run first, in its own statement: $1 is the merchant, its own parameters $2, $3 … */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** Attempt ids made in advance for the event's statement; an event with more endpoints schedules the rest in a second one. */
export const IDS_PER_EVENT = 8;

/** The statement's clock time as the API writes it (Date#toISOString), for `stamp`. */
const ISO_AT = `to_jsonb(to_char(clock.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/** Endpoints subscribed to an event type (all types when their list is empty), as SQL over alias `e`; $1 is the merchant. */
export const subscribedEndpointsWhere = (typeParam: string) =>
  `e.merchant_id = $1 AND e.status = 'active' AND e.deleted_at IS NULL AND (cardinality(e.events) = 0 OR ${typeParam} = ANY(e.events))`;

/**
 * The outbox rows as two CTEs (`att`, `jb`): a pending attempt and its job for each row of
 * `source` (columns id, endpoint_id, at) of event `eventId`; $1 is the merchant; `traceParent`
 * is the SQL of the jobs' trace_parent (the request's traceparent when tracing: src/platform/tracing.ts).
 */
export function outboxCtes(source: string, eventId: string, attemptNumber: string, traceParent: string): string[] {
  return [
    `att AS (INSERT INTO delivery_attempts (id, merchant_id, event_id, endpoint_id, attempt_number, scheduled_at, created_at, updated_at)
             SELECT s.id, $1, ${eventId}, s.endpoint_id, ${attemptNumber}, s.at, now(), now() FROM ${source} s
             RETURNING id, endpoint_id, scheduled_at)`,
    `jb AS (INSERT INTO jobs (merchant_id, kind, run_at, payload, key, ref, trace_parent, created_at, updated_at)
            SELECT $1, '${DELIVER_JOB}', att.scheduled_at, jsonb_build_object('attempt_id', att.id), att.id, att.endpoint_id, ${traceParent}, now(), now() FROM att
            ON CONFLICT (kind, key) DO NOTHING)`,
  ];
}

/** What recordEvent's statement writes. */
export interface EventInsert {
  /** the event (its created_at is the statement's clock time) */
  event: Pick<Event, 'id' | 'merchantId' | 'type'>;
  /** the event's data (`object`, `previous_attributes`) */
  data: object;
  /** the clock's time when it is known without a read; null: `billingNowSql` in the statement */
  at: Date | null;
  /** the change's own statements, run first (`clock.at` is theirs too) */
  with: Statement[];
  /** fields of `data.object` set to the statement's time */
  stamp: string[];
  /** attempt ids made in advance (IDS_PER_EVENT of them) */
  attemptIds: string[];
  /** endpoints not told about this event */
  excludedEndpoints: string[];
  /**
   * enqueue the event's customer e-mail job (emailsAbout); `{ optIn }`: only when the merchant
   * switched that kind on (a column of email_settings, whose row is absent until a first PATCH)
   */
  email?: boolean | { optIn: OptInEmailSwitch };
  /**
   * `lead` returns a column `not_before`: the statement's time is at least that (a wallet's ledger
   * row comes after the wallet's latest one, for example); NULL sets no bound
   */
  notBefore?: boolean;
  /**
   * A read run before everything else (CTE `lead`, e.g. a locking read with the change's
   * conditions): the statement writes only when it returns a row, and its columns are `clock`'s
   * too (`clock.balance` …). $1 is the merchant, its own parameters are renumbered like `with`'s.
   */
  lead?: Statement;
  /**
   * The statement runs on its own (autocommit, no transaction around it): it then writes nothing,
   * and returns no row, when more than IDS_PER_EVENT endpoints are subscribed (their deliveries
   * would need a second statement); the caller runs the change again in a transaction. Every
   * `with` statement must take its rows from `clock` (so that it writes nothing either).
   */
  alone?: boolean;
  /** fields of `data.object` set to SQL expressions over `clock` (e.g. `clock.balance`) */
  set?: Record<string, string>;
}

/** A row of recordEvent's statement: its time (and `lead`'s columns), and each subscribed endpoint with its rank (none: one row of nulls). */
export interface EventInsertRow {
  at: Date;
  id: string | null;
  n: bigint | null;
  [leadColumn: string]: unknown;
}

/**
 * One statement: the `with` statements, the event, and a pending attempt with its job for each
 * of the first IDS_PER_EVENT endpoints subscribed to its type (the outbox). Its time is `clock.at`
 * (`at`, else `billingNowSql`); `with` statements may use `(SELECT at FROM clock)`, their
 * parameters are renumbered after the ones before them ($1 stays the merchant).
 */
export function insertEventWithDeliveries(tx: RawTx, e: EventInsert): Promise<EventInsertRow[]> {
  const params: unknown[] = [e.at];
  const ctes: string[] = [];
  /** A statement's parameters renumbered after the ones before it ($1 stays the merchant). */
  const renumber = (st: Statement) => {
    const offset = params.length;
    params.push(...st.params);
    return st.sql.replace(/\$(\d+)\b/g, (m, d: string) => (d === '1' ? m : `$${Number(d) + offset}`));
  };
  if (e.lead) ctes.push(`lead AS MATERIALIZED (${renumber(e.lead)})`);
  const clockAt = ctes.length;
  for (const [i, st] of e.with.entries()) {
    if (e.alone && !/\bFROM clock\b/.test(st.sql)) throw new Error('insertEventWithDeliveries: alone, every `with` statement must select FROM clock');
    ctes.push(`w${i} AS (${renumber(st)})`);
  }
  const p = (v: unknown) => `$${params.push(v) + 1}`;
  const [eventId, typeParam, idsParam, excludedParam] = [p(e.event.id), p(e.event.type), p(e.attemptIds), p(e.excludedEndpoints)];
  const traceParent = `${p(currentTraceparent())}::text`;
  const subscribed = `${subscribedEndpointsWhere(typeParam)} AND e.id <> ALL(${excludedParam}::text[])`;
  // Alone, the deliveries must fit the statement: with more endpoints it writes nothing.
  const gate = e.alone ? ` AND (SELECT count(*) FROM webhook_endpoints e WHERE ${subscribed}) <= ${IDS_PER_EVENT}` : '';
  ctes.splice(
    clockAt,
    0,
    `clock AS (SELECT ${e.lead && e.notBefore ? `greatest(${billingNowSql('m', '$2::timestamptz')}, lead.not_before)` : billingNowSql('m', '$2::timestamptz')} AS at${e.lead ? ', lead.*' : ''} FROM merchants m${e.lead ? ', lead' : ''} WHERE m.id = $1${gate})`,
  );
  let dataSql = `${p(JSON.stringify(e.data))}::jsonb`;
  for (const field of e.stamp) dataSql = `jsonb_set(${dataSql}, ${p(`{object,${field}}`)}::text[], ${ISO_AT})`;
  for (const [field, expr] of Object.entries(e.set ?? {})) dataSql = `jsonb_set(${dataSql}, ${p(`{object,${field}}`)}::text[], to_jsonb(${expr}))`;
  ctes.push(
    `ev AS (INSERT INTO events (id, merchant_id, type, data, created_at) SELECT ${eventId}, $1, ${typeParam}, ${dataSql}, clock.at FROM clock)`,
    `ep AS (SELECT e.id, row_number() OVER (ORDER BY e.created_at, e.id) AS n FROM webhook_endpoints e WHERE ${subscribed})`,
    `src AS (SELECT (${idsParam}::text[])[ep.n] AS id, ep.id AS endpoint_id, clock.at FROM ep, clock WHERE ep.n <= ${IDS_PER_EVENT})`,
    ...outboxCtes('src', eventId, '1', traceParent),
  );
  // The customer e-mail of the event, if its type has one: a job keyed by the event, so it is sent
  // once per event whichever process runs it (src/domain/emails; never SMTP inside this transaction).
  if (e.email) {
    // An opt-in kind (off by default, e.g. upcoming renewals): no job at all unless it is on —
    // email_settings is the emails area's table; the job still reads the switch when it runs.
    const optIn = typeof e.email === 'object' ? ` WHERE EXISTS (SELECT 1 FROM email_settings s WHERE s.merchant_id = $1 AND s.${e.email.optIn})` : '';
    ctes.push(
      `em AS (INSERT INTO jobs (merchant_id, kind, run_at, payload, key, trace_parent, created_at, updated_at)
              SELECT $1, '${EMAIL_JOB}', clock.at, jsonb_build_object('event_id', ${eventId}::text), ${eventId}, ${traceParent}, now(), now() FROM clock${optIn}
              ON CONFLICT (kind, key) DO NOTHING)`,
    );
  }
  return merchantSql(tx.raw, e.event.merchantId)<EventInsertRow>(
    `WITH ${ctes.join(',\n')}\nSELECT clock.*, ep.id, ep.n FROM clock LEFT JOIN ep ON true`,
    params,
  );
}

/** A merchant's active webhook endpoints with the event types each is subscribed to (none: all), in delivery order. */
export function findActiveEndpoints(tx: RawTx, merchantId: string): Promise<{ id: string; events: string[] }[]> {
  return merchantSql(tx.raw, merchantId)<{ id: string; events: string[] }>(
    `SELECT e.id, e.events FROM webhook_endpoints e WHERE e.merchant_id = $1 AND e.status = 'active' AND e.deleted_at IS NULL ORDER BY e.created_at, e.id`,
  );
}

/** One event of a set written by insertEvents: its data, its time, its deliveries (attempt id, endpoint id) and whether it has a customer e-mail. */
export interface EventRow {
  id: string;
  type: string;
  data: object;
  at: Date;
  deliveries: { id: string; endpointId: string }[];
  /** as EventInsert's `email` */
  email: boolean | { optIn: OptInEmailSwitch };
}

/**
 * Many events of one merchant in one statement, each with its outbox (a pending attempt and its
 * job per delivery) and its customer e-mail job: what recordEvent writes for one, for a batch
 * (src/domain/billing/renewals.ts).
 */
export async function insertEvents(tx: RawTx, merchantId: string, events: EventRow[]): Promise<void> {
  if (events.length === 0) return;
  const deliveries = events.flatMap((e) => e.deliveries.map((d) => ({ ...d, eventId: e.id, at: e.at })));
  const mails = events.filter((e) => e.email);
  const optIns = [...new Set(mails.flatMap((e) => (typeof e.email === 'object' ? [e.email.optIn] : [])))];
  // An opt-in kind's job only when its switch is on (as insertEventWithDeliveries).
  const optInWhere = optIns.length === 0 ? '' : ` WHERE x.opt IS NULL ${optIns.map((o) => `OR (x.opt = '${o}' AND EXISTS (SELECT 1 FROM email_settings s WHERE s.merchant_id = $1 AND s.${o}))`).join(' ')}`;
  await merchantSql(tx.raw, merchantId)(
    `WITH ev AS (INSERT INTO events (id, merchant_id, type, data, created_at)
                 SELECT x.id, $1, x.type, x.data, x.at FROM unnest($2::text[], $3::text[], $4::jsonb[], $5::timestamptz[]) AS x(id, type, data, at)),
     src AS (SELECT x.id, x.endpoint_id, x.event_id, x.at FROM unnest($6::text[], $7::text[], $8::text[], $9::timestamptz[]) AS x(id, endpoint_id, event_id, at)),
     ${outboxCtes('src', 's.event_id', '1', '$13::text').join(',\n     ')},
     em AS (INSERT INTO jobs (merchant_id, kind, run_at, payload, key, trace_parent, created_at, updated_at)
            SELECT $1, '${EMAIL_JOB}', x.at, jsonb_build_object('event_id', x.id), x.id, $13::text, now(), now() FROM unnest($10::text[], $11::timestamptz[], $12::text[]) AS x(id, at, opt)${optInWhere}
            ON CONFLICT (kind, key) DO NOTHING)
     SELECT 1`,
    [
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => e.at),
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.endpointId),
      deliveries.map((d) => d.eventId),
      deliveries.map((d) => d.at),
      mails.map((e) => e.id),
      mails.map((e) => e.at),
      mails.map((e) => (typeof e.email === 'object' ? e.email.optIn : null)),
      currentTraceparent(),
    ],
  );
}

/** The pending attempt (ids[i]) and its job for each endpoint (endpointIds[i]) of an event, scheduled at `at`: one statement. */
export async function insertDeliveries(
  tx: RawTx,
  event: Pick<Event, 'id' | 'merchantId'>,
  ids: string[],
  endpointIds: string[],
  at: Date,
  attemptNumber: number,
): Promise<void> {
  await merchantSql(tx.raw, event.merchantId)(
    `WITH src AS (SELECT x.id, x.endpoint_id, $4::timestamptz AS at FROM unnest($5::text[], $6::text[]) AS x(id, endpoint_id)),
     ${outboxCtes('src', '$2', '$3::int', '$7::text').join(',\n     ')}
     SELECT count(*) FROM att`,
    [event.id, attemptNumber, at, ids, endpointIds, currentTraceparent()],
  );
}

/** A page of events (`where`: the filters and the cursor's fragment; `page`: order and take). */
export function findEvents(db: Db, where: Prisma.EventWhereInput, page: PageSlice): Promise<Event[]> {
  return db.event.findMany({ where, ...page });
}

export function countEvents(db: Db, where: Prisma.EventWhereInput): Promise<number> {
  return db.event.count({ where });
}

export function findEvent(db: Db, id: string): Promise<Event | null> {
  return db.event.findUnique({ where: { id } });
}
