import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedSchema } from '../src/graphql/schema.ts';
import { send, startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

const RESULT = `__typename ... on Error { code message param }`;

describe('GraphQL schema', () => {
  it('schema.graphql is the printed schema of the code (run `npm run schema:print` after changing it)', () => {
    const committed = readFileSync(join(import.meta.dirname, '..', 'schema.graphql'), 'utf8');
    expect(committed).toBe(printedSchema());
  });

  it('serves GraphiQL to a browser without credentials, from local assets', async () => {
    const r = await send(`${app.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.text).toMatch(/GraphiQL/);
    expect(r.text).not.toMatch(/unpkg\.com|cdn\.jsdelivr/);
  });

  it('answers introspection for authenticated clients', async () => {
    const r = await api.gql('{ __schema { queryType { name } mutationType { name } } }');
    expect(r.data.__schema).toEqual({ queryType: { name: 'Query' }, mutationType: { name: 'Mutation' } });
  });

  it('enforces the depth and complexity limits', async () => {
    const ok = await api.gql('{ customers(first: 2) { edges { node { id email } } pageInfo { hasNextPage } } }');
    expect(ok.errors).toBeUndefined();
    // customers.edges.node + 3 × payments.edges.node.customer + id: 16 levels, over the default 12
    let sel = 'id';
    for (let i = 0; i < 3; i++) sel = `payments(first: 1) { edges { node { customer { ${sel} } } } }`;
    const deep = await api.gql(`{ customers(first: 1) { edges { node { ${sel} } } } }`);
    expect(deep.data ?? null).toBeNull();
    expect(deep.errors?.[0].message).toMatch(/^Query depth limit of 12 exceeded, found 16\.$/);
    expect(deep.errors?.[0].extensions?.code).toBe('query_too_deep');
    // many aliased list fields: over the complexity limit
    const wide = Array.from({ length: 60 }, (_, i) => `a${i}: customers(first: 100) { edges { node { id email name } } }`).join(' ');
    const heavy = await api.gql(`{ ${wide} }`);
    expect(heavy.data ?? null).toBeNull();
    expect(heavy.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^Query cost limit of 20000 exceeded/), extensions: { code: 'query_too_complex' } });
  });

  it('gives errors about the document and its variables a code too', async () => {
    const variable = await api.gql('query($n: Int) { customers(first: $n) { edges { cursor } } }', { n: 'abc' });
    expect(variable.errors?.[0].extensions).toMatchObject({ code: 'parameter_invalid', type: 'invalid_request_error', param: 'n' });
    const unknown = await api.gql('{ customers { nope } }');
    expect(unknown.errors?.[0].extensions).toMatchObject({ code: 'invalid_query', type: 'invalid_request_error' });
    const syntax = await api.gql('{ customers { ');
    expect(syntax.errors?.[0].extensions).toMatchObject({ code: 'invalid_query' });
    expect(syntax.errors?.[0].message).not.toMatch(/^Syntax Error/);
    // no root subscription type: a subscription operation is a plain validation error
    const sub = await api.gql('subscription S { id }');
    expect(sub.errors?.[0].extensions).toMatchObject({ code: 'invalid_query' });
  });
});

describe('GraphQL over HTTP', () => {
  const post = (body: unknown, accept?: string) =>
    send(`${app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: api.auth, 'content-type': 'application/json', ...(accept ? { accept } : {}) },
      body: JSON.stringify(body),
    });

  it('answers each Accept as Yoga does: application/json 200 even for document errors, graphql-response+json 400, event streams', async () => {
    const c = (await api.post('/v1/customers', { email: 'accept@example.com' })).body;
    const query = `{ node(id: "${c.id}") { id } }`;
    for (const accept of [undefined, '*/*', 'application/json', 'text/html;q=0.9, application/json']) {
      const r = await post({ query }, accept);
      expect([r.status, r.headers.get('content-type')], String(accept)).toEqual([200, 'application/json; charset=utf-8']);
      expect(r.body).toEqual({ data: { node: { id: c.id } } });
    }
    const typed = await post({ query }, 'application/graphql-response+json');
    expect([typed.status, typed.headers.get('content-type')]).toEqual([200, 'application/graphql-response+json; charset=utf-8']);
    // A document error: 200 for application/json clients, 400 for graphql-response+json ones.
    const bad = await post({ query: '{ nope }' }, 'application/json');
    expect([bad.status, (bad.body as any).errors[0].extensions.code]).toEqual([200, 'invalid_query']);
    const badTyped = await post({ query: '{ nope }' }, 'application/graphql-response+json');
    expect([badTyped.status, (badTyped.body as any).errors[0].extensions.code]).toEqual([400, 'invalid_query']);
    expect(JSON.stringify(badTyped.body)).not.toMatch(/"http"|originalError|stack/);
    // Server-sent events are still Yoga's.
    const sse = await send(`${app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: api.auth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
    });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(sse.text).toContain(c.id);
  });

  it('answers a query document seen before (run without Yoga’s pipeline) exactly as the first time', async () => {
    const c = (await api.post('/v1/customers', { email: 'twice@example.com', name: 'Twice' })).body;
    const wide = Array.from({ length: 60 }, (_, i) => `a${i}: customers(first: 100) { edges { node { id email name } } }`).join(' ');
    const cases: { body: Record<string, unknown>; accept?: string }[] = [
      { body: { query: `query One($id: ID!) { node(id: $id) { id ... on Customer { email } } }`, variables: { id: c.id } } },
      { body: { query: `query One($id: ID!) { node(id: $id) { id ... on Customer { email } } }`, variables: { id: 'cus_doesnotexist0000000000' } } },
      // variable coercion, input guard (NUL), cost limit, first out of range
      { body: { query: `query Page($n: Int) { customers(first: $n) { totalCount } }`, variables: { n: 'ten' } } },
      { body: { query: `query Page($n: Int) { customers(first: $n) { totalCount } }`, variables: { n: 'ten' } }, accept: 'application/graphql-response+json' },
      { body: { query: `query Find($e: String) { customers(email: $e) { totalCount } }`, variables: { e: 'a\u0000b' } } },
      { body: { query: `{ ${wide} }` } },
      { body: { query: `query Page($n: Int) { customers(first: $n) { totalCount } }`, variables: { n: 500 } } },
      // operationName picks one of several operations; an unknown one is an error
      { body: { query: `query A { customers(first: 1) { totalCount } } query B { node(id: "${c.id}") { id } }`, operationName: 'B' } },
      { body: { query: `query A { customers(first: 1) { totalCount } } query B { node(id: "${c.id}") { id } }`, operationName: 'C' } },
      // parameters Yoga refuses
      { body: { query: `query One($id: ID!) { node(id: $id) { id ... on Customer { email } } }`, variables: [c.id] } },
    ];
    const strip = (r: Awaited<ReturnType<typeof post>>) => ({
      status: r.status,
      type: r.headers.get('content-type'),
      retryAfter: r.headers.get('retry-after'),
      body: JSON.parse(r.text.replaceAll(r.headers.get('request-id')!, 'REQ')),
    });
    for (const { body, accept } of cases) {
      const first = strip(await post(body, accept));
      const again = strip(await post(body, accept));
      const third = strip(await post(body, accept));
      expect(again, JSON.stringify(body)).toEqual(first);
      expect(third, JSON.stringify(body)).toEqual(first);
    }
    // and what the answers are, so that "the same" is not "the same wrong"
    const ok = strip(await post(cases[0]!.body));
    expect(ok).toMatchObject({ status: 200, body: { data: { node: { id: c.id, email: 'twice@example.com' } } } });
    expect(strip(await post(cases[1]!.body)).body).toEqual({ data: { node: null } });
    // An operation that cannot start (its variables, an unknown operationName) is 400, as Yoga answers it.
    expect(strip(await post(cases[2]!.body))).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'parameter_invalid', param: 'n' } }] } });
    expect(strip(await post(cases[3]!.body, cases[3]!.accept)).status).toBe(400);
    expect(strip(await post(cases[4]!.body))).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'parameter_invalid' } }] } });
    expect(strip(await post(cases[5]!.body)).body.errors[0].extensions.code).toBe('query_too_complex');
    expect(strip(await post(cases[6]!.body)).body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid' });
    expect(strip(await post(cases[7]!.body)).body).toEqual({ data: { node: { id: c.id } } });
    expect(strip(await post(cases[8]!.body))).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'invalid_query' } }] } });
    expect(strip(await post(cases[9]!.body))).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'parameter_invalid', param: 'variables' } }] } });
  });

  // What the spec and graphql-js guarantee and a faster executor (graphql-jit, tried for issue 22)
  // broke, found by a differential test: pinned for every execution path.
  it('follows the spec: variables inside JSON literals, fields in document order, errors with locations', async () => {
    const c = await api.gql(
      `mutation($v: String, $e: String!) { createCustomer(input: { email: $e, metadata: { k: $v, z: "lit" } }) { ... on CreateCustomerSuccess { customer { id metadata } } } }`,
      { v: 'fromvar', e: 'literal-vars@example.com' },
    );
    expect(c.data.createCustomer.customer.metadata).toEqual({ k: 'fromvar', z: 'lit' });
    const missing = await api.gql(
      `mutation($v: String, $e: String!) { createCustomer(input: { email: $e, metadata: { k: $v } }) { __typename ... on Error { code param } } }`,
      { e: 'literal-missing@example.com' },
    );
    expect(missing.data.createCustomer).toEqual({ __typename: 'ValidationError', code: 'parameter_missing', param: 'metadata[k]' });
    // response fields in the order the document selects them, fragments included
    const ordered = await api.gql(`query { b: __typename ... on Query { a: __typename } c: __typename node(id: "${c.data.createCustomer.customer.id}") { ... on Customer { email } id ... on Node { __typename } } }`);
    expect(Object.keys(ordered.data)).toEqual(['b', 'a', 'c', 'node']);
    expect(Object.keys(ordered.data.node)).toEqual(['email', 'id', '__typename']);
    // an error raised in a field says where
    const bad = await api.gql('{ customers(first: 0) { totalCount } }');
    expect(bad.errors![0]).toMatchObject({ locations: [{ line: 1, column: 3 }], path: ['customers'], extensions: { code: 'parameter_invalid' } });
  });

  it('refuses request parameters of the wrong shape with 400 parameter_invalid naming them', async () => {
    const query = '{ customers { totalCount } }';
    for (const [body, param] of [
      [{ query, variables: [1] }, 'variables'],
      [{ query, variables: 'x' }, 'variables'],
      [{ query, extensions: 5 }, 'extensions'],
      [{ query, foo: 1 }, 'foo'],
    ] as const) {
      const r = await post(body);
      expect([r.status, (r.body as any).errors[0].extensions], JSON.stringify(body)).toEqual([400, { code: 'parameter_invalid', type: 'invalid_request_error', param }]);
    }
    const op = await post({ query, operationName: 5 });
    expect([op.status, (op.body as any).errors[0].extensions]).toEqual([400, expect.objectContaining({ code: 'parameter_invalid', param: 'operationName' })]);
  });

  it('answers GET queries as POST ones, refuses bad GET parameters with 400, and never runs a mutation over GET', async () => {
    const c = (await api.post('/v1/customers', { email: 'get@example.com' })).body;
    const query = `query($id: ID!) { node(id: $id) { id ... on Customer { email } } }`;
    const get = (qs: string, accept = 'application/json') => send(`${app.url}/graphql?${qs}`, { headers: { authorization: api.auth, accept } });
    const qs = `query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id: c.id }))}`;
    for (let i = 0; i < 3; i++) {
      const r = await get(qs);
      expect([r.status, r.body], `GET #${i + 1}`).toEqual([200, { data: { node: { id: c.id, email: 'get@example.com' } } }]);
    }
    for (const [name, value] of [['variables', '{'], ['extensions', '{'], ['variables', '[1'], ['variables', '"x"']] as const) {
      const r = await get(`query=${encodeURIComponent(query)}&${name}=${encodeURIComponent(value)}`);
      expect([r.status, (r.body as any).errors[0].extensions], `${name}=${value}`).toEqual([400, expect.objectContaining({ code: 'parameter_invalid', param: name })]);
      expect((r.body as any).errors[0].extensions.request_id ?? r.headers.get('request-id')).toMatch(/^req_/);
    }
    const none = await get('');
    expect([none.status, (none.body as any).errors[0].extensions]).toEqual([400, expect.objectContaining({ code: 'parameter_missing', param: 'query' })]);
    const mutation = await get(`query=${encodeURIComponent('mutation { createCustomer(input: { email: "viaget@example.com" }) { __typename } }')}`);
    expect(mutation.status).toBe(405);
    expect((await api.get('/v1/customers?email=viaget@example.com')).body.data).toEqual([]);
  });

  it('answers JSON to an Accept it does not make (text/html, garbage), as REST does', async () => {
    for (const accept of ['text/html', 'image/png, text/*;q=0.5', 'nonsense']) {
      const r = await post({ query: '{ customers(first: 1) { totalCount } }' }, accept);
      expect([r.status, r.headers.get('content-type')], accept).toEqual([200, 'application/json; charset=utf-8']);
      expect((r.body as any).data.customers.totalCount).toBeGreaterThanOrEqual(0);
    }
  });

  it('refuses text the database cannot store in a variable’s default value too (400, before the database)', async () => {
    for (const query of [
      'query($e: String = "a\\u0000b") { customers(email: $e) { totalCount } }',
      'mutation($n: String = "x\\u0000y") { createCustomer(input: { email: "nul@example.com", name: $n }) { __typename } }',
    ]) {
      for (let i = 0; i < 2; i++) {
        const r = await post({ query });
        expect([r.status, (r.body as any).errors?.[0]?.extensions], query).toEqual([400, expect.objectContaining({ code: 'parameter_invalid', param: query.startsWith('query') ? 'e' : 'n' })]);
      }
    }
    expect((await api.get('/v1/customers?email=nul@example.com')).body.data).toEqual([]);
  });

  it('masks an unexpected resolver error: internal_error with the request id, nothing of the error itself', async () => {
    const c = (await api.post('/v1/customers', { email: 'masked@example.com' })).body;
    const p = (await api.post('/v1/payments', { amount: 700, currency: 'USD', customer_id: c.id, redirect_url: 'https://shop.example/r' })).body;
    const config = app.services.config as { publicBaseUrl: string };
    const real = config.publicBaseUrl;
    Object.defineProperty(config, 'publicBaseUrl', { configurable: true, get: () => { throw new Error('connection string postgres://secret@db'); } });
    try {
      const r = await post({ query: `{ node(id: "${p.id}") { ... on Payment { amount checkoutUrl } } }` });
      expect(r.status).toBe(200);
      expect((r.body as any).errors).toEqual([
        { message: 'Unexpected error.', path: ['node', 'checkoutUrl'], extensions: { code: 'internal_error', request_id: r.headers.get('request-id') } },
      ]);
      expect(r.text).not.toMatch(/secret|postgres|stack/);
    } finally {
      Object.defineProperty(config, 'publicBaseUrl', { configurable: true, writable: true, value: real });
    }
  });

  it('node(id:) of a customer loads its relations too (the node itself is one raw statement)', async () => {
    const c = (await api.post('/v1/customers', { email: 'nested@example.com', name: 'Nested' })).body;
    const p = (await api.post('/v1/payments', { amount: 1500, currency: 'USD', customer_id: c.id, redirect_url: 'https://shop.example/r' })).body;
    const r = await post({ query: `query($id: ID!) { node(id: $id) { __typename ... on Customer { email createdAt payments(first: 5) { totalCount edges { node { id amount customer { id } } } } } } }`, variables: { id: c.id } });
    expect(r.body).toEqual({
      data: { node: { __typename: 'Customer', email: 'nested@example.com', createdAt: c.created_at, payments: { totalCount: 1, edges: [{ node: { id: p.id, amount: 1500, customer: { id: c.id } } }] } } },
    });
  });
});

