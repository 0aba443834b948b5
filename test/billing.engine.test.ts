// The billing engine's guarantees beyond the happy scenarios: every job run twice or at once does
// its work once; a charge whose process died is finished under the same processor key; two
// servers advancing one clock at the same time invoice and charge each period once; the PDF
// behind its signed, expiring link.
import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeInvoice } from '../src/domain/billing/invoices.ts';
import { pdfSignature } from '../src/domain/billing/pdf.ts';
import { cycleSubscription, resumeIfDue } from '../src/domain/billing/subscriptions.ts';
import { LeaseLost, setClock } from '../src/domain/clock/index.ts';
import type { Ctx } from '../src/platform/context.ts';
import { Clock } from '../src/platform/clock.ts';
import { forMerchant } from '../src/platform/db/tenant.ts';
import { createLogger } from '../src/platform/logger.ts';
import { Client, send, startApp, usingPostgres, type TestApp } from './helpers/app.ts';
import { injectProcessor } from './helpers/processor.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

async function setup(api: Client, card = '4242424242424242') {
  const c = (await api.post('/v1/customers', { email: `e${Math.random()}@example.com`, name: 'Grace Hopper' })).body;
  const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
  await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: card });
  const plan = (await api.post('/v1/plans', { name: 'Team', amount: 4999, currency: 'EUR', interval: 'month' })).body;
  return { customer: c, plan };
}

function ctxFor(t: TestApp, merchantId: string, at?: Date): Ctx {
  return {
    merchant: { id: merchantId, mode: 'test' },
    db: forMerchant(t.services.db.prisma, merchantId),
    requestId: 'req_test',
    log: createLogger('silent'),
    runtime: t.services.runtime,
    clock: at ? Clock.frozen({ id: merchantId, mode: 'test' }, at) : new Clock({ id: merchantId, mode: 'test' }),
  };
}

