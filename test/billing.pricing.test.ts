// Billing depth (issue 25, items 1–3) through HTTP: subscription quantities, coupons and tax rates
// on REST and GraphQL, their errors and events, the invoices they make (discount_amount,
// tax_amounts, totals, the PDF), and the upcoming-invoice preview equal to the real invoice line
// for line, cent for cent, with a discount, taxes and a quantity change.
import { extractText } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, usingPostgres, type Client, type TestApp } from './helpers/app.ts';
import { at, cardCustomerMerchant, months } from './helpers/clock-merchant.ts';

const DAY = 86_400;

let app: TestApp;
const logLines: string[] = [];
beforeAll(async () => {
  app = await startApp({}, { logLines });
});
afterAll(() => app?.close());


async function setup(start = '2028-03-01T00:00:00.000Z') {
  const m = await cardCustomerMerchant(app, { start, name: 'Grace Hopper', emailPrefix: 'p' });
  await m.events(); // the customer's and its card's
  return m;
}

/** What a preview and its real invoice must share: every line's money and the totals. */
const money = (x: any) => ({
  lines: x.lines.map((l: any) => ({
    description: l.description,
    period: l.period,
    proration: l.proration,
    amount: l.amount,
    quantity: l.quantity,
    unit_amount: l.unit_amount,
    discount_amount: l.discount_amount,
    tax_amounts: l.tax_amounts,
  })),
  ...Object.fromEntries(
    ['subtotal', 'discount_amount', 'coupon_id', 'tax_amount', 'total', 'credit_applied', 'amount_due', 'currency', 'period_start', 'period_end', 'billing_reason'].map((k) => [k, x[k]]),
  ),
});

describe('coupons (REST)', () => {
  it('create, retrieve, list, delete, with their validation, errors, events and tenancy', async () => {
    const m = await setup();
    const c = await m.created('/v1/coupons', { id: 'SUMMER25', name: 'Summer', percent_off: 25.5, duration: 'repeating', duration_in_months: 3, max_redemptions: 10 });
    expect(c).toMatchObject({ id: 'SUMMER25', object: 'coupon', percent_off: 25.5, amount_off: null, duration: 'repeating', duration_in_months: 3, max_redemptions: 10, times_redeemed: 0, valid: true, deleted: false });
    const gen = await m.created('/v1/coupons', { name: 'Five off', amount_off: 500, currency: 'usd', duration: 'once' });
    expect(gen).toMatchObject({ object: 'coupon', amount_off: 500, currency: 'USD', amount_off_formatted: '$5.00', percent_off: null, duration: 'once' });
    expect(gen.id).toMatch(/^coupon_[0-9A-Za-z]{22}$/);
    expect(await m.events()).toEqual(['coupon.created', 'coupon.created']);

    // Validation (400 parameter_invalid naming the field) and a taken id (409).
    const bad = async (body: Record<string, unknown>, param: string) => {
      const r = await m.api.post('/v1/coupons', { name: 'X', duration: 'forever', ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.param).toBe(param);
    };
    await bad({ percent_off: 10.125 }, 'percent_off');
    await bad({ percent_off: 0 }, 'percent_off');
    await bad({ percent_off: 100.01 }, 'percent_off');
    await bad({ percent_off: 10, amount_off: 100, currency: 'USD' }, 'amount_off');
    await bad({ amount_off: 100 }, 'currency');
    await bad({}, 'percent_off');
    await bad({ percent_off: 10, duration: 'repeating' }, 'duration_in_months');
    await bad({ percent_off: 10, duration_in_months: 2 }, 'duration_in_months');
    await bad({ id: 'no spaces', percent_off: 10 }, 'id');
    const taken = await m.api.post('/v1/coupons', { id: 'SUMMER25', name: 'Again', percent_off: 5, duration: 'once' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'resource_already_exists', param: 'id' });

    expect((await m.api.get('/v1/coupons/SUMMER25')).body).toMatchObject({ id: 'SUMMER25', name: 'Summer' });
    const list = await m.api.get('/v1/coupons?limit=1');
    expect(list.body).toMatchObject({ object: 'list', has_more: true });
    expect(list.body.data.map((x: any) => x.id)).toEqual([gen.id]);
    const page2 = await m.api.get(`/v1/coupons?limit=1&after=${list.body.next_cursor}`);
    expect(page2.body.data.map((x: any) => x.id)).toEqual(['SUMMER25']);

    // Another merchant sees none of it, and may use the same code for its own coupon.
    const other = await app.merchant();
    expect((await other.get('/v1/coupons/SUMMER25')).status).toBe(404);
    expect((await other.post('/v1/coupons', { id: 'SUMMER25', name: 'Theirs', percent_off: 50, duration: 'forever' })).status).toBe(201);
    expect((await m.api.get('/v1/coupons/SUMMER25')).body.percent_off).toBe(25.5);

    const del = await m.api.del('/v1/coupons/SUMMER25');
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: 'SUMMER25', deleted: true, valid: false });
    const [deleted] = await m.eventObjects();
    expect(deleted).toMatchObject({ type: 'coupon.deleted', data: { object: { id: 'SUMMER25', deleted: true }, previous_attributes: { deleted: false, valid: true } } });
    expect((await m.api.get('/v1/coupons/SUMMER25')).status).toBe(404);
    expect((await m.api.del('/v1/coupons/SUMMER25')).status).toBe(404);
    expect((await m.api.get('/v1/coupons')).body.data.map((x: any) => x.id)).toEqual([gen.id]);
    // Its id stays taken.
    expect((await m.api.post('/v1/coupons', { id: 'SUMMER25', name: 'Reborn', percent_off: 5, duration: 'once' })).status).toBe(409);
  });
});

