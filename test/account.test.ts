// The merchant's settings (issue 24): GET/PATCH /v1/account, GraphQL merchant and
// updateMerchantSettings, account.updated, the CLI's `merchant update`, and the branding on the
// hosted pages and the invoice PDF.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractText, getDocumentProxy } from 'unpdf';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let other: Client;

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

beforeAll(async () => {
  app = await startApp({}, { worker: false });
  api = await app.merchant({ name: 'Acme Coffee' });
  other = await app.merchant({ name: 'Other merchant' });
});
afterAll(() => app?.close());

describe('GET/PATCH /v1/account', () => {
  it('reads and changes the name and branding, with account.updated', async () => {
    const got = await api.get('/v1/account');
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ id: api.creds.merchant_id, object: 'account', name: 'Acme Coffee', mode: 'test', branding: { accent_color: null, logo: null }, created_at: expect.any(String) });
    const upd = await api.patch('/v1/account', { name: 'Acme Roasters', branding: { accent_color: '#0a7c66', logo: PNG } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ name: 'Acme Roasters', branding: { accent_color: '#0A7C66', logo: PNG } });
    expect((await api.get('/v1/account')).body).toEqual(upd.body);
    // Only the colour: the rest stays.
    const color = await api.patch('/v1/account', { branding: { accent_color: '#123456' } });
    expect(color.body).toMatchObject({ name: 'Acme Roasters', branding: { accent_color: '#123456', logo: PNG } });
    // The same again: no event.
    await api.patch('/v1/account', { branding: { accent_color: '#123456' } });
    const events = (await api.get('/v1/events?type=account.updated')).body.data;
    expect(events).toHaveLength(2);
    expect(events[0].data.object.branding.accent_color).toBe('#123456');
    expect(events[0].data.previous_attributes).toEqual({ branding: { accent_color: '#0A7C66', logo: PNG } });
    expect(events[1].data.previous_attributes).toMatchObject({ name: 'Acme Coffee', branding: { accent_color: null, logo: null } });
    // The other merchant is untouched and sees none of it.
    expect((await other.get('/v1/account')).body).toMatchObject({ id: other.creds.merchant_id, name: 'Other merchant', branding: { accent_color: null, logo: null } });
    expect((await other.get('/v1/events?type=account.updated')).body.data).toEqual([]);
  });

  it('refuses bad input with the documented errors', async () => {
    const cases: [unknown, string][] = [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ branding: { accent_color: 'red' } }, 'branding[accent_color]'],
      [{ branding: { accent_color: '#12345' } }, 'branding[accent_color]'],
      [{ branding: { logo: 'data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+' } }, 'branding[logo]'],
      [{ branding: { logo: 'https://example.com/logo.png' } }, 'branding[logo]'],
      [{ branding: { logo: 'data:image/png;base64,/9j/4AAQSkZJRgABAQ==' } }, 'branding[logo]'], // JPEG bytes called PNG
      [{ branding: { logo: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' } }, 'branding[logo]'],
      [{ branding: { logo: `data:image/png;base64,${Buffer.concat([Buffer.from(PNG.split(',')[1]!, 'base64'), Buffer.alloc(128 * 1024)]).toString('base64')}` } }, 'branding[logo]'],
      [{ branding: { colour: '#123456' } }, 'branding[colour]'],
      [{ mode: 'live' }, 'mode'],
    ];
    for (const [body, param] of cases) {
      const r = await api.patch('/v1/account', body);
      expect([r.status, r.body.error?.param], JSON.stringify(body).slice(0, 80)).toEqual([400, param]);
    }
    const svg = await api.patch('/v1/account', cases[4]![0]);
    expect(svg.body.error.message).toMatch(/SVG/);
  });
});