describe('customers over GraphQL', () => {
  it('creates, reads, updates and deletes through mutations with typed results', async () => {
    const created = await api.gql(
      `mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { ${RESULT} ... on CreateCustomerSuccess { customer { id email name phone currency metadata createdAt updatedAt } } } }`,
      { input: { email: 'grace@example.com', name: 'Grace', phone: '+14155550100', currency: 'usd', metadata: { team: 'navy' } } },
    );
    const c = created.data.createCustomer.customer;
    expect(created.data.createCustomer.__typename).toBe('CreateCustomerSuccess');
    expect(c).toMatchObject({ email: 'grace@example.com', currency: 'USD', metadata: { team: 'navy' } });
    expect(c.id).toMatch(/^cus_/);

    // The same id works in REST and in node(id:)
    expect((await api.get(`/v1/customers/${c.id}`)).body.email).toBe('grace@example.com');
    const node = await api.gql(`query($id: ID!) { node(id: $id) { id __typename ... on Customer { email } } }`, { id: c.id });
    expect(node.data.node).toEqual({ id: c.id, __typename: 'Customer', email: 'grace@example.com' });
    expect((await api.gql(`{ customer(id: "${c.id}") { name } }`)).data.customer.name).toBe('Grace');

    const updated = await api.gql(
      `mutation($input: UpdateCustomerInput!) { updateCustomer(input: $input) { ${RESULT} ... on UpdateCustomerSuccess { customer { id name phone } } } }`,
      { input: { id: c.id, name: 'Grace Hopper', phone: null } },
    );
    expect(updated.data.updateCustomer).toMatchObject({ __typename: 'UpdateCustomerSuccess', customer: { id: c.id, name: 'Grace Hopper', phone: null } });

    const deleted = await api.gql(
      `mutation($input: DeleteCustomerInput!) { deleteCustomer(input: $input) { ${RESULT} ... on DeleteCustomerSuccess { deletedCustomer { id deleted } } } }`,
      { input: { id: c.id } },
    );
    expect(deleted.data.deleteCustomer).toEqual({ __typename: 'DeleteCustomerSuccess', deletedCustomer: { id: c.id, deleted: true } });
    expect((await api.gql(`{ customer(id: "${c.id}") { id } }`)).data.customer).toBeNull();
    expect((await api.gql(`{ node(id: "${c.id}") { id } }`)).data.node).toBeNull();

    const again = await api.gql(`mutation { deleteCustomer(input: { id: "${c.id}" }) { ${RESULT} } }`);
    expect(again.data.deleteCustomer).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing' });

    const types = (await api.get('/v1/events?type=customer.*&limit=10')).body.data.filter((e: any) => e.data.object.id === c.id).map((e: any) => e.type);
    expect(types).toEqual(['customer.deleted', 'customer.updated', 'customer.created']);
  });

  it('returns validation failures as ValidationError data with camelCase params', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ email: 'nope' }, 'parameter_invalid', 'email'],
      [{ email: 'a@b.co', phone: '12' }, 'parameter_invalid', 'phone'],
      [{ email: 'a@b.co', currency: 'ABC' }, 'parameter_invalid', 'currency'],
      [{ email: 'a@b.co', metadata: { k: 5 } }, 'parameter_invalid', 'metadata[k]'],
      [{ email: 'a@b.co', metadata: 'str' }, 'parameter_invalid', 'metadata'],
    ];
    for (const [input, code, param] of cases) {
      const r = await api.gql(`mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { ${RESULT} } }`, { input });
      expect(r.errors).toBeUndefined();
      expect(r.data.createCustomer).toMatchObject({ __typename: 'ValidationError', code, param });
    }
    expect((await api.get('/v1/customers?email=a@b.co')).body.data).toEqual([]);
  });

  it('takes null on an input field as REST does: clears where REST clears, refused where REST refuses it', async () => {
    const c = (await api.post('/v1/customers', { email: 'ada@example.com', name: 'Ada', phone: '+14155550101', metadata: { team: 'math' } })).body;
    const update = (input: Record<string, unknown>) =>
      api.gql(`mutation($input: UpdateCustomerInput!) { updateCustomer(input: $input) { ${RESULT} ... on UpdateCustomerSuccess { customer { email name phone metadata } } } }`, {
        input: { id: c.id, ...input },
      });
    // email and metadata take no null in REST: refused with the same code and param, nothing changes.
    for (const field of ['email', 'metadata']) {
      const rest = await api.patch(`/v1/customers/${c.id}`, { [field]: null });
      expect(rest.status).toBe(400);
      const r = await update({ [field]: null });
      expect(r.data.updateCustomer).toMatchObject({ __typename: 'ValidationError', code: rest.body.error.code, param: field });
    }
    // name does: cleared.
    expect((await update({ name: null })).data.updateCustomer).toEqual({
      __typename: 'UpdateCustomerSuccess',
      customer: { email: 'ada@example.com', name: null, phone: '+14155550101', metadata: { team: 'math' } },
    });
    // a refund's amount: null is an error, never "the whole payment"
    const pay = await api.post('/v1/payments', { amount: 900, currency: 'USD', customer_id: c.id, redirect_url: 'https://shop.example/done' });
    expect(pay.status).toBe(201);
    const refund = await api.gql(`mutation($input: CreateRefundInput!) { createRefund(input: $input) { __typename ... on ValidationError { code param } } }`, {
      input: { paymentId: pay.body.id, amount: null },
    });
    expect(refund.errors, JSON.stringify(refund.errors)).toBeUndefined();
    expect(refund.data.createRefund).toMatchObject({ __typename: 'ValidationError', param: 'amount' });
  });

  it('hides other merchants’ records', async () => {
    const other = await app.merchant();
    const c = (await api.post('/v1/customers', { email: 'mine@example.com' })).body;
    expect((await other.gql(`{ customer(id: "${c.id}") { id } }`)).data.customer).toBeNull();
    expect((await other.gql(`{ node(id: "${c.id}") { id } }`)).data.node).toBeNull();
    const upd = await other.gql(`mutation { updateCustomer(input: { id: "${c.id}", name: "x" }) { ${RESULT} } }`);
    expect(upd.data.updateCustomer.code).toBe('resource_missing');
    expect((await other.gql(`{ customers(email: "mine@example.com") { edges { node { id } } } }`)).data.customers.edges).toEqual([]);
  });

  it('pages 45 customers in pages of 20 with cursors interchangeable with REST', async () => {
    const m = await app.merchant();
    const ids: string[] = [];
    for (let i = 0; i < 45; i++) ids.push((await m.post('/v1/customers', { email: `g${i}@example.com` })).body.id);
    const expected = [...ids].reverse();
    const seen: string[] = [];
    let after: string | null = null;
    const Q = `query($after: String) { customers(first: 20, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`;
    let pages = 0;
    do {
      const r: any = await m.gql(Q, { after });
      const conn = r.data.customers;
      seen.push(...conn.edges.map((e: any) => e.node.id));
      after = conn.pageInfo.hasNextPage ? conn.pageInfo.endCursor : null;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(seen).toEqual(expected);

    // GraphQL cursor → REST after, and REST next_cursor → GraphQL after
    const g1: any = await m.gql(Q, { after: null });
    const rest2 = await m.get(`/v1/customers?limit=20&after=${g1.data.customers.pageInfo.endCursor}`);
    expect(rest2.body.data.map((c: any) => c.id)).toEqual(expected.slice(20, 40));
    const r1 = await m.get('/v1/customers?limit=20');
    expect(r1.body.next_cursor).toBe(g1.data.customers.pageInfo.endCursor);
    const g2: any = await m.gql(Q, { after: r1.body.next_cursor });
    expect(g2.data.customers.edges.map((e: any) => e.node.id)).toEqual(expected.slice(20, 40));
    // every edge cursor is a valid REST cursor
    const mid = g1.data.customers.edges[4].cursor;
    expect((await m.get(`/v1/customers?limit=1&after=${mid}`)).body.data[0].id).toBe(expected[5]);
  });

  it('rejects bad page arguments with the REST codes', async () => {
    for (const first of [0, 101]) {
      const r = await api.gql(`{ customers(first: ${first}) { edges { cursor } } }`);
      expect(r.errors?.[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'first' });
    }
    const r = await api.gql(`{ customers(after: "bogus") { edges { cursor } } }`);
    expect(r.errors?.[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'after' });
  });
});

