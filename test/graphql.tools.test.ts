// GraphQL as tools use it: the standard introspection query every client sends (GraphiQL,
// codegen, Apollo/urql devtools), rebuilt into a schema that must print exactly as the committed
// schema.graphql.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isObjectType,
  printSchema,
  type IntrospectionQuery,
} from 'graphql';
import { schema } from '../src/graphql/schema.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

describe('introspection', () => {
  it('answers the full standard introspection query, and the schema it describes is schema.graphql', async () => {
    const query = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    const r = await api.gql<IntrospectionQuery>(query);
    expect(r.errors).toBeUndefined();
    expect(r.status).toBe(200);
    // No type is taken for the root subscription type (the billing one is BillingSubscription).
    expect(r.data.__schema.subscriptionType).toBeNull();
    // Exactly as committed: no sorting on this side.
    const printed = printSchema(buildClientSchema(r.data)) + '\n';
    expect(printed).toBe(readFileSync(join(import.meta.dirname, '..', 'schema.graphql'), 'utf8'));
  });

  it('answers GraphiQL’s default introspection query too', async () => {
    const r = await api.gql(getIntrospectionQuery());
    expect(r.errors).toBeUndefined();
    expect(r.data.__schema.types.length).toBeGreaterThan(50);
  });

  it('refuses introspection that nests deeper than any tool needs', async () => {
    let sel = 'name';
    for (let i = 0; i < 16; i++) sel = `ofType { ${sel} }`;
    const r = await api.gql(`{ __type(name: "Customer") { fields { type { ${sel} } } } }`);
    expect(r.data ?? null).toBeNull();
    expect(r.errors?.[0]).toMatchObject({ message: 'Query depth limit of 16 exceeded, found 20.', extensions: { code: 'query_too_deep' } });
  });

  it('refuses introspection that multiplies the type graph (fields of types of fields …)', async () => {
    const r = await api.gql('{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }');
    expect(r.data ?? null).toBeNull();
    expect(r.errors?.[0]).toMatchObject({ message: 'Maximum introspection depth exceeded', extensions: { code: 'query_too_deep' } });
  });

  it('answers one __schema per operation: aliases cannot multiply the schema', async () => {
    const sel = '__schema { types { fields { args { description } } } }';
    const two = await api.gql(`{ a: ${sel} b: ${sel} }`);
    expect(two.data ?? null).toBeNull();
    expect(two.errors?.[0]).toMatchObject({ message: 'At most 1 `__schema` field per operation, found 2.', extensions: { code: 'too_much_introspection' } });
    // Hidden in fragments, the same.
    const spread = await api.gql(`{ ...A ...B } fragment A on Query { a: ${sel} } fragment B on Query { ... on Query { b: ${sel} } }`);
    expect(spread.errors?.[0].extensions.code).toBe('too_much_introspection');
    const types = Array.from({ length: 11 }, (_, i) => `t${i}: __type(name: "Customer") { name }`).join(' ');
    const many = await api.gql(`{ ${types} }`);
    expect(many.errors?.[0]).toMatchObject({ message: 'At most 10 `__type` fields per operation, found 11.' });
    const ten = await api.gql(`{ ${types.replace(/ t10: .*$/, '')} }`);
    expect(ten.errors).toBeUndefined();
    expect(ten.data.t9).toEqual({ name: 'Customer' });
  });
});

describe('documents the parser could choke on', () => {
  it('refuses deeply nested literals before parsing them (no stack overflow, no 500)', async () => {
    for (const n of [129, 1999, 5000, 50_000]) {
      const r = await api.gql(`{ __type(name: ${'['.repeat(n)}"x"${']'.repeat(n)}) { name } }`);
      expect(r.status).toBeLessThan(500);
      expect(r.errors?.[0]).toMatchObject({ message: 'Document nesting limit of 128 exceeded.', extensions: { code: 'query_too_deep' } });
    }
    const objects = `{ createCustomer(input: { metadata: ${'{ a: '.repeat(3000)}1${' }'.repeat(3000)} }) { __typename } }`;
    const r = await api.gql(objects.replace('{ createCustomer', 'mutation { createCustomer'));
    expect(r.errors?.[0].extensions.code).toBe('query_too_deep');
    // Brackets inside strings and comments are not nesting.
    const quoted = await api.gql(`# ${'['.repeat(500)}\n{ __type(name: "${'['.repeat(500)}") { name } }`);
    expect(quoted.errors).toBeUndefined();
    expect(quoted.data).toEqual({ __type: null });
  });

  it('reports the token limit with a code, not as a syntax error', async () => {
    const r = await api.gql(`{ ${Array.from({ length: 2100 }, () => '__typename').join(' ')} }`);
    expect(r.errors?.[0]).toMatchObject({ message: 'Token limit of 2000 exceeded.', extensions: { code: 'query_too_large', limit: 2000 } });
  });

  it('reports a query over the cost limit with a code', async () => {
    const r = await api.gql('{ customers(first: 100) { edges { node { payments(first: 100) { edges { node { id } } } } } } }');
    expect(r.errors?.[0].extensions.code).toBe('query_too_complex');
    expect(r.errors?.[0].message).toMatch(/^Query cost limit of \d+ exceeded, found \d+/);
  });

  it('reports too many aliases as a validation error, not a syntax error', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `a${i}: testClock { now }`).join(' ');
    const r = await api.gql(`{ ${many} }`);
    expect(r.errors?.[0]).toMatchObject({ message: 'Aliases limit of 100 exceeded, found 101.', extensions: { code: 'too_many_aliases' } });
  });
});

describe('the schema a dashboard relies on', () => {
  const types = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith('__'));

  it('every mutation takes an input with idempotencyKey', () => {
    const mutations = Object.values(schema.getMutationType()!.getFields());
    expect(mutations.length).toBeGreaterThan(15);
    for (const m of mutations) {
      const input = m.args.find((a) => a.name === 'input');
      const type = input && getNamedType(input.type);
      expect(type && isInputObjectType(type) && 'idempotencyKey' in type.getFields(), m.name).toBe(true);
    }
  });

  it('every status, type and outcome is an enum, never a free string', () => {
    for (const t of types) {
      if (!isObjectType(t) && !isInputObjectType(t)) continue;
      for (const [name, field] of Object.entries(t.getFields())) {
        if (['status', 'outcome', 'reason', 'locale'].includes(name) || (name === 'type' && t.name !== 'Event')) {
          expect(isEnumType(getNamedType(field.type)), `${t.name}.${name}`).toBe(true);
        }
      }
    }
  });

  it('every connection has totalCount and every list field under a node is a connection or a relation', () => {
    const connections = types.filter((t) => t.name.endsWith('Connection'));
    expect(connections.length).toBeGreaterThanOrEqual(9);
    for (const c of connections) expect(isObjectType(c) && 'totalCount' in c.getFields(), c.name).toBe(true);
  });

  it('no object field is untyped JSON except metadata and the REST representation in event data', () => {
    for (const t of types) {
      if (!isObjectType(t)) continue;
      for (const [name, field] of Object.entries(t.getFields())) {
        if (getNamedType(field.type).name !== 'JSON') continue;
        expect(['metadata', 'EventData.object', 'EventData.previousAttributes'].some((ok) => ok === name || ok === `${t.name}.${name}`), `${t.name}.${name}`).toBe(true);
      }
    }
  });
});