describe('GraphQL merchant and updateMerchantSettings', () => {
  it('reads the request’s merchant and changes it, errors as data', async () => {
    const q = await other.gql(`{ merchant { id name mode branding { accentColor logo } createdAt } }`);
    expect(q.data.merchant).toMatchObject({ id: other.creds.merchant_id, name: 'Other merchant', mode: 'test', branding: { accentColor: null, logo: null } });
    const M = `mutation($input: UpdateMerchantSettingsInput!) { updateMerchantSettings(input: $input) { __typename
      ... on UpdateMerchantSettingsSuccess { merchant { name branding { accentColor logo } } }
      ... on ValidationError { code param } } }`;
    const ok = await other.gql(M, { input: { name: 'Other Shop', branding: { accentColor: '#AA0000' } } });
    expect(ok.data.updateMerchantSettings).toEqual({ __typename: 'UpdateMerchantSettingsSuccess', merchant: { name: 'Other Shop', branding: { accentColor: '#AA0000', logo: null } } });
    const bad = await other.gql(M, { input: { branding: { accentColor: 'blue' } } });
    expect(bad.data.updateMerchantSettings).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'branding[accentColor]' });
    const cleared = await other.gql(M, { input: { branding: { accentColor: null } } });
    expect(cleared.data.updateMerchantSettings.merchant.branding.accentColor).toBeNull();
    expect((await api.gql(`{ merchant { name } }`)).data.merchant.name).not.toBe('Other Shop');
  });
});

describe('branding on the hosted pages and the invoice PDF', () => {
  it('the checkout shows the new name, colour and logo', async () => {
    await api.patch('/v1/account', { name: 'Bean There', branding: { accent_color: '#0A7C66', logo: PNG } });
    const c = (await api.post('/v1/customers', { email: 'buyer@example.com' })).body;
    const p = (await api.post('/v1/payments', { customer_id: c.id, amount: 1500, currency: 'USD', redirect_url: 'https://shop.example/done' })).body;
    const res = await fetch(p.checkout_url.replace(app.services.config.publicBaseUrl, app.url));
    const page = await res.text();
    expect(res.status).toBe(200);
    expect(page).toContain('Bean There');
    expect(page).toContain(':root{--accent:#0A7C66}');
    expect(page).toContain(`<img class="logo" src="${PNG}" alt="Bean There">`);
    expect(res.headers.get('content-security-policy')).toContain("img-src 'self' data:");
    // Another merchant's page keeps the default look.
    const oc = (await other.post('/v1/customers', { email: 'b2@example.com' })).body;
    const op = (await other.post('/v1/payments', { customer_id: oc.id, amount: 1500, currency: 'USD', redirect_url: 'https://shop.example/done' })).body;
    const otherPage = await (await fetch(op.checkout_url.replace(app.services.config.publicBaseUrl, app.url))).text();
    expect(otherPage).not.toContain('--accent:#0A7C66');
    expect(otherPage).not.toContain('class="logo"');
  });

  it('the setup page shows them too (one layout for every hosted page)', async () => {
    const c = (await api.post('/v1/customers', { email: 'setup@example.com' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const res = await fetch(si.setup_url.replace(app.services.config.publicBaseUrl, app.url));
    const page = await res.text();
    expect(res.status).toBe(200);
    expect(page).toContain('Bean There');
    expect(page).toContain(':root{--accent:#0A7C66}');
    expect(page).toContain('<img class="logo"');
  });

  it('the invoice PDF shows the new name in the accent colour', async () => {
    const c = (await api.post('/v1/customers', { email: `pdf${Math.random()}@example.com`, name: 'Grace Hopper' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' });
    const plan = (await api.post('/v1/plans', { name: 'Team', amount: 4999, currency: 'EUR', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    const res = await fetch(`${app.url}/v1/invoices/${sub.latest_invoice_id}/pdf`, { headers: { authorization: api.auth } });
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true });
    expect(text).toContain('Bean There');
    // #0A7C66 as a fill colour, and an image drawn (the logo), in the page's operators (pdf.js).
    const doc = await getDocumentProxy(new Uint8Array(bytes));
    const ops = await (await doc.getPage(1)).getOperatorList();
    const args = JSON.stringify(ops.argsArray);
    expect(args.toLowerCase()).toContain('#0a7c66');
    const { OPS } = await import('unpdf/pdfjs').then((m: any) => m).catch(() => ({ OPS: { paintImageXObject: 85 } }));
    expect(ops.fnArray).toContain(OPS.paintImageXObject);
  });
});
