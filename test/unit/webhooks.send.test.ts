// sendWebhook to host names: the pinned lookup answers Node in both forms, happy eyeballs tries
// every checked address, and a refusal names no address. DNS is scripted per host name here (the
// real resolver is used for any other name) so that e.g. "::1 first" is reproducible on any machine.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const answers = vi.hoisted(() => new Map<string, { address: string; family: number }[] | Error>());
vi.mock('node:dns/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns/promises')>();
  const lookup = async (host: string, opts: any) => {
    const a = answers.get(host);
    if (a instanceof Error) throw a;
    return a ?? real.lookup(host, opts);
  };
  return { ...real, lookup, default: { ...real, lookup } };
});

const { pinnedLookup, sendWebhook } = await import('../../src/domain/webhooks/send.ts');
const { FORBIDDEN_MESSAGE } = await import('../../src/domain/webhooks/ssrf.ts');

interface Hit {
  headers: IncomingHttpHeaders;
  body: string;
}
function receiver(host: string) {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  return {
    hits,
    server,
    start: () => new Promise<number>((r) => server.listen(0, host, () => r((server.address() as AddressInfo).port))),
  };
}

const v4 = receiver('127.0.0.1');
let port = 0;
beforeAll(async () => {
  port = await v4.start();
});
afterAll(() => void v4.server.close());

describe('pinnedLookup', () => {
  const targets = [
    { address: '::1', family: 6 as const },
    { address: '127.0.0.1', family: 4 as const },
  ];
  const call = (opts: object) =>
    new Promise<unknown[]>((resolve) => (pinnedLookup(targets) as any)('whatever.test', opts, (...args: unknown[]) => resolve(args)));

  it('answers {all: true} with every checked address, and the single form with the first', async () => {
    expect(await call({ all: true })).toEqual([null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]]);
    expect(await call({})).toEqual([null, '::1', 6]);
    expect(await call({ family: 4 })).toEqual([null, '127.0.0.1', 4]);
    expect(await call({ family: 4, all: true })).toEqual([null, [{ address: '127.0.0.1', family: 4 }]]);
    expect(await call({ family: 'IPv6', all: true })).toEqual([null, [{ address: '::1', family: 6 }]]);
  });

  it('fails (and never asks DNS) when no checked address has the requested family', async () => {
    const [err] = await new Promise<unknown[]>((resolve) =>
      (pinnedLookup([{ address: '127.0.0.1', family: 4 }]) as any)('x.test', { family: 6, all: true }, (...a: unknown[]) => resolve(a)),
    );
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('sendWebhook to host names', () => {
  it('delivers to a host name whose first answer (::1) refuses: the next checked address is tried', async () => {
    answers.set('dual.test', [
      { address: '::1', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const before = v4.hits.length;
    const r = await sendWebhook(`http://dual.test:${port}/hooks`, { 'content-type': 'application/json' }, '{"a":1}', true, 5000);
    expect(r).toMatchObject({ ok: true, status: 200, body: 'ok' });
    expect(v4.hits.slice(before)).toEqual([expect.objectContaining({ body: '{"a":1}' })]);
    expect(v4.hits.at(-1)!.headers.host).toBe(`dual.test:${port}`);
  });

  it('delivers to localhost as the system resolves it, and to the literal address', async () => {
    for (const host of ['localhost', '127.0.0.1']) {
      const r = await sendWebhook(`http://${host}:${port}/hooks`, {}, '{}', true, 5000);
      expect(r, host).toMatchObject({ ok: true, status: 200 });
      expect(v4.hits.at(-1)!.headers.host).toBe(`${host}:${port}`);
    }
  });

  it('delivers to a host name that resolves to IPv6 only', async () => {
    const v6 = receiver('::1');
    const p6 = await v6.start().catch(() => null);
    if (p6 === null) return; // no IPv6 loopback on this machine
    try {
      answers.set('v6only.test', [{ address: '::1', family: 6 }]);
      const r = await sendWebhook(`http://v6only.test:${p6}/hooks`, {}, '{}', true, 5000);
      expect(r).toMatchObject({ ok: true, status: 200 });
      expect(v6.hits).toHaveLength(1);
    } finally {
      v6.server.close();
    }
  });

  it('refuses when any answer is forbidden, without naming the addresses, and sends nothing', async () => {
    answers.set('mixed.test', [
      { address: '127.0.0.1', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ]);
    answers.set('nat64.test', [{ address: '64:ff9b::a9fe:a9fe', family: 6 }]);
    answers.set('sixtofour.test', [{ address: '2002:7f00:1::1', family: 6 }]);
    const before = v4.hits.length;
    for (const [url, allow] of [
      [`http://mixed.test:${port}/hooks`, true],
      [`http://nat64.test:${port}/hooks`, true],
      [`http://sixtofour.test:${port}/hooks`, true],
      [`http://localhost:${port}/hooks`, false],
    ] as const) {
      const r = await sendWebhook(url, {}, '{}', allow, 5000);
      expect(r, url).toMatchObject({ ok: false, status: null, body: FORBIDDEN_MESSAGE });
      expect(r.body).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
    }
    expect(v4.hits.length).toBe(before);
  });

  it('reports a name that does not resolve', async () => {
    answers.set('nx.test', Object.assign(new Error('getaddrinfo ENOTFOUND nx.test'), { code: 'ENOTFOUND' }));
    const r = await sendWebhook('https://nx.test/hooks', {}, '{}', false, 5000);
    expect(r).toMatchObject({ ok: false, status: null, body: 'could not resolve the host' });
  });
});