describe('events over GraphQL', () => {
  it('lists events with type and time filters', async () => {
    const m = await app.merchant();
    const t0 = new Date(Date.now() - 1000).toISOString();
    const c = (await m.post('/v1/customers', { email: 'ev@example.com' })).body;
    await m.patch(`/v1/customers/${c.id}`, { name: 'Changed' });
    const all = await m.gql(`{ events(first: 10) { totalCount edges { node { id type createdAt data { objectType objectId object previousAttributes } } } } }`);
    expect(all.data.events.edges.map((e: any) => e.node.type)).toEqual(['customer.updated', 'customer.created']);
    expect(all.data.events.totalCount).toBe(2);
    expect(all.data.events.edges[0].node.data).toMatchObject({ objectType: 'customer', objectId: c.id, previousAttributes: { name: null } });
    const { payment_methods: _pm, subscriptions: _s, ...plain } = (await m.get(`/v1/customers/${c.id}`)).body;
    expect(all.data.events.edges[0].node.data.object).toEqual(plain);
    expect(all.data.events.edges[1].node.data.previousAttributes).toBeNull();
    const created = await m.gql(`{ events(type: "customer.created") { edges { node { type } } } }`);
    expect(created.data.events.edges).toHaveLength(1);
    const window = await m.gql(`query($a: DateTime) { events(createdAfter: $a) { edges { node { id } } } }`, { a: t0 });
    expect(window.data.events.edges).toHaveLength(2);
    const none = await m.gql(`query($b: DateTime) { events(createdBefore: $b) { edges { node { id } } } }`, { b: t0 });
    expect(none.data.events.edges).toHaveLength(0);
    const id = all.data.events.edges[0].node.id;
    expect((await m.gql(`{ node(id: "${id}") { __typename id } }`)).data.node).toEqual({ __typename: 'Event', id });
    const rest = await m.get(`/v1/events/${id}`);
    expect(rest.body.type).toBe('customer.updated');
  });

  it('events about one record: object_id (REST) and objectId (GraphQL), with the type filter, paged; another merchant’s record has none here', async () => {
    const m = await app.merchant();
    const a = (await m.post('/v1/customers', { email: 'obj-a@example.com' })).body;
    const b = (await m.post('/v1/customers', { email: 'obj-b@example.com' })).body;
    await m.patch(`/v1/customers/${a.id}`, { name: 'A once' });
    await m.patch(`/v1/customers/${a.id}`, { name: 'A twice' });
    const w = (await m.post('/v1/wallets', { customer_id: a.id, currency: 'USD' })).body;
    const rest = await m.get(`/v1/events?object_id=${a.id}`);
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((e: any) => [e.type, e.data.object.id])).toEqual([
      ['customer.updated', a.id],
      ['customer.updated', a.id],
      ['customer.created', a.id],
    ]);
    expect((await m.get(`/v1/events?object_id=${w.id}`)).body.data.map((e: any) => e.type)).toEqual(['wallet.created']);
    expect((await m.get(`/v1/events?object_id=${a.id}&type=customer.created`)).body.data).toHaveLength(1);
    const first = (await m.get(`/v1/events?object_id=${a.id}&limit=2`)).body;
    expect(first.has_more).toBe(true);
    expect((await m.get(`/v1/events?object_id=${a.id}&after=${first.next_cursor}`)).body.data.map((e: any) => e.type)).toEqual(['customer.created']);
    expect((await m.get('/v1/events?object_id=cus_nope')).body.data).toEqual([]);
    const bad = await m.get(`/v1/events?object_id=${'x'.repeat(65)}`);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'object_id' });
    const g = await m.gql(`query($o: ID) { events(objectId: $o, first: 5) { totalCount edges { node { type data { objectId } } } } }`, { o: b.id });
    expect(g.data.events).toEqual({ totalCount: 1, edges: [{ node: { type: 'customer.created', data: { objectId: b.id } } }] });
    const other = await app.merchant();
    expect((await other.get(`/v1/events?object_id=${a.id}`)).body.data).toEqual([]);
  });

  it('REST event filters: type, created_after, created_before', async () => {
    const m = await app.merchant();
    await m.post('/v1/customers', { email: 'f1@example.com' });
    const mid = new Date();
    await new Promise((r) => setTimeout(r, 5));
    await m.post('/v1/customers', { email: 'f2@example.com' });
    const after = await m.get(`/v1/events?created_after=${mid.toISOString()}`);
    expect(after.body.data.map((e: any) => e.data.object.email)).toEqual(['f2@example.com']);
    const before = await m.get(`/v1/events?created_before=${mid.toISOString()}`);
    expect(before.body.data.map((e: any) => e.data.object.email)).toEqual(['f1@example.com']);
    expect((await m.get('/v1/events?type=customer.deleted')).body.data).toEqual([]);
    const bad = await m.get('/v1/events?created_after=yesterday');
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'created_after' });
  });
});
