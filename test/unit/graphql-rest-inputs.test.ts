// Each GraphQL mutation takes the same fields as the REST route of the same operation (its
// operationId is the mutation's name): same names (camelCase ↔ snake_case), same required-ness,
// nested input objects field by field, enums with the same values. A field added to one surface
// and not the other, or required on one only, fails here. The types are tsc's part: resolvers
// hand `domainInput(schema, fields)` to the domain function, typed from the Pothos input and the
// zod schema (src/graphql/helpers.ts); the runtime half of that is checked at the end.
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
} from 'graphql';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { domainInput } from '../../src/graphql/helpers.ts';
import { schema } from '../../src/graphql/schema.ts';
import { routes } from '../../src/rest/index.ts';

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** A schema under its optional, nullable, default and pipe wrappers. */
function unwrap(s: z.ZodType): any {
  let t: any = s;
  for (let i = 0; i < 16 && t?.def && ['optional', 'nullable', 'default', 'pipe'].includes(t.def.type); i++) t = t.def.in ?? t.def.innerType;
  return t;
}

/**
 * What a field is, as far as both surfaces can say it: required or not, a list, an object's
 * fields, an enum's values. A GraphQL String may stand for a REST enum (webhook event types: zod
 * refuses other strings, for both surfaces); a GraphQL enum must have exactly the REST values.
 */
type Shape = { required: boolean; list: boolean; fields?: Record<string, Shape>; values?: string[] };

function zodShape(s: z.ZodType): Shape {
  const required = !s.safeParse(undefined).success;
  let t = unwrap(s);
  const list = t?.def?.type === 'array';
  if (list) t = unwrap(t.def.element);
  const shape: Shape = { required, list };
  if (t?.def?.type === 'object') shape.fields = zodFields(t);
  if (t?.def?.type === 'enum') shape.values = Object.values(t.def.entries as Record<string, string>).sort();
  return shape;
}

function zodFields(s: z.ZodType): Record<string, Shape> {
  const t = unwrap(s);
  const out: Record<string, Shape> = {};
  for (const [k, v] of Object.entries((t?.shape ?? {}) as Record<string, z.ZodType>)) out[k] = zodShape(v);
  return out;
}

const looseStrings = new WeakSet<Shape>();

/** The REST side without the enum values a GraphQL String stands for. */
function loosen(rest: Record<string, Shape>, gql: Record<string, Shape>): Record<string, Shape> {
  const out: Record<string, Shape> = {};
  for (const [k, r] of Object.entries(rest)) {
    const g = gql[k];
    const { values, fields, ...shape } = r;
    out[k] = {
      ...shape,
      ...(fields ? { fields: g?.fields ? loosen(fields, g.fields) : fields } : {}),
      ...(values && !(g && looseStrings.has(g)) ? { values } : {}),
    };
  }
  return out;
}

function graphqlShape(type: GraphQLInputType, hasDefault: boolean): Shape {
  const inner = getNullableType(type);
  const named = getNamedType(type);
  const shape: Shape = { required: isNonNullType(type) && !hasDefault, list: isListType(inner) };
  if (isInputObjectType(named)) shape.fields = graphqlFields(named, new Set());
  // JSON (metadata) is a record on the REST side: neither has fields to compare.
  if (isEnumType(named)) shape.values = named.getValues().map((v) => String(v.value)).sort();
  if (named.name === 'String') looseStrings.add(shape);
  return shape;
}

function graphqlFields(input: GraphQLInputObjectType, skip: Set<string>): Record<string, Shape> {
  const out: Record<string, Shape> = {};
  for (const f of Object.values(input.getFields())) {
    if (skip.has(f.name)) continue;
    out[snake(f.name)] = graphqlShape(f.type, f.defaultValue !== undefined);
  }
  return out;
}

/** Fields a REST schema accepts `null` for (it means "clear"), as dotted paths. */
function nullableFields(s: z.ZodType, prefix = ''): string[] {
  const t = unwrap(s);
  return Object.entries((t?.shape ?? {}) as Record<string, z.ZodType>).flatMap(([k, v]) => [
    ...(v.safeParse(null).success ? [prefix + k] : []),
    ...(unwrap(v)?.def?.type === 'object' ? nullableFields(v, `${prefix}${k}.`) : []),
  ]);
}

function graphqlNullable(input: GraphQLInputObjectType, path: string): boolean {
  const [head, ...rest] = path.split('.');
  const f = input.getFields()[camel(head!)];
  if (!f) return false;
  if (rest.length === 0) return !isNonNullType(f.type);
  const named = getNamedType(f.type);
  return isInputObjectType(named) && graphqlNullable(named, rest.join('.'));
}

const mutations = schema.getMutationType()!.getFields();
const withInput = Object.values(mutations).filter((m) => m.args.some((a) => a.name === 'input'));
/** Mutations with no REST route of their name, and where REST does the same. */
const GRAPHQL_ONLY: Record<string, string> = {
  setDefaultPaymentMethod: 'PATCH /v1/customers/{id} with default_payment_method_id',
  createApiKey: 'none: API keys are managed with the CLI and over GraphQL (the dashboard)',
  revokeApiKey: 'none: API keys are managed with the CLI and over GraphQL (the dashboard)',
};
/** Path parameters the GraphQL input names after what they identify. */
const PATH_NAMES: Record<string, Record<string, string>> = { createWalletTopup: { id: 'walletId' } };
const paired = routes.filter((r) => mutations[r.operationId] && withInput.includes(mutations[r.operationId]!));

