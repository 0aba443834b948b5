// Sends one webhook: POST to the checked addresses with the original Host/SNI, 15 s timeout, no
// redirects, response body kept up to 64 KiB.
import http from 'node:http';
import https from 'node:https';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { resolveSafe, type CheckedAddress } from './ssrf.ts';

export const TIMEOUT_MS = 15_000;

// Connections are reused per set of checked addresses and host (keep-alive), like any HTTP client
// would: a pooled socket is always connected to one of the addresses checked for this request.
// The agents are kept for the MAX_AGENTS most recently used sets; beyond that the least recently
// used idle one is closed (its keep-alive sockets with it). Every endpoint host, and every new set
// of addresses a host resolves to, makes a set: without a bound the map grew for ever.

/** Keep-alive agents kept at most (plus those with a delivery in flight, never closed under it). */
export const MAX_AGENTS = 256;

/** Agents by key, least recently used first; an agent with requests in flight is never evicted. */
export class AgentPool {
  private readonly entries = new Map<string, { agent: http.Agent; users: number }>();
  constructor(
    /** agents kept at most when idle (mutable: a test lowers it) */
    public max: number,
    private readonly make: (protocol: string) => http.Agent,
  ) {}

  /** The agent for `key`, now the most recently used; call release() when the request is over. */
  acquire(key: string, protocol: string): http.Agent {
    let e = this.entries.get(key);
    if (e) this.entries.delete(key);
    else e = { agent: this.make(protocol), users: 0 };
    e.users++;
    this.entries.set(key, e);
    this.trim();
    return e.agent;
  }

  release(key: string, agent: http.Agent): void {
    const e = this.entries.get(key);
    if (e?.agent !== agent) return;
    e.users--;
    this.trim();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Agents with a request in flight. */
  get busy(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.users > 0) n++;
    return n;
  }

  private trim(): void {
    if (this.entries.size <= this.max) return;
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.max) return;
      if (e.users > 0) continue;
      this.entries.delete(key);
      e.agent.destroy();
    }
  }
}

export const agentPool = new AgentPool(MAX_AGENTS, (protocol) => {
  // autoSelectFamily: happy eyeballs over every checked address (whatever the process default),
  // e.g. localhost -> ::1 refused, then 127.0.0.1 connects.
  const opts = { keepAlive: true, maxSockets: 16, timeout: TIMEOUT_MS, autoSelectFamily: true };
  return protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts);
});
const agentKey = (protocol: string, targets: CheckedAddress[], host: string) => `${protocol}//${targets.map((t) => t.address).join(',')}/${host}`;
export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * A `lookup` for net/http that answers only with the already-checked addresses (no second DNS
 * query, so no rebinding). Node calls it with `{all: true}` when it connects with happy eyeballs
 * (autoSelectFamily) and expects every address as [{address, family}]; otherwise it expects one
 * (address, family). `family` 4/6 in the options narrows the answer to that family.
 */
export function pinnedLookup(targets: readonly CheckedAddress[]): LookupFunction {
  return (_hostname: string, options: LookupOptions, callback: (...args: any[]) => void) => {
    const fam = options?.family === 'IPv4' ? 4 : options?.family === 'IPv6' ? 6 : options?.family;
    const list = fam === 4 || fam === 6 ? targets.filter((t) => t.family === fam) : [...targets];
    if (list.length === 0) {
      const err = Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' });
      return callback(err);
    }
    if (options?.all) return callback(null, list.map((t): LookupAddress => ({ address: t.address, family: t.family })));
    return callback(null, list[0]!.address, list[0]!.family);
  };
}

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
  let targets: CheckedAddress[];
  try {
    targets = await resolveSafe(u.hostname, allowLoopback);
  } catch (err) {
    return { ok: false, status: null, body: (err as Error).message.slice(0, MAX_RESPONSE_BYTES), durationMs: Math.round(performance.now() - started) };
  }
  const mod = u.protocol === 'https:' ? https : http;
  const key = agentKey(u.protocol, targets, u.host);
  const agent = agentPool.acquire(key, u.protocol);
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
        lookup: pinnedLookup(targets),
        agent,
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
    // A failed attempt (timeout, refused, reset) ends when its connection is closed, not before:
    // the endpoint's concurrency cap counts connections the receiver can still see.
    let failure: Omit<SendResult, 'durationMs'> | undefined;
    req.on('error', (err) => {
      failure ??= { ok: false, status: null, body: err.message };
      if (req.destroyed && req.socket?.destroyed !== false) setImmediate(() => finish(failure!));
    });
    req.on('close', () => {
      if (failure) finish(failure);
    });
    req.end(body);
  }).finally(() => agentPool.release(key, agent));
}
