// kill -9 in the middle of idempotent requests, with the keys and references real clients send
// (a UUID v4 per request, order references): the real server as its own process is SIGKILLed
// while requests are in flight, started again on the same data, and every request is retried
// with its key until it gets a definite answer (not 409 idempotency_key_in_use, not 5xx, not a
// dropped connection). Every retried key must get one within a minute, every answer must agree
// with what was committed, and the money must add up: nothing lost, nothing doubled.
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { allPages, serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

const LEASE_MS = 3000;
// Every start of the server costs seconds (most of this file's time), so one setting serves every
// test and the running server is reused where it can be: the processor always takes a moment
// (TEST_PROCESSOR_LATENCY_MS), so that a kill finds charges in flight; the debits and creates
// never call it.
const servers = serverProcesses('idemcrash', {
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_SECOND: '0',
  IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
  PAYMENT_RECOVERY_MS: '2000',
  PROCESSOR_TIMEOUT_MS: '1000',
  JOBS_POLL_MS: '100',
  JOBS_LEASE_MS: '2000',
  TEST_PROCESSOR_LATENCY_MS: '300',
});
afterAll(() => servers.cleanup());

const port = testPort();
const base = `http://127.0.0.1:${port}`;

interface Answer {
  status: number;
  body: any;
  replayed: boolean;
}

/** One request; a dropped connection (the server was killed) is status 0. */
async function call(method: string, path: string, body?: unknown, key?: string): Promise<Answer> {
  try {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: servers.auth, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null, replayed: r.headers.get('idempotent-replayed') === 'true' };
  } catch {
    return { status: 0, body: null, replayed: false };
  }
}

const definite = (a: Answer) => a.status !== 0 && a.status < 500 && !(a.status === 409 && a.body?.error?.code === 'idempotency_key_in_use');