describe('coupon lists page with cursors, whatever the codes', () => {
  it('REST and GraphQL: merchant codes (with - and _) and generated ids, newest first, page after page', async () => {
    const m = await setup();
    const ids: string[] = [];
    for (const id of ['SUMMER-25', 'a', 'WINTER_10', undefined, 'Z9']) ids.unshift((await m.created('/v1/coupons', { ...(id ? { id } : {}), name: 'C', percent_off: 5, duration: 'once' })).id);
    const seen: string[] = [];
    let after = '';
    for (;;) {
      const r = await m.api.get(`/v1/coupons?limit=2${after ? `&after=${after}` : ''}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      seen.push(...r.body.data.map((c: any) => c.id));
      if (!r.body.has_more) break;
      after = r.body.next_cursor;
    }
    expect(seen).toEqual(ids);
    const q = `query($after: String) { coupons(first: 2, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id } } } }`;
    const gql: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { data: any; errors?: unknown } = await m.api.gql(q, { after: cursor });
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      gql.push(...r.data.coupons.edges.map((e: any) => e.node.id));
      cursor = r.data.coupons.pageInfo.hasNextPage ? r.data.coupons.pageInfo.endCursor : null;
    } while (cursor);
    expect(gql).toEqual(ids);
  });
});

describe('coupon and tax-rate search (REST search=, GraphQL search:)', () => {
  it('coupons: every word within the code or the name, any case, LIKE characters plain; deleted ones left out; paged; an empty or long search refused', async () => {
    const m = await setup();
    const mk = (id: string, name: string) => m.created('/v1/coupons', { id, name, percent_off: 5, duration: 'once' });
    const summer = await mk('SUMMER25', 'Summer sale');
    const winter = await mk('WINTER_10', 'Winter 10%');
    const friends = await mk('FRIENDS', 'Friends and family summer');
    const gone = await mk('SUMMER-OLD', 'Old summer');
    expect((await m.api.del(`/v1/coupons/${gone.id}`)).status).toBe(200);
    const ids = async (q: string) => {
      const r = await m.api.get(`/v1/coupons?${q}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data.map((c: any) => c.id);
    };
    expect(await ids('search=summer')).toEqual([friends.id, summer.id]);
    expect(await ids(`search=${encodeURIComponent('SUMMER 25')}`)).toEqual([summer.id]);
    expect(await ids('search=winter_')).toEqual([winter.id]);
    expect(await ids('search=r_1')).toEqual([winter.id]);
    expect(await ids('search=er_')).toEqual([winter.id]);
    expect(await ids(`search=${encodeURIComponent('10%')}`)).toEqual([winter.id]);
    expect(await ids(`search=${encodeURIComponent('%')}`)).toEqual([winter.id]);
    expect(await ids('search=old')).toEqual([]);
    const page = (await m.api.get('/v1/coupons?search=s&limit=1')).body;
    expect(page.data.map((c: any) => c.id)).toEqual([friends.id]);
    expect((await m.api.get(`/v1/coupons?search=s&limit=5&after=${page.next_cursor}`)).body.data.map((c: any) => c.id)).toEqual([summer.id]);
    for (const bad of ['search=', `search=${'x'.repeat(101)}`, `search=${encodeURIComponent('  ')}`]) {
      const r = await m.api.get(`/v1/coupons?${bad}`);
      expect([r.status, r.body.error?.code, r.body.error?.param], bad).toEqual([400, 'parameter_invalid', 'search']);
    }
    const g = await m.api.gql(`query($s: String) { coupons(search: $s, first: 5) { totalCount edges { node { id valid } } } }`, { s: 'summer' });
    expect(g.data.coupons).toEqual({ totalCount: 2, edges: [{ node: { id: friends.id, valid: true } }, { node: { id: summer.id, valid: true } }] });
    const gBad = await m.api.gql(`{ coupons(search: "") { totalCount } }`);
    expect(gBad.errors?.[0]).toMatchObject({ extensions: { code: 'parameter_invalid', param: 'search' } });
    // Another merchant's coupons are not found.
    expect((await (await app.merchant()).get('/v1/coupons?search=summer')).body.data).toEqual([]);
  });

  it('tax rates: every word within the name, jurisdiction or country, or the id; combines with active', async () => {
    const m = await setup();
    const tva = await m.created('/v1/tax-rates', { display_name: 'TVA', percentage: 20, country: 'FR', jurisdiction: 'France' });
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT standard', percentage: 20, country: 'GB' });
    const reduced = await m.created('/v1/tax-rates', { display_name: 'VAT reduced', percentage: 5, country: 'GB', jurisdiction: 'United Kingdom' });
    expect((await m.api.post(`/v1/tax-rates/${reduced.id}/archive`)).status).toBe(200);
    const ids = async (q: string) => (await m.api.get(`/v1/tax-rates?${q}`)).body.data.map((t: any) => t.id);
    expect(await ids('search=vat')).toEqual([reduced.id, vat.id]);
    expect(await ids(`search=${encodeURIComponent('vat gb')}`)).toEqual([reduced.id, vat.id]);
    expect(await ids('search=fr')).toEqual([tva.id]);
    expect(await ids('search=kingdom')).toEqual([reduced.id]);
    expect(await ids(`search=${tva.id}`)).toEqual([tva.id]);
    expect(await ids('search=vat&active=true')).toEqual([vat.id]);
    expect(await ids('search=vat&active=false')).toEqual([reduced.id]);
    expect(await ids('search=sales')).toEqual([]);
    const r = await m.api.get('/v1/tax-rates?search=');
    expect([r.status, r.body.error?.param]).toEqual([400, 'search']);
    const g = await m.api.gql(`query($s: String) { taxRates(search: $s, active: true, first: 5) { totalCount edges { node { id } } } }`, { s: 'VAT' });
    expect(g.data.taxRates).toEqual({ totalCount: 1, edges: [{ node: { id: vat.id } }] });
  });
});

