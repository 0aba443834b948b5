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

/** A card the test processor approves. */
export const GOOD_CARD = '4242424242424242';

/** `iso` moved by `seconds`. */
export const at = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString();
/** `iso` moved by whole months (the day of month kept: the tests anchor on the 1st). */
export const months = (iso: string, n: number) => {
  const d = new Date(iso);
  d.setUTCMonth(d.getUTCMonth() + n);
  return d.toISOString();
};
export const years = (iso: string, n: number) => months(iso, 12 * n);

/**
 * A clock merchant moved to `start`, with one customer whose card (GOOD_CARD) is saved, and
 * helpers that create plans (monthly, in `currency`) and subscriptions of that customer, each
 * asserting its 201.
 */
export async function cardCustomerMerchant(app: TestApp, opts: { start: string; name: string; emailPrefix: string; currency?: string }) {
  const m = await clockMerchant(app);
  const { api } = m;
  await m.advance({ to: opts.start });
  const email = `${opts.emailPrefix}${Math.random().toString(36).slice(2)}@example.com`;
  const customer = (await api.post('/v1/customers', { email, name: opts.name })).body as { id: string; email: string };
  const si = (await api.post('/v1/setup-intents', { customer_id: customer.id })).body;
  expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: GOOD_CARD })).status).toBe(200);
  const created = async (path: string, body: Record<string, unknown>) => {
    const r = await api.post(path, body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  };
  const plan = (body: Record<string, unknown>) => created('/v1/plans', { currency: opts.currency ?? 'USD', interval: 'month', ...body });
  const subscribe = (planId: string, extra: Record<string, unknown> = {}) => created('/v1/subscriptions', { customer_id: customer.id, plan_id: planId, ...extra });
  const invoice = async (id: string) => (await api.get(`/v1/invoices/${id}`)).body;
  return { ...m, customer, created, plan, subscribe, invoice };
}
