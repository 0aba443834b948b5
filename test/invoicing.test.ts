// One-off invoicing and credit notes (issue 25, items 7–8; docs/billing.md "One-off invoices" and
// "Credit notes"), through REST on the merchant's test clock: invoice items, drafts, finalize
// (charge_automatically and send_invoice with its hosted page, e-mail and invoice.overdue),
// mark-uncollectible, a renewal taking waiting items, credit notes on open and paid invoices
// (refund, credit balance), numbering and concurrency, and the money reconciling.
import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, send, type TestApp } from './helpers/app.ts';
import { clockMerchant, type ClockMerchant } from './helpers/clock-merchant.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

const DAY = 86_400;
const GOOD = '4242424242424242';
type M = ClockMerchant;

async function customer(m: M, card?: string, extra: Record<string, unknown> = {}) {
  const c = (await m.api.post('/v1/customers', { email: `c${Math.random().toString(36).slice(2)}@example.com`, name: 'Ada Buyer', ...extra })).body;
  if (!card) return c;
  const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
  const done = await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: card });
  expect(done.status).toBe(200);
  return c;
}

async function item(m: M, customerId: string, amount: number, extra: Record<string, unknown> = {}) {
  const r = await m.api.post('/v1/invoice-items', { customer_id: customerId, amount, currency: 'USD', description: 'Consulting', ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function invoiceOf(m: M, customerId: string, amount: number, body: Record<string, unknown> = {}) {
  await item(m, customerId, amount);
  const r = await m.api.post('/v1/invoices', { customer_id: customerId, currency: 'usd', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function finalize(m: M, id: string) {
  const r = await m.api.post(`/v1/invoices/${id}/finalize`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

function expectError(r: { status: number; body: any }, status: number, code: string, param?: string | null) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.code).toBe(code);
  if (param !== undefined) expect(r.body.error.param).toBe(param);
}

describe('invoice items', () => {
  it('wait for the next invoice; GET, list with filters, DELETE while waiting; errors and tenancy', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m);
    const a = await item(m, c.id, 2500, { quantity: 3, description: 'Seats' });
    expect(a).toMatchObject({ object: 'invoice_item', customer_id: c.id, currency: 'USD', quantity: 3, unit_amount: 2500, amount: 7500, amount_formatted: '$75.00', invoice_id: null, pending: true });
    expect(a.id).toMatch(/^ii_/);
    const b = await item(m, c.id, 100);
    expect(b.quantity).toBe(1);
    expect((await m.api.get(`/v1/invoice-items/${a.id}`)).body).toEqual(a);
    const list = (await m.api.get(`/v1/invoice-items?customer_id=${c.id}&pending=true`)).body;
    expect(list.data.map((i: any) => i.id)).toEqual([b.id, a.id]);

    // Bad input: the documented errors, never a 500.
    expectError(await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 100, currency: 'USD' }), 400, 'parameter_missing', 'description');
    expectError(await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 100, currency: 'USD', description: 'x', quantity: 0 }), 400, 'parameter_invalid', 'quantity');
    expectError(await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 0, currency: 'USD', description: 'x' }), 400, 'parameter_invalid', 'amount');
    expectError(await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 99_999_999_999, currency: 'USD', description: 'x', quantity: 2 }), 400, 'amount_too_large', 'quantity');
    expectError(await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 100, currency: 'XXX1', description: 'x' }), 400, 'parameter_invalid', 'currency');
    expectError(await m.api.post('/v1/invoice-items', { customer_id: 'cus_nope', amount: 100, currency: 'USD', description: 'x' }), 404, 'resource_missing', 'customer_id');
    expectError(await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 100, currency: 'USD', description: 'x', color: 'red' }), 400, 'parameter_unknown');

    // Another merchant sees none of it.
    const other = await clockMerchant(app);
    expectError(await other.api.get(`/v1/invoice-items/${a.id}`), 404, 'resource_missing');
    expectError(await other.api.del(`/v1/invoice-items/${a.id}`), 404, 'resource_missing');
    expect((await other.api.get('/v1/invoice-items')).body.data).toEqual([]);

    // DELETE while waiting: gone.
    const del = await m.api.del(`/v1/invoice-items/${b.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: b.id, object: 'invoice_item', deleted: true });
    expectError(await m.api.get(`/v1/invoice-items/${b.id}`), 404, 'resource_missing');

    // Invoiced: no longer deletable.
    const inv = (await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' })).body;
    expect(inv.lines.map((l: any) => [l.description, l.amount])).toEqual([['Seats (3 × $25.00)', 7500]]);
    const taken = (await m.api.get(`/v1/invoice-items/${a.id}`)).body;
    expect(taken).toMatchObject({ invoice_id: inv.id, invoice_line_id: inv.lines[0].id, pending: false });
    expectError(await m.api.del(`/v1/invoice-items/${a.id}`), 409, 'invoice_item_invoiced');
    expect((await m.api.get(`/v1/invoice-items?invoice_id=${inv.id}`)).body.data.map((i: any) => i.id)).toEqual([a.id]);
    expect((await m.api.get(`/v1/invoice-items?pending=false&customer_id=${c.id}`)).body.data.map((i: any) => i.id)).toEqual([a.id]);
  });

  it("a subscription's next renewal takes the customer's waiting items in its currency (not another currency's)", async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, GOOD);
    const plan = (await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month' })).body;
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    const usd = await item(m, c.id, 1200, { description: 'Setup fee' });
    const eur = await item(m, c.id, 900, { currency: 'EUR', description: 'EU add-on' });
    // One that would take the renewal over the most one invoice may bill: it keeps waiting (the renewal does not fail).
    const huge = await item(m, c.id, 99_999_999_999, { description: 'Too big to fit' });
    await m.events();
    // The renewal's notice (invoice.upcoming, 3 days before) shows the item it will take.
    await m.advance({ seconds: 28 * DAY });
    const notice = (await m.eventObjects()).find((e) => e.type === 'invoice.upcoming')!.data.object;
    expect(notice.lines.map((l: any) => [l.description, l.amount])).toEqual([['Setup fee', 1200], [expect.stringContaining('Pro'), 3000]]);
    await m.advance({ seconds: 4 * DAY });
    const invoices = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data;
    const renewal = invoices.find((i: any) => i.billing_reason === 'subscription_cycle');
    expect(renewal.status).toBe('paid');
    expect(renewal.lines.map((l: any) => l.amount).sort()).toEqual([1200, 3000]);
    expect(renewal.amount_paid).toBe(4200);
    // Line for line what the notice said.
    expect(renewal.lines.map((l: any) => [l.description, l.amount, l.period])).toEqual(notice.lines.map((l: any) => [l.description, l.amount, l.period]));
    expect(renewal.total).toBe(notice.total);
    expect((await m.api.get(`/v1/invoice-items/${usd.id}`)).body.invoice_id).toBe(renewal.id);
    expect((await m.api.get(`/v1/invoice-items/${eur.id}`)).body.pending).toBe(true);
    expect((await m.api.get(`/v1/invoice-items/${huge.id}`)).body.pending).toBe(true);
  });
});

describe("a subscription's first invoice takes the customer's waiting items (as Stripe's)", () => {
  it('REST create without a trial: the items in the plan\'s currency go on the first invoice, in its transaction; a replay of the key bills nothing twice', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, GOOD);
    const plan = (await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month' })).body;
    const usd = await item(m, c.id, 700, { description: 'Setup fee' });
    const eur = await item(m, c.id, 900, { currency: 'EUR', description: 'EU add-on' });
    await m.advance({ seconds: 60 });
    const key = { 'Idempotency-Key': `sub-${Math.random()}` };
    const r = await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id }, key);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.status).toBe('active');
    const first = (await m.api.get(`/v1/invoices/${r.body.latest_invoice_id}`)).body;
    expect(first).toMatchObject({ billing_reason: 'subscription_create', status: 'paid', subtotal: 3700, total: 3700, amount_paid: 3700 });
    // Listed by age: the item (made a minute before), then the plan line.
    expect(first.lines.map((l: any) => [l.description, l.amount])).toEqual([['Setup fee', 700], [expect.stringContaining('Pro'), 3000]]);
    const taken = (await m.api.get(`/v1/invoice-items/${usd.id}`)).body;
    expect(taken).toMatchObject({ pending: false, invoice_id: first.id, invoice_line_id: first.lines[0].id });
    // Another currency's item keeps waiting.
    expect((await m.api.get(`/v1/invoice-items/${eur.id}`)).body.pending).toBe(true);
    // The same request again with the same key: the first answer, no second subscription or invoice.
    const again = await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(r.body.id);
    expect((await m.api.get(`/v1/invoices?customer_id=${c.id}`)).body.data.map((i: any) => i.id)).toEqual([first.id]);
    expect((await m.api.get(`/v1/invoice-items?customer_id=${c.id}&pending=false`)).body.data.map((i: any) => i.invoice_id)).toEqual([first.id]);
    // The next renewal does not bill it again.
    await m.advance({ seconds: 32 * DAY });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${r.body.id}`)).body.data.find((i: any) => i.billing_reason === 'subscription_cycle');
    expect(renewal.lines.map((l: any) => l.amount)).toEqual([3000]);
  });

  it('only the oldest that fit: an item that would take the first invoice over the maximum keeps waiting, the next one is taken', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, GOOD);
    const plan = (await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month' })).body;
    const huge = await item(m, c.id, 99_999_999_999, { description: 'Too big to fit' });
    const small = await item(m, c.id, 1, { description: 'Small' });
    await m.advance({ seconds: 60 });
    const r = await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const first = (await m.api.get(`/v1/invoices/${r.body.latest_invoice_id}`)).body;
    expect(first.lines.map((l: any) => l.amount)).toEqual([1, 3000]);
    expect((await m.api.get(`/v1/invoice-items/${small.id}`)).body.invoice_id).toBe(first.id);
    expect((await m.api.get(`/v1/invoice-items/${huge.id}`)).body.pending).toBe(true);
  });

  it('GraphQL createSubscription: the same; with a trial the items wait for the first invoice at its end', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, GOOD);
    const plan = (await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month' })).body;
    const waiting = await item(m, c.id, 250, { description: 'Onboarding' });
    await m.advance({ seconds: 60 });
    const g = await m.api.gql(
      `mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { __typename ... on CreateSubscriptionSuccess { subscription { status latestInvoice { id total amountPaid lines { description amount } } } } } }`,
      { input: { customerId: c.id, planId: plan.id } },
    );
    expect(g.errors).toBeUndefined();
    const s = g.data.createSubscription.subscription;
    expect(s.status).toBe('active');
    expect(s.latestInvoice).toMatchObject({ total: 3250, amountPaid: 3250 });
    expect(s.latestInvoice.lines.map((l: any) => l.amount)).toEqual([250, 3000]);
    expect((await m.api.get(`/v1/invoice-items/${waiting.id}`)).body.invoice_id).toBe(s.latestInvoice.id);
    // With a trial: nothing is invoiced now, the item waits for the first invoice at the trial's end.
    const c2 = await customer(m, GOOD);
    const later = await item(m, c2.id, 700, { description: 'Setup fee' });
    const t = (await m.api.post('/v1/subscriptions', { customer_id: c2.id, plan_id: plan.id, trial_period_days: 1 })).body;
    expect(t.status).toBe('trialing');
    expect((await m.api.get(`/v1/invoice-items/${later.id}`)).body.pending).toBe(true);
    await m.advance({ seconds: DAY + 60 });
    const firstAfterTrial = (await m.api.get(`/v1/invoices?subscription_id=${t.id}`)).body.data[0];
    expect(firstAfterTrial).toMatchObject({ billing_reason: 'subscription_create', total: 3700 });
    expect((await m.api.get(`/v1/invoice-items/${later.id}`)).body.invoice_id).toBe(firstAfterTrial.id);
  });
});

