// GraphQL as tools use it: the standard introspection query every client sends (GraphiQL,
// codegen, Apollo/urql devtools), rebuilt into a schema that must print exactly as the committed
// schema.graphql.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildClientSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema, type IntrospectionQuery } from 'graphql';
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
    const printed = printSchema(lexicographicSortSchema(buildClientSchema(r.data))) + '\n';
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
    expect(r.errors?.[0].message).toMatch(/maximum introspection depth/i);
  });

  it('reports too many aliases as a validation error, not a syntax error', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `a${i}: testClock { now }`).join(' ');
    const r = await api.gql(`{ ${many} }`);
    expect(r.errors?.[0]).toMatchObject({ message: 'Aliases limit of 100 exceeded, found 101.', extensions: { code: 'too_many_aliases' } });
  });
});
