// A merchant on its test clock with an event cursor, for billing tests written the way
// ../shared/notes/billing-tests.md says: move the clock (never sleep), name the events each step
// must produce and check exactly those arrived, and after every step run the engine again and
// check that nothing more happens.
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

export type ClockMerchant = Awaited<ReturnType<typeof clockMerchant>>;

export async function clockMerchant(app: TestApp) {
  const api = await app.merchant();
  const seen = new Set<string>();
  /** The events since the last call, oldest first. */
  async function newEvents(): Promise<{ id: string; type: string; data: any }[]> {
    const out: { id: string; type: string; data: any }[] = [];
    let after: string | undefined;
    for (;;) {
      const r = await api.get(`/v1/events?limit=100${after ? `&after=${after}` : ''}`);
      expect(r.status).toBe(200);
      for (const e of r.body.data) if (!seen.has(e.id)) out.push(e);
      if (!r.body.has_more) break;
      after = r.body.next_cursor;
    }
    for (const e of out) seen.add(e.id);
    return out.reverse(); // oldest first
  }
  await newEvents();
  const m = {
    api,
    /** The events since the last call, as sorted types (order within a step may vary). */
    async events(): Promise<string[]> {
      return (await newEvents()).map((e) => e.type).sort();
    },
    eventObjects: newEvents,
    async advance(body: { seconds?: number; to?: string }) {
      const r = await api.post('/v1/test-helpers/clock/advance', body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.now as string;
    },
    /** Runs the engine again (one more second): nothing may happen. */
    async nothingMore() {
      await m.advance({ seconds: 1 });
      expect(await m.events()).toEqual([]);
    },
  };
  return m;
}