describe('one-off invoices', () => {
  it('POST /v1/invoices: a draft of the waiting items; none waiting is 400; bad input', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m);
    expectError(await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' }), 400, 'invoice_no_customer_line_items', 'customer_id');
    expectError(await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD', days_until_due: 10 }), 400, 'parameter_invalid', 'days_until_due');
    expectError(await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD', collection_method: 'by_pigeon' }), 400, 'parameter_invalid', 'collection_method');
    expectError(await m.api.post('/v1/invoices', { customer_id: 'cus_none', currency: 'USD' }), 404, 'resource_missing', 'customer_id');
    await m.events();
    await item(m, c.id, 1000);
    await item(m, c.id, 500);
    const r = await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD', collection_method: 'send_invoice', days_until_due: 14 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      object: 'invoice', status: 'draft', number: null, subscription_id: null, billing_reason: 'manual', collection_method: 'send_invoice',
      days_until_due: 14, hosted_invoice_url: null, due_date: null, pre_payment_credit_notes_amount: 0, post_payment_credit_notes_amount: 0,
    });
    expect(r.body.lines.map((l: any) => l.amount)).toEqual([1000, 500]);
    // A draft shows what it bills, as Stripe computes a draft's totals (not zeros until finalized):
    // the credit balance is drawn when it is finalized, so amount_due is the total.
    const totals = { subtotal: 1500, discount_amount: 0, tax_amount: 0, total: 1500, total_formatted: '$15.00', credit_applied: 0, amount_due: 1500, amount_paid: 0, amount_remaining: 1500 };
    expect(r.body).toMatchObject(totals);
    expect((await m.api.get(`/v1/invoices/${r.body.id}`)).body).toMatchObject(totals);
    const created = await m.eventObjects();
    expect(created.map((e) => e.type)).toEqual(['invoice.created']);
    expect(created[0]!.data.object).toMatchObject(totals);
    const g = await m.api.gql(`query($id: ID!) { invoice(id: $id) { status subtotal total amountDue taxAmount } }`, { id: r.body.id });
    expect(g.data.invoice).toEqual({ status: 'draft', subtotal: 1500, total: 1500, amountDue: 1500, taxAmount: 0 });
    // Its PDF too.
    const redirect = await fetch(`${app.url}/v1/invoices/${r.body.id}/pdf`, { headers: { authorization: m.api.auth }, redirect: 'manual' });
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(await (await fetch(redirect.headers.get('location')!)).arrayBuffer())), { mergePages: true });
    expect(text).toMatch(/Subtotal \$15\.00\s+Total \$15\.00\s+Amount paid \$0\.00\s+Amount due \$15\.00/);
    expect(text).not.toContain('Due date'); // a draft has none yet
    // Nothing waits any more: a second draft has nothing to take.
    expectError(await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' }), 400, 'invoice_no_customer_line_items');
    // /pay and /void refuse a draft.
    expectError(await m.api.post(`/v1/invoices/${r.body.id}/pay`), 409, 'invoice_not_open');
    expectError(await m.api.post(`/v1/invoices/${r.body.id}/mark-uncollectible`), 409, 'invoice_not_open');
  });

  it('POST /v1/invoices with more waiting than one invoice may bill: the oldest that fit, the rest wait for the next draft', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m);
    const big = await item(m, c.id, 99_999_999_999, { description: 'Big' });
    const one = await item(m, c.id, 1, { description: 'One' });
    const r = await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.lines.map((l: any) => [l.description, l.amount])).toEqual([['Big', 99_999_999_999]]);
    expect(r.body.total).toBe(99_999_999_999);
    expect((await m.api.get(`/v1/invoice-items/${big.id}`)).body.invoice_id).toBe(r.body.id);
    expect((await m.api.get(`/v1/invoice-items/${one.id}`)).body.pending).toBe(true);
    // The next draft takes it.
    const next = await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' });
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    expect(next.body.lines.map((l: any) => l.amount)).toEqual([1]);
    // Oldest first, each while it fits: 1 then the big one → a draft of 1 (GraphQL createInvoice alike), the big one waits.
    const c2 = await customer(m);
    await item(m, c2.id, 1, { description: 'One' });
    const big2 = await item(m, c2.id, 99_999_999_999, { description: 'Big' });
    const g = await m.api.gql(
      `mutation($input: CreateInvoiceInput!) { createInvoice(input: $input) { __typename ... on CreateInvoiceSuccess { invoice { total lines { amount } } } } }`,
      { input: { customerId: c2.id, currency: 'USD' } },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.createInvoice.invoice).toEqual({ total: 1, lines: [{ amount: 1 }] });
    expect((await m.api.get(`/v1/invoice-items/${big2.id}`)).body.pending).toBe(true);
    // An item larger than any invoice (impossible through the API, which caps each item: made here
    // by hand) is refused in the items' words, nothing written.
    const c3 = await customer(m);
    const odd = await item(m, c3.id, 5, { description: 'Odd' });
    await app.services.db.prisma.$executeRawUnsafe(`UPDATE pending_invoice_items SET amount = 100000000000 WHERE id = $1`, odd.id);
    const refused = await m.api.post('/v1/invoices', { customer_id: c3.id, currency: 'USD' });
    expectError(refused, 400, 'amount_too_large', 'customer_id');
    expect(refused.body.error.message).toContain('invoice item');
    expect(refused.body.error.message).not.toContain('Change less');
    expect((await m.api.get(`/v1/invoice-items/${odd.id}`)).body.pending).toBe(true);
  });

  it('finalize charge_automatically: numbered and charged to the default method at once; again is 409', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, GOOD);
    const draft = await invoiceOf(m, c.id, 4200);
    await m.events();
    const inv = await finalize(m, draft.id);
    expect(inv).toMatchObject({ status: 'paid', amount_due: 4200, amount_paid: 4200, collection_method: 'charge_automatically', hosted_invoice_url: null });
    expect(inv.number).toMatch(/^INV-\d{6}$/);
    expect(await m.events()).toEqual(['invoice.finalized', 'invoice.paid', 'payment.created', 'payment.succeeded'].sort());
    expectError(await m.api.post(`/v1/invoices/${draft.id}/finalize`), 409, 'invoice_not_draft');
    await m.nothingMore();
  });

  it('finalize charge_automatically without a card: open with last_payment_error, no retries; /pay then pays it; mark-uncollectible', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m);
    const inv = await finalize(m, (await invoiceOf(m, c.id, 1000)).id);
    expect(inv.status).toBe('open');
    expect(inv.last_payment_error.code).toBe('no_payment_method');
    expect(inv.next_payment_attempt).toBeNull();
    await m.events();
    await m.advance({ seconds: 10 * DAY });
    expect(await m.events()).toEqual([]);
    // Written off, then still payable.
    const u = await m.api.post(`/v1/invoices/${inv.id}/mark-uncollectible`);
    expect(u.status).toBe(200);
    expect(u.body.status).toBe('uncollectible');
    const ev = await m.eventObjects();
    expect(ev.map((e) => e.type)).toEqual(['invoice.marked_uncollectible']);
    expect(ev[0]!.data.previous_attributes).toEqual({ status: 'open' });
    expectError(await m.api.post(`/v1/invoices/${inv.id}/mark-uncollectible`), 409, 'invoice_not_open');
    const withCard = await customer(m, GOOD);
    void withCard;
    const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const pm = (await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: GOOD })).body.payment_method_id;
    const paid = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: pm });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.status).toBe('paid');
    expectError(await m.api.post(`/v1/invoices/${inv.id}/mark-uncollectible`), 409, 'invoice_not_open');
  });

  it('send_invoice: due_date, a hosted page paid by card there, the e-mail with its link, invoice.overdue once', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, undefined, { locale: 'en' });
    const draft = await invoiceOf(m, c.id, 12_345, { collection_method: 'send_invoice', days_until_due: 7 });
    const inv = await finalize(m, draft.id);
    expect(inv.status).toBe('open');
    expect(new Date(inv.due_date).getTime() - new Date(inv.finalized_at).getTime()).toBe(7 * DAY * 1000);
    expect(inv.hosted_invoice_url).toMatch(/\/hosted\/invoice\/[0-9A-Za-z]{40}$/);
    expect(inv.attempt_count).toBe(0);
    expect(inv.payment_id).toBeNull();

    // The e-mail: the invoice to pay, with the hosted page's link.
    await app.idle(m.api);
    const mails = (await m.api.get(`/v1/test-helpers/emails?to=${encodeURIComponent(c.email)}`)).body.data;
    expect(mails.map((e: any) => e.kind)).toEqual(['invoice']);
    expect(mails[0].subject).toContain(inv.number);
    expect(mails[0].text).toContain(inv.hosted_invoice_url);
    expect(mails[0].text).toContain('$123.45');

    // Overdue once, at the due date on the merchant's clock.
    await m.events();
    await m.advance({ seconds: 7 * DAY - 60 });
    expect(await m.events()).toEqual([]);
    await m.advance({ seconds: 120 });
    const overdue = await m.eventObjects();
    expect(overdue.map((e) => e.type)).toEqual(['invoice.overdue']);
    expect(overdue[0]!.data.object.id).toBe(inv.id);
    await m.advance({ seconds: 30 * DAY });
    expect(await m.events()).toEqual([]);

    // The hosted page, over HTTP, without credentials.
    const pageRes = await fetch(inv.hosted_invoice_url);
    expect(pageRes.status).toBe(200);
    const html = await pageRes.text();
    expect(html).toContain(inv.number);
    expect(html).toContain('$123.45');
    expect(html).toContain('past its due date');
    const cookie = pageRes.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const token = inv.hosted_invoice_url.split('/').pop();
    // Without the CSRF token: refused, nothing made.
    const bad = await fetch(`${app.url}/hosted/invoice/${token}/pay`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=nope', redirect: 'manual' });
    expect(bad.status).toBe(403);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body.payment_id).toBeNull();
    const go = await fetch(`${app.url}/hosted/invoice/${token}/pay`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${csrf}`, redirect: 'manual' });
    expect(go.status).toBe(303);
    expect(go.headers.get('location')).toMatch(/\/hosted\/checkout\//);
    const pending = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(pending.payment_id).toMatch(/^pay_/);
    const payment = (await m.api.get(`/v1/payments/${pending.payment_id}`)).body;
    expect(payment).toMatchObject({ amount: 12_345, currency: 'USD', status: 'created' });
    // Opening "Pay" again reuses that checkout.
    const again = await fetch(`${app.url}/hosted/invoice/${token}/pay`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${csrf}`, redirect: 'manual' });
    expect(again.headers.get('location')).toBe(go.headers.get('location'));
    const done = await m.api.post(`/v1/test-helpers/payments/${payment.id}/complete`, { outcome: 'succeeded' });
    expect(done.status).toBe(200);
    const paid = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 12_345, attempt_count: 1 });
    const after = await (await fetch(inv.hosted_invoice_url)).text();
    expect(after).toContain('This invoice is paid');
    expect(after).not.toContain('id="pay"');
    // An unknown token: the not-found page.
    expect((await fetch(`${app.url}/hosted/invoice/${'x'.repeat(40)}`)).status).toBe(404);
  });

  it('a draft that the credit balance covers is paid when finalised, with no e-mail and no payment', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m);
    await m.api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: 5000, currency: 'USD' });
    const inv = await finalize(m, (await invoiceOf(m, c.id, 3000, { collection_method: 'send_invoice' })).id);
    expect(inv).toMatchObject({ status: 'paid', credit_applied: 3000, amount_due: 0, payment_id: null });
    expect((await m.api.get(`/v1/customers/${c.id}`)).body.credit_balance).toEqual({ USD: 2000 });
  });
});

