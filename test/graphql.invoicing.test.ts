// One-off invoicing and credit notes over GraphQL (issue 25): the same domain functions as REST,
// Relay connections, node(id:), errors as data with REST's codes, idempotencyKey on the creates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

const RESULT = `__typename ... on Error { code message param }`;
const INVOICE = `id number status billingReason collectionMethod daysUntilDue hostedInvoiceUrl dueDate amountDue amountPaid total
  prePaymentCreditNotesAmount postPaymentCreditNotesAmount lines { id amount description } customer { id }`;
const ITEM = `id currency description quantity unitAmount amount amountFormatted pending invoiceLineId customer { id } invoice { id }`;
const NOTE = `id number type status reason memo amount refundAmount creditAmount refundId customerBalanceTransactionId
  lines { invoiceLineId description amount } invoice { id status } customer { id } pdfUrl`;

async function mutation(name: string, input: Record<string, unknown>, selection: string) {
  const Name = name[0]!.toUpperCase() + name.slice(1);
  const r = await api.gql(`mutation($input: ${Name}Input!) { ${name}(input: $input) { ${RESULT} ... on ${Name}Success { ${selection} } } }`, { input });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data[name];
}

async function customer(card = false) {
  const c = (await api.post('/v1/customers', { email: `g${Math.random().toString(36).slice(2)}@example.com` })).body;
  if (card) {
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' });
  }
  return c;
}

