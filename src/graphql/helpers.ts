// Shared resolver plumbing: Relay connections from domain pages, mutations with idempotencyKey
// support, and GraphQL input made into the domain's (REST-shaped) input, typed (domainInput).
import type { Ctx } from '../platform/context.ts';
import superjson, { type SuperJSONResult } from 'superjson';
import {
  AppError,
  IdempotencyError,
  InternalError,
  InsufficientBalanceError,
  PaymentFailedError,
  NotFoundError,
  StateError,
  ValidationError,
} from '../platform/errors.ts';
import { runIdempotent, validateKey } from '../platform/idempotency.ts';
import DataLoader from 'dataloader';
import { encodeCursor, type Keyed, type Page } from '../platform/pagination.ts';
import { parse, z } from '../platform/validation.ts';
import { builder, type GraphQLContext } from './builder.ts';

/**
 * GraphQL list arguments through the same zod schema REST uses for the query string, so both
 * give the same answers and the same error codes: `first` is REST's `limit`, camelCase names are
 * snake_case there, DateTimes are ISO strings. Errors name the GraphQL argument.
 */
export function listArgs<S extends z.ZodType>(schema: S, args: Record<string, unknown>): z.output<S> {
  const query: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined || v === null) continue;
    if (k === 'first') query.limit = typeof v === 'number' && Number.isInteger(v) && v >= 0 ? String(v) : '-';
    else query[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v instanceof Date ? v.toISOString() : v;
  }
  try {
    return parse(schema, query);
  } catch (e) {
    if (e instanceof ValidationError && e.param === 'limit') {
      throw new ValidationError(e.code, 'Invalid first: must be an integer between 1 and 100.', 'first');
    }
    throw e;
  }
}

export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  total?: () => Promise<number>;
}

/** A DataLoader living for one request, created on first use. */
export function requestLoader<K, V>(gctx: GraphQLContext, key: string, batch: (keys: readonly K[]) => Promise<V[]>): DataLoader<K, V> {
  let loader = gctx.loaders.get(key) as DataLoader<K, V> | undefined;
  if (!loader) {
    loader = new DataLoader<K, V>(batch, { maxBatchSize: 500 });
    gctx.loaders.set(key, loader);
  }
  return loader;
}

/**
 * A connection under a parent (a customer's payments, a wallet's ledger …): the pages of every
 * parent in the response are loaded together, one batch per distinct argument set, and so is
 * totalCount when asked for.
 */
export async function nestedConnection<T extends Keyed, Q>(
  gctx: GraphQLContext,
  name: string,
  parentId: string,
  query: Q,
  pages: (ctx: Ctx, parentIds: readonly string[], query: Q) => Promise<Map<string, Page<T>>>,
  counts: (ctx: Ctx, parentIds: readonly string[], query: Q) => Promise<Map<string, number>>,
): Promise<Connection<T>> {
  const key = `${name}:${JSON.stringify(query)}`;
  const page = await requestLoader<string, Page<T>>(gctx, key, async (ids) => {
    const byParent = await pages(gctx.ctx, ids, query);
    return ids.map((id) => byParent.get(id)!);
  }).load(parentId);
  const total = () =>
    requestLoader<string, number>(gctx, `${key}:count`, async (ids) => {
      const byParent = await counts(gctx.ctx, ids, query);
      return ids.map((id) => byParent.get(id) ?? 0);
    }).load(parentId);
  return toConnection({ ...page, total });
}

