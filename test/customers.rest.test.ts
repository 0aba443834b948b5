import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let other: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
  other = await app.merchant({ name: 'Other merchant' });
});
afterAll(() => app?.close());

describe('customers over REST', () => {
  it('creates, reads, updates and soft-deletes a customer, with events', async () => {
    const created = await api.post('/v1/customers', {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      phone: '+256700000001',
      currency: 'ugx',
      metadata: { crm_id: '42' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('request-id')).toMatch(/^req_[0-9A-Za-z]{22}$/);
    const c = created.body;
    expect(c).toMatchObject({
      object: 'customer',
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      phone: '+256700000001',
      currency: 'UGX',
      metadata: { crm_id: '42' },
    });
    expect(c.id).toMatch(/^cus_[0-9A-Za-z]{22}$/);
    expect(new Date(c.created_at).toISOString()).toBe(c.created_at);

    const got = await api.get(`/v1/customers/${c.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...c, credit_balance: {}, payment_methods: [], subscriptions: [] });

    const upd = await api.patch(`/v1/customers/${c.id}`, { name: null, metadata: { crm_id: '', tier: 'gold' } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ id: c.id, name: null, email: 'ada@example.com', metadata: { tier: 'gold' } });

    const del = await api.del(`/v1/customers/${c.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: c.id, object: 'customer', deleted: true });
    expect((await api.get(`/v1/customers/${c.id}`)).status).toBe(404);
    expect((await api.patch(`/v1/customers/${c.id}`, { name: 'x' })).status).toBe(404);
    expect((await api.del(`/v1/customers/${c.id}`)).status).toBe(404);
    const list = await api.get(`/v1/customers?email=ada@example.com`);
    expect(list.body.data).toEqual([]);

    const events = await api.get('/v1/events?type=customer.*&limit=100');
    const mine = events.body.data.filter((e: any) => e.data.object.id === c.id);
    expect(mine.map((e: any) => e.type)).toEqual(['customer.deleted', 'customer.updated', 'customer.created']);
    const updated = mine[1];
    expect(updated.data.object).toMatchObject({ name: null, metadata: { tier: 'gold' } });
    expect(updated.data.previous_attributes).toEqual({ name: 'Ada Lovelace', metadata: { crm_id: '42' } });
    expect(mine[0].data.object).toMatchObject({ id: c.id, deleted: true });
    const one = await api.get(`/v1/events/${updated.id}`);
    expect(one.body).toEqual(updated);
  });

  it('an update that changes nothing records no event', async () => {
    const c = (await api.post('/v1/customers', { email: 'same@example.com', name: 'Same' })).body;
    const before = (await api.get('/v1/events?type=customer.updated&limit=100')).body.data.length;
    expect((await api.patch(`/v1/customers/${c.id}`, { name: 'Same' })).status).toBe(200);
    const after = (await api.get('/v1/events?type=customer.updated&limit=100')).body.data.length;
    expect(after).toBe(before);
  });

  it('never shows one merchant another merchant’s customers or events', async () => {
    const c = (await api.post('/v1/customers', { email: 'private@example.com' })).body;
    const r = await other.get(`/v1/customers/${c.id}`);
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
    expect((await other.patch(`/v1/customers/${c.id}`, { name: 'Mallory' })).status).toBe(404);
    expect((await other.del(`/v1/customers/${c.id}`)).status).toBe(404);
    expect((await other.get('/v1/customers?email=private@example.com')).body.data).toEqual([]);
    const evt = (await api.get('/v1/events?limit=1')).body.data[0];
    expect((await other.get(`/v1/events/${evt.id}`)).status).toBe(404);
    expect((await api.get(`/v1/customers/${c.id}`)).body.name).toBeNull();
  });

  it('filters by exact email', async () => {
    await api.post('/v1/customers', { email: 'twin@example.com', name: 'A' });
    await api.post('/v1/customers', { email: 'twin@example.com', name: 'B' });
    await api.post('/v1/customers', { email: 'twin2@example.com' });
    const r = await api.get('/v1/customers?email=twin@example.com');
    expect(r.body.data.map((c: any) => c.name)).toEqual(['B', 'A']);
  });

  it('pages through 45 customers with limit=20 without gaps or duplicates', async () => {
    const m = await app.merchant({ name: 'Pager' });
    const ids: string[] = [];
    for (let i = 0; i < 45; i++) ids.push((await m.post('/v1/customers', { email: `p${i}@example.com` })).body.id);
    const seen: string[] = [];
    let after: string | null = null;
    const sizes: number[] = [];
    do {
      const r: any = await m.get(`/v1/customers?limit=20${after ? `&after=${after}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.object).toBe('list');
      sizes.push(r.body.data.length);
      seen.push(...r.body.data.map((c: any) => c.id));
      expect(r.body.has_more).toBe(r.body.next_cursor !== null);
      after = r.body.next_cursor;
    } while (after);
    expect(sizes).toEqual([20, 20, 5]);
    expect(seen).toEqual([...ids].reverse());
    // default page size is 20
    expect((await m.get('/v1/customers')).body.data).toHaveLength(20);
  });

  it('validates every field', async () => {
    const cases: [unknown, number, string, string | null][] = [
      [{}, 400, 'parameter_missing', 'email'],
      [{ email: 'nope' }, 400, 'parameter_invalid', 'email'],
      [{ email: 42 }, 400, 'parameter_invalid', 'email'],
      [{ email: 'a@b.co', phone: '0700000000' }, 400, 'parameter_invalid', 'phone'],
      [{ email: 'a@b.co', phone: '+1' }, 400, 'parameter_invalid', 'phone'],
      [{ email: 'a@b.co', currency: 'XYZ' }, 400, 'parameter_invalid', 'currency'],
      [{ email: 'a@b.co', currency: 12 }, 400, 'parameter_invalid', 'currency'],
      [{ email: 'a@b.co', metadata: 'x' }, 400, 'parameter_invalid', 'metadata'],
      [{ email: 'a@b.co', metadata: { k: 1 } }, 400, 'parameter_invalid', 'metadata[k]'],
      [{ email: 'a@b.co', metadata: { k: 'v'.repeat(501) } }, 400, 'parameter_invalid', 'metadata[k]'],
      [{ email: 'a@b.co', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 400, 'parameter_invalid', 'metadata'],
      [{ email: 'a@b.co', name: '' }, 400, 'parameter_invalid', 'name'],
      [{ email: 'a@b.co', id: 'cus_mine' }, 400, 'parameter_unknown', 'id'],
      [{ email: 'a@b.co', colour: 'red' }, 400, 'parameter_unknown', 'colour'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await api.post('/v1/customers', body);
      expect({ body, status: r.status, code: r.body.error?.code, param: r.body.error?.param }).toEqual({ body, status, code, param });
      expect(r.body.error.type).toBe('invalid_request_error');
      expect(r.body.error.message).toEqual(expect.any(String));
      expect(r.body.error.request_id).toBe(r.headers.get('request-id'));
    }
    const c = (await api.post('/v1/customers', { email: 'valid@example.com' })).body;
    const bad = await api.patch(`/v1/customers/${c.id}`, { id: 'cus_other' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_unknown', param: 'id' });
    const badEmail = await api.patch(`/v1/customers/${c.id}`, { email: 'still-bad' });
    expect(badEmail.body.error).toMatchObject({ code: 'parameter_invalid', param: 'email' });
    // nothing half-written: the failed requests created no customers or events
    expect((await api.get('/v1/customers?email=a@b.co')).body.data).toEqual([]);
  });

  it('rejects bad list parameters', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=-1', 'limit=1.5']) {
      const r = await api.get(`/v1/customers?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
    }
    const cur = await api.get('/v1/customers?after=garbage');
    expect(cur.status).toBe(400);
    expect(cur.body.error).toMatchObject({ code: 'parameter_invalid', param: 'after' });
    const unk = await api.get('/v1/customers?sort=name');
    expect(unk.body.error).toMatchObject({ code: 'parameter_unknown', param: 'sort' });
    const twice = await api.get('/v1/customers?limit=1&limit=2');
    expect(twice.body.error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
  });
});