function inputOf(name: string): GraphQLInputObjectType {
  const arg = mutations[name]!.args.find((a) => a.name === 'input')!;
  const input = getNamedType(getNullableType(arg.type));
  if (!isInputObjectType(input)) throw new Error(`${name}: input is not an input object`);
  return input;
}

describe('GraphQL inputs and REST bodies', () => {
  it('pairs every mutation that takes an input with a REST route (or says why not)', () => {
    const unpaired = withInput.map((m) => m.name).filter((n) => !routes.some((r) => r.operationId === n));
    expect(unpaired.sort()).toEqual(Object.keys(GRAPHQL_ONLY).sort());
    expect(paired.length).toBeGreaterThanOrEqual(30);
  });

  for (const route of paired) {
    it(`${route.operationId}: the same fields, equally required (${route.method.toUpperCase()} ${route.path})`, () => {
      const input = inputOf(route.operationId);
      // The path's parameters ({id}, {customer_id} …) are required fields of the GraphQL input.
      const pathParams = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => PATH_NAMES[route.operationId]?.[m[1]!] ?? camel(m[1]!));
      for (const p of pathParams) expect(input.getFields()[p]?.type.toString(), `path parameter ${p}`).toBe('ID!');
      const idem = input.getFields().idempotencyKey;
      expect(idem && !isNonNullType(idem.type), 'an optional idempotencyKey').toBe(true);

      const gql = graphqlFields(input, new Set(['idempotencyKey', ...pathParams]));
      // A route without a body: the input is its path and the key, nothing else.
      const rest = route.body ? zodFields(route.body as z.ZodType) : {};
      if (route.body) expect(Object.keys(rest).length, 'an object body').toBeGreaterThan(0);
      expect(gql).toEqual(loosen(rest, gql));
    });
  }

  it('lets GraphQL send null wherever REST gives null a meaning (clearing a value)', () => {
    const found: string[] = [];
    for (const route of paired.filter((r) => r.body)) {
      for (const path of nullableFields(route.body as z.ZodType)) {
        found.push(`${route.operationId}.${path}`);
        expect(graphqlNullable(inputOf(route.operationId), path), `${route.operationId}.${path}`).toBe(true);
      }
    }
    expect(found).toContain('updateCustomer.name');
    expect(found).toContain('updateSubscription.payment_method_id');
    expect(found).toContain('updateWebhookEndpoint.description');
  });
});

describe('domainInput: GraphQL fields as the domain input', () => {
  const body = z.strictObject({
    display_name: z.string().nullable().optional(),
    cancel_url: z.string().optional(),
    trial_end: z.string().optional(),
    count: z.number(),
    customer: z.strictObject({ email: z.string(), phone_number: z.string().optional() }).optional(),
    methods: z.array(z.enum(['card', 'mobile_money'])).optional(),
    metadata: z.record(z.string(), z.string()).optional(),
  });
  type Fields = {
    displayName?: string | null;
    cancelUrl?: string | null;
    trialEnd?: Date | null;
    count: number;
    customer?: { email: string; phoneNumber?: string | null } | null;
    methods?: ('card' | 'mobile_money')[] | null;
    metadata?: unknown;
  };

  it('renames to snake_case and passes null as sent: kept where it means "clear", refused by the schema elsewhere', () => {
    const at = new Date('2030-01-02T03:04:05.000Z');
    const fields: Fields = {
      displayName: null,
      cancelUrl: null,
      trialEnd: at,
      count: 2,
      customer: { email: 'a@example.com', phoneNumber: null },
      methods: ['card'],
      metadata: { orderId: 'x', camelKey: 'kept' },
    };
    const out = domainInput(body, fields);
    expect(out).toEqual({
      display_name: null,
      cancel_url: null,
      trial_end: '2030-01-02T03:04:05.000Z',
      count: 2,
      customer: { email: 'a@example.com', phone_number: null },
      methods: ['card'],
      metadata: { orderId: 'x', camelKey: 'kept' },
    });
    // null where the schema refuses it is refused, naming the field, as a REST body would be
    const refused = body.safeParse(out);
    expect(refused.success).toBe(false);
    expect(refused.error!.issues.map((i) => i.path.join('.')).sort()).toEqual(['cancel_url', 'customer.phone_number']);
    const { cancel_url: _c, customer: _cu, ...valid } = out;
    expect(body.parse({ ...valid, customer: { email: 'a@example.com' } })).toEqual({ ...valid, customer: { email: 'a@example.com' } });
    expect(domainInput(body, { count: 1, metadata: null })).toEqual({ count: 1, metadata: null });
  });

  it('is typed as the schema input takes it', () => {
    const fields: Fields = { count: 1 };
    const out = domainInput(body, fields);
    expectTypeOf(out).toExtend<z.input<typeof body>>();
    expectTypeOf(out.display_name).toEqualTypeOf<string | null | undefined>();
    expectTypeOf(out.cancel_url).toEqualTypeOf<string | undefined>();
    expectTypeOf(out.trial_end).toEqualTypeOf<string | undefined>();
    expectTypeOf(out.customer).toEqualTypeOf<{ email: string; phone_number?: string | undefined } | undefined>();
    expectTypeOf(out.metadata).toEqualTypeOf<Record<string, string> | undefined>();
    // A field the schema does not have is a type error.
    // @ts-expect-error cancelURL is not a field of the schema (cancel_u_r_l)
    domainInput(body, { count: 1, cancelURL: 'x' });
    // @ts-expect-error nor is a nested one
    domainInput(body, { count: 1, customer: { email: 'a@example.com', phone: 'x' } });
  });
});
