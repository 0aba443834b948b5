// A customer's `locale` (en | fr, null = en): set and cleared through REST and GraphQL, refused
// when it is anything else, and used where nothing more specific names a language — the customer
// e-mails (docs/emails.md, "Language": the checkout's locale, else the customer's), an invoice's
// checkout page, the portal and a setup page. Through HTTP against the real database, in the
// dev mailbox (test mode, no SMTP_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, startApp, type Client, type TestApp } from './helpers/app.ts';
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

const email = () => `l${Math.random().toString(36).slice(2)}@example.com`;
const local = (url: string) => url.replace(app.services.config.publicBaseUrl, app.url);

async function mailbox(api: Client, to: string) {
  const r = await api.get(`/v1/test-helpers/emails?to=${encodeURIComponent(to)}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { kind: string; subject: string; text: string; html: string; locale: string }[];
}

async function card(api: Client, customerId: string, number: string) {
  const si = (await api.post('/v1/setup-intents', { customer_id: customerId })).body;
  const done = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: number });
  expect(done.status).toBe(200);
  return done.body.payment_method_id as string;
}

describe('the customer’s locale through the API', () => {
  it('REST: set on create, shown by retrieve and list, changed and cleared by PATCH (customer.updated says so)', async () => {
    const api = await app.merchant();
    const plain = await api.post('/v1/customers', { email: email() });
    expect(plain.status).toBe(201);
    expect(plain.body.locale).toBeNull();
    const created = await api.post('/v1/customers', { email: email(), name: 'Jeanne', locale: 'fr' });
    expect(created.status).toBe(201);
    expect(created.body.locale).toBe('fr');
    const c = created.body;
    expect((await api.get(`/v1/customers/${c.id}`)).body.locale).toBe('fr');
    const listed = (await api.get(`/v1/customers?email=${encodeURIComponent(c.email)}`)).body.data;
    expect(listed.map((x: any) => x.locale)).toEqual(['fr']);
    const created_ = (await api.get('/v1/events?type=customer.created&limit=100')).body.data.find((e: any) => e.data.object.id === c.id);
    expect(created_.data.object.locale).toBe('fr');

    const en = await api.patch(`/v1/customers/${c.id}`, { locale: 'en' });
    expect(en.status).toBe(200);
    expect(en.body.locale).toBe('en');
    const updated = (await api.get('/v1/events?type=customer.updated&limit=100')).body.data.find((e: any) => e.data.object.id === c.id);
    expect(updated.data.previous_attributes).toEqual({ locale: 'fr' });
    const cleared = await api.patch(`/v1/customers/${c.id}`, { locale: null });
    expect(cleared.body.locale).toBeNull();
    // Unchanged when not given.
    await api.patch(`/v1/customers/${c.id}`, { locale: 'fr' });
    expect((await api.patch(`/v1/customers/${c.id}`, { name: 'Jeanne M.' })).body.locale).toBe('fr');
  });

  it('REST: anything but en, fr or null is 400 parameter_invalid (create and update), nothing changed', async () => {
    const api = await app.merchant();
    const c = (await api.post('/v1/customers', { email: email(), locale: 'fr' })).body;
    for (const locale of ['de', 'FR', 'fr-FR', '', 1, true, ['fr']]) {
      const create = await api.post('/v1/customers', { email: email(), locale });
      expect(create.status, JSON.stringify(locale)).toBe(400);
      expect(create.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'locale' });
      const patch = await api.patch(`/v1/customers/${c.id}`, { locale });
      expect(patch.status, JSON.stringify(locale)).toBe(400);
      expect(patch.body.error).toMatchObject({ code: 'parameter_invalid', param: 'locale' });
    }
    expect((await api.get(`/v1/customers/${c.id}`)).body.locale).toBe('fr');
  });

  it('GraphQL: Customer.locale, createCustomer and updateCustomer (null clears it); a bad value is refused', async () => {
    const api = await app.merchant();
    const create = await api.gql(
      'mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { __typename ... on CreateCustomerSuccess { customer { id locale } } ... on Error { code param } } }',
      { input: { email: email(), locale: 'fr' } },
    );
    expect(create.data.createCustomer).toMatchObject({ __typename: 'CreateCustomerSuccess', customer: { locale: 'fr' } });
    const id = create.data.createCustomer.customer.id;
    expect((await api.get(`/v1/customers/${id}`)).body.locale).toBe('fr');
    const update = await api.gql(
      'mutation($input: UpdateCustomerInput!) { updateCustomer(input: $input) { __typename ... on UpdateCustomerSuccess { customer { locale } } ... on Error { code param } } }',
      { input: { id, locale: null } },
    );
    expect(update.data.updateCustomer).toEqual({ __typename: 'UpdateCustomerSuccess', customer: { locale: null } });
    const read = await api.gql('query($id: ID!) { customer(id: $id) { locale } }', { id });
    expect(read.data.customer).toEqual({ locale: null });
    const bad = await api.gql(
      'mutation($input: UpdateCustomerInput!) { updateCustomer(input: $input) { __typename } }',
      { input: { id, locale: 'de' } },
    );
    expect(bad.data ?? null).toBeNull();
    expect(bad.errors![0].extensions).toMatchObject({ code: 'parameter_invalid' });
  });

  it('OpenAPI: the customer object and the create and update bodies have locale', async () => {
    const doc = (await send(`${app.url}/openapi.json`)).body;
    const s = doc.components.schemas;
    expect(s.Customer.properties.locale.enum ?? s.Customer.properties.locale.anyOf?.flatMap((x: any) => x.enum ?? [])).toEqual(expect.arrayContaining(['en', 'fr']));
    const body = (op: any) => JSON.stringify(op.requestBody.content['application/json'].schema);
    expect(body(doc.paths['/v1/customers'].post)).toContain('"locale"');
    expect(body(doc.paths['/v1/customers/{id}'].patch)).toContain('"locale"');
  });
});

describe('where the customer’s locale is used', () => {
  it('a French customer’s trial-ending and failed-payment e-mails are in French, and the portal link opens a French portal', async () => {
    const m = await clockMerchant(app);
    const fr = (await m.api.post('/v1/customers', { email: email(), name: 'Jeanne Martin', locale: 'fr' })).body;
    const en = (await m.api.post('/v1/customers', { email: email(), name: 'Ada Lovelace' })).body;
    const plan = (await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'EUR', interval: 'month', trial_period_days: 7 })).body;
    const subs = [];
    for (const c of [fr, en]) {
      await card(m.api, c.id, NSF);
      subs.push((await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body);
    }
    await m.advance({ seconds: 5 * DAY });
    const [trial] = await mailbox(m.api, fr.email);
    expect(trial).toMatchObject({ kind: 'trial_ending', locale: 'fr', subject: expect.stringContaining('Votre essai de Pro') });
    expect(trial!.html).toContain('<html lang="fr">');
    expect((await mailbox(m.api, en.email))[0]).toMatchObject({ kind: 'trial_ending', locale: 'en', subject: expect.stringContaining('Your Pro trial') });

    await m.advance({ to: subs[0].trial_end });
    await m.advance({ seconds: 60 });
    const failed = (await mailbox(m.api, fr.email)).find((e) => e.kind === 'failed_payment');
    expect(failed).toMatchObject({ locale: 'fr', subject: expect.stringContaining('n’a pas abouti') });
    expect(failed!.text).toContain('le solde de la carte est insuffisant');
    expect((await mailbox(m.api, en.email)).find((e) => e.kind === 'failed_payment')).toMatchObject({ locale: 'en', subject: expect.stringContaining('did not go through') });

    // Its portal link: a French portal.
    const link = /https?:\/\/\S+\/hosted\/email-links\/\S+/.exec(failed!.text)![0];
    const session = (await fetch(link, { redirect: 'manual' })).headers.get('location')!;
    const opened = await fetch(session, { redirect: 'manual' });
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const portal = await (await fetch(new URL(opened.headers.get('location')!, session), { headers: { cookie } })).text();
    expect(portal).toContain('<html lang="fr">');
  });

  it('receipts: an explicit checkout locale still wins; without one, the customer’s', async () => {
    const api = await app.merchant();
    const fr = (await api.post('/v1/customers', { email: email(), name: 'Jeanne', locale: 'fr' })).body;
    const pay = async (checkout?: { locale: 'en' | 'fr' }) => {
      const p = await api.post('/v1/payments', { amount: 2599, currency: 'EUR', customer_id: fr.id, redirect_url: 'https://shop.example/thanks', ...(checkout ? { checkout } : {}) });
      expect(p.status, JSON.stringify(p.body)).toBe(201);
      expect((await api.post(`/v1/test-helpers/payments/${p.body.id}/complete`, { outcome: 'succeeded' })).status).toBe(200);
      return p.body;
    };
    const explicit = await pay({ locale: 'en' });
    // The checkout page too: the payment's own locale first.
    expect(await (await fetch(local(explicit.checkout_url))).text()).toContain('<html lang="en">');
    await pay();
    // E-mails are due work: an advance runs it before answering.
    expect((await api.post('/v1/test-helpers/clock/advance', { seconds: 1 })).status).toBe(200);
    const receipts = (await mailbox(api, fr.email)).filter((e) => e.kind === 'receipt');
    expect(receipts.map((e) => e.locale)).toEqual(['fr', 'en']); // newest first
    expect(receipts[0]!.subject).toContain('Votre reçu de');
    expect(receipts[1]!.subject).toContain('Your receipt from');
  });

  it('an invoice’s checkout page, a portal session without a locale and a setup page are in the customer’s language', async () => {
    const api = await app.merchant();
    const c = (await api.post('/v1/customers', { email: email(), name: 'Jeanne', locale: 'fr' })).body;
    await card(api, c.id, NSF);
    const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'EUR', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('incomplete');
    const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    const payment = (await api.get(`/v1/payments/${inv.payment_id}`)).body;
    expect(payment.checkout.locale).toBeUndefined(); // nothing stored: the page reads the customer's
    const page = await fetch(local(payment.checkout_url));
    const html = await page.text();
    expect(html).toContain('<html lang="fr">');
    expect(html).toMatch(/Payer|Carte/);

    // The portal: a session without a locale takes the customer's; an explicit one wins.
    const s = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://shop.example/account' })).body;
    expect(s.locale).toBe('fr');
    const explicit = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://shop.example/account', locale: 'en' })).body;
    expect(explicit.locale).toBe('en');
    const opened = await fetch(local(s.url), { redirect: 'manual' });
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await fetch(`${app.url}/hosted/portal`, { headers: { cookie } })).text()).toContain('<html lang="fr">');

    // A setup page of an API setup intent.
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    expect(await (await fetch(local(si.setup_url))).text()).toContain('<html lang="fr">');

    // Back to English: the same pages follow the customer.
    await api.patch(`/v1/customers/${c.id}`, { locale: null });
    expect(await (await fetch(local(payment.checkout_url))).text()).toContain('<html lang="en">');
  });

  it('a French customer who pays with a good card gets the invoice receipt in French', async () => {
    const m = await clockMerchant(app);
    const c = (await m.api.post('/v1/customers', { email: email(), name: 'Jeanne', locale: 'fr' })).body;
    await card(m.api, c.id, GOOD);
    const plan = (await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'EUR', interval: 'month' })).body;
    expect((await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body.status).toBe('active');
    await m.advance({ seconds: 60 });
    const [receipt] = await mailbox(m.api, c.email);
    expect(receipt).toMatchObject({ kind: 'receipt', locale: 'fr', subject: expect.stringContaining('Reçu de la facture') });
  });
});
