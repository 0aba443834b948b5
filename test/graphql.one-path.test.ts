// Every GraphQL operation takes one path, Yoga's envelop: a plugin added to the server (as tracing
// or metrics would be) sees every parse, validation and execution, whatever the method, the
// Accept header, or how often the same document was sent before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

const seen = { parse: 0, validate: 0, execute: [] as string[], done: 0 };
const counter: Plugin = {
  onParse: () => void seen.parse++,
  onValidate: () => void seen.validate++,
  onExecute({ args }) {
    const op = getOperationAST(args.document, args.operationName ?? undefined);
    seen.execute.push(`${op?.operation}:${op?.name?.value ?? '-'}`);
    return { onExecuteDone: () => void seen.done++ };
  },
};

let app: TestApp;
let api: Client;
beforeAll(async () => {
  app = await startApp({}, { graphqlPlugins: [counter] });
  api = await app.merchant();
});
afterAll(() => app?.close());

function reset() {
  seen.parse = 0;
  seen.validate = 0;
  seen.execute = [];
  seen.done = 0;
}

describe('one GraphQL execution path', () => {
  it('runs repeated queries, GETs, mutations and event-stream requests through every plugin', async () => {
    const c = (await api.post('/v1/customers', { email: 'path@example.com' })).body;
    const query = `query One($id: ID!) { node(id: $id) { id ... on Customer { email } } }`;
    reset();
    for (let i = 0; i < 3; i++) {
      const r = await api.post('/graphql', { query, variables: { id: c.id } });
      expect(r.body.data.node.email).toBe('path@example.com');
    }
    const get = await api.get(`/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id: c.id }))}`);
    expect(get.body.data.node.id).toBe(c.id);
    const m = await api.post('/graphql', {
      query: `mutation Rename($id: ID!) { updateCustomer(input: { id: $id, name: "Renamed" }) { __typename } }`,
      variables: { id: c.id },
    });
    expect(m.status).toBe(200);
    expect(m.body.errors).toBeUndefined();
    const sse = await api.post('/graphql', { query, variables: { id: c.id } }, { accept: 'text/event-stream' });
    expect(sse.status).toBe(200);
    expect(sse.text).toContain('path@example.com');
    expect(seen.execute).toEqual(['query:One', 'query:One', 'query:One', 'query:One', 'mutation:Rename', 'query:One']);
    expect(seen.done).toBe(6);
    expect(seen.parse).toBe(6);
    expect(seen.validate).toBe(6);
  });

  it('sees documents that are refused too, and executes none of them', async () => {
    reset();
    const bad = await api.post('/graphql', { query: '{ node(id: ' });
    expect(bad.body.errors[0].extensions.code).toBe('invalid_query');
    const invalid = await api.post('/graphql', { query: '{ nope }' });
    expect(invalid.body.errors[0].extensions.code).toBe('invalid_query');
    const again = await api.post('/graphql', { query: '{ nope }' });
    expect(again.body).toEqual(invalid.body);
    const vars = await api.post('/graphql', { query: 'query Q($id: ID!) { node(id: $id) { id } }', variables: [1] });
    expect(vars.status).toBe(400);
    expect(vars.body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'variables' });
    const extra = await api.post('/graphql', { query: '{ __typename }', surprise: 1 });
    expect(extra.status).toBe(400);
    expect(extra.body.errors[0].message).toBe('Unexpected parameter "surprise" in the request body.');
    expect(seen.execute).toEqual([]);
    expect(seen.parse).toBe(3);
    expect(seen.validate).toBe(2);
  });
});