describe('jobs run twice or concurrently do the work once', () => {
  it('two renewals of the same period at once: one invoice, one charge', async () => {
    const api = await app.merchant();
    const { customer, plan } = await setup(api);
    const sub = (await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).body;
    const ctx = ctxFor(app, api.creds.merchant_id, new Date(sub.current_period_end));
    const end = new Date(sub.current_period_end).getTime();
    await Promise.all([cycleSubscription(ctx, sub.id, end), cycleSubscription(ctx, sub.id, end), cycleSubscription(ctx, sub.id, end)]);
    await cycleSubscription(ctx, sub.id, end); // and once more afterwards
    const invoices = (await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data;
    expect(invoices).toHaveLength(2);
    expect(invoices[0]).toMatchObject({ status: 'paid', billing_reason: 'subscription_cycle', attempt_count: 1 });
    const payments = (await api.get(`/v1/payments?customer_id=${customer.id}`)).body.data;
    expect(payments.filter((p: any) => p.status === 'succeeded')).toHaveLength(2);
    // The same attempt of a charge, twice at once: one payment.
    await Promise.all([chargeInvoice(ctx, invoices[0].id, 1), chargeInvoice(ctx, invoices[0].id, 1)]);
    expect((await api.get(`/v1/payments?customer_id=${customer.id}`)).body.data).toHaveLength(2);
  });

  it('a renewal and an automatic resume due at the same instant, at once or in either order: resumed once, the period billed', async () => {
    for (const order of ['together', 'renewal first', 'resume first'] as const) {
      const api = await app.merchant();
      const { customer, plan } = await setup(api);
      const sub = (await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).body;
      const end = new Date(sub.current_period_end).getTime();
      expect((await api.post(`/v1/subscriptions/${sub.id}/pause`, { resumes_at: sub.current_period_end })).body.status).toBe('paused');
      const ctx = ctxFor(app, api.creds.merchant_id, new Date(end));
      const cycle = () => cycleSubscription(ctx, sub.id, end);
      const resume = () => resumeIfDue(ctx, sub.id, end);
      if (order === 'together') await Promise.all([cycle(), resume(), cycle(), resume()]);
      else for (const run of order === 'renewal first' ? [cycle, resume] : [resume, cycle]) await run();
      const invoices = (await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data;
      expect(invoices.map((i: any) => [i.period_start, i.status]), order).toEqual([
        [sub.current_period_end, 'paid'],
        [sub.current_period_start, 'paid'],
      ]);
      expect((await api.get(`/v1/subscriptions/${sub.id}`)).body, order).toMatchObject({ status: 'active', pause_collection: null, current_period_start: sub.current_period_end });
      const resumed = (await api.get('/v1/events?type=subscription.resumed')).body.data;
      expect(resumed.map((e: any) => e.created_at), order).toEqual([sub.current_period_end]);
    }
  });

  it('a charge whose process died is finished by the recovery job under the same processor key, never twice', async () => {
    const t = await startApp();
    try {
      const api = await t.merchant();
      const { customer, plan } = await setup(api);
      const stuck = injectProcessor(t);
      stuck.hold();
      // The create call reaches the processor and hangs there, as if its process had died.
      const inFlight = api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id });
      await stuck.called();
      // Its recovery job was scheduled a minute on (PAYMENT_RECOVERY_MS); from now on an attempt
      // older than 300 ms counts as abandoned (instead of a minute of real time).
      t.services.runtime.chargeRecoveryMs = 300;
      await new Promise((r) => setTimeout(r, 400));
      const sub = (await api.get(`/v1/subscriptions?customer_id=${customer.id}`)).body.data[0];
      expect(sub.status).toBe('incomplete');
      const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
      expect((await api.get(`/v1/payments/${inv.payment_id}`)).body.status).toBe('processing');

      // Another process takes over: its recovery job (due a minute later) asks the processor again.
      const fresh = injectProcessor(t);
      expect((await api.post('/v1/test-helpers/clock/advance', { seconds: 61 })).status).toBe(200);
      expect(fresh.charges).toEqual([inv.payment_id]);
      expect(stuck.charges).toEqual([inv.payment_id]); // the same idempotency key: the processor answers once
      expect((await api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', attempt_count: 1 });
      expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
      // The first process comes back: nothing more happens.
      stuck.release();
      expect((await inFlight).status).toBe(201);
      const payments = (await api.get(`/v1/payments?customer_id=${customer.id}`)).body.data;
      expect(payments.map((p: any) => p.status)).toEqual(['succeeded']);
      const paid = (await api.get('/v1/events?type=invoice.paid')).body.data;
      expect(paid).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});

describe.runIf(usingPostgres)('two servers advancing the same clock at once (PostgreSQL)', () => {
  it('every period is invoiced and charged once, and numbers stay gap-free', async () => {
    const second = await startApp();
    try {
      const api = await app.merchant();
      const twin = new Client(second.url, api.creds);
      const subs: any[] = [];
      for (let i = 0; i < 8; i++) {
        const { customer, plan } = await setup(api);
        subs.push((await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).body);
      }
      const to = new Date(Date.now() + 95 * 86_400_000).toISOString(); // three renewals each
      const [a, b] = await Promise.all([api.post('/v1/test-helpers/clock/advance', { to }), twin.post('/v1/test-helpers/clock/advance', { to })]);
      expect([a.status, b.status]).toEqual([200, 200]);
      const invoices = (await api.get('/v1/invoices?limit=100')).body.data;
      expect(invoices).toHaveLength(8 * 4);
      expect(invoices.every((i: any) => i.status === 'paid')).toBe(true);
      const numbers = invoices.map((i: any) => Number(i.number.slice(4))).sort((x: number, y: number) => x - y);
      expect(numbers).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
      for (const s of subs) {
        const mine = invoices.filter((i: any) => i.subscription_id === s.id);
        expect(new Set(mine.map((i: any) => i.period_start)).size).toBe(4);
      }
      const payments = (await api.get('/v1/payments?limit=100')).body.data;
      expect(payments.filter((p: any) => p.status === 'succeeded')).toHaveLength(32);
    } finally {
      await second.close();
    }
  });
});

describe('the invoice PDF', () => {
  it('redirects to a signed address that serves the PDF without credentials; tampered or expired → 403', async () => {
    const api = await app.merchant({ name: 'Acme Analytics' });
    const { customer, plan } = await setup(api);
    const sub = (await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).body;
    const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(inv.pdf_url).toBe(`${app.url}/v1/invoices/${inv.id}/pdf`);
    // A client that follows redirects gets the PDF itself.
    const followed = await fetch(`${app.url}/v1/invoices/${inv.id}/pdf`, { headers: { authorization: api.auth } });
    expect([followed.status, followed.headers.get('content-type')]).toEqual([200, 'application/pdf']);
    const redirect = await fetch(`${app.url}/v1/invoices/${inv.id}/pdf`, { headers: { authorization: api.auth }, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^${app.url}/hosted/invoices/${inv.id}/pdf\\?expires=\\d+&signature=[\\w-]{43}$`));
    const pdf = await fetch(location); // no credentials
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = new Uint8Array(await pdf.arrayBuffer());
    expect(Buffer.from(bytes.slice(0, 5)).toString()).toBe('%PDF-');
    const { text } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
    expect(text).toContain(inv.number);
    expect(text).toContain('Acme Analytics');
    expect(text).toContain('€49.99');
    expect(text).toContain(customer.email);

    const u = new URL(location);
    const sig = u.searchParams.get('signature')!;
    const tampered = new URL(location);
    tampered.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    const otherId = new URL(location.replace(inv.id, 'in_0000000000000000000000'));
    const later = new URL(location);
    later.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600));
    for (const bad of [tampered, otherId, later, new URL(`${app.url}/hosted/invoices/${inv.id}/pdf`)]) {
      const res = await fetch(bad);
      expect(res.status, bad.toString()).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
    // A correctly signed but expired link.
    const key = (await app.services.db.prisma.merchant.findUnique({ where: { id: api.creds.merchant_id } }))!.signingKey!;
    const past = Math.floor(Date.now() / 1000) - 1;
    const expired = await fetch(`${app.url}/hosted/invoices/${inv.id}/pdf?expires=${past}&signature=${pdfSignature(Buffer.from(key), inv.id, past)}`);
    expect(expired.status).toBe(403);
    // Another merchant's invoice is not found through the API.
    const other = await app.merchant();
    expect((await send(`${app.url}/v1/invoices/${inv.id}/pdf`, { headers: { authorization: other.auth } })).status).toBe(404);
  });
});

describe('fixes from trying it cold', () => {
  it('a void racing the customer paying the invoice’s checkout: either the void wins (nothing charged) or the payment does (invoice paid)', async () => {
    const api = await app.merchant();
    const { customer, plan } = await setup(api, '4000000000009995');
    for (let i = 0; i < 12; i++) {
      const sub = (await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).body;
      const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
      const [paid, voided] = await Promise.all([
        api.post(`/v1/test-helpers/payments/${inv.payment_id}/complete`, { outcome: 'succeeded' }),
        api.post(`/v1/invoices/${inv.id}/void`),
      ]);
      const after = (await api.get(`/v1/invoices/${inv.id}`)).body;
      const payment = (await api.get(`/v1/payments/${inv.payment_id}`)).body;
      if (voided.status === 200) {
        expect([after.status, payment.status]).toEqual(['void', 'cancelled']);
      } else {
        expect(voided.status).toBe(409);
        expect(['invoice_not_open', 'invoice_payment_in_progress']).toContain(voided.body.error.code);
        expect([after.status, payment.status]).toEqual(['paid', 'succeeded']);
      }
      expect([200, 409]).toContain(paid.status);
    }
  });

  it('voiding an invoice gives back what it drew from the wallet', async () => {
    const api = await app.merchant();
    const { customer, plan } = await setup(api, '4000000000009995');
    const w = (await api.post('/v1/wallets', { customer_id: customer.id, currency: 'EUR' })).body;
    await api.post(`/v1/wallets/${w.id}/credit`, { amount: 1000, description: 'Gift', reference: 'gift' });
    const sub = (await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, apply_wallet_balance: true })).body;
    expect(sub.status).toBe('incomplete');
    const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ amount_from_wallet: 1000, amount_due: 3999, status: 'open' });
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(0);
    expect((await api.post(`/v1/invoices/${inv.id}/void`)).status).toBe(200);
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(1000);
    const ledger = (await api.get(`/v1/wallets/${w.id}/transactions`)).body.data;
    expect(ledger[0]).toMatchObject({ type: 'credit', amount: 1000, reference: `${inv.id}:void` });
  });

  it('an incomplete subscription without a method is paid once a method is given; plan changes while paused bill nothing; an immediate cancel clears cancel_at_period_end', async () => {
    const api = await app.merchant();
    const c = (await api.post('/v1/customers', { email: 'late@example.com' })).body;
    const plan = (await api.post('/v1/plans', { name: 'Solo', amount: 1500, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('incomplete');
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const pm = (await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).body.payment_method_id;
    const patched = await api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: pm });
    expect(patched.body.status).toBe('active');
    expect((await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body).toMatchObject({ status: 'paid', attempt_count: 2 });

    const pricier = (await api.post('/v1/plans', { name: 'Duo', amount: 4500, currency: 'USD', interval: 'month' })).body;
    await api.post(`/v1/subscriptions/${sub.id}/pause`, {});
    const changed = await api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: pricier.id, proration_behavior: 'always_invoice' });
    expect(changed.body).toMatchObject({ status: 'paused', plan_id: pricier.id, latest_invoice_id: sub.latest_invoice_id });
    expect((await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data).toHaveLength(1);
    await api.post(`/v1/subscriptions/${sub.id}/resume`);

    await api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true });
    const now = (await api.post(`/v1/subscriptions/${sub.id}/cancel`, {})).body;
    expect(now).toMatchObject({ status: 'cancelled', cancel_at_period_end: false, cancel_at: now.cancelled_at });
    for (const action of ['reactivate', 'pause', 'resume']) {
      const r = await api.post(`/v1/subscriptions/${sub.id}/${action}`, action === 'pause' ? {} : undefined);
      expect([r.status, r.body.error.code], action).toEqual([409, 'subscription_cancelled']);
    }
  });

  it('an advance with more work than its time budget stops part-way with 409 clock_advance_incomplete, never past unrun work; repeating it finishes', async () => {
    const t = await startApp();
    try {
      t.services.runtime.clockAdvanceBudgetMs = 400;
      const api = await t.merchant();
      const { customer } = await setup(api);
      const daily = (await api.post('/v1/plans', { name: 'Daily', amount: 100, currency: 'USD', interval: 'day' })).body;
      const sub = (await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: daily.id })).body;
      const to = new Date(new Date(sub.current_period_start).getTime() + 40 * 86_400_000 + 1000).toISOString();
      let r = await api.post('/v1/test-helpers/clock/advance', { to });
      expect([r.status, r.body.error?.code]).toEqual([409, 'clock_advance_incomplete']);
      let rounds = 1;
      for (; r.status === 409 && rounds < 100; rounds++) {
        const clock = (await api.get('/v1/test-helpers/clock')).body.now;
        const s = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
        // The clock did not pass a renewal that did not run: it stands (parked) where it stopped,
        // before it.
        expect(new Date(clock).getTime()).toBeLessThan(new Date(s.current_period_end).getTime());
        r = await api.post('/v1/test-helpers/clock/advance', { to });
      }
      expect(r.status).toBe(200);
      expect(rounds).toBeGreaterThan(1);
      const invoices = (await api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.data;
      expect(invoices).toHaveLength(41);
      expect(new Set(invoices.map((i: any) => i.period_start)).size).toBe(41);
      expect(invoices.every((i: any) => i.status === 'paid')).toBe(true);
      // Each renewal ran at its own time (the period's start) to the millisecond, not when an advance
      // happened to reach it: between the rounds the clock stands at the stop point, so the worker
      // never found one due and ran it late (issue 23, defect 4).
      const renewals = invoices.filter((i: any) => i.billing_reason === 'subscription_cycle');
      expect(renewals).toHaveLength(40);
      const late = renewals.filter((i: any) => i.created_at !== i.period_start || i.finalized_at !== i.period_start || i.paid_at !== i.period_start);
      expect(late).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe('an advance places the clock only while it holds the lease', () => {
  it('setClock with a lease token another advance no longer holds moves nothing and says so', async () => {
    const api = await app.merchant();
    const ctx = ctxFor(app, api.creds.merchant_id);
    const before = (await api.get('/v1/test-helpers/clock')).body.now as string;
    const far = new Date(Date.parse(before) + 30 * 86_400_000);
    // Nobody holds the lease (the advance that had it lost it): a token is refused.
    await expect(setClock(ctx, far, { leaseToken: 'not-the-holder' })).rejects.toBeInstanceOf(LeaseLost);
    const after = (await api.get('/v1/test-helpers/clock')).body.now as string;
    expect(Date.parse(after) - Date.parse(before)).toBeLessThan(60_000);
    // Without a token (an operator's set) it moves.
    expect((await setClock(ctx, far)).getTime()).toBeGreaterThanOrEqual(far.getTime());
  });
});
