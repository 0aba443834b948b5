// Sends one webhook: POST to the checked address with the original Host/SNI, 15 s timeout, no
// redirects, response body kept up to 64 KiB.
import http from 'node:http';
import https from 'node:https';
import { resolveSafe } from './ssrf.ts';

export const TIMEOUT_MS = 15_000;

// Connections are reused per resolved address and host (keep-alive), like any HTTP client would.
const agents = new Map<string, http.Agent>();
function agentFor(protocol: string, address: string, host: string): http.Agent {
  const key = `${protocol}//${address}/${host}`;
  let a = agents.get(key);
  if (!a) {
    a = protocol === 'https:' ? new https.Agent({ keepAlive: true, maxSockets: 16, timeout: TIMEOUT_MS }) : new http.Agent({ keepAlive: true, maxSockets: 16, timeout: TIMEOUT_MS });
    agents.set(key, a);
  }
  return a;
}
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendResult {
  ok: boolean;
  status: number | null;
  body: string;
  durationMs: number;
}

export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  allowLoopback: boolean,
  timeoutMs = TIMEOUT_MS,
): Promise<SendResult> {
  const started = performance.now();
  const u = new URL(url);
  let target: { address: string; family: 4 | 6 };
  try {
    target = await resolveSafe(u.hostname, allowLoopback);
  } catch (err) {
    return { ok: false, status: null, body: (err as Error).message.slice(0, MAX_RESPONSE_BYTES), durationMs: Math.round(performance.now() - started) };
  }
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let done = false;
    const finish = (r: Omit<SendResult, 'durationMs'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...r, durationMs: Math.round(performance.now() - started) });
    };
    const req = mod.request(
      u,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() },
        lookup: (_host, _opts, cb) => (cb as (e: null, a: string, f: number) => void)(null, target.address, target.family),
        agent: agentFor(u.protocol, target.address, u.host),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - size));
          size += c.length;
          if (size >= MAX_RESPONSE_BYTES) res.destroy();
        });
        const end = () => {
          const status = res.statusCode ?? null;
          finish({ ok: status !== null && status >= 200 && status < 300, status, body: Buffer.concat(chunks).toString('utf8') });
        };
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (err) => finish({ ok: false, status: null, body: err.message }));
    req.end(body);
  });
}