async function balanceMatchesLedger(m: M, customerId: string) {
  const entries = (await m.api.get(`/v1/customers/${customerId}/balance-transactions?limit=100`)).body.data as any[];
  const sums: Record<string, number> = {};
  for (const e of entries) sums[e.currency] = (sums[e.currency] ?? 0) + e.amount;
  const shown = (await m.api.get(`/v1/customers/${customerId}`)).body.credit_balance;
  expect(shown).toEqual(Object.fromEntries(Object.entries(sums).filter(([, v]) => v !== 0)));
  if (entries.length) expect(entries[0].ending_balance).toBe(sums[entries[0].currency]);
}

describe('credit notes', () => {
  it('on an open invoice: lower amount_due (never below 0), CN- numbers, the last one pays it', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m);
    const inv = await finalize(m, (await invoiceOf(m, c.id, 10_000, { collection_method: 'send_invoice' })).id);
    await m.events();
    const r = await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 3000, reason: 'order_change', memo: 'Two seats fewer' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      object: 'credit_note', number: 'CN-000001', invoice_id: inv.id, customer_id: c.id, amount: 3000, type: 'pre_payment', status: 'issued',
      reason: 'order_change', memo: 'Two seats fewer', refund_amount: 0, credit_amount: 0, refund_id: null,
    });
    expect(r.body.id).toMatch(/^cn_/);
    const ev = await m.eventObjects();
    expect(ev.map((e) => e.type)).toEqual(['credit_note.created']);
    expect(ev[0]!.data.object).toEqual(r.body);
    const after = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(after).toMatchObject({ status: 'open', amount_due: 7000, amount_remaining: 7000, total: 10_000, pre_payment_credit_notes_amount: 3000 });

    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 7001 }), 400, 'credit_note_exceeds_invoice', 'amount');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 100, refund_amount: 100 }), 400, 'parameter_invalid', 'refund_amount');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id }), 400, 'parameter_invalid', 'amount');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 5, lines: [{ invoice_line_id: inv.lines[0].id, amount: 5 }] }), 400, 'parameter_invalid', 'lines');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 5, reason: 'bored' }), 400, 'parameter_invalid', 'reason');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: 'in_nope', amount: 5 }), 404, 'resource_missing', 'invoice_id');
    expectError(await (await clockMerchant(app)).api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 5 }), 404, 'resource_missing', 'invoice_id');

    // The rest, by line: the invoice is paid by its credit notes.
    const last = await m.api.post('/v1/credit-notes', { invoice_id: inv.id, lines: [{ invoice_line_id: inv.lines[0].id, amount: 7000 }] });
    expect(last.status, JSON.stringify(last.body)).toBe(201);
    expect(last.body.number).toBe('CN-000002');
    expect(last.body.lines).toEqual([{ invoice_line_id: inv.lines[0].id, description: 'Consulting', amount: 7000 }]);
    const settled = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(settled).toMatchObject({ status: 'paid', amount_due: 0, amount_remaining: 0 });
    expect((await m.events()).sort()).toEqual(['credit_note.created', 'invoice.paid']);
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 1 }), 400, 'credit_note_exceeds_invoice');

    // GET, list by invoice, the PDF.
    expect((await m.api.get(`/v1/credit-notes/${r.body.id}`)).body).toEqual(r.body);
    const list = (await m.api.get(`/v1/credit-notes?invoice_id=${inv.id}`)).body;
    expect(list.data.map((n: any) => n.number)).toEqual(['CN-000002', 'CN-000001']);
    expect((await m.api.get(`/v1/credit-notes?invoice_id=${(await invoiceOf(m, c.id, 10)).id}`)).body.data).toEqual([]);
    const pdf = await fetch(`${app.url}/v1/credit-notes/${r.body.id}/pdf`, { headers: { authorization: m.api.auth }, redirect: 'manual' });
    expect(pdf.status).toBe(302);
    const location = pdf.headers.get('location')!;
    expect(location).toContain(`/hosted/credit-notes/${r.body.id}/pdf?expires=`);
    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    // It speaks of a credit note throughout — title, number, footer — and has no rows that are an
    // invoice's only (nothing is due on a credit note; it was never "paid on").
    const { text } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
    expect(text).toContain(`Credit note number ${r.body.number}`);
    expect(text).toContain(`Credit note ${r.body.number} Page 1 of 1`);
    expect(text).toContain(`Invoice ${inv.number}`);
    expect(text).toMatch(/Invoice period /);
    expect(text).toMatch(/Total credited \$30\.00/);
    expect(text).not.toContain('Due date');
    expect(text).not.toContain('Paid on');
    expect(text).not.toContain(`Invoice ${r.body.number}`);
    expect(text).not.toContain('Invoice number');
    expect((await fetch(location.replace(/signature=[^&]+/, `signature=${'A'.repeat(43)}`))).status).toBe(403);
    expectError(await m.api.get('/v1/credit-notes/cn_nope'), 404, 'resource_missing');
  });

  it('on a paid invoice: refund and/or credit the balance, adding up; draft and void are 409; the money reconciles', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, GOOD);
    const inv = await finalize(m, (await invoiceOf(m, c.id, 10_000)).id);
    expect(inv.status).toBe('paid');
    await m.events();
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 5000, refund_amount: 4000, credit_amount: 500 }), 400, 'parameter_invalid', 'credit_amount');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 10_001 }), 400, 'credit_note_exceeds_invoice', 'amount');
    const r = await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 5000, refund_amount: 4000, credit_amount: 1000, reason: 'product_unsatisfactory' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ type: 'post_payment', refund_amount: 4000, credit_amount: 1000 });
    expect(r.body.refund_id).toMatch(/^re_/);
    expect(r.body.customer_balance_transaction_id).toMatch(/^cbtxn_/);
    expect(await m.events()).toEqual(['credit_note.created', 'customer.balance_changed', 'refund.created', 'refund.succeeded'].sort());
    const refund = (await m.api.get(`/v1/refunds/${r.body.refund_id}`)).body;
    expect(refund).toMatchObject({ payment_id: inv.payment_id, amount: 4000, status: 'succeeded' });
    expect((await m.api.get(`/v1/payments/${inv.payment_id}`)).body.amount_refunded).toBe(4000);
    const entry = (await m.api.get(`/v1/customers/${c.id}/balance-transactions`)).body.data[0];
    expect(entry).toMatchObject({ type: 'credit_note', amount: 1000, invoice_id: inv.id, description: `Credit note ${r.body.number}` });
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body.post_payment_credit_notes_amount).toBe(5000);

    // Both omitted: all of it to the balance. More than the payment can refund: 400.
    const credit = await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 2000 });
    expect(credit.body).toMatchObject({ credit_amount: 2000, refund_amount: 0 });
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 3001, credit_amount: 3001 }), 400, 'credit_note_exceeds_invoice', 'amount');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, lines: [{ invoice_line_id: inv.lines[0].id, amount: 10_001 }] }), 400, 'credit_note_exceeds_invoice', 'lines[0][amount]');
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: inv.id, lines: [{ invoice_line_id: 'il_other', amount: 1 }] }), 400, 'parameter_invalid', 'lines[0][invoice_line_id]');
    await balanceMatchesLedger(m, c.id);
    expect((await m.api.get(`/v1/customers/${c.id}`)).body.credit_balance).toEqual({ USD: 3000 });

    // The balance pays the next invoice first.
    const next = await finalize(m, (await invoiceOf(m, c.id, 3500)).id);
    expect(next).toMatchObject({ status: 'paid', credit_applied: 3000, amount_due: 500, amount_paid: 500 });
    // Its card paid 500: no more can be refunded from it.
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: next.id, amount: 1000, refund_amount: 1000 }), 400, 'credit_note_exceeds_invoice', 'refund_amount');
    await balanceMatchesLedger(m, c.id);

    // A draft and a void invoice cannot be credited.
    const draft = await invoiceOf(m, c.id, 100);
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: draft.id, amount: 50 }), 409, 'invoice_not_creditable', 'invoice_id');
    const open = await finalize(m, (await invoiceOf(m, (await customer(m)).id, 800, { collection_method: 'send_invoice' })).id);
    expect((await m.api.post('/v1/credit-notes', { invoice_id: open.id, amount: 300 })).status).toBe(201);
    // Voiding keeps the credit note (it moved no money).
    const voided = await m.api.post(`/v1/invoices/${open.id}/void`);
    expect(voided.body).toMatchObject({ status: 'void', pre_payment_credit_notes_amount: 300, amount_due: 500 });
    expectError(await m.api.post('/v1/credit-notes', { invoice_id: open.id, amount: 50 }), 409, 'invoice_not_creditable');
    expect((await m.api.get(`/v1/credit-notes?invoice_id=${open.id}`)).body.data).toHaveLength(1);

    // Money reconciles: Σ paid by payments − Σ refunds = Σ succeeded invoice payments − Σ refunds.
    const invoices = (await m.api.get('/v1/invoices?limit=100')).body.data as any[];
    const payments = (await m.api.get('/v1/payments?limit=100&status=succeeded')).body.data as any[];
    const refunds = (await m.api.get('/v1/refunds?limit=100')).body.data as any[];
    const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
    const paidByCard = sum(invoices.filter((i) => i.status === 'paid').map((i) => i.amount_paid));
    const refunded = sum(refunds.filter((x) => x.status === 'succeeded').map((x) => x.amount));
    expect(paidByCard - refunded).toBe(sum(payments.map((p) => p.amount)) - refunded);
    expect(sum(payments.map((p) => p.amount_refunded))).toBe(refunded);
  });

  it('two at once never exceed the invoice; numbers stay gap-free under parallel creates', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m);
    const inv = await finalize(m, (await invoiceOf(m, c.id, 10_000, { collection_method: 'send_invoice' })).id);
    const results = await Promise.all(Array.from({ length: 12 }, () => m.api.post('/v1/credit-notes', { invoice_id: inv.id, amount: 2000 })));
    const ok = results.filter((r) => r.status === 201);
    expect(ok).toHaveLength(5);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 400, 'credit_note_exceeds_invoice');
    const after = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(after).toMatchObject({ status: 'paid', amount_due: 0, pre_payment_credit_notes_amount: 10_000 });
    // Numbers: CN-000001 … CN-000005, no gaps (the refused ones took none).
    const numbers = ok.map((r) => r.body.number).sort();
    expect(numbers).toEqual(['CN-000001', 'CN-000002', 'CN-000003', 'CN-000004', 'CN-000005']);
    // More in parallel over several invoices of a paid customer: still consecutive.
    const d = await customer(m, GOOD);
    const paid: any[] = [];
    for (let k = 0; k < 3; k++) paid.push(await finalize(m, (await invoiceOf(m, d.id, 1000)).id));
    const many = await Promise.all(paid.flatMap((i) => [300, 300, 300, 300].map((amount) => m.api.post('/v1/credit-notes', { invoice_id: i.id, amount, refund_amount: amount }))));
    const made = many.filter((r) => r.status === 201).map((r) => Number(r.body.number.slice(3))).sort((a, b) => a - b);
    expect(made).toEqual(Array.from({ length: 9 }, (_, k) => k + 6));
    for (const i of paid) expect((await m.api.get(`/v1/payments/${i.payment_id}`)).body.amount_refunded).toBe(900);
    const all = (await m.api.get('/v1/credit-notes?limit=100')).body.data.map((n: any) => n.number);
    expect(new Set(all).size).toBe(14);
  });
});

