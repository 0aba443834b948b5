// Four defects found by a cold try of billing depth (issue 25), through HTTP on both surfaces:
// 1. every invoice line made of units carries quantity and unit_amount (one-off items' lines were
//    null), and the PDF shows them;
// 2. control characters and bidi overrides in merchant free text are refused (400 parameter_invalid);
// 3. an invoice has at most MAX_INVOICE_LINES lines;
// 4. a PATCH answers with the row as its own transaction left it, never a concurrent change.
import { extractText } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { at, cardCustomerMerchant, months } from './helpers/clock-merchant.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

const START = '2029-04-01T00:00:00.000Z';

async function pdfTextOf(m: { api: { auth: string } }, id: string): Promise<string> {
  const redirect = await fetch(`${app.url}/v1/invoices/${id}/pdf`, { redirect: 'manual', headers: { authorization: m.api.auth } });
  expect(redirect.status).toBe(302);
  const pdf = await fetch(redirect.headers.get('location')!);
  expect(pdf.status).toBe(200);
  return (await extractText(new Uint8Array(await pdf.arrayBuffer()), { mergePages: true })).text;
}

function expectError(r: { status: number; body: any }, status: number, code: string, param?: string | null) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.code).toBe(code);
  if (param !== undefined) expect(r.body.error.param).toBe(param);
}

