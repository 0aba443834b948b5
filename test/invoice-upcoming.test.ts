// invoice.upcoming (API conventions: "3 days before a renewal") and the opt-in upcoming_renewal
// e-mail, through HTTP on a test clock: exactly one notice per renewing period, carrying the
// invoice the renewal will make (line for line, cent for cent, waiting prorations included); none
// for a period set to cancel at its end, a trial's end (subscription.trial_will_end is that notice)
// or a period of 3 days or less; the e-mail only when the merchant switched it on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderEmail } from '../src/domain/emails/templates.ts';
import { startWorker, workerOptions } from '../src/jobs/worker.ts';
import { createLogger } from '../src/platform/logger.ts';
import { startApp, usingPostgres, type Client, type TestApp } from './helpers/app.ts';
import { at, cardCustomerMerchant, months } from './helpers/clock-merchant.ts';

const DAY = 86_400;

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

type Event = { id: string; type: string; created_at: string; data: { object: any } };

async function setup(a: TestApp = app, start = '2028-03-01T00:00:00.000Z') {
  const m = await cardCustomerMerchant(a, { start, name: 'Ada Lovelace', emailPrefix: 'u' });
  const plan = async (body: Record<string, unknown>) => (await m.plan(body)) as { id: string };
  const subscribe = async (planId: string, extra: Record<string, unknown> = {}) =>
    (await m.subscribe(planId, extra)) as { id: string; status: string; current_period_start: string; current_period_end: string; trial_end: string | null };
  return { ...m, plan, subscribe };
}

async function upcoming(api: Client, subscriptionId?: string): Promise<Event[]> {
  const out: Event[] = [];
  let after: string | undefined;
  for (;;) {
    const r = await api.get(`/v1/events?type=invoice.upcoming&limit=100${after ? `&after=${after}` : ''}`);
    expect(r.status).toBe(200);
    out.push(...r.body.data);
    if (!r.body.has_more) break;
    after = r.body.next_cursor;
  }
  return out.filter((e) => !subscriptionId || e.data.object.subscription_id === subscriptionId).reverse();
}

async function mailbox(api: Client, to: string) {
  const r = await api.get(`/v1/test-helpers/emails?to=${encodeURIComponent(to)}`);
  expect(r.status).toBe(200);
  return r.body.data as { kind: string; subject: string; text: string; html: string; locale: string; event_id: string }[];
}

// The test clock runs on in real time after an advance, so a subscription created "at" a date is
// anchored a moment after it: times are taken from the subscription, never assumed to the second.

