// When the database goes away the API answers 503 service_unavailable with Retry-After, the
// process stays up, and it recovers by itself when the database is back. Needs a PostgreSQL
// server (a TCP proxy in front of it is cut and restored), so it runs when TEST_DATABASE_URL is set,
// as in CI; the embedded database cannot disappear from under the process.
import { serve } from '@hono/node-server';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createApp } from '../src/server/app.ts';
import { openServices } from '../src/server/services.ts';

const target = process.env.TEST_DATABASE_URL;

function proxy(to: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const open = () =>
    new Promise<number>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(to.port || 5432), to.hostname);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as AddressInfo).port;
        resolve(port);
      });
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      server!.close(() => resolve());
    });
  return { open, cut };
}

describe.runIf(!!target)('database outage (PostgreSQL)', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const f of cleanup.reverse()) await f().catch(() => {});
  });

  it('answers 503 while the database is unreachable and recovers without a restart', async () => {
    const url = new URL(target!);
    const p = proxy(url);
    const port = await p.open();
    const viaProxy = new URL(target!);
    viaProxy.host = `127.0.0.1:${port}`;
    const log = createLogger('silent');
    const db = await openDatabase({ url: viaProxy.toString(), poolSize: 4, logger: log });
    cleanup.push(() => db.close());
    const services = await openServices(loadConfig({ LOG_LEVEL: 'silent' }), { log, db });
    const app = createApp(services);
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    cleanup.push(() => new Promise((r) => server.close(r)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const creds = await createMerchant(db.prisma, { name: 'Outage' });
    const auth = { authorization: 'Basic ' + Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64') };
    const post = () =>
      fetch(`${base}/v1/customers`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"email":"o@example.com"}' });

    expect((await post()).status).toBe(201);

    await p.cut();
    for (let i = 0; i < 3; i++) {
      const r = await post();
      const body = await r.json();
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('5');
      expect(body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
    }
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    await p.open();
    let status = 0;
    for (let i = 0; i < 20 && status !== 201; i++) {
      status = (await post()).status;
      if (status !== 201) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(201);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    cleanup.push(() => p.cut());
  });
});
