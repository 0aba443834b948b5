// A body over the 1 MiB limit is answered 413 while the client is still sending it: the client
// reads the answer, not EPIPE or a reset connection (issue 22). Against the real server in its own
// process, as a client on another machine sees it (in-process, client and server take turns on one
// event loop and the race never shows). Up to 16 MiB is read and thrown away; beyond, the
// connection is cut.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

const servers = serverProcesses('bodylimit', { LOG_LEVEL: 'warn', RATE_LIMIT_PER_SECOND: '0' });
const port = testPort();
const base = `http://127.0.0.1:${port}`;
beforeAll(() => servers.start(port), 120_000);
afterAll(() => servers.cleanup());

/** POSTs the whole body at once (as most clients do) and then reads the answer; rejects on EPIPE/ECONNRESET. */
function post(path: string, body: Buffer, declared: boolean): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: servers.auth, 'content-type': 'application/json' };
    if (declared) headers['content-length'] = body.length; // otherwise chunked
    const req = httpRequest(`${base}${path}`, { method: 'POST', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString() || 'null') }));
    });
    req.on('error', reject);
    // Once the answer is read, the server may close while the rest of the body is still being
    // written: a late EPIPE on the socket is expected then (before the answer, it reaches
    // req's 'error' and fails the request).
    req.on('socket', (socket) => socket.on('error', () => undefined));
    req.end(body);
  });
}

describe('bodies over the limit', () => {
  it('8 MiB sent at once, with and without a declared length, ten times each: every client reads 413 body_too_large', { timeout: 120_000 }, async () => {
    const big = Buffer.from(JSON.stringify({ email: 'big@example.com', metadata: { k: 'x'.repeat(8 * 1024 * 1024) } }));
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      for (const declared of [true, false]) {
        const r = await post('/v1/customers', big, declared).then(
          (res) => `${res.status} ${res.body?.error?.code}`,
          (err: NodeJS.ErrnoException) => `error ${err.code}`,
        );
        outcomes.push(r);
      }
    }
    expect(outcomes).toEqual(Array(20).fill('413 body_too_large'));
    // GraphQL reads its body the same way
    const g = await post('/graphql', Buffer.from(JSON.stringify({ query: '{ __typename }', x: 'y'.repeat(8 * 1024 * 1024) })), true);
    expect([g.status, g.body.errors?.[0]?.extensions?.code]).toEqual([413, 'body_too_large']);
    // and nothing was created; the server answers the next request
    const list = await fetch(`${base}/v1/customers?email=big@example.com`, { headers: { authorization: servers.auth } });
    expect((await list.json()).data).toEqual([]);
  });
});