describe('1. lines made of units carry quantity and unit_amount', () => {
  it('one-off items on a draft and on a renewal; plan lines and prorations; REST, GraphQL, the preview and the PDF', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Unit Buyer', emailPrefix: 'u' });
    const c = m.customer;
    const seats = await m.created('/v1/invoice-items', { customer_id: c.id, amount: 2500, currency: 'USD', description: 'Seats', quantity: 3 });
    const setup = await m.created('/v1/invoice-items', { customer_id: c.id, amount: 9900, currency: 'USD', description: 'Setup' });
    const draft = await m.created('/v1/invoices', { customer_id: c.id, currency: 'USD' });
    const bySource = (id: string) => draft.lines.find((l: any) => l.id === id);
    const seatsLine = bySource((await m.api.get(`/v1/invoice-items/${seats.id}`)).body.invoice_line_id);
    const setupLine = bySource((await m.api.get(`/v1/invoice-items/${setup.id}`)).body.invoice_line_id);
    expect(seatsLine).toMatchObject({ description: 'Seats (3 × $25.00)', quantity: 3, unit_amount: 2500, amount: 7500, proration: false });
    expect(setupLine).toMatchObject({ description: 'Setup', quantity: 1, unit_amount: 9900, amount: 9900 });
    // The same in GraphQL, and on the PDF once (the item's description already names its units).
    const g = await m.api.gql(`{ invoice(id: "${draft.id}") { lines { id quantity unitAmount amount } } }`);
    expect(g.errors).toBeUndefined();
    expect(g.data.invoice.lines).toEqual(
      expect.arrayContaining([
        { id: seatsLine.id, quantity: 3, unitAmount: 2500, amount: 7500 },
        { id: setupLine.id, quantity: 1, unitAmount: 9900, amount: 9900 },
      ]),
    );
    const text = await pdfTextOf(m, draft.id);
    expect(text).toContain('Seats (3 × $25.00)');
    expect(text).not.toContain('each');

    // A subscription of 3 seats; a quantity change with proration; an item waiting for the renewal.
    const plan = await m.plan({ name: 'Team', amount: 1000 });
    const sub = await m.subscribe(plan.id, { quantity: 3 });
    const first = await m.invoice(sub.latest_invoice_id);
    expect(first.lines).toEqual([expect.objectContaining({ quantity: 3, unit_amount: 1000, amount: 3000 })]);
    await m.advance({ seconds: 15 * 86_400 });
    const up = await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: 5 });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    await m.created('/v1/invoice-items', { customer_id: c.id, amount: 400, currency: 'USD', description: 'Extra storage', quantity: 2 });
    // The preview lists the item's line with its units, as the renewal will.
    const preview = await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}`);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    await m.advance({ to: at(months(START, 1), 3600) });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(renewal.billing_reason).toBe('subscription_cycle');
    const shape = (l: any) => ({ description: l.description, quantity: l.quantity, unit_amount: l.unit_amount, amount: l.amount, proration: l.proration });
    expect(renewal.lines.map(shape)).toEqual([
      { description: 'Extra storage (2 × $4.00)', quantity: 2, unit_amount: 400, amount: 800, proration: false },
      { description: '5 × Team (2029-05-01 – 2029-06-01)', quantity: 5, unit_amount: 1000, amount: 5000, proration: false },
      { description: 'Unused time on 3 × Team', quantity: 3, unit_amount: null, amount: -1500, proration: true },
      { description: 'Remaining time on 5 × Team', quantity: 5, unit_amount: null, amount: 2500, proration: true },
    ]);
    expect(preview.body.lines.map(shape)).toEqual(renewal.lines.map(shape));
    const renewalText = await pdfTextOf(m, renewal.id);
    expect(renewalText).toContain('$10.00 each');
    expect(renewalText).toContain('Extra storage (2 × $4.00)');
    expect(renewalText).not.toContain('$4.00 each');
  });
});

describe('4. an update answers with the row as its own transaction left it', () => {
  it('concurrent subscription PATCHes (REST and GraphQL): each answer shows its own write and equals its event', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Race Buyer', emailPrefix: 'r' });
    const plan = await m.plan({ name: 'Race', amount: 1000 });
    const sub = await m.subscribe(plan.id);
    await m.events();
    const N = 8;
    const rest = Array.from({ length: N }, (_, i) => m.api.patch(`/v1/subscriptions/${sub.id}`, { metadata: { writer: `rest-${i}` } }));
    const gql = Array.from({ length: N }, (_, i) =>
      m.api.gql(
        `mutation($input: UpdateSubscriptionInput!) { updateSubscription(input: $input) { __typename ... on UpdateSubscriptionSuccess { subscription { id metadata updatedAt } } } }`,
        { input: { id: sub.id, metadata: { writer: `gql-${i}` } } },
      ),
    );
    const [restAnswers, gqlAnswers] = await Promise.all([Promise.all(rest), Promise.all(gql)]);
    restAnswers.forEach((r, i) => {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.metadata.writer).toBe(`rest-${i}`);
    });
    gqlAnswers.forEach((r, i) => {
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data.updateSubscription.subscription.metadata.writer).toBe(`gql-${i}`);
    });
    // Each REST answer is exactly its event's object (the event is recorded in the update's transaction).
    const events = (await m.eventObjects()).filter((e) => e.type === 'subscription.updated');
    expect(events).toHaveLength(2 * N);
    for (const r of restAnswers) {
      const own = events.find((e) => e.data.object.metadata.writer === r.body.metadata.writer)!;
      expect(own.data.object).toEqual(r.body);
    }
    for (const r of gqlAnswers) {
      const s = r.data.updateSubscription.subscription;
      const own = events.find((e) => e.data.object.metadata.writer === s.metadata.writer)!;
      expect(own.data.object.updated_at).toBe(s.updatedAt);
    }
  });

  it('a customer PATCH that retries invoices answers with its own write, not a change made during its charges', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Recovering Buyer', emailPrefix: 'rc' });
    const c = m.customer;
    const good = (await m.api.get(`/v1/customers/${c.id}`)).body.default_payment_method_id;
    const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const declining = (await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4000000000009995' })).body.payment_method_id;
    const plan = await m.plan({ name: 'Recover', amount: 1500 });
    const sub = await m.subscribe(plan.id);
    expect((await m.api.patch(`/v1/customers/${c.id}`, { default_payment_method_id: declining })).status).toBe(200);
    await m.advance({ to: at(months(START, 1), 3600) });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
    await m.events();
    // The new default retries the invoice after its transaction commits; another PATCH lands meanwhile.
    const recovering = m.api.patch(`/v1/customers/${c.id}`, { default_payment_method_id: good, name: 'Own write' });
    const other = (async () => {
      await new Promise((r) => setTimeout(r, 5));
      return m.api.patch(`/v1/customers/${c.id}`, { name: 'Concurrent write' });
    })();
    const [a, b] = await Promise.all([recovering, other]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body).toMatchObject({ name: 'Own write', default_payment_method_id: good });
    expect(b.body.name).toBe('Concurrent write');
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    const updates = (await m.eventObjects()).filter((e) => e.type === 'customer.updated');
    expect(updates.find((e) => e.data.object.name === 'Own write')!.data.object).toEqual(a.body);
    expect(updates.find((e) => e.data.object.name === 'Concurrent write')!.data.object).toEqual(b.body);
  });
});

describe('2. control characters and bidi overrides in free text are refused', () => {
  const BAD = ['\u0007', '\u001b[31m', '\u007f', '\u0085', '\u202e', '\u2066', '\r'];
  it('REST: every free-text field refuses them with 400 parameter_invalid and its param; tab and line feed are kept', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Text Buyer', emailPrefix: 't' });
    const c = m.customer;
    const cases: [string, string, (bad: string) => Record<string, unknown>, string][] = [
      ['post', '/v1/customers', (x) => ({ email: 'x@example.com', name: `Jane${x}Doe` }), 'name'],
      ['patch', `/v1/customers/${c.id}`, (x) => ({ name: `Ja${x}ne` }), 'name'],
      ['post', '/v1/invoice-items', (x) => ({ customer_id: c.id, amount: 100, currency: 'USD', description: `Se${x}ats` }), 'description'],
      ['post', '/v1/credit-notes', (x) => ({ invoice_id: 'in_missing', amount: 100, memo: `Sor${x}ry` }), 'memo'],
      ['post', '/v1/plans', (x) => ({ name: `P${x}ro`, amount: 100, currency: 'USD', interval: 'month' }), 'name'],
      ['post', '/v1/coupons', (x) => ({ name: `Sa${x}le`, percent_off: 10, duration: 'once' }), 'name'],
      ['post', '/v1/tax-rates', (x) => ({ display_name: `V${x}AT`, percentage: 20 }), 'display_name'],
      ['post', `/v1/customers/${c.id}/balance-transactions`, (x) => ({ amount: 100, currency: 'USD', description: `Good${x}will` }), 'description'],
      ['patch', '/v1/account', (x) => ({ name: `Ac${x}me` }), 'name'],
      ['post', '/v1/payments', (x) => ({ amount: 100, currency: 'USD', customer_id: c.id, redirect_url: 'https://shop.example/ok', checkout: { title: `Or${x}der` } }), 'checkout[title]'],
    ];
    for (const [method, path, body, param] of cases) {
      for (const bad of BAD) {
        const r = await (method === 'post' ? m.api.post(path, body(bad)) : m.api.patch(path, body(bad)));
        expectError(r, 400, 'parameter_invalid', param);
        expect(r.body.error.message).toContain('control characters');
      }
    }
    // Nothing was written by the refusals; tab and line feed inside the text are free text.
    expect((await m.api.get(`/v1/invoice-items?customer_id=${c.id}`)).body.data).toEqual([]);
    const ok = await m.created('/v1/invoice-items', { customer_id: c.id, amount: 100, currency: 'USD', description: 'Workshop\n2 days\tonsite' });
    expect(ok.description).toBe('Workshop\n2 days\tonsite');
    // The OpenAPI document states the rule as a pattern.
    const doc = (await m.api.get('/openapi.json')).body;
    const body = doc.paths['/v1/invoice-items'].post.requestBody.content['application/json'].schema;
    const described = JSON.stringify(body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body);
    expect(described.includes('\\\\u202a-\\\\u202e'), described).toBe(true);
  });

  it('GraphQL: the same refusals as ValidationError with the GraphQL param', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Text Buyer', emailPrefix: 'tg' });
    const run = async (name: string, input: Record<string, unknown>) => {
      const Name = name[0]!.toUpperCase() + name.slice(1);
      const r = await m.api.gql(`mutation($input: ${Name}Input!) { ${name}(input: $input) { __typename ... on Error { code param message } } }`, { input });
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return r.data[name];
    };
    const cases: [string, Record<string, unknown>, string][] = [
      ['createCustomer', { email: 'g@example.com', name: 'Jane\u202eDoe' }, 'name'],
      ['updateCustomer', { id: m.customer.id, name: 'Jane\u0007' }, 'name'],
      ['createInvoiceItem', { customerId: m.customer.id, amount: 100, currency: 'USD', description: 'Seats\u2067' }, 'description'],
      ['createCreditNote', { invoiceId: 'in_missing', amount: 100, memo: 'Sorry\u001b' }, 'memo'],
      ['createPlan', { name: 'Pro\u007f', amount: 100, currency: 'USD', interval: 'month' }, 'name'],
      ['createCoupon', { name: 'Sale\u202a', percentOff: 10, duration: 'once' }, 'name'],
      ['createTaxRate', { displayName: 'VAT\u0000'.replace('\u0000', '\u0001'), percentage: 20 }, 'displayName'],
      ['updateMerchantSettings', { name: 'Acme\u2069' }, 'name'],
    ];
    for (const [name, input, param] of cases) {
      expect(await run(name, input), name).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param });
    }
  });
});

describe('3. an invoice holds at most 250 lines', () => {
  /** `n` waiting items of 100 (the amounts tell them apart: 1000 + k), in batches, oldest first. */
  async function items(m: Awaited<ReturnType<typeof cardCustomerMerchant>>, n: number, from = 0) {
    for (let k = from; k < from + n; k += 25) {
      const batch = Array.from({ length: Math.min(25, from + n - k) }, (_, j) =>
        m.api.post('/v1/invoice-items', { customer_id: m.customer.id, amount: 1000 + k + j, currency: 'USD', description: `Item ${k + j}` }),
      );
      for (const r of await Promise.all(batch)) expect(r.status, JSON.stringify(r.body)).toBe(201);
      await m.advance({ seconds: 1 }); // oldest first by creation time
    }
  }
  const waiting = async (m: Awaited<ReturnType<typeof cardCustomerMerchant>>) =>
    (await m.api.get(`/v1/invoice-items?customer_id=${m.customer.id}&pending=true&limit=1`)).body;

  it('the 251st waiting item is refused on both surfaces; a draft takes 250; concurrent creates never pass the cap', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Many Items', emailPrefix: 'mi' });
    await items(m, 240);
    // Twenty at once for the last ten places: ten made, ten refused, never more.
    const race = await Promise.all(Array.from({ length: 20 }, (_, j) => m.api.post('/v1/invoice-items', { customer_id: m.customer.id, amount: 5000 + j, currency: 'USD', description: `Race ${j}` })));
    expect(race.filter((r) => r.status === 201)).toHaveLength(10);
    for (const r of race.filter((r) => r.status !== 201)) expectError(r, 400, 'invoice_too_many_lines', 'customer_id');
    const count = await m.api.gql(`{ invoiceItems(customerId: "${m.customer.id}", pending: true, first: 1) { totalCount } }`);
    expect(count.data.invoiceItems.totalCount).toBe(250);
    const g = await m.api.gql(
      `mutation($input: CreateInvoiceItemInput!) { createInvoiceItem(input: $input) { __typename ... on Error { code param } } }`,
      { input: { customerId: m.customer.id, amount: 100, currency: 'USD', description: 'One more' } },
    );
    expect(g.data.createInvoiceItem).toEqual({ __typename: 'ValidationError', code: 'invoice_too_many_lines', param: 'customerId' });
    // Another currency has its own 250.
    expect((await m.api.post('/v1/invoice-items', { customer_id: m.customer.id, amount: 100, currency: 'EUR', description: 'Euro' })).status).toBe(201);
    // A draft takes the 250; the customer may add again.
    const draft = await m.created('/v1/invoices', { customer_id: m.customer.id, currency: 'USD' });
    expect(draft.lines).toHaveLength(250);
    expect((await m.api.post('/v1/invoice-items', { customer_id: m.customer.id, amount: 100, currency: 'USD', description: 'Next' })).status).toBe(201);
  });

  it('a renewal takes the waiting items while its lines stay within 250, the rest wait; the preview says the same', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Renewing Many', emailPrefix: 'rm' });
    const plan = await m.plan({ name: 'Base', amount: 5000 });
    const sub = await m.subscribe(plan.id);
    // The newest item made alone, a second after the others: items made at once (a batch of 25
    // in parallel) have no order among themselves but their creation times'.
    await items(m, 249);
    await items(m, 1, 249);
    expect((await waiting(m)).data).toHaveLength(1);
    const preview = await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}`);
    expect(preview.status).toBe(200);
    expect(preview.body.lines).toHaveLength(250);
    await m.advance({ to: at(months(START, 1), 3600) });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid' });
    expect(renewal.lines).toHaveLength(250);
    expect(renewal.lines.map((l: any) => l.amount)).toEqual(preview.body.lines.map((l: any) => l.amount));
    // The newest item waits for the next invoice.
    const left = (await m.api.get(`/v1/invoice-items?customer_id=${m.customer.id}&pending=true`)).body.data;
    expect(left.map((i: any) => i.amount)).toEqual([1249]);
  });

  it('a change whose prorations would take the next invoice past 250 lines is refused, by the PATCH and the preview', async () => {
    const m = await cardCustomerMerchant(app, { start: START, name: 'Many Changes', emailPrefix: 'mc' });
    const plan = await m.plan({ name: 'Seat', amount: 3000 });
    const sub = await m.subscribe(plan.id);
    await m.advance({ seconds: 86_400 });
    // 124 quantity changes: 248 proration lines wait for the renewal (which adds its plan line).
    for (let k = 0; k < 124; k++) {
      const r = await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: k % 2 === 0 ? 2 : 1 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const change = { quantity: 3 };
    expectError(await m.api.patch(`/v1/subscriptions/${sub.id}`, change), 400, 'invoice_too_many_lines', 'quantity');
    expectError(await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}&quantity=3`), 400, 'invoice_too_many_lines', 'quantity');
    const g = await m.api.gql(
      `mutation($input: UpdateSubscriptionInput!) { updateSubscription(input: $input) { __typename ... on Error { code param } } }`,
      { input: { id: sub.id, quantity: 3 } },
    );
    expect(g.data.updateSubscription).toEqual({ __typename: 'ValidationError', code: 'invoice_too_many_lines', param: 'quantity' });
    // Without prorations it is made; the renewal bills the 248 waiting lines and its plan line.
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: 3, proration_behavior: 'none' })).status).toBe(200);
    await m.advance({ to: at(months(START, 1), 3600) });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(renewal.billing_reason).toBe('subscription_cycle');
    expect(renewal.lines).toHaveLength(249);
  });
});
