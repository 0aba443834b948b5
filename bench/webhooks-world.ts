// The outside world of bench/webhooks.ts, in its own process (as autocannon is for bench/run.ts):
// the webhook receiver and the API clients, so that the service's process does only the service's
// work. Driven over IPC; every time it reports is absolute (performance.timeOrigin + now, ms), the
// same clock the parent reads.
import { createServer, Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from '../src/domain/webhooks/signing.ts';

const now = () => performance.timeOrigin + performance.now();
const arrived = new Map<string, number>();
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const m = /"email":"(c\d+@bench\.example)"/.exec(body);
    if (m && !arrived.has(m[1]!)) arrived.set(m[1]!, now());
    res.writeHead(200).end('ok');
  });
});
receiver.keepAliveTimeout = 5000;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
function post(url: string, headers: Record<string, string>, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode! < 300 ? resolve(text) : reject(new Error(`${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

type Command =
  | { cmd: 'burst'; base: string; auth: string; from: number; count: number; concurrency: number }
  | { cmd: 'paced'; base: string; auth: string; from: number; count: number; rate: number }
  | { cmd: 'direct'; url: string; secret: string; count: number; concurrency: number }
  | { cmd: 'arrived'; emails: string[] };

async function handle(m: Command): Promise<unknown> {
  if (m.cmd === 'burst' || m.cmd === 'paced') {
    const headers = { authorization: m.auth, 'content-type': 'application/json' };
    const committed: [string, number][] = [];
    const create = async (i: number) => {
      const email = `c${m.from + i}@bench.example`;
      await post(`${m.base}/v1/customers`, headers, JSON.stringify({ email }));
      committed.push([email, now()]);
    };
    const start = now();
    if (m.cmd === 'burst') {
      let next = 0;
      await Promise.all(Array.from({ length: m.concurrency }, async () => { while (next < m.count) await create(next++); }));
    } else {
      await Promise.all(Array.from({ length: m.count }, async (_, i) => {
        await new Promise((r) => setTimeout(r, Math.max(0, start + (i * 1000) / m.rate - now())));
        await create(i);
      }));
    }
    return { start, end: now(), committed };
  }
  if (m.cmd === 'direct') {
    const body = JSON.stringify({ id: 'evt_bench', object: 'event', type: 'customer.created', data: { object: { email: 'x' } } });
    let sent = 0;
    const start = now();
    await Promise.all(Array.from({ length: m.concurrency }, async () => {
      while (sent++ < m.count) {
        const ts = Math.floor(Date.now() / 1000);
        await post(m.url, { 'content-type': 'application/json', 'webhook-id': 'evt_bench', 'webhook-timestamp': String(ts), 'webhook-signature': sign(m.secret, 'evt_bench', ts, body) }, body);
      }
    }));
    return { start, end: now() };
  }
  return m.emails.map((e) => arrived.get(e) ?? null);
}

receiver.listen(0, '127.0.0.1', () => process.send!({ ready: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }));
process.on('message', (m: Command & { id: number }) => {
  handle(m).then(
    (result) => process.send!({ id: m.id, result }),
    (err) => process.send!({ id: m.id, error: String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
