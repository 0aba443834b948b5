// At-least-once delivery across a crash: the real server is killed (SIGKILL) while a delivery is
// in flight, started again on the same data, and the delivery still arrives.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

const servers = serverProcesses('restart', { LOG_LEVEL: 'info', BILLING_ALLOW_HTTP_WEBHOOKS: '1', JOBS_LEASE_MS: '2000', JOBS_POLL_MS: '100' });
afterAll(() => servers.cleanup());
const auth = servers.auth;
const startServer = servers.start;

describe('webhook delivery across a crash', () => {
  it('a delivery in flight when the process is killed is sent after the restart', async () => {
    const got: string[] = [];
    let hang = true;
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push(String(req.headers['webhook-id']));
        if (hang) return; // never answers: the delivery is in flight when the server dies
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const port = testPort();
    const base = `http://127.0.0.1:${port}`;
    const call = (path: string, body: unknown) =>
      fetch(base + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);

    const first = await startServer(port);
    const ep = await call('/v1/webhook-endpoints', { url: hookUrl, events: ['customer.created'] });
    expect(ep.secret).toMatch(/^whsec_/);
    await call('/v1/customers', { email: 'crash@example.com' });
    // Eventually (another crash test may be loading the same two cores).
    const until = Date.now() + 30_000;
    while (got.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(got).toHaveLength(1);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    hang = false;
    await startServer(port);
    const deadline = Date.now() + 15_000;
    while (got.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(got).toHaveLength(2);
    expect(got[1]).toBe(got[0]);
    receiver.close();
  }, 90_000);
});