/** Retries with the same key until the answer is definite; fails after a minute. */
async function retryUntilDefinite(method: string, path: string, body: unknown, key: string): Promise<Answer & { waitedMs: number }> {
  const started = Date.now();
  for (;;) {
    const a = await call(method, path, body, key);
    if (definite(a)) return { ...a, waitedMs: Date.now() - started };
    if (Date.now() - started > 60_000) throw new Error(`no definite answer within a minute for ${method} ${path} (${key}): ${a.status} ${JSON.stringify(a.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function kill(child: ChildProcess) {
  child.kill('SIGKILL');
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
}

/** Fires the requests at once and kills the server just after the first answer arrives. */
async function fireAndKill(child: ChildProcess, reqs: { method: string; path: string; body: unknown; key: string }[]): Promise<Map<string, Answer>> {
  // (a GraphQL request carries its key in the body: sent without the header)
  const answers = new Map<string, Answer>();
  let firstAnswer!: () => void;
  const first = new Promise<void>((r) => (firstAnswer = r));
  const all = reqs.map(async (r) => {
    const a = await call(r.method, r.path, r.body, r.path === '/graphql' ? undefined : r.key);
    if (a.status !== 0) {
      answers.set(r.key, a);
      firstAnswer();
    }
  });
  await first;
  await kill(child);
  await Promise.allSettled(all);
  return answers;
}

const listAll = (path: string) => allPages(call, path);

async function savedCard(email: string) {
  const c = (await call('POST', '/v1/customers', { email })).body;
  const si = (await call('POST', '/v1/setup-intents', { customer_id: c.id })).body;
  const done = (await call('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {})).body;
  return { customer: c, pm: done.payment_method_id as string };
}

describe('idempotent requests across kill -9', () => {
  let server: ChildProcess;
  const running = () => !!server && server.exitCode === null && server.signalCode === null;

  it('keyed debits: every retried key gets the one debit it made, the ledger is exact', async () => {
    server = await servers.start(port);
    const wallets: string[] = [];
    for (let i = 0; i < 8; i++) {
      const c = (await call('POST', '/v1/customers', { email: `debits-${randomUUID()}@example.com` })).body;
      const w = (await call('POST', '/v1/wallets', { customer_id: c.id, currency: 'USD' })).body;
      expect((await call('POST', `/v1/wallets/${w.id}/credit`, { amount: 1_000_000, reference: `grant_${randomUUID()}`, description: 'Prepaid' })).status).toBe(201);
      wallets.push(w.id);
    }
    // Three rounds, each killed just after its first answer: debits spread over the wallets (so
    // they are not all queued on one row lock) are caught at every step of their requests.
    const reqs: { method: string; path: string; body: { amount: number; reference: string; description: string }; key: string }[] = [];
    const before = new Map<string, Answer>();
    for (let round = 0; round < 3; round++) {
      const batch = Array.from({ length: 48 }, (_, i) => ({
        method: 'POST',
        path: `/v1/wallets/${wallets[i % wallets.length]}/debit`,
        body: { amount: 100 + round * 100 + i, reference: `order_${randomUUID()}`, description: `Order ${round}-${i}` },
        key: randomUUID(),
      }));
      reqs.push(...batch);
      for (const [k, a] of await fireAndKill(server, batch)) before.set(k, a);
      server = await servers.start(port);
    }

    for (const r of reqs) {
      const a = await retryUntilDefinite(r.method, r.path, r.body, r.key);
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body).toMatchObject({ object: 'wallet_transaction', type: 'debit', amount: r.body.amount, reference: r.body.reference });
      // An answer given before the crash is the answer after it.
      const earlier = before.get(r.key);
      if (earlier && earlier.status === 200) expect(a.body).toEqual(earlier.body);
    }
    for (const [i, id] of wallets.entries()) {
      const mine = reqs.filter((r) => r.path.includes(id));
      const ledger = await listAll(`/v1/wallets/${id}/transactions`);
      expect(ledger.filter((t) => t.type === 'debit').map((t) => t.reference).sort(), `wallet ${i}`).toEqual(mine.map((r) => r.body.reference).sort());
      const expected = 1_000_000 - mine.reduce((s, r) => s + r.body.amount, 0);
      expect((await call('GET', `/v1/wallets/${id}`)).body.balance).toBe(expected);
      expect(ledger.reduce((s, t) => s + (t.type === 'credit' ? t.amount : -t.amount), 0)).toBe(expected);
    }
  }, 300_000);

  it('keyed GraphQL debits (idempotencyKey): the same, through the other surface', async () => {
    if (!running()) server = await servers.start(port);
    const c = (await call('POST', '/v1/customers', { email: `gql-debits-${randomUUID()}@example.com` })).body;
    const w = (await call('POST', '/v1/wallets', { customer_id: c.id, currency: 'EUR' })).body;
    expect((await call('POST', `/v1/wallets/${w.id}/credit`, { amount: 500_000, reference: `grant_${randomUUID()}`, description: 'Prepaid' })).status).toBe(201);
    const DEBIT = `mutation($input: DebitWalletInput!) { debitWallet(input: $input) { __typename
      ... on DebitWalletSuccess { transaction { id reference amount balanceAfter } } ... on Error { code message } } }`;
    const reqs = Array.from({ length: 40 }, (_, i) => {
      const input = { id: w.id, amount: 50 + i, reference: `order_${randomUUID()}`, description: `Order ${i}`, idempotencyKey: randomUUID() };
      return { method: 'POST', path: '/graphql', body: { query: DEBIT, variables: { input } }, key: input.idempotencyKey, input };
    });
    await fireAndKill(server, reqs);
    server = await servers.start(port);
    for (const r of reqs) {
      const started = Date.now();
      let result: any;
      for (;;) {
        const a = await call('POST', '/graphql', r.body);
        result = a.body?.data?.debitWallet;
        if (a.status === 200 && result?.__typename === 'DebitWalletSuccess') break;
        // Anything else must be a transient answer: the key still held, or the server starting.
        if (a.status === 200) expect(result?.code, JSON.stringify(a.body)).toBe('idempotency_key_in_use');
        if (Date.now() - started > 60_000) throw new Error(`no definite answer within a minute: ${JSON.stringify(a.body)}`);
        await new Promise((res) => setTimeout(res, 200));
      }
      expect(result.transaction).toMatchObject({ reference: r.input.reference, amount: r.input.amount });
    }
    const ledger = await listAll(`/v1/wallets/${w.id}/transactions`);
    expect(ledger.filter((t) => t.type === 'debit').map((t) => t.reference).sort()).toEqual(reqs.map((r) => r.input.reference).sort());
    const expected = 500_000 - reqs.reduce((sum, r) => sum + r.input.amount, 0);
    expect((await call('GET', `/v1/wallets/${w.id}`)).body.balance).toBe(expected);
  }, 180_000);

  it('keyed creates: one customer and one event per key', async () => {
    if (!running()) server = await servers.start(port);
    const tag = randomUUID().slice(0, 8);
    const reqs = Array.from({ length: 30 }, (_, i) => ({ method: 'POST', path: '/v1/customers', body: { email: `crash-${tag}-${i}@example.com`, name: `Crash ${i}` }, key: randomUUID() }));
    const before = await fireAndKill(server, reqs);
    server = await servers.start(port);
    const ids = new Set<string>();
    for (const r of reqs) {
      const a = await retryUntilDefinite(r.method, r.path, r.body, r.key);
      expect(a.status).toBe(201);
      expect(a.body.email).toBe(r.body.email);
      const earlier = before.get(r.key);
      if (earlier && earlier.status === 201) expect(a.body).toEqual(earlier.body);
      ids.add(a.body.id);
    }
    expect(ids.size).toBe(30);
    for (const r of reqs) expect((await call('GET', `/v1/customers?email=${encodeURIComponent(r.body.email)}`)).body.data).toHaveLength(1);
    const created = (await listAll('/v1/events?type=customer.created')).filter((e) => ids.has(e.data.object.id));
    expect(created).toHaveLength(30);
  }, 180_000);

  it('keyed off-session payments: none stays processing after the restart, and the retries settle each once', async () => {
    // The processor takes a moment (300 ms), so the kill finds charges in flight.
    if (!running()) server = await servers.start(port);
    const { customer, pm } = await savedCard(`payments-${randomUUID()}@example.com`);
    const reqs = Array.from({ length: 16 }, (_, i) => ({ method: 'POST', path: '/v1/payments', body: { amount: 1000 + i, currency: 'USD', payment_method_id: pm }, key: randomUUID() }));
    await fireAndKill(server, reqs);
    server = await servers.start(port);

    // Without any retry, the recovery job (due a minute on) finishes every charge that was cut off.
    expect((await call('POST', '/v1/test-helpers/clock/advance', { seconds: 61 })).status).toBe(200);
    const deadline = Date.now() + 30_000;
    let payments: any[] = [];
    for (;;) {
      payments = await listAll(`/v1/payments?customer_id=${customer.id}`);
      if (payments.every((p) => p.status !== 'processing') || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(payments.filter((p) => p.status === 'processing').map((p) => p.id)).toEqual([]);

    // The retries: every key answers with its payment, succeeded; never a second payment.
    const seen = new Set<string>();
    for (const r of reqs) {
      const a = await retryUntilDefinite(r.method, r.path, r.body, r.key);
      expect(a.status, JSON.stringify(a.body)).toBe(201);
      expect(a.body).toMatchObject({ amount: r.body.amount, status: 'succeeded', payment_method_id: pm });
      seen.add(a.body.id);
    }
    expect(seen.size).toBe(16);
    payments = await listAll(`/v1/payments?customer_id=${customer.id}`);
    expect(payments.map((p) => p.status).sort()).toEqual(Array(16).fill('succeeded'));
    const succeeded = (await listAll('/v1/events?type=payment.succeeded')).filter((e) => seen.has(e.data.object.id));
    expect(succeeded).toHaveLength(16);
  }, 180_000);

  it('a keyed refund killed in the processor call: the retry resumes it after the lease, refunded once', async () => {
    if (!running()) server = await servers.start(port);
    const { pm } = await savedCard(`refund-${randomUUID()}@example.com`);
    const paid = (await call('POST', '/v1/payments', { amount: 5000, currency: 'USD', payment_method_id: pm })).body;
    expect(paid.status).toBe('succeeded');
    await kill(server);
    // A processor that takes 20 s: the request is killed while it waits for the answer.
    server = await servers.start(port, { TEST_PROCESSOR_LATENCY_MS: '20000' });
    const key = randomUUID();
    const body = { payment_id: paid.id, amount: 1500, reason: 'customer_request' };
    const inflight = call('POST', '/v1/refunds', body, key);
    let pending: any[] = [];
    for (let i = 0; i < 100 && pending.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      pending = (await call('GET', `/v1/refunds?payment_id=${paid.id}`)).body.data;
    }
    expect(pending).toEqual([expect.objectContaining({ status: 'pending', amount: 1500 })]);
    await kill(server);
    expect((await inflight).status).toBe(0);

    server = await servers.start(port);
    const killedAt = Date.now();
    const a = await retryUntilDefinite('POST', '/v1/refunds', body, key);
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(a.body).toMatchObject({ id: pending[0].id, status: 'succeeded', amount: 1500 });
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    const again = await call('POST', '/v1/refunds', body, key);
    expect(again.replayed).toBe(true);
    expect(again.body).toEqual(a.body);
    expect((await call('GET', `/v1/refunds?payment_id=${paid.id}`)).body.data).toHaveLength(1);
    expect((await call('GET', `/v1/payments/${paid.id}`)).body.amount_refunded).toBe(1500);
    const events = (await listAll('/v1/events')).filter((e) => e.data.object.id === a.body.id).map((e) => e.type).sort();
    expect(events).toEqual(['refund.created', 'refund.succeeded']);
  }, 180_000);
});
