// Idempotency-Key (REST) and idempotencyKey (GraphQL): replay, reuse, concurrency, stale claims.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

// Scoped to the test merchant: on PostgreSQL every test file shares one database.
const countCustomers = (email: string) => app.services.db.prisma.customer.count({ where: { email, merchantId: api.creds.merchant_id } });
const countEvents = (customerId: string) =>
  app.services.db.prisma.event.count({ where: { merchantId: api.creds.merchant_id, type: 'customer.created', data: { path: ['object', 'id'], equals: customerId } } });

describe('Idempotency-Key over REST', () => {
  it('replays the first response without doing the work again', async () => {
    const h = { 'Idempotency-Key': 'create-1' };
    const first = await api.post('/v1/customers', { email: 'idem@example.com' }, h);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await api.post('/v1/customers', { email: 'idem@example.com' }, h);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await countCustomers('idem@example.com')).toBe(1);
    expect(await countEvents(first.body.id)).toBe(1);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const h = { 'Idempotency-Key': 'order-1' };
    const a = await api.post('/v1/customers', '{"email":"order@example.com","name":"O"}', h);
    const b = await api.post('/v1/customers', '{"name":"O","email":"order@example.com"}', h);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body.id).toBe(a.body.id);
  });

  it('rejects the same key with another body or path: 409 idempotency_key_reused', async () => {
    const h = { 'Idempotency-Key': 'reuse-1' };
    expect((await api.post('/v1/customers', { email: 'reuse@example.com' }, h)).status).toBe(201);
    const other = await api.post('/v1/customers', { email: 'other@example.com' }, h);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    const c = (await api.get('/v1/customers?email=reuse@example.com')).body.data[0];
    const otherPath = await api.patch(`/v1/customers/${c.id}`, { name: 'x' }, h);
    expect(otherPath.status).toBe(409);
    expect(otherPath.body.error.code).toBe('idempotency_key_reused');
    expect(await countCustomers('other@example.com')).toBe(0);
  });

  it('keys are per merchant', async () => {
    const m2 = await app.merchant();
    const h = { 'Idempotency-Key': 'shared-key' };
    const a = await api.post('/v1/customers', { email: 'a@per-merchant.io' }, h);
    const b = await m2.post('/v1/customers', { email: 'a@per-merchant.io' }, h);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('stores and replays a 4xx outcome, but not a validation failure', async () => {
    const h = { 'Idempotency-Key': 'missing-1' };
    const r1 = await api.patch('/v1/customers/cus_00000000000000000000nope', { name: 'x' }, h);
    expect(r1.status).toBe(404);
    const r2 = await api.patch('/v1/customers/cus_00000000000000000000nope', { name: 'x' }, h);
    expect(r2.status).toBe(404);
    expect(r2.headers.get('idempotent-replayed')).toBe('true');
    expect(r2.body).toEqual(r1.body);

    const v = { 'Idempotency-Key': 'invalid-1' };
    expect((await api.post('/v1/customers', { email: 'bad' }, v)).status).toBe(400);
    const fixed = await api.post('/v1/customers', { email: 'bad' }, v);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });

  it('rejects malformed keys', async () => {
    const r = await api.post('/v1/customers', { email: 'k@example.com' }, { 'Idempotency-Key': 'x'.repeat(256) });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'Idempotency-Key' });
  });

  it('concurrent duplicates do the work once: the others replay it or get idempotency_key_in_use', async () => {
    const h = { 'Idempotency-Key': 'race-1' };
    const rs = await Promise.all(Array.from({ length: 10 }, () => api.post('/v1/customers', { email: 'race@example.com' }, h)));
    const created = rs.filter((r) => r.status === 201);
    const inUse = rs.filter((r) => r.status === 409);
    expect(created.length + inUse.length).toBe(10);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const r of inUse) expect(r.body.error.code).toBe('idempotency_key_in_use');
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(await countCustomers('race@example.com')).toBe(1);
  });

  it('a claim whose request never finished is taken over after 60 s', async () => {
    const merchantId = api.creds.merchant_id;
    // Simulate a process that claimed the key and died before committing its work.
    await app.services.db.prisma.idempotencyKey.create({
      data: {
        merchantId,
        key: 'crashed-1',
        scope: 'POST /v1/customers',
        fingerprint: 'whatever',
        status: 'in_progress',
        lockedAt: new Date(Date.now() - 61_000),
        expiresAt: new Date(Date.now() + 3_600_000),
      },
    });
    // A different body would be "reused" if the claim were honoured; a stale claim is not.
    const r = await api.post('/v1/customers', { email: 'crash@example.com' }, { 'Idempotency-Key': 'crashed-1' });
    expect(r.status).toBe(201);
    const again = await api.post('/v1/customers', { email: 'crash@example.com' }, { 'Idempotency-Key': 'crashed-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    await app.services.db.prisma.idempotencyKey.create({
      data: {
        merchantId,
        key: 'running-1',
        scope: 'POST /v1/customers',
        fingerprint: 'whatever',
        status: 'in_progress',
        lockedAt: new Date(),
        expiresAt: new Date(Date.now() + 3_600_000),
      },
    });
    const busy = await api.post('/v1/customers', { email: 'busy@example.com' }, { 'Idempotency-Key': 'running-1' });
    expect(busy.status).toBe(409);
  });

  it('an expired key (older than 24 h) is processed anew', async () => {
    const h = { 'Idempotency-Key': 'old-1' };
    const first = await api.post('/v1/customers', { email: 'old@example.com' }, h);
    await app.services.db.prisma.idempotencyKey.updateMany({
      where: { merchantId: api.creds.merchant_id, key: 'old-1' },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const second = await api.post('/v1/customers', { email: 'old@example.com' }, h);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
  });
});

describe('idempotencyKey over GraphQL', () => {
  const CREATE = `mutation($input: CreateCustomerInput!) {
    createCustomer(input: $input) {
      __typename
      ... on CreateCustomerSuccess { customer { id email } }
      ... on Error { code message param }
    }
  }`;

  it('returns the same customer for a repeated key and does the work once', async () => {
    const input = { email: 'gql-idem@example.com', idempotencyKey: 'g-1' };
    const a = await api.gql(CREATE, { input });
    const b = await api.gql(CREATE, { input });
    expect(a.data.createCustomer.__typename).toBe('CreateCustomerSuccess');
    expect(b.data.createCustomer.customer.id).toBe(a.data.createCustomer.customer.id);
    expect(await countCustomers('gql-idem@example.com')).toBe(1);
    const reused = await api.gql(CREATE, { input: { ...input, email: 'gql-other@example.com' } });
    expect(reused.data.createCustomer).toMatchObject({ __typename: 'IdempotencyError', code: 'idempotency_key_reused' });
  });

  it('replays a stored error as the same typed error', async () => {
    const UPDATE = `mutation($input: UpdateCustomerInput!) { updateCustomer(input: $input) { __typename ... on Error { code param } } }`;
    const input = { id: 'cus_00000000000000000000nope', name: 'x', idempotencyKey: 'g-404' };
    const a = await api.gql(UPDATE, { input });
    const b = await api.gql(UPDATE, { input });
    expect(a.data.updateCustomer).toEqual({ __typename: 'NotFoundError', code: 'resource_missing', param: 'id' });
    expect(b.data.updateCustomer).toEqual(a.data.updateCustomer);
  });
});
