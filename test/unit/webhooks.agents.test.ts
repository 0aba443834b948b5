// The webhook keep-alive agents are bounded (issue 21): the least recently used idle agent beyond
// the maximum is closed with its connections, and an agent with a delivery in flight is never
// closed under it.
import { createServer, type Server } from 'node:http';
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AgentPool, agentPool, MAX_AGENTS, sendWebhook } from '../../src/domain/webhooks/send.ts';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

function fakeAgents() {
  const log: string[] = []; // the keys of destroyed agents, in order
  let next = '';
  const pool = new AgentPool(2, () => {
    const key = next;
    return { destroy: vi.fn(() => log.push(key)) } as unknown as http.Agent;
  });
  const use = (key: string) => {
    next = key;
    return pool.acquire(key, 'http:');
  };
  return { pool, use, destroyed: () => [...log] };
}

describe('webhook agents', () => {
  it('keeps at most `max` idle agents, closing the least recently used', () => {
    const { pool, use, destroyed } = fakeAgents();
    pool.release('a', use('a'));
    pool.release('b', use('b'));
    pool.release('a', use('a')); // a is now more recent than b
    pool.release('c', use('c'));
    expect(destroyed()).toEqual(['b']);
    expect(pool.size).toBe(2);
    pool.release('d', use('d'));
    expect(destroyed()).toEqual(['b', 'a']);
    expect(pool.size).toBe(2);
  });

  it('never closes an agent with a request in flight; it goes once released, if still beyond the bound', () => {
    const { pool, use, destroyed } = fakeAgents();
    const a = use('a'); // in flight
    pool.release('b', use('b'));
    const c = use('c'); // b is the only idle one: closed
    expect(destroyed()).toEqual(['b']);
    expect(pool.size).toBe(2);
    const d = use('d'); // a, c and d all in flight: three agents for a moment, none closed
    expect(destroyed()).toEqual(['b']);
    expect(pool.size).toBe(3);
    expect(pool.busy).toBe(3);
    pool.release('a', a); // a is the least recently used idle one: closed
    expect(destroyed()).toEqual(['b', 'a']);
    pool.release('c', c);
    pool.release('d', d);
    expect(destroyed()).toEqual(['b', 'a']);
    expect(pool.size).toBe(2);
    expect(pool.busy).toBe(0);
    // A second release of the same agent changes nothing.
    pool.release('a', a);
    expect(pool.size).toBe(2);
  });

  it('sendWebhook uses the bounded pool: an evicted agent’s keep-alive connection is closed', async () => {
    expect(MAX_AGENTS).toBeGreaterThan(0);
    const closed: number[] = [];
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = createServer((req, res) => {
        req.resume();
        req.on('end', () => res.end('ok'));
      });
      s.on('connection', (sock: Socket) => sock.on('close', () => closed.push(i)));
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      servers.push(s);
      ports.push((s.address() as AddressInfo).port);
    }
    const before = agentPool.max;
    const sizeBefore = agentPool.size;
    agentPool.max = sizeBefore + 2;
    try {
      for (const port of ports) {
        const r = await sendWebhook(`http://127.0.0.1:${port}/hooks`, { 'content-type': 'application/json' }, '{}', true);
        expect(r.ok).toBe(true);
      }
      // The first receiver's agent was the least recently used when the third was added: closed,
      // and its keep-alive connection with it; the other two stay open for the next delivery.
      const deadline = Date.now() + 5000;
      while (!closed.includes(0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(closed).toEqual([0]);
      expect(agentPool.size).toBe(sizeBefore + 2);
      expect(agentPool.busy).toBe(0);
    } finally {
      agentPool.max = before;
    }
  });
});
