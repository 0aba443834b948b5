// Expected failures are data: every mutation returns a union of its success type and these
// error types, which all implement the `Error` interface (code, message, param) and use the
// same codes as REST. Unexpected errors are masked by Yoga.
import {
  AppError,
  IdempotencyError,
  InsufficientBalanceError,
  NotFoundError,
  StateError,
  ValidationError,
} from '../platform/errors.ts';
import { builder } from './builder.ts';
import { getNamedType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { paramPath, paramSegments } from '../platform/validation.ts';

/**
 * The GraphQL spelling of what an error names. The domain speaks REST's names (snake_case:
 * `default_tax_rates`, `lines[0][invoice_line_id]`); GraphQL's input fields and arguments are
 * camelCase. Errors on this surface — the `Error` interface's `message` and `param`, and the
 * `message` and `extensions.param` of query errors (yoga.ts) — are rewritten here, in one place,
 * from the schema's own names, not per resolver:
 * - `param`: each segment of the path camelCased, except the keys inside a JSON field (metadata's
 *   keys are the merchant's own: `metadata[order_id]` stays);
 * - `message`: the param where it appears, and every other REST name of an input field or
 *   argument of the schema (outside quoted values: `'summer_sale'` is a value, not a field).
 */
interface GraphQLNames {
  /** snake_case → the GraphQL name, for every input field and argument whose names differ */
  bySnake: Map<string, string>;
  /** GraphQL names of input fields typed JSON: the keys below them are data */
  opaque: Set<string>;
}

const namesCache = new WeakMap<GraphQLSchema, GraphQLNames>();
const snakeOf = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camelOf = (name: string) => name.replace(/_([a-z0-9])/g, (_, ch: string) => ch.toUpperCase());

function namesOf(schema: GraphQLSchema): GraphQLNames {
  let names = namesCache.get(schema);
  if (names) return names;
  names = { bySnake: new Map(), opaque: new Set() };
  const add = (name: string) => {
    const snake = snakeOf(name);
    if (snake !== name) names!.bySnake.set(snake, name);
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isInputObjectType(type)) {
      for (const f of Object.values(type.getFields())) {
        add(f.name);
        if (getNamedType(f.type).name === 'JSON') names.opaque.add(f.name);
      }
    } else if (isObjectType(type) || isInterfaceType(type)) {
      for (const f of Object.values(type.getFields())) for (const a of f.args) add(a.name);
    }
  }
  namesCache.set(schema, names);
  return names;
}

/** An error's `param` as GraphQL names it (camelCase segments; a JSON field's keys as given). */
export function graphqlParam(param: string | null, schema: GraphQLSchema): string | null {
  if (!param) return null;
  const { opaque } = namesOf(schema);
  let data = false;
  const out = paramSegments(param).map((seg) => {
    if (data || /^[0-9]+$/.test(seg)) return seg;
    const name = camelOf(seg);
    if (opaque.has(name)) data = true;
    return name;
  });
  return paramPath(out);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** REST names of fields and arguments in a piece of a message, outside quoted values, as GraphQL spells them. */
function renameFields(text: string, bySnake: Map<string, string>): string {
  return text
    .split(/('[^']*'|"[^"]*")/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g, (tok) => bySnake.get(tok) ?? tok)))
    .join('');
}

/** An error's message as GraphQL names things: its param, then the other REST field names in it. */
export function graphqlMessage(message: string, param: string | null, schema: GraphQLSchema): string {
  const { bySnake } = namesOf(schema);
  if (!param) return renameFields(message, bySnake);
  const gql = graphqlParam(param, schema)!;
  const at = new RegExp(`(?<![A-Za-z0-9_\\]])${escape(param)}(?![A-Za-z0-9_\\[])`);
  return message
    .split(at)
    .map((part) => renameFields(part, bySnake))
    .join(gql);
}

export const ErrorInterface = builder.interfaceRef<AppError>('Error').implement({
  description: 'A failure the caller can act on. `code` is the same code the REST API returns.',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'Machine-readable code, e.g. parameter_invalid, resource_missing.' }),
    message: t.string({
      description: 'Human-readable explanation, naming the GraphQL input fields (camelCase).',
      resolve: (e, _args, _ctx, info) => graphqlMessage(e.message, e.param, info.schema),
    }),
    param: t.string({
      nullable: true,
      description: 'The input field the error is about: its GraphQL name, nested fields in brackets (`lines[0][invoiceLineId]`, `metadata[order_id]`).',
      resolve: (e, _args, _ctx, info) => graphqlParam(e.param, info.schema),
    }),
  }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  description: 'An input is missing, unknown or invalid (parameter_missing, parameter_invalid, amount_too_large …).',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof ValidationError,
  fields: () => ({}),
});

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  description: 'No such record for this merchant (resource_missing).',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof NotFoundError,
  fields: () => ({}),
});

builder.objectType(StateError, {
  name: 'StateError',
  description: "The record's current state does not allow the operation.",
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof StateError,
  fields: () => ({}),
});

builder.objectType(IdempotencyError, {
  name: 'IdempotencyError',
  description: 'The idempotencyKey was used with other input (idempotency_key_reused) or is still in use (idempotency_key_in_use).',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof IdempotencyError,
  fields: () => ({}),
});

builder.objectType(InsufficientBalanceError, {
  name: 'InsufficientBalanceError',
  description: 'The wallet balance does not cover the debit.',
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof InsufficientBalanceError,
  fields: (t) => ({
    balance: t.field({ type: 'Money', description: 'The balance that was available.', resolve: (e) => e.balance }),
  }),
});

/** Error types every mutation can return. */
export const COMMON_ERRORS = [ValidationError, IdempotencyError];
