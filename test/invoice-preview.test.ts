// GET /v1/invoices/upcoming and GraphQL upcomingInvoice (issue 25, item 4) and interval changes
// (item 5), through HTTP on the test clock: the next invoice, or what a change (plan, quantity,
// coupon, proration behaviour and date) bills now and next — equal to the invoice the change or the
// renewal then makes, line for line, cent for cent — writing nothing (every row of the merchant
// unchanged, no event, the coupon not redeemed); the same errors as the PATCH; interval changes:
// the anchor reset to the change, the unused time credited, the new period invoiced at once, the
// old period's renewal gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { at, cardCustomerMerchant, months, years } from './helpers/clock-merchant.ts';
import { moneyOf } from './helpers/billing-model.ts';

const DAY = 86_400;

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());


async function setup(start = '2029-01-10T00:00:00.000Z', currency = 'USD') {
  const m = await cardCustomerMerchant(app, { start, name: 'Katherine Johnson', emailPrefix: 'v', currency });
  const { api } = m;
  const sub = async (id: string) => (await api.get(`/v1/subscriptions/${id}`)).body;
  const preview = async (query: Record<string, string | number>) => {
    const r = await api.get(`/v1/invoices/upcoming?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`);
    return r;
  };
  const upcoming = async (query: Record<string, string | number>) => {
    const r = await preview(query);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const patch = async (id: string, body: Record<string, unknown>) => {
    const r = await api.patch(`/v1/subscriptions/${id}`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  await m.events();
  return { ...m, sub, preview, upcoming, patch };
}

/** Every row the merchant owns, table by table (count and a digest of the rows' content), read as the owner (no row-level security). */
async function rowsOf(merchantId: string): Promise<Record<string, string>> {
  const tables = await app.services.db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'merchant_id' ORDER BY table_name",
  );
  const out: Record<string, string> = {};
  for (const { table_name: t } of tables) {
    if (!/^[a-z_]+$/.test(t)) throw new Error(t);
    const [row] = await app.services.db.query<{ n: number; digest: string | null }>(
      `SELECT count(*)::int AS n, md5(string_agg(t::text, ',' ORDER BY t::text)) AS digest FROM ${t} t WHERE merchant_id = $1`,
      [merchantId],
    );
    out[t] = `${row!.n}:${row!.digest}`;
  }
  const [merchant] = await app.services.db.query<{ row: string }>('SELECT m::text AS row FROM merchants m WHERE id = $1', [merchantId]);
  out.merchants = merchant!.row;
  return out;
}

describe('GET /v1/invoices/upcoming', () => {
  it('without a change: the next renewal, as invoice.upcoming announces it and the renewal makes it; writes nothing', async () => {
    const m = await setup();
    const basic = await m.plan({ name: 'Basic', amount: 3000 });
    const pro = await m.plan({ name: 'Pro', amount: 9000 });
    await m.created('/v1/coupons', { id: 'TENOFF', name: 'Ten off', percent_off: 10, duration: 'forever' });
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20, inclusive: false });
    const s = await m.subscribe(basic.id, { quantity: 2, coupon: 'TENOFF', default_tax_rates: [vat.id] });
    const end = s.current_period_end;
    await m.advance({ to: at(end, -10 * DAY) });
    await m.patch(s.id, { plan_id: pro.id }); // two prorations wait
    await m.created('/v1/invoice-items', { customer_id: m.customer.id, amount: 1500, currency: 'USD', description: 'Setup' });
    await m.created(`/v1/customers/${m.customer.id}/balance-transactions`, { amount: 700, currency: 'USD' });
    await m.advance({ to: at(end, -3 * DAY) });
    const notice = (await m.eventObjects()).find((e) => e.type === 'invoice.upcoming')!.data.object;

    const before = await rowsOf(m.api.creds.merchant_id);
    const p = await m.upcoming({ subscription_id: s.id });
    expect(await rowsOf(m.api.creds.merchant_id)).toEqual(before);
    expect(await m.events()).toEqual([]);

    expect(p).toMatchObject({ id: null, object: 'invoice', status: 'draft', number: null, pdf_url: null, billing_reason: 'subscription_cycle', subscription_id: s.id, next_invoice: null, subscription_proration_date: null });
    const { next_invoice: _n, subscription_proration_date: _d, created_at: _c, ...withoutNext } = p;
    const { created_at: _c2, ...noticeObject } = notice;
    expect(withoutNext).toEqual(noticeObject);
    expect(p.lines.map((l: any) => [l.id === null, l.description.replace(/ \(.*/, ''), l.proration])).toEqual([
      [true, 'Setup', false],
      [true, '2 × Pro', false],
      [false, 'Unused time on 2 × Basic', true],
      [false, 'Remaining time on 2 × Pro', true],
    ]);
    expect(p.credit_applied).toBe(700);

    await m.advance({ to: end });
    const real = await m.invoice((await m.sub(s.id)).latest_invoice_id);
    expect(moneyOf(real)).toEqual(moneyOf(p));
    // GraphQL lists an invoice's lines in REST's order everywhere (Subscription.latestInvoice and
    // node(id:) listed them by creation alone: the prorations, made earlier, before the plan line).
    const g = await m.api.gql(
      'query($sub: ID!, $inv: ID!) { subscription(id: $sub) { latestInvoice { lines { id description } } } node(id: $inv) { ... on Invoice { lines { id description } } } invoice(id: $inv) { lines { id description } } }',
      { sub: s.id, inv: real.id },
    );
    const restOrder = real.lines.map((l: any) => ({ id: l.id, description: l.description }));
    expect(g.data.subscription.latestInvoice.lines).toEqual(restOrder);
    expect(g.data.node.lines).toEqual(restOrder);
    expect(g.data.invoice.lines).toEqual(restOrder);
  });

  it('with a change: create_prorations and none give the next renewal with it; always_invoice gives the invoice made now and next_invoice; each equal to what the PATCH with the same proration_date makes', async () => {
    const m = await setup('2029-03-05T08:00:00.000Z');
    const basic = await m.plan({ name: 'Basic', amount: 2999 });
    const pro = await m.plan({ name: 'Pro', amount: 8999 });
    await m.created('/v1/coupons', { id: 'ONCE20', name: 'Once', percent_off: 20, duration: 'once' });
    const gst = await m.created('/v1/tax-rates', { display_name: 'GST', percentage: 15, inclusive: true });
    const s = await m.subscribe(basic.id, { default_tax_rates: [gst.id] });
    const end = s.current_period_end;
    const changeAt = at(end, -12 * DAY - 3600);
    await m.advance({ to: changeAt });

    // The three behaviours, previewed at one proration_date.
    const q = { subscription_id: s.id, plan_id: pro.id, quantity: 3, proration_date: changeAt };
    const create = await m.upcoming({ ...q });
    expect(create).toMatchObject({ billing_reason: 'subscription_cycle', period_start: end, next_invoice: null });
    expect(create.lines.map((l: any) => [l.description.replace(/ \(.*/, ''), l.proration])).toEqual([
      ['3 × Pro', false],
      ['Unused time on Basic', true],
      ['Remaining time on 3 × Pro', true],
    ]);
    const none = await m.upcoming({ ...q, proration_behavior: 'none' });
    expect(none.lines.map((l: any) => l.description.replace(/ \(.*/, ''))).toEqual(['3 × Pro']);
    const rows = await rowsOf(m.api.creds.merchant_id);
    const always = await m.upcoming({ ...q, proration_behavior: 'always_invoice', coupon: 'ONCE20' });
    // A preview of a change made now, with a coupon, writes nothing either.
    expect(await rowsOf(m.api.creds.merchant_id)).toEqual(rows);
    expect(always).toMatchObject({ billing_reason: 'subscription_update', period_start: changeAt, period_end: end, coupon_id: 'ONCE20' });
    expect(always.lines.map((l: any) => [l.id, l.description, l.proration])).toEqual([
      [null, 'Unused time on Basic', true],
      [null, 'Remaining time on 3 × Pro', true],
    ]);
    // The once coupon is used by the change's invoice: the renewal after it has no discount.
    expect(always.next_invoice).toMatchObject({ billing_reason: 'subscription_cycle', period_start: end, discount_amount: 0, coupon_id: null, next_payment_attempt: end });
    expect(always.next_invoice.lines.map((l: any) => l.description.replace(/ \(.*/, ''))).toEqual(['3 × Pro']);
    // Nothing was redeemed by the preview.
    expect((await m.api.get('/v1/coupons/ONCE20')).body.times_redeemed).toBe(0);

    // Two hours later the customer accepts: the PATCH with the same proration_date bills exactly the preview.
    await m.advance({ to: at(changeAt, 7200) });
    const after = await m.patch(s.id, { plan_id: pro.id, quantity: 3, proration_behavior: 'always_invoice', coupon: 'ONCE20', proration_date: changeAt });
    const made = await m.invoice(after.latest_invoice_id);
    expect(moneyOf(made)).toEqual(moneyOf(always));
    expect(made.status).toBe('paid');
    expect(after.discount).toBeNull(); // used by that invoice
    await m.advance({ to: end });
    const renewal = await m.invoice((await m.sub(s.id)).latest_invoice_id);
    expect(moneyOf(renewal)).toEqual(moneyOf(always.next_invoice));
  });

  it('create_prorations previewed, then made: the renewal equals the preview; the coupon "" previews without the discount', async () => {
    const m = await setup('2029-05-31T12:00:00.000Z');
    const plan = await m.plan({ name: 'Seat', amount: 1250 });
    await m.created('/v1/coupons', { id: 'FIVE', name: 'Five off', amount_off: 500, currency: 'USD', duration: 'repeating', duration_in_months: 3 });
    const s = await m.subscribe(plan.id, { quantity: 4, coupon: 'FIVE' });
    const end = s.current_period_end;
    await m.advance({ to: at(end, -9 * DAY) });
    const t = (await m.api.get('/v1/test-helpers/clock')).body.now.replace(/\.\d{3}Z$/, '.000Z');
    const without = await m.upcoming({ subscription_id: s.id, coupon: '' });
    expect(without).toMatchObject({ discount_amount: 0, coupon_id: null });
    const p = await m.upcoming({ subscription_id: s.id, quantity: 9, proration_date: t });
    expect(p).toMatchObject({ coupon_id: 'FIVE', discount_amount: 500 });
    await m.patch(s.id, { quantity: 9, proration_date: t });
    await m.advance({ to: end });
    expect(moneyOf(await m.invoice((await m.sub(s.id)).latest_invoice_id))).toEqual(moneyOf(p));
  });

  it('a proration_date before a prorated change already made in the period is refused (it would credit time never billed), by the PATCH and the preview', async () => {
    const m = await setup('2029-03-07T00:00:00.000Z');
    const plan = await m.plan({ name: 'Pro', amount: 2900 });
    const s = await m.subscribe(plan.id, { quantity: 2 });
    await m.advance({ to: at(s.current_period_start, 1 * DAY) });
    const first = (await m.api.get('/v1/test-helpers/clock')).body.now.replace(/\.\d{3}Z$/, '.000Z');
    const before = await m.upcoming({ subscription_id: s.id });
    await m.patch(s.id, { quantity: 1000, proration_date: first });
    // Back to 2 seats, counted from the period's start (before the upgrade): refused on both paths.
    const back = { quantity: 2, proration_date: s.current_period_start };
    const p = await m.preview({ subscription_id: s.id, ...back });
    expect([p.status, p.body.error?.code, p.body.error?.param]).toEqual([400, 'parameter_invalid', 'proration_date']);
    expect(p.body.error.message).toContain(first.replace('.000Z', ''));
    const r = await m.api.patch(`/v1/subscriptions/${s.id}`, back);
    expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([400, 'parameter_invalid', 'proration_date']);
    expect((await m.sub(s.id)).quantity).toBe(1000);
    // At the upgrade's own time it is accepted: the 1,000 seats were held for no time, so the
    // renewal is what it was before the upgrade (the four proration lines net to zero).
    const same = await m.upcoming({ subscription_id: s.id, quantity: 2, proration_date: first });
    expect(same.amount_due).toBe(before.amount_due);
    await m.patch(s.id, { quantity: 2, proration_date: first });
    expect((await m.upcoming({ subscription_id: s.id })).amount_due).toBe(before.amount_due);
  });

  it('default_tax_rates: the renewal and the change invoiced now taxed with the new rates, as the PATCH with the same fields bills them; "" previews none; the PATCH’s errors', async () => {
    const m = await setup('2029-04-02T00:00:00.000Z');
    const plan = await m.plan({ name: 'Team', amount: 1000 });
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20 });
    const gst = await m.created('/v1/tax-rates', { display_name: 'GST', percentage: 5, inclusive: true });
    const old = await m.created('/v1/tax-rates', { display_name: 'Old', percentage: 7 });
    expect((await m.api.post(`/v1/tax-rates/${old.id}/archive`)).status).toBe(200);
    const s = await m.subscribe(plan.id, { quantity: 2, default_tax_rates: [gst.id] });
    await m.advance({ to: '2029-04-12T00:00:00.000Z' });
    const t = (await m.api.get('/v1/test-helpers/clock')).body.now.replace(/\.\d{3}Z$/, '.000Z');
    // No change: the renewal with GST (inclusive: the total stays 2,000).
    const plain = await m.upcoming({ subscription_id: s.id });
    expect(plain).toMatchObject({ subtotal: 2000, total: 2000, subscription_proration_date: null });
    expect(plain.lines[0].tax_amounts.map((x: any) => x.tax_rate)).toEqual([gst.id]);
    // VAT instead: 20 % added to the renewal.
    const vatOnly = await m.upcoming({ subscription_id: s.id, default_tax_rates: vat.id });
    // A change without proration_date counts from the preview's now (whole seconds): the clock's.
    expect(vatOnly).toMatchObject({ subtotal: 2000, tax_amount: 400, total: 2400, subscription_proration_date: t });
    // None: no tax at all.
    const none = await m.upcoming({ subscription_id: s.id, default_tax_rates: '' });
    expect(none).toMatchObject({ tax_amount: 0, total: 2000 });
    expect(none.lines[0].tax_amounts).toEqual([]);
    // Both, with 3 seats invoiced now: the change's invoice is taxed with both, in that order.
    const both = await m.upcoming({ subscription_id: s.id, default_tax_rates: `${vat.id},${gst.id}`, quantity: 3, proration_behavior: 'always_invoice', proration_date: t });
    expect(both).toMatchObject({ billing_reason: 'subscription_update', subscription_proration_date: t });
    expect('subscription_proration_date' in both.next_invoice).toBe(false);
    expect(both.lines.every((l: any) => l.tax_amounts.map((x: any) => x.tax_rate).join() === `${vat.id},${gst.id}`)).toBe(true);
    expect(both.next_invoice.lines[0].tax_amounts.map((x: any) => x.tax_rate)).toEqual([vat.id, gst.id]);
    // GraphQL: the same preview.
    const g = await m.api.gql(
      `query($id: ID!, $r: [ID!], $q: Int, $d: DateTime) { upcomingInvoice(subscriptionId: $id, defaultTaxRates: $r, quantity: $q, prorationBehavior: always_invoice, prorationDate: $d) { total taxAmount amountDue subscriptionProrationDate nextInvoice { total subscriptionProrationDate } } }`,
      { id: s.id, r: [vat.id, gst.id], q: 3, d: t },
    );
    expect(g.data.upcomingInvoice).toEqual({ total: both.total, taxAmount: both.tax_amount, amountDue: both.amount_due, subscriptionProrationDate: t, nextInvoice: { total: both.next_invoice.total, subscriptionProrationDate: null } });
    const gNone = await m.api.gql(`query($id: ID!) { upcomingInvoice(subscriptionId: $id, defaultTaxRates: []) { total taxAmount } }`, { id: s.id });
    expect(gNone.data.upcomingInvoice).toEqual({ total: 2000, taxAmount: 0 });
    const gBad = await m.api.gql(`query($id: ID!) { upcomingInvoice(subscriptionId: $id, defaultTaxRates: ["txr_nope"]) { total } }`, { id: s.id });
    expect(gBad.errors![0].extensions).toMatchObject({ code: 'resource_missing', param: 'defaultTaxRates' });
    // Errors: the PATCH's, same code and param.
    const cases: [string, number, string][] = [
      ['txr_nope', 404, 'resource_missing'],
      [old.id, 400, 'parameter_invalid'],
      [`${vat.id},${vat.id}`, 400, 'parameter_invalid'],
      [`${vat.id},${gst.id},a,b,c,d`, 400, 'parameter_invalid'],
    ];
    for (const [ids, status, code] of cases) {
      const r = await m.preview({ subscription_id: s.id, default_tax_rates: ids });
      expect([r.status, r.body.error?.code, r.body.error?.param], ids).toEqual([status, code, 'default_tax_rates']);
      const p = await m.api.patch(`/v1/subscriptions/${s.id}`, { default_tax_rates: ids.split(',') });
      expect([p.status, p.body.error?.code, p.body.error?.param], `PATCH ${ids}`).toEqual([status, code, 'default_tax_rates']);
    }
    // Later, a preview without proration_date names its own moment; the PATCH given it makes the
    // previewed invoice, line for line, however late it comes.
    await m.advance({ to: '2029-04-15T06:30:00.000Z' });
    const later = await m.upcoming({ subscription_id: s.id, default_tax_rates: `${vat.id},${gst.id}`, quantity: 3, proration_behavior: 'always_invoice' });
    expect(later.subscription_proration_date).toBe('2029-04-15T06:30:00.000Z');
    expect(later.total).not.toBe(both.total);
    await m.advance({ to: '2029-04-16T00:00:00.000Z' });
    const made = await m.patch(s.id, { default_tax_rates: [vat.id, gst.id], quantity: 3, proration_behavior: 'always_invoice', proration_date: later.subscription_proration_date });
    expect(made.default_tax_rates).toEqual([vat.id, gst.id]);
    expect(moneyOf(await m.invoice(made.latest_invoice_id))).toEqual(moneyOf(later));
  });

  it('errors: the PATCH’s, with the same codes and params; 404 for another merchant’s subscription; 409 invoice_upcoming_none', async () => {
    const m = await setup();
    const other = await setup();
    const plan = await m.plan({ name: 'Basic', amount: 3000 });
    const eur = await m.created('/v1/plans', { name: 'Euro', amount: 3000, currency: 'EUR', interval: 'month' });
    const archived = await m.plan({ name: 'Old', amount: 1000 });
    expect((await m.api.post(`/v1/plans/${archived.id}/archive`)).status).toBe(200);
    await m.created('/v1/coupons', { id: 'LATE', name: 'Late', percent_off: 10, duration: 'once', redeem_by: '2029-01-11T00:00:00Z' });
    await m.created('/v1/coupons', { id: 'EURO', name: 'Euro off', amount_off: 100, currency: 'EUR', duration: 'once' });
    const s = await m.subscribe(plan.id);
    await m.advance({ to: '2029-01-20T00:00:00.000Z' });
    const cases: [Record<string, string | number>, number, string, string | null][] = [
      [{}, 400, 'parameter_missing', 'subscription_id'],
      [{ subscription_id: 'sub_nope' }, 404, 'resource_missing', 'subscription_id'],
      [{ subscription_id: s.id, quantity: 0 }, 400, 'parameter_invalid', 'quantity'],
      [{ subscription_id: s.id, quantity: 'ten' }, 400, 'parameter_invalid', 'quantity'],
      [{ subscription_id: s.id, quantity: 10_001 }, 400, 'parameter_invalid', 'quantity'],
      [{ subscription_id: s.id, proration_behavior: 'sometimes' }, 400, 'parameter_invalid', 'proration_behavior'],
      [{ subscription_id: s.id, proration_date: 'yesterday' }, 400, 'parameter_invalid', 'proration_date'],
      [{ subscription_id: s.id, quantity: 2, proration_date: '2029-01-01T00:00:00Z' }, 400, 'parameter_invalid', 'proration_date'],
      [{ subscription_id: s.id, quantity: 2, proration_date: '2029-01-21T00:00:00Z' }, 400, 'parameter_invalid', 'proration_date'],
      [{ subscription_id: s.id, color: 'red' }, 400, 'parameter_unknown', 'color'],
      [{ subscription_id: s.id, plan_id: 'plan_nope' }, 404, 'resource_missing', 'plan_id'],
      [{ subscription_id: s.id, plan_id: archived.id }, 409, 'plan_archived', 'plan_id'],
      [{ subscription_id: s.id, plan_id: eur.id }, 400, 'parameter_invalid', 'plan_id'],
      [{ subscription_id: s.id, coupon: 'NOPE' }, 404, 'resource_missing', 'coupon'],
      [{ subscription_id: s.id, coupon: 'LATE' }, 409, 'coupon_expired', 'coupon'],
      [{ subscription_id: s.id, coupon: 'EURO' }, 409, 'currency_mismatch', 'coupon'],
      [{ subscription_id: s.id, quantity: 10_000, plan_id: (await m.plan({ name: 'Huge', amount: 99_999_999 })).id }, 400, 'amount_too_large', 'plan_id'],
    ];
    for (const [query, status, code, param] of cases) {
      const r = await m.preview(query);
      expect([r.status, r.body.error?.code, r.body.error?.param], JSON.stringify(query)).toEqual([status, code, param]);
      // The PATCH answers the same for the same change.
      const { subscription_id: id, ...change } = query;
      if (id === s.id && Object.keys(change).length > 0 && !('color' in change)) {
        const p = await m.api.patch(`/v1/subscriptions/${s.id}`, change);
        if (typeof change.quantity !== 'string') expect([p.status, p.body.error?.code, p.body.error?.param], `PATCH ${JSON.stringify(change)}`).toEqual([status, code, param]);
      }
    }
    // Another merchant's subscription does not exist here.
    expect((await other.preview({ subscription_id: s.id })).status).toBe(404);
    // Set to cancel at the period end: nothing upcoming.
    await m.patch(s.id, { cancel_at_period_end: true });
    const none = await m.preview({ subscription_id: s.id });
    expect([none.status, none.body.error.code]).toEqual([409, 'invoice_upcoming_none']);
    // Cancelled: a change is subscription_cancelled, as the PATCH.
    expect((await m.api.post(`/v1/subscriptions/${s.id}/cancel`, {})).status).toBe(200);
    const cancelled = await m.preview({ subscription_id: s.id, quantity: 2 });
    expect([cancelled.status, cancelled.body.error.code]).toEqual([409, 'subscription_cancelled']);
    expect((await m.preview({ subscription_id: s.id })).body.error.code).toBe('invoice_upcoming_none');
  });
});

describe('interval changes (monthly ↔ yearly, interval_count)', () => {
  it('monthly → yearly mid-period: anchor reset to the change, unused time credited, the year invoiced at once; the old renewal never comes; the preview was exact', async () => {
    const m = await setup('2029-01-10T00:00:00.000Z');
    const monthly = await m.plan({ name: 'Monthly', amount: 3100 });
    const yearly = await m.plan({ name: 'Yearly', amount: 31000, interval: 'year' });
    const s = await m.subscribe(monthly.id, { quantity: 2 });
    expect(s.current_period_end).toBe('2029-02-10T00:00:00.000Z');
    // 10 of 31 days used; 21 left.
    const t = '2029-01-20T00:00:00.000Z';
    await m.advance({ to: t });
    await m.events();
    const rows = await rowsOf(m.api.creds.merchant_id);
    const p = await m.upcoming({ subscription_id: s.id, plan_id: yearly.id, proration_date: t });
    expect(await rowsOf(m.api.creds.merchant_id)).toEqual(rows);
    expect(p).toMatchObject({ billing_reason: 'subscription_update', period_start: t, period_end: '2030-01-20T00:00:00.000Z' });
    const credit = -Math.round((6200 * 21) / 31); // -4200
    expect(p.lines.map((l: any) => [l.description, l.amount, l.proration, l.period])).toEqual([
      ['2 × Yearly (2029-01-20 – 2030-01-20)', 62000, false, { start: t, end: '2030-01-20T00:00:00.000Z' }],
      ['Unused time on 2 × Monthly', credit, true, { start: t, end: '2029-02-10T00:00:00.000Z' }],
    ]);
    expect(p).toMatchObject({ total: 62000 + credit, amount_due: 62000 + credit });
    expect(p.next_invoice).toMatchObject({ period_start: '2030-01-20T00:00:00.000Z', period_end: '2031-01-20T00:00:00.000Z', total: 62000 });

    const after = await m.patch(s.id, { plan_id: yearly.id, proration_date: t });
    expect(after).toMatchObject({
      plan_id: yearly.id,
      billing_cycle_anchor: t,
      current_period_start: t,
      current_period_end: '2030-01-20T00:00:00.000Z',
      status: 'active',
    });
    const inv = await m.invoice(after.latest_invoice_id);
    expect(moneyOf(inv)).toEqual(moneyOf(p));
    expect(inv).toMatchObject({ status: 'paid', amount_paid: 62000 + credit, billing_reason: 'subscription_update' });
    expect(await m.events()).toEqual(['invoice.created', 'invoice.finalized', 'invoice.paid', 'payment.created', 'payment.succeeded', 'subscription.updated'].sort());

    // The month's renewal (Feb 10) does not come; nothing until the year is up; the year renews once.
    await m.advance({ to: '2029-02-11T00:00:00.000Z' });
    expect(await m.events()).toEqual([]);
    await m.advance({ to: '2030-01-19T23:59:59.000Z' });
    expect((await m.events()).filter((e) => e !== 'invoice.upcoming')).toEqual([]);
    await m.advance({ to: '2030-01-20T00:00:00.000Z' });
    const renewal = await m.invoice((await m.sub(s.id)).latest_invoice_id);
    expect(moneyOf(renewal)).toEqual(moneyOf(p.next_invoice));
    expect((await m.api.get(`/v1/invoices?subscription_id=${s.id}&limit=100`)).body.data.map((i: any) => [i.billing_reason, i.period_start])).toEqual([
      ['subscription_cycle', '2030-01-20T00:00:00.000Z'],
      ['subscription_update', t],
      ['subscription_create', '2029-01-10T00:00:00.000Z'],
    ]);
    await m.events();
    await m.nothingMore();
  });

  it('yearly → monthly: the unused year exceeds the month, so the change invoice is paid with nothing due and the rest goes to the credit balance, which the next invoices draw', async () => {
    const m = await setup('2029-06-01T00:00:00.000Z');
    const yearly = await m.plan({ name: 'Yearly', amount: 120000, interval: 'year' });
    const monthly = await m.plan({ name: 'Monthly', amount: 12000 });
    const s = await m.subscribe(yearly.id);
    const t = '2029-07-01T00:00:00.000Z'; // 30 of 365 days used
    await m.advance({ to: t });
    const p = await m.upcoming({ subscription_id: s.id, plan_id: monthly.id, proration_behavior: 'always_invoice', proration_date: t });
    const credit = -Math.round((120000 * 335) / 365); // -110137
    expect(p).toMatchObject({ total: 12000 + credit, amount_due: 0, credited_to_balance: -(12000 + credit) });
    // The renewal after it draws the balance the change's invoice credits: no carried line any more.
    expect(p.next_invoice).toMatchObject({ total: 12000, credit_applied: 12000, amount_due: 0, credited_to_balance: 0 });
    expect(p.next_invoice.lines.map((l: any) => l.amount)).toEqual([12000]);
    const after = await m.patch(s.id, { plan_id: monthly.id, proration_behavior: 'always_invoice', proration_date: t });
    const inv = await m.invoice(after.latest_invoice_id);
    expect(inv).toMatchObject({ status: 'paid', amount_due: 0, total: 12000 + credit, credited_to_balance: -(12000 + credit), period_end: '2029-08-01T00:00:00.000Z' });
    expect(moneyOf(inv)).toEqual(moneyOf(p));
    const [entry] = (await m.api.get(`/v1/customers/${m.customer.id}/balance-transactions`)).body.data;
    expect(entry).toMatchObject({ type: 'invoice_credit', amount: -(12000 + credit), invoice_id: inv.id, subscription_id: s.id, ending_balance: -(12000 + credit) });
    await m.advance({ to: '2029-08-01T00:00:00.000Z' });
    const next = await m.invoice((await m.sub(s.id)).latest_invoice_id);
    expect(moneyOf(next)).toEqual(moneyOf(p.next_invoice));
    expect((await m.api.get(`/v1/customers/${m.customer.id}`)).body.credit_balance).toEqual({ USD: -(12000 + credit) - 12000 });
  });

  it('proration_behavior none: no credit, the new period invoiced at once; interval_count 1 → 3 months; cancel_at_period_end moves to the new end', async () => {
    const m = await setup('2029-02-15T00:00:00.000Z');
    const monthly = await m.plan({ name: 'Monthly', amount: 1000 });
    const quarterly = await m.plan({ name: 'Quarterly', amount: 2700, interval_count: 3 });
    const s = await m.subscribe(monthly.id, { cancel_at_period_end: true });
    const t = '2029-03-01T00:00:00.000Z';
    await m.advance({ to: t });
    // Set to cancel at its period end: the change's invoice now, and no renewal after it.
    const p = await m.upcoming({ subscription_id: s.id, plan_id: quarterly.id, proration_behavior: 'none', proration_date: t });
    expect(p.lines.map((l: any) => [l.description, l.amount])).toEqual([['Quarterly (2029-03-01 – 2029-06-01)', 2700]]);
    expect(p.next_invoice).toBeNull();
    const after = await m.patch(s.id, { plan_id: quarterly.id, proration_behavior: 'none', proration_date: t });
    expect(after).toMatchObject({ current_period_end: '2029-06-01T00:00:00.000Z', cancel_at: '2029-06-01T00:00:00.000Z', cancel_at_period_end: true });
    expect(moneyOf(await m.invoice(after.latest_invoice_id))).toEqual(moneyOf(p));
    await m.advance({ to: '2029-06-01T00:00:00.000Z' });
    expect((await m.sub(s.id)).status).toBe('cancelled');
  });

  it('during a trial the plan just changes (the first invoice, at the trial end, bills the year); paused or unpaid is 409 subscription_not_active; an Idempotency-Key replays the change, never a second invoice', async () => {
    const m = await setup('2029-04-01T00:00:00.000Z');
    const monthly = await m.plan({ name: 'Monthly', amount: 1500 });
    const yearly = await m.plan({ name: 'Yearly', amount: 15000, interval: 'year' });
    const trial = await m.subscribe(monthly.id, { trial_period_days: 14 });
    const p = await m.upcoming({ subscription_id: trial.id, plan_id: yearly.id });
    expect(p).toMatchObject({ billing_reason: 'subscription_create', period_start: trial.trial_end, period_end: years(trial.trial_end, 1), total: 15000, next_invoice: null });
    const changed = await m.patch(trial.id, { plan_id: yearly.id });
    expect(changed).toMatchObject({ status: 'trialing', current_period_end: trial.trial_end, latest_invoice_id: null });
    await m.advance({ to: trial.trial_end });
    expect(moneyOf(await m.invoice((await m.sub(trial.id)).latest_invoice_id))).toEqual(moneyOf(p));

    const paused = await m.subscribe(monthly.id);
    expect((await m.api.post(`/v1/subscriptions/${paused.id}/pause`, {})).status).toBe(200);
    const refused = await m.api.patch(`/v1/subscriptions/${paused.id}`, { plan_id: yearly.id });
    expect([refused.status, refused.body.error.code, refused.body.error.param]).toEqual([409, 'subscription_not_active', 'plan_id']);
    expect((await m.preview({ subscription_id: paused.id, plan_id: yearly.id })).body.error.code).toBe('subscription_not_active');

    const s = await m.subscribe(monthly.id);
    const key = { 'Idempotency-Key': `interval-${s.id}` };
    const first = await m.api.patch(`/v1/subscriptions/${s.id}`, { plan_id: yearly.id }, key);
    const again = await m.api.patch(`/v1/subscriptions/${s.id}`, { plan_id: yearly.id }, key);
    expect(first.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await m.api.get(`/v1/invoices?subscription_id=${s.id}`)).body.data.map((i: any) => i.billing_reason)).toEqual(['subscription_update', 'subscription_create']);
  });
});

describe('GraphQL upcomingInvoice', () => {
  it('the same preview as REST, with and without a change; errors carry their code and the GraphQL param; updateSubscription takes prorationDate', async () => {
    const m = await setup('2029-09-09T09:00:00.000Z');
    const basic = await m.plan({ name: 'Basic', amount: 4000 });
    const yearly = await m.plan({ name: 'Yearly', amount: 40000, interval: 'year' });
    const s = await m.subscribe(basic.id);
    const t = '2029-09-20T09:00:00.000Z';
    await m.advance({ to: t });
    const Q = `query($id: ID!, $plan: ID, $q: Int, $b: ProrationBehavior, $d: DateTime, $c: String) {
      upcomingInvoice(subscriptionId: $id, planId: $plan, quantity: $q, prorationBehavior: $b, prorationDate: $d, coupon: $c) {
        billingReason currency subtotal discountAmount taxAmount total amountDue creditApplied periodStart periodEnd nextPaymentAttempt
        subscription { id } customerId
        lines { id description amount proration quantity unitAmount periodStart periodEnd discountAmount taxAmounts { taxRateId amount inclusive } }
        nextInvoice { billingReason total periodStart lines { description amount } nextInvoice { total } }
      } }`;
    const plain = await m.api.gql(Q, { id: s.id });
    expect(plain.errors).toBeUndefined();
    const rest = await m.upcoming({ subscription_id: s.id });
    expect(plain.data.upcomingInvoice).toMatchObject({
      billingReason: 'subscription_cycle',
      total: rest.total,
      periodStart: rest.period_start,
      subscription: { id: s.id },
      customerId: m.customer.id,
      nextInvoice: null,
      lines: [{ id: null, description: rest.lines[0].description, amount: 4000, quantity: 1, unitAmount: 4000 }],
    });
    const changed = await m.api.gql(Q, { id: s.id, plan: yearly.id, q: 2, d: t });
    const restChanged = await m.upcoming({ subscription_id: s.id, plan_id: yearly.id, quantity: 2, proration_date: t });
    expect(changed.data.upcomingInvoice).toMatchObject({
      billingReason: 'subscription_update',
      total: restChanged.total,
      lines: restChanged.lines.map((l: any) => ({ description: l.description, amount: l.amount })),
      nextInvoice: { billingReason: 'subscription_cycle', total: restChanged.next_invoice.total, nextInvoice: null },
    });
    // Errors: code and the GraphQL argument's name.
    const bad = await m.api.gql(Q, { id: s.id, q: 0 });
    expect(bad.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'quantity' });
    const early = await m.api.gql(Q, { id: s.id, q: 2, d: '2029-01-01T00:00:00Z' });
    expect(early.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'prorationDate' });
    // The message names the argument as GraphQL spells it (REST's says proration_date).
    expect(early.errors![0].message).toMatch(/^Invalid prorationDate: must be in the subscription's current period/);
    expect(early.errors![0].message).not.toContain('proration_date');
    const missing = await m.api.gql(Q, { id: 'sub_nope' });
    expect(missing.errors![0].extensions).toMatchObject({ code: 'resource_missing', param: 'subscriptionId' });
    const coupon = await m.api.gql(Q, { id: s.id, c: 'NOPE' });
    expect(coupon.errors![0].extensions).toMatchObject({ code: 'resource_missing', param: 'coupon' });

    // The mutation with the same prorationDate makes the previewed invoice.
    const M = `mutation($input: UpdateSubscriptionInput!) { updateSubscription(input: $input) {
      __typename ... on UpdateSubscriptionSuccess { subscription { billingCycleAnchor latestInvoice { total lines { description amount } } } } } }`;
    const r = await m.api.gql(M, { input: { id: s.id, planId: yearly.id, quantity: 2, prorationDate: t, idempotencyKey: `gql-${s.id}` } });
    expect(r.data.updateSubscription.subscription).toMatchObject({
      billingCycleAnchor: t,
      latestInvoice: { total: restChanged.total, lines: restChanged.lines.map((l: any) => ({ description: l.description, amount: l.amount })) },
    });
  });
});
