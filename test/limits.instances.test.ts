// Limits shared by instances (issue 26, "Several instances"): two real server processes on one
// PostgreSQL database count against the same limits (the `rate_limits` table), so failures spread
// over both are refused — or held — at the same count as on one instance:
//
// - failed authentications per source address: the 7th attempt of an address limited to 6 a
//   minute is refused (429) on either instance, whether the six went to one instance or
//   alternated between two (with per-process counting, two instances let twelve through);
// - failures per client id: the tarpit starts after the 3 free failures counted over both;
// - dashboard sign-in failures per email: the 4th attempt is refused on either;
// - the per-key request rate: 10 a second between both, not 10 each.
//
// PostgreSQL only (the embedded database is one process, and its limits are in memory).
import { afterAll, describe, expect, it } from 'vitest';
import { serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

const servers = serverProcesses('limits', {
  LOG_LEVEL: 'warn',
  TRUST_PROXY: '1',
  AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '6',
  AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '3',
  RATE_LIMIT_PER_SECOND: '10',
});
afterAll(() => servers.cleanup());

const clientId = Buffer.from(servers.auth.slice('Basic '.length), 'base64').toString().split(':')[0]!;
const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');

interface Answer {
  status: number;
  code: string | undefined;
  ms: number;
}

async function get(base: string, authorization: string, from: string): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}/v1/customers?limit=1`, { headers: { authorization, 'x-forwarded-for': from } });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code, ms: performance.now() - started };
}

async function signIn(base: string, email: string, from: string): Promise<number> {
  const res = await fetch(`${base}/dashboard/api/session`, {
    method: 'POST',
    headers: { origin: base, 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ email, password: 'not the password' }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe.runIf(process.env.TEST_DATABASE_URL)('two instances on one PostgreSQL share the limits', () => {
  it('address, client id, sign-in email and request rate: refused or held at the same count as on one instance', async () => {
    const portA = testPort();
    const A = `http://127.0.0.1:${portA}`;
    const B = `http://127.0.0.1:${portA + 1}`;
    await servers.start(portA);
    await servers.start(portA + 1);

    // -- failed authentications per address (6 a minute): wrong secrets of unknown client ids
    // (each its own id, so no id's tarpit is involved).
    const attempts = async (bases: string[], from: string) => {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await get(bases[i % bases.length]!, basic(`ck_nobody_${from.replace(/\D/g, '')}_${i}`, 'sk_wrong_0000000000000000'), from)).status);
      return statuses;
    };
    const oneInstance = await attempts([A], '203.0.113.10');
    const twoInstances = await attempts([A, B], '203.0.113.11');
    expect(oneInstance).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
    expect(twoInstances).toEqual(oneInstance);
    // … and refused on both instances from then on, while another address is not.
    expect((await get(A, basic('ck_nobody_x', 'sk_wrong_0000000000000000'), '203.0.113.11')).status).toBe(429);
    expect((await get(B, basic('ck_nobody_y', 'sk_wrong_0000000000000000'), '203.0.113.11')).status).toBe(429);
    expect((await get(B, servers.auth, '203.0.113.12')).status).toBe(200);

    // -- failures per client id (3 free a minute, then held 0.1 s, 0.2 s …), each from an address
    // of its own and alternating between the instances: the 4th is held whichever instance gets it.
    const held: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await get(i % 2 ? B : A, basic(clientId, `sk_wrong_guess_${i}_000000000000`), `198.51.100.${30 + i}`);
      expect(r.status).toBe(401);
      held.push(r.ms);
    }
    expect(held[3]).toBeGreaterThanOrEqual(100 - 5);
    expect(held[4]).toBeGreaterThanOrEqual(200 - 5);
    // The right secret is answered at once on both (never refused for its id).
    for (const base of [A, B]) {
      const right = await get(base, servers.auth, '198.51.100.40');
      expect(right.status).toBe(200);
      expect(right.ms).toBeLessThan(3000);
    }

    // -- dashboard sign-in per email (3 a minute): the 4th is refused, alternating instances,
    // each attempt from another address.
    const email = `nobody.${Date.now()}@example.com`;
    const signIns: number[] = [];
    for (let i = 0; i < 5; i++) signIns.push(await signIn(i % 2 ? B : A, email, `192.0.2.${10 + i}`));
    expect(signIns).toEqual([401, 401, 401, 429, 429]);

    // -- the per-key request rate (10 a second), 30 requests at once spread over both: 10 are
    // served in the second (per-process counting would serve 20). Both instances know the key
    // already (verified above); retried when a loaded machine stretches the burst past a second.
    let served = 0;
    for (let round = 0; round < 4; round++) {
      await new Promise((r) => setTimeout(r, 1100));
      const started = Date.now();
      const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => get(i % 2 ? B : A, servers.auth, '198.51.100.41')));
      served = burst.filter((r) => r.status === 200).length;
      const refused = burst.filter((r) => r.status === 429);
      expect(refused.every((r) => r.code === 'rate_limited')).toBe(true);
      expect(served + refused.length).toBe(30);
      if (Date.now() - started < 700) break;
    }
    expect(served).toBe(10);
  }, 180_000);
});