export function toConnection<T extends Keyed>(page: Page<T>): Connection<T> {
  const edges = page.data.map((node) => ({ cursor: encodeCursor(node), node }));
  return {
    ...(page.total ? { total: page.total } : {}),
    edges,
    pageInfo: {
      hasNextPage: page.hasMore,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

/** camelCase → snake_case, as the type of a key (domainInput renames at runtime the same way). */
type Snake<S extends string> = S extends `${infer C}${infer R}` ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${Snake<R>}` : S;
const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The zod input type of field `K` of an object schema's input `Z` (unknown when it has none). */
type FieldOf<Z, K extends string> = Z extends object ? (K extends keyof Z ? Z[K] : unknown) : unknown;

/**
 * One GraphQL value as the domain takes it: a DateTime as its ISO string, a nested input object
 * field by field, a list item by item. Where GraphQL's type is a plain scalar looser than the
 * schema's — JSON (`unknown`: metadata), a String where the schema takes one of a set of strings
 * (webhook event types) — the value is typed as the schema's input: zod checks it when the domain
 * parses, exactly as it checks a REST body. Enums, numbers, booleans, DateTimes and objects must match.
 */
type DomainValue<V, Z> = unknown extends V
  ? Z
  : string extends V
    ? [NonNullable<Z>] extends [string] ? NonNullable<Z> : V
    : V extends Date
    ? string
    : V extends readonly (infer E)[]
      ? DomainValue<E, NonNullable<Z> extends readonly (infer ZE)[] ? ZE : unknown>[]
      : V extends object
        ? DomainInput<V, NonNullable<Z>>
        : V;

/** A field: `null` is in the type only where the schema accepts it (elsewhere the parse refuses it). */
type DomainField<V, Z> = unknown extends V
  ? Z
  : null extends V
    ? DomainValue<NonNullable<V>, Z> | (null extends Z ? null : never)
    : DomainValue<V, Z>;

/** What `domainInput` makes of GraphQL input fields `I` for an object schema with input type `Z`. */
export type DomainInput<I, Z> = { [K in keyof I as Snake<K & string>]: DomainField<I[K], FieldOf<Z, Snake<K & string>>> };

/** Every field of `I` (and of its nested input objects) names a field of the schema's input `Z`. */
type KnownFields<I, Z> = {
  [K in keyof I]: Snake<K & string> extends keyof NonNullable<Z>
    ? unknown extends I[K]
      ? I[K]
      : NonNullable<I[K]> extends Date | readonly unknown[]
        ? I[K]
        : NonNullable<I[K]> extends object
          ? KnownFields<NonNullable<I[K]>, NonNullable<NonNullable<Z>[Snake<K & string> & keyof NonNullable<Z>]>> | Extract<I[K], null | undefined>
          : I[K]
    : never;
};

/** The object schema under optional, nullable, default and pipe wrappers (its `in` side). */
function unwrap(s: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  for (let i = 0; s && i < 16; i++) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
    else if (s instanceof z.ZodDefault) s = s.removeDefault();
    else if (s instanceof z.ZodPipe) s = s.in;
    else return s;
  }
  return s;
}

function toDomain(value: unknown, schema: z.core.$ZodType | undefined): unknown {
  if (value instanceof Date) return value.toISOString();
  const s = unwrap(schema);
  if (Array.isArray(value)) return value.map((v) => toDomain(v, s instanceof z.ZodArray ? s.element : undefined));
  // Only input objects are renamed; anything else (a JSON value: metadata's keys are the merchant's) goes as given.
  if (value === null || typeof value !== 'object' || !(s instanceof z.ZodObject)) return value;
  const shape: Record<string, z.core.$ZodType> = s.shape;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const key = snake(k);
    const field = shape[key];
    // null goes to the schema as sent: where REST accepts it, it keeps its meaning ("clear");
    // where REST refuses it, the schema refuses it here too, with the same code and param.
    out[key] = toDomain(v, field);
  }
  return out;
}

/**
 * GraphQL input fields as the domain function's input for `schema` (the zod schema it parses
 * with, the one REST validates the body with): camelCase names in snake_case, DateTimes as ISO
 * strings, and **`null` exactly as REST takes it**: on a field the schema accepts `null` for, it
 * keeps its REST meaning (clear the value: a customer's name, a subscription's payment method …);
 * anywhere else the domain's parse refuses it as REST does (`parameter_invalid` naming the field)
 * — never read as "not given", which would turn a refund's `amount: null` into a full refund.
 * The result's type is checked by tsc against the domain function's parameter (it describes the
 * valid input: a refused null never gets past the parse); a field the schema does not have is a
 * type error here.
 */
export function domainInput<S extends z.ZodType, I extends KnownFields<I, z.input<S>>>(schema: S, fields: I): DomainInput<I, z.input<S>> {
  // The one assertion on the input path: the renaming above mirrors DomainInput (test/unit/graphql-rest-inputs.test.ts).
  return toDomain(fields, schema) as DomainInput<I, z.input<S>>;
}

interface StoredError {
  error: {
    type: string;
    code: string;
    message: string;
    param: string | null;
    balance?: number;
    invoice_id?: string;
    last_payment_error?: { code: string; message: string };
  };
}

/** What an error carries besides code, message and param (stored with the key, restored on a replay). */
function errorExtras(err: AppError) {
  if (err instanceof InsufficientBalanceError) return { balance: Number(err.balance) };
  if (err instanceof PaymentFailedError) return { invoice_id: err.invoiceId, last_payment_error: err.lastPaymentError };
  return {};
}

function restoreError(status: number, body: StoredError): AppError {
  const { type, code, message, param } = body.error;
  let e: AppError;
  if (status === 404) e = new NotFoundError('record', null, param);
  else if (status === 402 && type === 'card_error' && body.error.invoice_id && body.error.last_payment_error) {
    e = new PaymentFailedError(body.error.invoice_id, body.error.last_payment_error);
  } else if (status === 402) e = new InsufficientBalanceError(message, BigInt(body.error.balance ?? 0), param);
  else if (type === 'idempotency_error') e = new IdempotencyError(code, message, param);
  else if (type === 'state_error') e = new StateError(code, message, param);
  else if (status >= 500) e = new InternalError();
  else e = new ValidationError(code, message, param);
  e.message = message;
  return e;
}

/** Options of a mutation that commits several steps around a processor call: its idempotencyKey runs it phased (recovery points). */
export const PHASED = { phased: true } as const;

/**
 * Runs a mutation. With an idempotencyKey, the first run's result is stored (serialised with its
 * dates and 64-bit amounts) right after the operation commits; a repeat returns exactly that
 * result — not a fresh read, so e.g. a replayed createWebhookEndpoint shows the secret it
 * created even after a rotation — or the same error, without doing the work again. `work` gets
 * the input's other fields as GraphQL typed them (path ids as they are, a body through
 * `domainInput`); the key's fingerprint is of those fields as given.
 */
export async function mutate<In extends { idempotencyKey?: string | null }, T>(
  gctx: GraphQLContext,
  operation: string,
  input: In,
  work: (ctx: Ctx, fields: Omit<In, 'idempotencyKey'>) => Promise<T>,
  opts: { phased?: boolean } = {},
): Promise<T> {
  const { idempotencyKey, ...rest } = input;
  if (idempotencyKey === undefined || idempotencyKey === null) return work(gctx.ctx, rest);
  validateKey(idempotencyKey, 'idempotencyKey');
  const ctx = gctx.ctx;
  let result: T | undefined;
  const outcome = await runIdempotent(
    gctx.services.db.prisma,
    { merchantId: ctx.merchant.id, key: idempotencyKey, scope: `graphql ${operation}`, payload: rest, operation: `graphql ${operation}` },
    async (db, run) => {
      result = await work({ ...ctx, db, idempotency: run }, rest);
      return { status: 200, body: { result: superjson.serialize(result) } };
    },
    (err) => ({ status: err.status, body: { error: { type: err.type, code: err.code, message: err.message, param: err.param, ...errorExtras(err) } } }),
    { mode: opts.phased ? 'phased' : 'atomic', leaseMs: ctx.runtime.idempotencyLeaseMs, log: ctx.log },
  );
  if (!outcome.replayed) return result!;
  if (outcome.response.status >= 400) throw restoreError(outcome.response.status, outcome.response.body as StoredError);
  return superjson.deserialize<T>((outcome.response.body as { result: SuperJSONResult }).result);
}

/** For `thing(id:)` queries: a missing (or other merchant's) record is null, not an error. */
export async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

/** A Relay connection type with `totalCount` (the list's size with its filters, counted only when selected). */
export function connectionType<Ref extends Parameters<typeof builder.connectionObject>[0]['type']>(type: Ref, name: string) {
  return builder.connectionObject(
    {
      type,
      name: `${name}Connection`,
      fields: (t) => ({
        totalCount: t.int({
          description: 'How many items the list has with these filters (not only this page). Costs a count query: select it only when shown.',
          resolve: async (c) => {
            const total = (c as unknown as Connection<unknown>).total;
            if (!total) throw new Error(`${name}Connection without a count`);
            return total();
          },
        }),
      }),
    },
    { name: `${name}Edge` },
  );
}