describe('tax rates (REST)', () => {
  it('create, retrieve, list; percentages up to 4 decimals', async () => {
    const m = await setup();
    const t = await m.created('/v1/tax-rates', { display_name: 'TVA', percentage: 19.6, inclusive: true, country: 'fr', jurisdiction: 'FR' });
    expect(t).toMatchObject({ object: 'tax_rate', display_name: 'TVA', percentage: 19.6, inclusive: true, country: 'FR', jurisdiction: 'FR', active: true });
    expect(t.id).toMatch(/^txr_/);
    const fine = await m.created('/v1/tax-rates', { display_name: 'Sales tax', percentage: 8.8755 });
    expect(fine).toMatchObject({ percentage: 8.8755, inclusive: false, country: null });
    for (const [body, param] of [
      [{ display_name: 'X', percentage: 8.87555 }, 'percentage'],
      [{ display_name: 'X', percentage: 100.5 }, 'percentage'],
      [{ display_name: 'X', percentage: -1 }, 'percentage'],
      [{ display_name: '', percentage: 1 }, 'display_name'],
      [{ display_name: 'X', percentage: 1, country: 'FRA' }, 'country'],
      // Two letters are not enough: an assigned ISO 3166-1 alpha-2 code (ZZ, XX are none; UK is
      // reserved, the code of the United Kingdom is GB; EU is no country).
      [{ display_name: 'X', percentage: 1, country: 'ZZ' }, 'country'],
      [{ display_name: 'X', percentage: 1, country: 'xx' }, 'country'],
      [{ display_name: 'X', percentage: 1, country: 'UK' }, 'country'],
      [{ display_name: 'X', percentage: 1, country: 'EU' }, 'country'],
    ] as const) {
      const r = await m.api.post('/v1/tax-rates', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect([r.body.error.code, r.body.error.param]).toEqual(['parameter_invalid', param]);
    }
    expect((await m.api.get(`/v1/tax-rates/${t.id}`)).body).toEqual(t);
    expect((await m.api.get('/v1/tax-rates')).body.data.map((x: any) => x.id)).toEqual([fine.id, t.id]);
    expect((await (await app.merchant()).get(`/v1/tax-rates/${t.id}`)).status).toBe(404);
    expect((await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20, country: 'gb' })).country).toBe('GB');
  });

  it('archive (final): listed as archived, refused for new subscriptions, kept by those that have it', async () => {
    const m = await setup();
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20 });
    const other = await m.created('/v1/tax-rates', { display_name: 'City', percentage: 1 });
    const plan = await m.plan({ name: 'Taxed', amount: 1000 });
    const sub = await m.subscribe(plan.id, { default_tax_rates: [vat.id] });
    const archived = await m.api.post(`/v1/tax-rates/${vat.id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body).toEqual({ ...vat, active: false });
    const again = await m.api.post(`/v1/tax-rates/${vat.id}/archive`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'state_error', code: 'tax_rate_archived' });
    expect((await m.api.post('/v1/tax-rates/txr_unknown/archive')).status).toBe(404);
    expect((await (await app.merchant()).post(`/v1/tax-rates/${other.id}/archive`)).status).toBe(404);
    expect((await m.api.get(`/v1/tax-rates/${other.id}`)).body.active).toBe(true);
    expect((await m.api.get('/v1/tax-rates?active=true')).body.data.map((x: any) => x.id)).toEqual([other.id]);
    expect((await m.api.get('/v1/tax-rates?active=false')).body.data.map((x: any) => x.id)).toEqual([vat.id]);
    expect((await m.api.get('/v1/tax-rates?active=maybe')).body.error).toMatchObject({ code: 'parameter_invalid', param: 'active' });
    // No new subscription may name it…
    const refused = await m.api.post('/v1/subscriptions', { customer_id: m.customer.id, plan_id: plan.id, default_tax_rates: [vat.id] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'default_tax_rates' });
    // …the one that has it keeps it: its renewal is taxed as before.
    await m.api.post('/v1/test-helpers/clock/advance', { seconds: 32 * 86400 });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data[0];
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', subtotal: 1000, tax_amount: 200, total: 1200 });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.default_tax_rates).toEqual([vat.id]);
    // No event: the catalogue has none for tax rates.
    expect((await m.eventObjects()).filter((e: any) => e.type.startsWith('tax'))).toEqual([]);
  });
});

describe('subscriptions with quantity, coupon and tax rates', () => {
  it('the first invoice: plan line quantity × unit, the discount, the tax per line, the totals and the PDF', async () => {
    const m = await setup();
    const plan = await m.plan({ name: 'Seat', amount: 1000 });
    await m.created('/v1/coupons', { id: 'QUARTER', name: 'A quarter off', percent_off: 25, duration: 'forever' });
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20 });
    await m.events();
    const sub = await m.subscribe(plan.id, { quantity: 3, coupon: 'QUARTER', default_tax_rates: [vat.id] });
    expect(sub).toMatchObject({ status: 'active', quantity: 3, default_tax_rates: [vat.id], discount: { coupon: 'QUARTER', end: null } });
    expect(sub.discount.start).toBe(sub.created_at.slice(0, 19) + '.000Z');
    const inv = await m.invoice(sub.latest_invoice_id);
    expect(inv.lines).toEqual([
      expect.objectContaining({ quantity: 3, unit_amount: 1000, amount: 3000, discount_amount: 750, tax_amounts: [{ tax_rate: vat.id, amount: 450, inclusive: false }] }),
    ]);
    expect(inv.lines[0].description).toMatch(/^3 × Seat \(/);
    expect(inv).toMatchObject({ subtotal: 3000, discount_amount: 750, coupon_id: 'QUARTER', tax_amount: 450, total: 2700, amount_due: 2700, amount_paid: 2700, status: 'paid' });
    expect((await m.api.get('/v1/coupons/QUARTER')).body).toMatchObject({ times_redeemed: 1, valid: true });
    // The events carry the new fields.
    const events = await m.eventObjects();
    expect(events.find((e) => e.type === 'subscription.created')!.data.object).toMatchObject({ quantity: 3, discount: { coupon: 'QUARTER' } });
    expect(events.find((e) => e.type === 'invoice.paid')!.data.object).toMatchObject({ discount_amount: 750, tax_amount: 450, total: 2700 });
    // The draft of invoice.created already shows what it bills (computed as Stripe's drafts are), lines priced.
    const draft = events.find((e) => e.type === 'invoice.created')!.data.object;
    expect(draft).toMatchObject({ status: 'draft', subtotal: 3000, discount_amount: 750, coupon_id: 'QUARTER', tax_amount: 450, total: 2700, amount_due: 2700, credit_applied: 0 });
    expect(draft.lines).toEqual([expect.objectContaining({ discount_amount: 750, tax_amounts: [{ tax_rate: vat.id, amount: 450, inclusive: false }] })]);

    // The PDF shows the discount and the tax lines.
    const redirect = await fetch(`${app.url}/v1/invoices/${inv.id}/pdf`, { redirect: 'manual', headers: { authorization: (m.api as unknown as { auth: string }).auth } });
    expect(redirect.status).toBe(302);
    const pdf = await fetch(redirect.headers.get('location')!);
    expect(pdf.status).toBe(200);
    const { text } = await extractText(new Uint8Array(await pdf.arrayBuffer()), { mergePages: true });
    expect(text).toContain('Discount (QUARTER)');
    expect(text).toContain('-$7.50');
    expect(text).toContain('VAT 20%');
    expect(text).toContain('$4.50');
    expect(text).toContain('$10.00 each');
    expect(text).toContain('$27.00');

    // Removing the coupon and the taxes (PATCH coupon null, default_tax_rates []): the next invoice has neither.
    const patched = await m.api.patch(`/v1/subscriptions/${sub.id}`, { coupon: null, default_tax_rates: [] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ discount: null, default_tax_rates: [] });
    await m.advance({ to: sub.current_period_end });
    const next = await m.invoice((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.latest_invoice_id);
    expect(next).toMatchObject({ subtotal: 3000, discount_amount: 0, tax_amount: 0, total: 3000, coupon_id: null });
  });

  it('errors: quantity bounds, unknown coupon or tax rate, coupon_expired, coupon_max_redemptions, currency_mismatch; deleted coupons keep their discounts', async () => {
    const m = await setup();
    const plan = await m.plan({ name: 'Seat', amount: 1000 });
    const c = m.customer.id;
    const expect4xx = async (body: Record<string, unknown>, status: number, code: string, param: string) => {
      const r = await m.api.post('/v1/subscriptions', { customer_id: c, plan_id: plan.id, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.error).toMatchObject({ code, param });
    };
    await expect4xx({ quantity: 0 }, 400, 'parameter_invalid', 'quantity');
    await expect4xx({ quantity: 10_001 }, 400, 'parameter_invalid', 'quantity');
    await expect4xx({ quantity: 1.5 }, 400, 'parameter_invalid', 'quantity');
    await expect4xx({ coupon: 'NOPE' }, 404, 'resource_missing', 'coupon');
    await expect4xx({ default_tax_rates: ['txr_unknown'] }, 404, 'resource_missing', 'default_tax_rates');
    // redeem_by must be in the future when the coupon is made (billing clock).
    const past = await m.api.post('/v1/coupons', { id: 'PAST', name: 'Already over', percent_off: 10, duration: 'once', redeem_by: '2027-01-01T00:00:00Z' });
    expect([past.status, past.body.error?.code, past.body.error?.param]).toEqual([400, 'parameter_invalid', 'redeem_by']);
    await m.created('/v1/coupons', { id: 'SOON', name: 'Soon over', percent_off: 10, duration: 'once', redeem_by: at('2028-03-01T00:00:00.000Z', 2 * DAY) });
    await m.created('/v1/coupons', { id: 'ONE', name: 'Only one', percent_off: 10, duration: 'forever', max_redemptions: 1 });
    await m.created('/v1/coupons', { id: 'EURO', name: 'Euros off', amount_off: 100, currency: 'EUR', duration: 'forever' });
    await expect4xx({ coupon: 'EURO' }, 409, 'currency_mismatch', 'coupon');
    const first = await m.subscribe(plan.id, { coupon: 'ONE' });
    await expect4xx({ coupon: 'ONE' }, 409, 'coupon_max_redemptions', 'coupon');
    expect((await m.api.get('/v1/coupons/ONE')).body).toMatchObject({ times_redeemed: 1, valid: false });
    // Refused creates wrote nothing: no subscription, no redemption.
    expect((await m.api.get(`/v1/subscriptions?customer_id=${c}`)).body.data).toHaveLength(1);
    // A PATCH applying a coupon gets the same errors.
    const patchErr = await m.api.patch(`/v1/subscriptions/${first.id}`, { coupon: 'EURO' });
    expect(patchErr.status).toBe(409);
    expect(patchErr.body.error).toMatchObject({ code: 'currency_mismatch', param: 'coupon' });
    expect((await m.api.patch(`/v1/subscriptions/${first.id}`, { quantity: 0 })).status).toBe(400);
    await m.advance({ seconds: 3 * DAY });
    await expect4xx({ coupon: 'SOON' }, 409, 'coupon_expired', 'coupon');
    expect((await m.api.get('/v1/coupons/SOON')).body.valid).toBe(false);

    // Deleting a coupon: no new redemptions (404), the discount applied goes on.
    expect((await m.api.del('/v1/coupons/ONE')).status).toBe(200);
    await expect4xx({ coupon: 'ONE' }, 404, 'resource_missing', 'coupon');
    await m.advance({ to: first.current_period_end });
    const renewed = await m.invoice((await m.api.get(`/v1/subscriptions/${first.id}`)).body.latest_invoice_id);
    expect(renewed).toMatchObject({ billing_reason: 'subscription_cycle', discount_amount: 100, coupon_id: 'ONE', total: 900 });
  });

  it('concurrent redemptions never exceed max_redemptions', async () => {
    const m = await setup();
    const plan = await m.plan({ name: 'Seat', amount: 1000 });
    await m.created('/v1/coupons', { id: 'FIRST3', name: 'First three', percent_off: 50, duration: 'once', max_redemptions: 3 });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => m.api.post('/v1/subscriptions', { customer_id: m.customer.id, plan_id: plan.id, coupon: 'FIRST3', trial_period_days: 7 })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('coupon_max_redemptions');
    expect((await m.api.get('/v1/coupons/FIRST3')).body).toMatchObject({ times_redeemed: 3, valid: false });
    if (usingPostgres) expect(await app.services.db.prisma.subscription.count({ where: { customerId: m.customer.id, couponId: 'FIRST3' } })).toBe(3);
  });

  it('once: the next invoice only; amount_off at most the subtotal', async () => {
    const m = await setup();
    const plan = await m.plan({ name: 'Small', amount: 300 });
    await m.created('/v1/coupons', { id: 'FIVE', name: 'Five off', amount_off: 500, currency: 'USD', duration: 'once' });
    const sub = await m.subscribe(plan.id, { coupon: 'FIVE' });
    const first = await m.invoice(sub.latest_invoice_id);
    expect(first).toMatchObject({ subtotal: 300, discount_amount: 300, total: 0, amount_due: 0, status: 'paid', coupon_id: 'FIVE' });
    // Used by the first invoice: the subscription the create returns has no discount any more.
    expect(sub.discount).toBeNull();
    await m.advance({ to: sub.current_period_end });
    const second = await m.invoice((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.latest_invoice_id);
    expect(second).toMatchObject({ subtotal: 300, discount_amount: 0, total: 300 });
  });
});

describe('the upcoming preview equals the real invoice', () => {
  it('with quantity change prorations, a repeating discount and inclusive + exclusive taxes, period after period', async () => {
    const m = await setup();
    const plan = await m.plan({ name: 'Basic', amount: 3000 });
    await m.created('/v1/coupons', { id: 'TWO', name: 'Two months', percent_off: 10, duration: 'repeating', duration_in_months: 2 });
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20, inclusive: true });
    const city = await m.created('/v1/tax-rates', { display_name: 'City', percentage: 1.5 });
    const sub = await m.subscribe(plan.id, { quantity: 2, coupon: 'TWO', default_tax_rates: [vat.id, city.id] });
    expect(sub.discount.end).toBe(months(sub.discount.start, 2));
    const first = await m.invoice(sub.latest_invoice_id);
    // 6000, discount 600, base 5400 containing 20 %: VAT 5400 × 0.2 / 1.2 = 900, and City on the net 4500: 4500 × 0.015 = 67.5 → 68.
    expect(first).toMatchObject({ subtotal: 6000, discount_amount: 600, tax_amount: 900 + 68, total: 6000 - 600 + 68 });
    expect(first.lines[0].tax_amounts).toEqual([
      { tax_rate: vat.id, amount: 900, inclusive: true },
      { tax_rate: city.id, amount: 68, inclusive: false },
    ]);

    // Mid-period: 2 → 5 seats (16 of 31 days left), prorated like a plan change.
    const end = sub.current_period_end;
    await m.advance({ to: at(end, -16 * DAY) });
    const changed = await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: 5 });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.quantity).toBe(5);
    await m.events();

    // Two months of discount: the first invoice (at the start) and the first renewal; not the second renewal, at its end.
    for (const [n, discounted] of [
      [0, true],
      [1, false],
      [2, false],
    ] as const) {
      const periodEnd = months(end, n);
      await m.advance({ to: at(periodEnd, -3 * DAY) });
      const notice = (await m.eventObjects()).filter((e) => e.type === 'invoice.upcoming');
      expect(notice, `notice ${n}`).toHaveLength(1);
      const preview = notice[0]!.data.object;
      await m.advance({ to: periodEnd });
      const real = await m.invoice((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.latest_invoice_id);
      expect(real.period_start).toBe(periodEnd);
      expect(money(real), `period ${n}`).toEqual(money(preview));
      expect(real.discount_amount > 0, `period ${n} discounted`).toBe(discounted);
      expect(real.lines.every((l: any) => l.tax_amounts.length === 2)).toBe(true);
      if (n === 0) {
        // The plan line at 5 seats, and the two prorations: credit for 2 seats' unused time, charge for 5 seats'.
        expect(real.lines.map((l: any) => [l.description.replace(/ \(.*/, ''), l.amount, l.quantity, l.unit_amount, l.proration])).toEqual([
          ['5 × Basic', 15000, 5, 3000, false],
          ['Unused time on 2 × Basic', -Math.round((6000 * 16) / 31), 2, null, true],
          ['Remaining time on 5 × Basic', Math.round((15000 * 16) / 31), 5, null, true],
        ]);
        // The credit takes no discount share; the shares add up to the discount.
        expect(real.lines[1].discount_amount).toBe(0);
        expect(real.lines.reduce((s: number, l: any) => s + l.discount_amount, 0)).toBe(real.discount_amount);
        expect(real.discount_amount).toBe(Math.round((15000 - 3097 + 7742) / 10));
      }
    }
  });
});

// Found by a cold try: a PATCH of default_tax_rates (or a coupon removed, or items added) could
// make the next renewal larger than one invoice may bill; the renewal job then failed for good and
// the period was never billed. Every change of price is checked as create and the preview check
// it (upcoming.ts checkChange), items wait when they do not fit with the taxes, and a renewal that
// still cannot be invoiced fails visibly and runs again once the price is lowered.
describe('no change of price can make an invoice larger than one invoice may bill', () => {
  const MAX = 99_999_999_999;

  it('default_tax_rates on PATCH (REST and GraphQL) and on create are checked like the plan and quantity', async () => {
    const m = await setup();
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20 });
    const included = await m.created('/v1/tax-rates', { display_name: 'TVA', percentage: 20, inclusive: true });
    const big = await m.plan({ name: 'Big', amount: 90_000_000_000 });
    const sub = await m.subscribe(big.id);
    await m.events();
    // 90,000,000,000 + 20 % = 108,000,000,000: refused, nothing written.
    const r = await m.api.patch(`/v1/subscriptions/${sub.id}`, { default_tax_rates: [vat.id] });
    expect([r.status, r.body.error?.code, r.body.error?.param], JSON.stringify(r.body)).toEqual([400, 'amount_too_large', 'default_tax_rates']);
    expect(r.body.error.message).toMatch(/at most 99999999999/);
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.default_tax_rates).toEqual([]);
    expect(await m.events()).toEqual([]);
    const g = await m.api.gql(
      `mutation($input: UpdateSubscriptionInput!) { updateSubscription(input: $input) { __typename ... on Error { code message param } } }`,
      { input: { id: sub.id, defaultTaxRates: [vat.id] } },
    );
    expect(g.data.updateSubscription).toMatchObject({ __typename: 'ValidationError', code: 'amount_too_large', param: 'defaultTaxRates' });
    // An inclusive rate adds nothing to the total: allowed.
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { default_tax_rates: [included.id] })).status).toBe(200);
    // Create: the same check, with a trial too (whose first invoice came only at its end).
    for (const extra of [{ default_tax_rates: [vat.id] }, { default_tax_rates: [vat.id], trial_period_days: 7 }, { quantity: 2, trial_period_days: 7 }]) {
      const c = await m.api.post('/v1/subscriptions', { customer_id: m.customer.id, plan_id: big.id, ...extra });
      expect([c.status, c.body.error?.code, c.body.error?.param], JSON.stringify(extra)).toEqual([400, 'amount_too_large', 'plan_id']);
    }
    // The quantity with the rate: 45,000,000,000 × 2 × 1.2 does not fit either.
    const half = await m.plan({ name: 'Half', amount: 45_000_000_000 });
    const taxed = await m.subscribe(half.id, { default_tax_rates: [vat.id] });
    const q = await m.api.patch(`/v1/subscriptions/${taxed.id}`, { quantity: 2, proration_behavior: 'none' });
    expect([q.status, q.body.error?.code, q.body.error?.param]).toEqual([400, 'amount_too_large', 'quantity']);
  });

  it('removing a discount that made the next renewal fit is refused, by the PATCH and its preview alike', async () => {
    const m = await setup('2028-03-01T00:00:00.000Z');
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 10 });
    await m.created('/v1/coupons', { id: 'HALF', name: 'Half', percent_off: 50, duration: 'forever' });
    const p = await m.plan({ name: 'Seats', amount: 45_000_000_000 });
    const sub = await m.subscribe(p.id, { default_tax_rates: [vat.id], coupon: 'HALF' });
    // A day before the renewal, a second seat: +1/31 of a seat waits for the renewal, which bills
    // (90,000,000,000 + 1,451,612,903) × 50 % + 10 % — it fits thanks to the coupon.
    await m.advance({ to: '2028-03-31T00:00:00.000Z' });
    const up = await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: 2 });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    await m.events();
    // Without it: 91,451,612,903 + 10 % = 100,596,774,193.
    const preview = await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}&coupon=`);
    expect([preview.status, preview.body.error?.code, preview.body.error?.param]).toEqual([400, 'amount_too_large', 'coupon']);
    const r = await m.api.patch(`/v1/subscriptions/${sub.id}`, { coupon: null });
    expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([400, 'amount_too_large', 'coupon']);
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.discount).toMatchObject({ coupon: 'HALF' });
    expect(await m.events()).toEqual([]);
    // The renewal is made, within the limit.
    await m.advance({ to: '2028-04-01T00:00:01.000Z' });
    const renewal = await m.invoice((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.latest_invoice_id);
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid' });
    expect(renewal.total).toBeLessThanOrEqual(MAX);
  });

  it('waiting items that would take a taxed renewal over the limit wait for a later invoice; the renewal is made', async () => {
    const m = await setup('2028-03-01T00:00:00.000Z');
    const vat = await m.created('/v1/tax-rates', { display_name: 'VAT', percentage: 20 });
    const p = await m.plan({ name: 'Big', amount: 50_000_000_000 });
    const sub = await m.subscribe(p.id, { default_tax_rates: [vat.id] });
    // 40,000,000,000 fits beside 50,000,000,000 before tax, not with it: (50 + 40) × 1.2 = 108.
    const item = await m.created('/v1/invoice-items', { customer_id: m.customer.id, amount: 40_000_000_000, currency: 'USD', description: 'Setup' });
    const small = await m.created('/v1/invoice-items', { customer_id: m.customer.id, amount: 1000, currency: 'USD', description: 'Small' });
    const preview = (await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}`)).body;
    expect(preview.lines.map((l: any) => l.description).sort()).toEqual([expect.stringMatching(/^Big /), 'Small']);
    await m.advance({ to: sub.current_period_end });
    const renewal = await m.invoice((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.latest_invoice_id);
    expect(money(renewal)).toEqual(money(preview));
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', total: 60_000_001_200 });
    expect((await m.api.get(`/v1/invoice-items/${item.id}`)).body).toMatchObject({ pending: true, invoice_id: null });
    expect((await m.api.get(`/v1/invoice-items/${small.id}`)).body).toMatchObject({ pending: false, invoice_id: renewal.id });
  });

  it('a renewal that still cannot be invoiced fails at once, visibly, writes nothing, and runs again once the price is lowered', async () => {
    const m = await setup('2028-03-01T00:00:00.000Z');
    const p = await m.plan({ name: 'Seat', amount: 40_000_000_000 });
    const sub = await m.subscribe(p.id);
    // A price no request can set any more (as a subscription made before the checks could have).
    await app.services.db.prisma.subscription.update({ where: { id: sub.id }, data: { quantity: 3 } });
    await m.advance({ to: at(sub.current_period_end, -60) });
    await m.events(); // invoice.upcoming
    const before = logLines.length;
    await m.advance({ to: at(sub.current_period_end, 60) });
    const job = await app.services.db.prisma.job.findFirst({ where: { kind: 'subscription.cycle', key: `cycle:${sub.id}:${Date.parse(sub.current_period_end)}` } });
    expect(job, JSON.stringify(job, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).toMatchObject({ status: 'failed', attempts: 1 });
    expect(job!.lastError).toMatch(/cannot be invoiced.*at most 99999999999/);
    const line = logLines.slice(before).map((l) => JSON.parse(l)).find((l) => l.msg === 'subscription renewal cannot be invoiced');
    expect(line).toMatchObject({ level: 'error', subscription_id: sub.id, period_end: sub.current_period_end, code: 'amount_too_large' });
    // Nothing of it was written: same status and (ended) period, no invoice, no event.
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'active', current_period_end: sub.current_period_end, latest_invoice_id: sub.latest_invoice_id });
    expect(await m.events()).toEqual([]);
    // The merchant lowers the quantity: the renewal runs again and bills the period.
    const fixed = await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: 2, proration_behavior: 'none' });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
    await m.advance({ seconds: 60 });
    const renewed = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(renewed.current_period_start).toBe(sub.current_period_end);
    expect(await m.invoice(renewed.latest_invoice_id)).toMatchObject({ billing_reason: 'subscription_cycle', total: 80_000_000_000, status: 'paid' });
  });
});

describe('GraphQL', () => {
  const RESULT = `__typename ... on Error { code message param }`;
  async function mutation(client: Client, name: string, input: Record<string, unknown>, selection: string) {
    const Name = name[0]!.toUpperCase() + name.slice(1);
    const r = await client.gql(`mutation($input: ${Name}Input!) { ${name}(input: $input) { ${RESULT} ... on ${Name}Success { ${selection} } } }`, { input });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data[name];
  }
  const COUPON = `coupon { id name percentOff amountOff currency duration durationInMonths maxRedemptions timesRedeemed valid deleted }`;

  it('coupons, tax rates and subscriptions with them: mutations with idempotency keys, queries with connections, errors as data', async () => {
    const m = await setup();
    const api = m.api;
    const key = `k-${Math.random().toString(36).slice(2)}`;
    const made = await mutation(api, 'createCoupon', { id: 'GQL10', name: 'Ten', percentOff: 10, duration: 'forever', maxRedemptions: 1, idempotencyKey: key }, COUPON);
    expect(made).toMatchObject({ __typename: 'CreateCouponSuccess', coupon: { id: 'GQL10', percentOff: 10, amountOff: null, duration: 'forever', maxRedemptions: 1, timesRedeemed: 0, valid: true } });
    expect(await mutation(api, 'createCoupon', { id: 'GQL10', name: 'Ten', percentOff: 10, duration: 'forever', maxRedemptions: 1, idempotencyKey: key }, COUPON)).toEqual(made);
    expect(await m.events()).toEqual(['coupon.created']);
    const bad = await mutation(api, 'createCoupon', { name: 'Bad', percentOff: 10.001, duration: 'once' }, COUPON);
    expect(bad).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'percentOff' });
    const taken = await mutation(api, 'createCoupon', { id: 'GQL10', name: 'Again', amountOff: 100, currency: 'USD', duration: 'once' }, COUPON);
    expect(taken).toMatchObject({ __typename: 'StateError', code: 'resource_already_exists' });

    const tax = await mutation(api, 'createTaxRate', { displayName: 'GST', percentage: 10, inclusive: false, country: 'AU' }, 'taxRate { id displayName percentage inclusive country }');
    expect(tax.taxRate).toMatchObject({ displayName: 'GST', percentage: 10, inclusive: false, country: 'AU' });
    const notACountry = await mutation(api, 'createTaxRate', { displayName: 'GST', percentage: 10, country: 'QQ' }, 'taxRate { id }');
    expect(notACountry).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'country' });
    const q = await api.gql(
      `query($t: ID!) { coupon(id: "GQL10") { id name } coupons(first: 5) { totalCount edges { node { id } } pageInfo { hasNextPage } }
        taxRate(id: $t) { id percentage } taxRates(first: 5) { totalCount edges { node { id displayName } } } node(id: $t) { id ... on TaxRate { displayName } } }`,
      { t: tax.taxRate.id },
    );
    expect(q.errors).toBeUndefined();
    expect(q.data).toMatchObject({
      coupon: { id: 'GQL10' },
      coupons: { totalCount: 1, edges: [{ node: { id: 'GQL10' } }], pageInfo: { hasNextPage: false } },
      taxRate: { id: tax.taxRate.id, percentage: 10 },
      taxRates: { totalCount: 1, edges: [{ node: { displayName: 'GST' } }] },
      node: { id: tax.taxRate.id, displayName: 'GST' },
    });
    const gone = await mutation(api, 'createTaxRate', { displayName: 'Old', percentage: 5 }, 'taxRate { id }');
    const ARCHIVE = `mutation($input: ArchiveTaxRateInput!) { archiveTaxRate(input: $input) { ${RESULT} ... on ArchiveTaxRateSuccess { taxRate { id active } } } }`;
    const archivedOnce = (await api.gql(ARCHIVE, { input: { id: gone.taxRate.id, idempotencyKey: `a-${key}` } })).data.archiveTaxRate;
    expect(archivedOnce).toMatchObject({ __typename: 'ArchiveTaxRateSuccess', taxRate: { id: gone.taxRate.id, active: false } });
    expect((await api.gql(ARCHIVE, { input: { id: gone.taxRate.id, idempotencyKey: `a-${key}` } })).data.archiveTaxRate).toEqual(archivedOnce);
    expect((await api.gql(ARCHIVE, { input: { id: gone.taxRate.id } })).data.archiveTaxRate).toMatchObject({ __typename: 'StateError', code: 'tax_rate_archived' });
    expect((await api.gql(ARCHIVE, { input: { id: 'txr_nope' } })).data.archiveTaxRate).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing' });
    const filtered = await api.gql(`{ on: taxRates(active: true) { edges { node { id } } } off: taxRates(active: false) { totalCount edges { node { id } } } }`);
    expect(filtered.data).toEqual({ on: { edges: [{ node: { id: tax.taxRate.id } }] }, off: { totalCount: 1, edges: [{ node: { id: gone.taxRate.id } }] } });

    const plan = await m.plan({ name: 'Seat', amount: 1000 });
    const SUB = `subscription { id quantity discount { couponId start end coupon { id timesRedeemed } } defaultTaxRates { id }
      latestInvoice { subtotal discountAmount couponId taxAmount total lines { quantity unitAmount amount discountAmount taxAmounts { taxRateId amount inclusive } } } }`;
    const created = await mutation(
      api,
      'createSubscription',
      { customerId: m.customer.id, planId: plan.id, quantity: 4, coupon: 'GQL10', defaultTaxRates: [tax.taxRate.id], idempotencyKey: `s-${key}` },
      SUB,
    );
    expect(created.subscription).toMatchObject({
      quantity: 4,
      discount: { couponId: 'GQL10', end: null, coupon: { id: 'GQL10', timesRedeemed: 1 } },
      defaultTaxRates: [{ id: tax.taxRate.id }],
      latestInvoice: {
        subtotal: 4000,
        discountAmount: 400,
        couponId: 'GQL10',
        taxAmount: 360,
        total: 3960,
        lines: [{ quantity: 4, unitAmount: 1000, amount: 4000, discountAmount: 400, taxAmounts: [{ taxRateId: tax.taxRate.id, amount: 360, inclusive: false }] }],
      },
    });
    // The coupon is used up: a second subscription gets the error as data.
    const refused = await mutation(api, 'createSubscription', { customerId: m.customer.id, planId: plan.id, coupon: 'GQL10' }, SUB);
    expect(refused).toMatchObject({ __typename: 'StateError', code: 'coupon_max_redemptions', param: 'coupon' });
    const tooMany = await mutation(api, 'createSubscription', { customerId: m.customer.id, planId: plan.id, quantity: 10_001 }, SUB);
    expect(tooMany).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'quantity' });

    // A quantity change with always_invoice bills the prorations now.
    const id = created.subscription.id;
    await m.advance({ seconds: 10 * DAY });
    const updated = await mutation(api, 'updateSubscription', { id, quantity: 6, prorationBehavior: 'always_invoice', idempotencyKey: `u-${key}` }, SUB);
    expect(updated.subscription.quantity).toBe(6);
    const inv = updated.subscription.latestInvoice;
    expect(inv.lines.map((l: any) => l.quantity).sort()).toEqual([4, 6]);
    expect(inv.subtotal).toBe(inv.lines[0].amount + inv.lines[1].amount);
    expect(inv.subtotal).toBeGreaterThan(0);
    const removed = await mutation(api, 'updateSubscription', { id, coupon: null, defaultTaxRates: [] }, SUB);
    expect(removed.subscription).toMatchObject({ discount: null, defaultTaxRates: [] });

    const del = await mutation(api, 'deleteCoupon', { id: 'GQL10' }, COUPON);
    expect(del.coupon).toMatchObject({ id: 'GQL10', deleted: true, valid: false });
    expect((await api.gql('{ coupon(id: "GQL10") { id } }')).data.coupon).toBeNull();
    expect(await mutation(api, 'deleteCoupon', { id: 'GQL10' }, COUPON)).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing' });
  });
});
