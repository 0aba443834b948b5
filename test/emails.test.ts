// Customer e-mails (docs/emails.md), through HTTP against the real database: each kind is made
// once per event, lands in the dev mailbox (test mode, no SMTP_URL) with text and HTML in the
// checkout's language, obeys the merchant's switches, and carries durable links that open without
// credentials. A second app sends through a real SMTP server (smtp-server on a local port): the
// message parses (mailparser), and a send the server refuses once is retried.
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, workerOptions } from '../src/jobs/worker.ts';
import { createLogger } from '../src/platform/logger.ts';
import { send, startApp, usingPostgres, type Client, type TestApp } from './helpers/app.ts';
import { clockMerchant } from './helpers/clock-merchant.ts';

const DAY = 86_400;
const GOOD = '4242424242424242';
/** Saves, then every charge of it fails with insufficient_funds. */
const NSF = '4000000000009995';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

async function mailbox(api: Client, to?: string) {
  const r = await api.get(`/v1/test-helpers/emails${to ? `?to=${encodeURIComponent(to)}` : ''}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { id: string; kind: string; to: string; subject: string; text: string; html: string; locale: string; status: string; event_id: string; created_at: string }[];
}

const linkIn = (text: string) => {
  const m = /https?:\/\/\S+\/hosted\/email-links\/\S+/.exec(text);
  expect(m, text).not.toBeNull();
  return m![0];
};

async function merchant(a: TestApp = app) {
  const base = await clockMerchant(a);
  const { api } = base;
  const m = {
    ...base,
    async customer(email = `c${Math.random().toString(36).slice(2)}@example.com`) {
      const r = await api.post('/v1/customers', { email, name: 'Ada Lovelace' });
      expect(r.status).toBe(201);
      return r.body as { id: string; email: string };
    },
    async card(customerId: string, number: string) {
      const si = (await api.post('/v1/setup-intents', { customer_id: customerId })).body;
      const done = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: number });
      expect(done.status).toBe(200);
      return done.body.payment_method_id as string;
    },
    async plan() {
      const r = await api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', trial_period_days: 7 });
      expect(r.status).toBe(201);
      return r.body as { id: string };
    },
    /** A one-off payment paid at the checkout, in the checkout's language. */
    async pay(email: string, locale?: 'en' | 'fr') {
      const p = await api.post('/v1/payments', { amount: 2599, currency: 'EUR', customer: { email, name: 'Jeanne Martin' }, redirect_url: 'https://shop.example/thanks', ...(locale ? { checkout: { locale } } : {}) });
      expect(p.status, JSON.stringify(p.body)).toBe(201);
      const done = await api.post(`/v1/test-helpers/payments/${p.body.id}/complete`, { outcome: 'succeeded' });
      expect(done.status).toBe(200);
      return p.body as { id: string };
    },
  };
  return m;
}

async function eventOf(api: Client, type: string, objectId: string) {
  const r = await api.get(`/v1/events?type=${type}&limit=100`);
  return (r.body.data as { id: string; data: { object: { id: string } } }[]).filter((e) => e.data.object.id === objectId);
}

describe('e-mail settings', () => {
  it('GET has the defaults; PATCH switches kinds; bad input is the documented 400', async () => {
    const { api } = await merchant();
    const first = await api.get('/v1/email-settings');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ object: 'email_settings', receipts: true, failed_payments: true, trial_ending: true, upcoming_renewal: false, invoices: true });
    const r = await api.patch('/v1/email-settings', { upcoming_renewal: true, receipts: false });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ object: 'email_settings', receipts: false, failed_payments: true, trial_ending: true, upcoming_renewal: true, invoices: true });
    expect((await api.get('/v1/email-settings')).body).toEqual(r.body);
    const bad = await api.patch('/v1/email-settings', { receipts: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'receipts' });
    const unknown = await api.patch('/v1/email-settings', { newsletters: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'parameter_unknown', param: 'newsletters' });
  });

  it('GraphQL: emailSettings and updateEmailSettings (errors as data)', async () => {
    const { api } = await merchant();
    const q = await api.gql('{ emailSettings { receipts failedPayments trialEnding upcomingRenewal invoices } }');
    expect(q.errors).toBeUndefined();
    expect(q.data.emailSettings).toEqual({ receipts: true, failedPayments: true, trialEnding: true, upcomingRenewal: false, invoices: true });
    const m = await api.gql(
      `mutation($input: UpdateEmailSettingsInput!) { updateEmailSettings(input: $input) { __typename
        ... on UpdateEmailSettingsSuccess { emailSettings { receipts trialEnding upcomingRenewal } } ... on Error { code param } } }`,
      { input: { trialEnding: false, upcomingRenewal: true } },
    );
    expect(m.errors).toBeUndefined();
    expect(m.data.updateEmailSettings).toEqual({ __typename: 'UpdateEmailSettingsSuccess', emailSettings: { receipts: true, trialEnding: false, upcomingRenewal: true } });
    expect((await api.get('/v1/email-settings')).body).toMatchObject({ trial_ending: false, upcoming_renewal: true });
  });

  it('the dev mailbox is test mode only; live merchants get 404', async () => {
    const live = await app.merchant({ mode: 'live' });
    const r = await live.get('/v1/test-helpers/emails');
    expect(r.status).toBe(404);
  });
});

describe('receipts for payments', () => {
  it('one receipt per payment.succeeded, in the checkout’s language, text and HTML; nothing more when the engine runs again', async () => {
    const m = await merchant();
    const fr = `fr${Date.now()}@example.com`;
    const en = `en${Date.now()}@example.com`;
    const p1 = await m.pay(fr, 'fr');
    const p2 = await m.pay(en);
    await app.idle(m.api);
    const [frMail, ...more] = await mailbox(m.api, fr);
    expect(more).toEqual([]);
    const [succeeded] = await eventOf(m.api, 'payment.succeeded', p1.id);
    expect(frMail).toMatchObject({ kind: 'receipt', to: fr, locale: 'fr', status: 'kept', event_id: succeeded!.id, subject: expect.stringContaining('Votre reçu de') });
    expect(frMail!.text).toContain('Bonjour Jeanne Martin');
    expect(frMail!.text).toContain('25,99');
    expect(frMail!.text).toContain(p1.id);
    expect(frMail!.html).toMatch(/^<!doctype html>/);
    expect(frMail!.html).toContain('<html lang="fr">');
    expect(frMail!.html).toContain('Merci pour votre paiement');
    const [enMail] = await mailbox(m.api, en);
    expect(enMail).toMatchObject({ locale: 'en', subject: expect.stringContaining('Your receipt from') });
    expect(enMail!.text).toContain('€25.99');
    expect((await eventOf(m.api, 'payment.succeeded', p2.id))[0]!.id).toBe(enMail!.event_id);
    // The list: newest first, in the list envelope; the filter keeps one recipient's.
    const all = await m.api.get('/v1/test-helpers/emails?limit=1');
    expect(all.body).toMatchObject({ object: 'list', has_more: true, data: [{ to: en }] });
    const page2 = await m.api.get(`/v1/test-helpers/emails?limit=1&after=${all.body.next_cursor}`);
    expect(page2.body.data[0].to).toBe(fr);
    // Run everything due again: no second message for the same event.
    await m.advance({ seconds: 3600 });
    await app.idle(m.api);
    expect(await mailbox(m.api, fr)).toHaveLength(1);
    expect(await mailbox(m.api, en)).toHaveLength(1);
  });

  it('receipts switched off: nothing is sent; on again: the next payment gets one', async () => {
    const m = await merchant();
    const to = `off${Date.now()}@example.com`;
    expect((await m.api.patch('/v1/email-settings', { receipts: false })).status).toBe(200);
    await m.pay(to);
    await app.idle(m.api);
    expect(await mailbox(m.api, to)).toEqual([]);
    await m.api.patch('/v1/email-settings', { receipts: true });
    await m.pay(to);
    await app.idle(m.api);
    expect(await mailbox(m.api, to)).toHaveLength(1);
    // The same mailbox over GraphQL.
    const g = await m.api.gql('query($to: String) { testEmails(first: 5, to: $to) { totalCount edges { node { kind to subject text html locale status eventId } } } }', { to });
    expect(g.errors).toBeUndefined();
    const [rest] = await mailbox(m.api, to);
    expect(g.data.testEmails).toEqual({ totalCount: 1, edges: [{ node: { kind: 'receipt', to, subject: rest!.subject, text: rest!.text, html: rest!.html, locale: 'en', status: 'kept', eventId: rest!.event_id } }] });
  });

  it('bad filters are the documented 400', async () => {
    const { api } = await merchant();
    const r = await api.get('/v1/test-helpers/emails?to=not-an-address');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'to' });
    const l = await api.get('/v1/test-helpers/emails?limit=0');
    expect(l.status).toBe(400);
  });
});

describe('subscriptions: trial ending, invoice receipt with its PDF, failed payment with the portal', () => {
  it('each kind once per event, with links that open without credentials', async () => {
    const m = await merchant();
    const c = await m.customer();
    await m.card(c.id, GOOD);
    const plan = await m.plan();
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('trialing');

    // Trial ends in 7 days: subscription.trial_will_end three days before.
    await m.advance({ seconds: 5 * DAY });
    const [trial, ...noMore] = await mailbox(m.api, c.email);
    expect(noMore).toEqual([]);
    const [trialEvent] = await eventOf(m.api, 'subscription.trial_will_end', sub.id);
    expect(trial).toMatchObject({ kind: 'trial_ending', locale: 'en', event_id: trialEvent!.id, subject: expect.stringContaining('Your Pro trial') });
    expect(trial!.text).toContain('$30.00 / month');
    expect(trial!.html).toContain('Manage your subscription');

    // The trial ends: the first invoice is charged and paid: a receipt with the PDF link.
    await m.advance({ to: sub.trial_end });
    await m.advance({ seconds: 60 });
    const mails = await mailbox(m.api, c.email);
    expect(mails.map((e) => e.kind)).toEqual(['receipt', 'trial_ending']);
    const receipt = mails[0]!;
    const inv = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&status=paid`)).body.data.find((i: { amount_paid: number }) => i.amount_paid > 0);
    expect(inv).toBeDefined();
    const [paid] = await eventOf(m.api, 'invoice.paid', inv.id);
    expect(receipt).toMatchObject({ event_id: paid!.id, subject: expect.stringContaining(`Receipt for invoice ${inv.number}`) });
    expect(receipt.text).toContain('$30.00');

    // The PDF link: no credentials, a fresh signed address, a real PDF.
    const pdfLink = linkIn(receipt.text);
    expect(receipt.html).toContain(pdfLink.replace(/&/g, '&amp;'));
    const open = await fetch(pdfLink, { redirect: 'manual' });
    expect(open.status).toBe(303);
    const signed = open.headers.get('location')!;
    expect(signed).toContain(`/hosted/invoices/${inv.id}/pdf?expires=`);
    const pdf = await fetch(signed);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    // Opened again later: another fresh address (the e-mail's link does not wear out).
    expect((await fetch(pdfLink, { redirect: 'manual' })).status).toBe(303);
    // Tampered: the signature, the invoice, the expiry: refused, nothing revealed.
    const token = pdfLink.slice(pdfLink.lastIndexOf('/') + 1);
    const parts = token.split('.');
    const base = pdfLink.slice(0, pdfLink.lastIndexOf('/') + 1);
    const tampered = [
      [...parts.slice(0, 5), parts[5]!.slice(0, -1) + (parts[5]!.endsWith('A') ? 'B' : 'A')],
      [parts[0], parts[1], 'in_0123456789abcdefGHIJKL', ...parts.slice(3)],
      [...parts.slice(0, 4), String(Number(parts[4]) + 1), parts[5]],
      [parts[0], 'portal', ...parts.slice(2)],
    ].map((p) => p.join('.'));
    for (const t of [...tampered, 'garbage', token + 'x']) {
      const r = await fetch(base + t, { redirect: 'manual' });
      expect(r.status, t).toBe(403);
      expect(r.headers.get('location')).toBeNull();
    }

    // A customer whose card fails: the failed-payment message with a link to the portal.
    const c2 = await m.customer();
    await m.card(c2.id, NSF);
    const sub2 = (await m.api.post('/v1/subscriptions', { customer_id: c2.id, plan_id: plan.id })).body;
    await m.api.patch('/v1/email-settings', { trial_ending: false });
    await m.advance({ to: sub2.trial_end });
    await m.advance({ seconds: 60 });
    const [failed, ...rest] = await mailbox(m.api, c2.email);
    expect(rest).toEqual([]); // trial_ending was off
    const inv2 = (await m.api.get(`/v1/subscriptions/${sub2.id}`)).body.latest_invoice_id;
    const [failedEvent] = await eventOf(m.api, 'invoice.payment_failed', inv2);
    expect(failed).toMatchObject({ kind: 'failed_payment', event_id: failedEvent!.id, subject: expect.stringContaining('did not go through') });
    expect(failed!.text).toContain('the card has insufficient funds.');
    expect(failed!.text).toContain('Update your payment method');
    expect(failed!.text).toContain('to keep your subscription active'); // a retry is scheduled

    // The portal link opens a fresh portal session for that customer, without credentials.
    const portalLink = linkIn(failed!.text);
    const o = await fetch(portalLink, { redirect: 'manual' });
    expect(o.status).toBe(303);
    const session = o.headers.get('location')!;
    expect(session).toMatch(/\/hosted\/portal\/[0-9A-Za-z]{40}$/);
    const opened = await fetch(session, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(new URL(opened.headers.get('location')!, session), { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(c2.email);
    // Each open is a new session (a scanner that opened it first used up nothing).
    const again = await fetch(portalLink, { redirect: 'manual' });
    expect(again.headers.get('location')).not.toBe(session);

    // Nothing more: the engine runs again, no second message for any event.
    await m.advance({ seconds: DAY });
    expect(await mailbox(m.api, c.email)).toHaveLength(2);
    expect((await mailbox(m.api, c2.email)).filter((e) => e.kind === 'failed_payment').length).toBeGreaterThanOrEqual(1);
    // Dunning runs out (retries 1, 3 and 5 days after the first failure): the last message says no
    // more attempts will be made, not "to keep your subscription active".
    await m.advance({ seconds: 5 * DAY });
    expect((await m.api.get(`/v1/subscriptions/${sub2.id}`)).body.status).toBe('unpaid');
    const [last] = (await mailbox(m.api, c2.email)).filter((e) => e.kind === 'failed_payment');
    expect(last!.text).toContain('No further automatic attempt will be made');
    expect(last!.text).not.toContain('to keep your subscription active');
    const perEvent = new Map<string, number>();
    for (const e of await mailbox(m.api)) perEvent.set(e.event_id, (perEvent.get(e.event_id) ?? 0) + 1);
    expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('through a real SMTP server', () => {
  let smtp: SMTPServer;
  let smtpApp: TestApp;
  const received: ParsedMail[] = [];
  const envelopes: string[][] = [];
  let refuseNext = 0;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(address, _session, cb) {
        if (refuseNext > 0) {
          refuseNext--;
          const err = new Error('Mailbox busy, try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          return cb(err);
        }
        cb();
      },
      onData(stream, session, cb) {
        simpleParser(stream)
          .then((mail) => {
            received.push(mail);
            envelopes.push(session.envelope.rcptTo.map((r) => r.address));
            cb();
          })
          .catch(cb);
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    const port = (smtp.server.address() as AddressInfo).port;
    smtpApp = await startApp({ SMTP_URL: `smtp://127.0.0.1:${port}`, EMAIL_FROM: 'Acme Billing <billing@acme.test>' });
  });
  afterAll(async () => {
    await smtpApp?.close();
    await new Promise<void>((r) => smtp?.close(() => r()));
  });

  it('sends the receipt: it parses with the right subject, recipient, parts and links', async () => {
    const m = await merchant(smtpApp);
    const to = `smtp${Date.now()}@example.com`;
    const p = await m.pay(to, 'fr');
    await smtpApp.idle(m.api);
    const mail = received.find((r) => (r.to as { text: string }).text === to);
    expect(mail).toBeDefined();
    expect(mail!.subject).toMatch(/^Votre reçu de /);
    expect(mail!.from!.text).toBe('"Acme Billing" <billing@acme.test>');
    expect(mail!.text).toContain(p.id);
    expect(mail!.html).toContain('<html lang="fr">');
    const [event] = await eventOf(m.api, 'payment.succeeded', p.id);
    expect(mail!.headers.get('x-billing-event-id')).toBe(event!.id);
    const [row] = await mailbox(m.api, to);
    expect(row).toMatchObject({ status: 'sent', event_id: event!.id });
    expect(received.filter((r) => (r.to as { text: string }).text === to)).toHaveLength(1);
  });

  it('once per event with two instances running the jobs: each message reaches the server once', async () => {
    const m = await merchant(smtpApp);
    // A second runner of this merchant's jobs: on PostgreSQL another app (its own pools and worker,
    // as a second process would have) on the same database; on the embedded one, a second worker.
    const other = usingPostgres ? await startApp({ SMTP_URL: smtpApp.services.config.SMTP_URL!, EMAIL_FROM: 'billing@acme.test' }, { worker: false }) : null;
    const runtime = (other ?? smtpApp).services.runtime;
    const second = startWorker(runtime, createLogger('silent'), { ...workerOptions(runtime.config), pollMs: 20, merchants: () => [m.api.creds.merchant_id] });
    try {
      const to = `twice${Date.now()}@example.com`;
      const paid = await Promise.all(Array.from({ length: 8 }, () => m.pay(to)));
      await smtpApp.idle(m.api);
      const events = (await m.api.get('/v1/events?type=payment.succeeded&limit=100')).body.data.map((e: { id: string }) => e.id).sort();
      expect(events).toHaveLength(paid.length);
      const got = received.filter((r) => (r.to as { text: string }).text === to).map((r) => r.headers.get('x-billing-event-id')).sort();
      expect(got).toEqual(events);
      expect((await mailbox(m.api, to)).map((e) => e.status)).toEqual(Array(paid.length).fill('sent'));
    } finally {
      await second.stop();
      await other?.close();
    }
  });

  it('a send the server refuses (451) is retried with backoff and then delivered once', async () => {
    const m = await merchant(smtpApp);
    const c = await m.customer();
    await m.card(c.id, GOOD);
    const plan = await m.plan();
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    refuseNext = 1;
    // To the moment of subscription.trial_will_end (three days before the end): the first send is refused.
    await m.advance({ to: new Date(Date.parse(sub.trial_end) - 3 * DAY * 1000).toISOString() });
    const [row] = await mailbox(m.api, c.email);
    expect(row).toMatchObject({ kind: 'trial_ending', status: 'retrying', attempts: 1 });
    expect((row as unknown as { last_error: string }).last_error).toContain('451');
    expect(received.some((r) => (r.to as { text: string }).text === c.email)).toBe(false);
    await m.advance({ seconds: 60 }); // the retry is due 30 s later on the merchant's clock
    const [after] = await mailbox(m.api, c.email);
    expect(after).toMatchObject({ status: 'sent', attempts: 2 });
    const got = received.filter((r) => (r.to as { text: string }).text === c.email);
    expect(got).toHaveLength(1);
    expect(got[0]!.subject).toContain('Your Pro trial');
    // Its portal link works from the delivered message.
    const link = linkIn(got[0]!.text!);
    expect((await send(link, { redirect: 'manual' })).status).toBe(303);
  });
});