describe('invoice.upcoming', () => {
  it('3 days before the renewal: one event with the invoice it will make (a waiting proration included), equal to the real one; the e-mail only when switched on', async () => {
    const m = await setup();
    const basic = await m.plan({ name: 'Basic', amount: 3000 });
    const pro = await m.plan({ name: 'Pro', amount: 9000 });
    const sub = await m.subscribe(basic.id);
    const end = sub.current_period_end;
    expect(sub.status).toBe('active');
    expect(end.slice(0, 10)).toBe('2028-04-01');

    // Mid-period upgrade (16 of 31 days left): two proration lines wait for the renewal.
    await m.advance({ to: at(end, -16 * DAY) });
    const changed = await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: pro.id });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    await m.events();

    // Up to one second before the notice time: nothing.
    const noticeAt = at(end, -3 * DAY);
    await m.advance({ to: at(noticeAt, -1) });
    expect(await m.events()).toEqual([]);
    await m.advance({ to: noticeAt });
    expect(await m.events()).toEqual(['invoice.upcoming']);
    const [notice, ...more] = await upcoming(m.api, sub.id);
    expect(more).toEqual([]);
    expect(notice!.created_at).toBe(noticeAt);
    const o = notice!.data.object;
    const unused = -Math.round((3000 * 16) / 31); // -1548
    const remaining = Math.round((9000 * 16) / 31); // 4645
    expect(o).toMatchObject({
      id: null,
      object: 'invoice',
      status: 'draft',
      number: null,
      subscription_id: sub.id,
      customer_id: m.customer.id,
      currency: 'USD',
      billing_reason: 'subscription_cycle',
      period_start: end,
      period_end: months(end, 1),
      next_payment_attempt: end,
      subtotal: 9000 + unused + remaining,
      total: 9000 + unused + remaining,
      amount_due: 9000 + unused + remaining,
      amount_paid: 0,
    });
    expect(o.amount_due).toBe(12097);
    expect(o.lines.map((l: any) => [l.id === null, l.description, l.amount, l.proration])).toEqual([
      [true, 'Pro (2028-04-01 – 2028-05-01)', 9000, false],
      [false, 'Unused time on Basic', unused, true],
      [false, 'Remaining time on Pro', remaining, true],
    ]);
    // upcoming_renewal is off by default: no message, and not even an e-mail job (the event's statement checks the switch).
    expect(await app.services.db.prisma.job.count({ where: { kind: 'email.send', key: notice!.id } })).toBe(0);
    await app.idle(m.api);
    expect((await mailbox(m.api, m.customer.email)).filter((e) => e.kind === 'upcoming_renewal')).toEqual([]);

    // The renewal makes exactly that invoice.
    await m.advance({ to: end });
    const real = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body.latest_invoice_id;
    const inv = (await m.api.get(`/v1/invoices/${real}`)).body;
    const strip = (x: any) => ({
      lines: x.lines.map((l: any) => ({ description: l.description, amount: l.amount, period: l.period, proration: l.proration })),
      ...Object.fromEntries(['subtotal', 'total', 'amount_due', 'currency', 'period_start', 'period_end', 'billing_reason', 'customer_id', 'subscription_id'].map((k) => [k, x[k]])),
    });
    expect(strip(inv)).toEqual(strip(o));
    expect(inv.status).toBe('paid');
    // The waiting lines' ids in the notice are the lines the invoice took.
    expect(inv.lines.filter((l: any) => l.proration).map((l: any) => l.id)).toEqual(o.lines.filter((l: any) => l.proration).map((l: any) => l.id));

    // Switched on: the next notice is e-mailed, once — plan, date, amount, the card, the portal.
    expect((await m.api.patch('/v1/email-settings', { upcoming_renewal: true })).status).toBe(200);
    await m.advance({ to: at(months(end, 1), -3 * DAY) });
    await app.idle(m.api);
    const [second] = await upcoming(m.api, sub.id).then((l) => l.slice(1));
    expect(second!.data.object).toMatchObject({ period_start: months(end, 1), amount_due: 9000, lines: [expect.objectContaining({ amount: 9000, proration: false })] });
    const mails = (await mailbox(m.api, m.customer.email)).filter((e) => e.kind === 'upcoming_renewal');
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail).toMatchObject({ event_id: second!.id, locale: 'en', subject: expect.stringContaining('Your Pro subscription') });
    expect(mail.subject).toContain('May 1, 2028');
    expect(mail.text).toContain('We will charge $90.00 to your Visa ending in 4242.');
    expect(mail.text).toContain('Renewal date: May 1, 2028');
    expect(mail.html).toContain('Manage your subscription');
    const link = /https?:\/\/\S+\/hosted\/email-links\/\S+/.exec(mail.text)![0];
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toMatch(/\/hosted\/portal\/[0-9A-Za-z]{40}$/);

    // Nothing more: the engine runs again.
    await m.events();
    await m.nothingMore();
    expect(await upcoming(m.api, sub.id)).toHaveLength(2);
  });

  it('cancel_at_period_end: no notice; reactivated before the notice time: the notice comes', async () => {
    const m = await setup();
    const plan = await m.plan({ name: 'Team', amount: 5000 });
    const ending = await m.subscribe(plan.id, { cancel_at_period_end: true });
    const back = await m.subscribe(plan.id);
    expect((await m.api.post(`/v1/subscriptions/${back.id}/cancel`, { cancel_at_period_end: true })).status).toBe(200);
    await m.advance({ to: '2028-03-20T00:00:00.000Z' });
    expect((await m.api.post(`/v1/subscriptions/${back.id}/reactivate`, {})).status).toBe(200);
    await m.advance({ to: at([ending, back].map((x) => x.current_period_end).sort().at(-1)!, 60) });
    expect((await m.api.get(`/v1/subscriptions/${ending.id}`)).body.status).toBe('cancelled');
    expect(await upcoming(m.api, ending.id)).toEqual([]);
    const [notice, ...more] = await upcoming(m.api, back.id);
    expect(more).toEqual([]);
    expect(notice).toMatchObject({ created_at: at(back.current_period_end, -3 * DAY), data: { object: { amount_due: 5000, period_start: back.current_period_end } } });
  });

  it('a trial: subscription.trial_will_end announces the first invoice, not invoice.upcoming; the first paid period’s renewal is announced', async () => {
    const m = await setup();
    const plan = await m.plan({ name: 'Pro', amount: 3000 });
    const sub = await m.subscribe(plan.id, { trial_end: '2028-03-15T00:00:00.000Z' });
    expect(sub).toMatchObject({ status: 'trialing', trial_end: '2028-03-15T00:00:00.000Z' });
    await m.advance({ to: '2028-03-15T00:00:01.000Z' });
    const types = await m.events();
    expect(types).toContain('subscription.trial_will_end');
    expect(types).not.toContain('invoice.upcoming');
    await m.advance({ to: '2028-04-12T00:00:00.000Z' });
    const [notice, ...more] = await upcoming(m.api, sub.id);
    expect(more).toEqual([]);
    expect(notice).toMatchObject({ created_at: '2028-04-12T00:00:00.000Z', data: { object: { period_start: '2028-04-15T00:00:00.000Z', amount_due: 3000 } } });
  });

  it('periods of 3 days or less get none; a 4-day period gets one a day in', async () => {
    const m = await setup();
    const daily = await m.plan({ name: 'Daily', amount: 100, interval: 'day' });
    const three = await m.plan({ name: 'Three days', amount: 300, interval: 'day', interval_count: 3 });
    const four = await m.plan({ name: 'Four days', amount: 400, interval: 'day', interval_count: 4 });
    await m.subscribe(daily.id);
    await m.subscribe(three.id);
    const sub4 = await m.subscribe(four.id);
    await m.advance({ to: '2028-03-13T00:00:00.000Z' });
    const all = await upcoming(m.api);
    const start = sub4.current_period_start;
    expect(all.map((e) => [e.data.object.subscription_id, e.created_at])).toEqual([
      [sub4.id, at(start, 1 * DAY)],
      [sub4.id, at(start, 5 * DAY)],
      [sub4.id, at(start, 9 * DAY)],
    ]);
  });

  it('a year of renewals with two job runners: one notice per period, never two', async () => {
    // A second runner of this merchant's jobs: on PostgreSQL another app on the same database
    // (its own pools and worker), on the embedded one a second worker.
    const m = await setup();
    const other = usingPostgres ? await startApp({}, { worker: false }) : null;
    const runtime = (other ?? app).services.runtime;
    const second = startWorker(runtime, createLogger('silent'), { ...workerOptions(runtime.config), pollMs: 20, merchants: () => [m.api.creds.merchant_id] });
    try {
      const plan = await m.plan({ name: 'Monthly', amount: 2500 });
      const sub = await m.subscribe(plan.id);
      for (const month of ['2028-06-01', '2028-09-01', '2028-12-01', '2029-03-02']) await m.advance({ to: `${month}T00:00:00.000Z` });
      await app.idle(m.api);
      const notices = await upcoming(m.api, sub.id);
      const starts = notices.map((e) => e.data.object.period_start);
      expect(starts).toEqual(Array.from({ length: 12 }, (_, i) => months(sub.current_period_end, i)));
      for (const e of notices) expect(Date.parse(e.data.object.period_start) - Date.parse(e.created_at)).toBe(3 * DAY * 1000);
      const invoices = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.data;
      expect(invoices).toHaveLength(13);
    } finally {
      await second.stop();
      await other?.close();
    }
  });
});

describe('the upcoming_renewal message', () => {
  it('in French, text and HTML, the method left out when unknown', () => {
    const fr = renderEmail('upcoming_renewal', 'fr', { merchant: 'Acme', customer_name: 'Jeanne', plan: 'Pro', date: '1 mai 2028', amount: '90,00 $US' }, 'https://x.example/l');
    expect(fr.subject).toBe('Votre abonnement Pro chez Acme sera renouvelé le 1 mai 2028');
    expect(fr.text).toContain('Nous prélèverons 90,00 $US.');
    expect(fr.text).not.toContain('Moyen de paiement');
    expect(fr.html).toContain('Gérer votre abonnement');
    const en = renderEmail('upcoming_renewal', 'en', { merchant: 'Acme', customer_name: 'Jane', plan: 'Pro', date: 'May 1, 2028', amount: '$90.00', method: 'Visa ending in 4242' }, 'https://x.example/l');
    expect(en.text).toContain('Payment method: Visa ending in 4242');
  });
});