describe('idempotency keys on the creates', () => {
  it('a repeated POST with the same key returns the first result and makes nothing twice', async () => {
    const m = await clockMerchant(app);
    const c = await customer(m, GOOD);
    const k = { 'Idempotency-Key': `ii-${Math.random()}` };
    const a = await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 700, currency: 'USD', description: 'x' }, k);
    const b = await m.api.post('/v1/invoice-items', { customer_id: c.id, amount: 700, currency: 'USD', description: 'x' }, k);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    const ki = { 'Idempotency-Key': `in-${Math.random()}` };
    const i1 = await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' }, ki);
    const i2 = await m.api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' }, ki);
    expect(i2.body.id).toBe(i1.body.id);
    const kf = { 'Idempotency-Key': `fin-${Math.random()}` };
    const f1 = await m.api.post(`/v1/invoices/${i1.body.id}/finalize`, undefined, kf);
    const f2 = await m.api.post(`/v1/invoices/${i1.body.id}/finalize`, undefined, kf);
    expect(f1.status).toBe(200);
    expect(f2.body).toEqual(f1.body);
    const kc = { 'Idempotency-Key': `cn-${Math.random()}` };
    const c1 = await m.api.post('/v1/credit-notes', { invoice_id: i1.body.id, amount: 200, refund_amount: 200 }, kc);
    const c2 = await m.api.post('/v1/credit-notes', { invoice_id: i1.body.id, amount: 200, refund_amount: 200 }, kc);
    expect(c1.status).toBe(201);
    expect(c2.body).toEqual(c1.body);
    expect((await m.api.get(`/v1/credit-notes?invoice_id=${i1.body.id}`)).body.data).toHaveLength(1);
    expect((await m.api.get(`/v1/payments/${f1.body.payment_id}`)).body.amount_refunded).toBe(200);
    void send;
  });
});