describe('GraphQL one-off invoicing', () => {
  it('items, a send_invoice draft, finalize, a credit note, write-off; lists and node(id:)', async () => {
    const c = await customer();
    // Errors as data, with REST's codes and the GraphQL field as param.
    const none = await mutation('createInvoice', { customerId: c.id, currency: 'USD' }, `invoice { id }`);
    expect(none).toMatchObject({ __typename: 'ValidationError', code: 'invoice_no_customer_line_items' });
    const bad = await mutation('createInvoiceItem', { customerId: c.id, amount: 100, currency: 'USD', description: 'x', quantity: 0 }, `invoiceItem { id }`);
    expect(bad).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'quantity' });
    const missing = await mutation('createInvoiceItem', { customerId: 'cus_missing', amount: 100, currency: 'USD', description: 'x' }, `invoiceItem { id }`);
    expect(missing).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing' });
    // Messages speak GraphQL's names too (the REST body says days_until_due and collection_method).
    const notSent = await mutation('createInvoice', { customerId: c.id, currency: 'USD', daysUntilDue: 5 }, `invoice { id }`);
    expect(notSent).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'daysUntilDue', message: 'Invalid daysUntilDue: applies to collectionMethod send_invoice only.' });
    const rest = await api.post("/v1/invoices", { customer_id: c.id, currency: "USD", days_until_due: 5 });
    expect(rest.body.error).toMatchObject({ param: 'days_until_due', message: 'Invalid days_until_due: applies to collection_method send_invoice only.' });

    // An idempotencyKey: the same item, once.
    const key = `gi-${Math.random()}`;
    const input = { customerId: c.id, amount: 2000, currency: 'usd', description: 'Audit', quantity: 2, idempotencyKey: key };
    const item = (await mutation('createInvoiceItem', input, `invoiceItem { ${ITEM} }`)).invoiceItem;
    expect(item).toMatchObject({ currency: 'USD', quantity: 2, unitAmount: 2000, amount: 4000, amountFormatted: '$40.00', pending: true, invoice: null, customer: { id: c.id } });
    expect((await mutation('createInvoiceItem', input, `invoiceItem { id }`)).invoiceItem.id).toBe(item.id);
    const spare = (await mutation('createInvoiceItem', { customerId: c.id, amount: 1, currency: 'USD', description: 'spare' }, `invoiceItem { id }`)).invoiceItem;
    expect((await mutation('deleteInvoiceItem', { id: spare.id }, `deletedInvoiceItem { id deleted }`)).deletedInvoiceItem).toEqual({ id: spare.id, deleted: true });

    const list = await api.gql(`query($c: ID!) { invoiceItems(customerId: $c, pending: true) { totalCount edges { cursor node { id } } pageInfo { hasNextPage } } }`, { c: c.id });
    expect(list.data.invoiceItems).toMatchObject({ totalCount: 1, edges: [{ node: { id: item.id } }], pageInfo: { hasNextPage: false } });

    const draft = (await mutation('createInvoice', { customerId: c.id, currency: 'USD', collectionMethod: 'send_invoice', daysUntilDue: 10 }, `invoice { ${INVOICE} }`)).invoice;
    expect(draft).toMatchObject({ status: 'draft', number: null, billingReason: 'manual', collectionMethod: 'send_invoice', daysUntilDue: 10, hostedInvoiceUrl: null });
    expect(draft.lines).toEqual([{ id: expect.stringMatching(/^il_/), amount: 4000, description: 'Audit (2 × $20.00)' }]);
    const open = (await mutation('finalizeInvoice', { id: draft.id }, `invoice { ${INVOICE} }`)).invoice;
    expect(open).toMatchObject({ status: 'open', amountDue: 4000 });
    expect(open.number).toMatch(/^INV-/);
    expect(open.hostedInvoiceUrl).toMatch(/\/hosted\/invoice\//);
    expect(await mutation('finalizeInvoice', { id: draft.id }, `invoice { id }`)).toMatchObject({ __typename: 'StateError', code: 'invoice_not_draft' });

    const note = (await mutation('createCreditNote', { invoiceId: open.id, lines: [{ invoiceLineId: open.lines[0].id, amount: 1500 }], reason: 'order_change' }, `creditNote { ${NOTE} }`)).creditNote;
    expect(note).toMatchObject({ type: 'pre_payment', status: 'issued', reason: 'order_change', amount: 1500, refundAmount: 0, creditAmount: 0, invoice: { id: open.id, status: 'open' } });
    expect(note.number).toMatch(/^CN-\d{6}$/);
    expect(note.lines).toEqual([{ invoiceLineId: open.lines[0].id, description: 'Audit (2 × $20.00)', amount: 1500 }]);
    expect(note.pdfUrl).toContain(`/hosted/credit-notes/${note.id}/pdf?`);
    const tooMuch = await mutation('createCreditNote', { invoiceId: open.id, amount: 2501 }, `creditNote { id }`);
    expect(tooMuch).toMatchObject({ __typename: 'ValidationError', code: 'credit_note_exceeds_invoice', param: 'amount' });
    const mismatch = await mutation('createCreditNote', { invoiceId: open.id, amount: 10, creditAmount: 10 }, `creditNote { id }`);
    expect(mismatch).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'creditAmount' });

    const notes = await api.gql(`query($i: ID!) { creditNotes(invoiceId: $i) { totalCount edges { node { id number } } } }`, { i: open.id });
    expect(notes.data.creditNotes).toMatchObject({ totalCount: 1, edges: [{ node: { id: note.id } }] });
    const nodes = await api.gql(`query($a: ID!, $b: ID!) { a: node(id: $a) { __typename id } b: node(id: $b) { __typename id } }`, { a: item.id, b: note.id });
    expect(nodes.data).toEqual({ a: { __typename: 'InvoiceItem', id: item.id }, b: { __typename: 'CreditNote', id: note.id } });
    const after = await api.gql(`query($i: ID!) { invoice(id: $i) { amountDue prePaymentCreditNotesAmount } invoiceItem(id: "${item.id}") { pending invoice { id } } }`, { i: open.id });
    expect(after.data).toEqual({ invoice: { amountDue: 2500, prePaymentCreditNotesAmount: 1500 }, invoiceItem: { pending: false, invoice: { id: open.id } } });

    const written = (await mutation('markInvoiceUncollectible', { id: open.id }, `invoice { status }`)).invoice;
    expect(written).toEqual({ status: 'uncollectible' });
    expect(await mutation('markInvoiceUncollectible', { id: open.id }, `invoice { id }`)).toMatchObject({ __typename: 'StateError', code: 'invoice_not_open' });

    // Another merchant: nothing of it.
    const other = await app.merchant();
    const theirs = await other.gql(`query($a: ID!, $b: ID!) { invoiceItem(id: $a) { id } creditNote(id: $b) { id } creditNotes { totalCount } }`, { a: item.id, b: note.id });
    expect(theirs.data).toEqual({ invoiceItem: null, creditNote: null, creditNotes: { totalCount: 0 } });
  });

  it('a paid invoice credited with a refund and a balance credit, replayed with its idempotencyKey', async () => {
    const c = await customer(true);
    await mutation('createInvoiceItem', { customerId: c.id, amount: 9000, currency: 'USD', description: 'Annual support' }, `invoiceItem { id }`);
    const draft = (await mutation('createInvoice', { customerId: c.id, currency: 'USD' }, `invoice { id }`)).invoice;
    const paid = (await mutation('finalizeInvoice', { id: draft.id, idempotencyKey: `f-${Math.random()}` }, `invoice { ${INVOICE} }`)).invoice;
    expect(paid).toMatchObject({ status: 'paid', amountPaid: 9000, collectionMethod: 'charge_automatically' });
    const input = { invoiceId: paid.id, amount: 3000, refundAmount: 2000, creditAmount: 1000, idempotencyKey: `n-${Math.random()}` };
    const note = (await mutation('createCreditNote', input, `creditNote { ${NOTE} }`)).creditNote;
    expect(note).toMatchObject({ type: 'post_payment', refundAmount: 2000, creditAmount: 1000 });
    expect(note.refundId).toMatch(/^re_/);
    const again = (await mutation('createCreditNote', input, `creditNote { ${NOTE} }`)).creditNote;
    expect(again.id).toBe(note.id);
    const state = await api.gql(`query($c: ID!, $i: ID!) { customer(id: $c) { creditBalance { currency amount } } invoice(id: $i) { postPaymentCreditNotesAmount payment { amountRefunded } } }`, { c: c.id, i: paid.id });
    expect(state.data.customer.creditBalance).toEqual([{ currency: 'USD', amount: 1000 }]);
    expect(state.data.invoice).toEqual({ postPaymentCreditNotesAmount: 3000, payment: { amountRefunded: 2000 } });
  });
});
