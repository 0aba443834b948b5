// Customers: create, read, update, list (deletion, which reaches into other areas, and the
// customer record with its embeds are in src/services/customers.ts). Every change records its event in the
// same transaction. Deleted customers disappear from reads but stay referenced by ledgers.
import type { Customer } from '../../generated/prisma/client.ts';
import { inRawTransaction, lockRow } from '../../platform/db/raw.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type Db, type TenantTx } from '../../platform/db/tenant.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { decodeCursor, paginate, type Page } from '../../platform/pagination.ts';
import { parse, type Locale } from '../../platform/validation.ts';
import { clockNow } from '../../platform/clock.ts';
import { previousAttributes, recordEvent, recordEventAlone } from '../events/index.ts';
import { creditBalanceOf, creditBalancesOf } from './balance.ts';
import {
  customerCreate,
  customerUpdate,
  type CustomerCreateInput,
  type CustomerListQuery,
  type CustomerUpdateInput,
} from './schema.ts';
import {
  countCustomers,
  countSearchedCustomers,
  findCustomers,
  searchCustomers,
  type CustomerSearch,
  findLiveCustomer,
  findLiveCustomerId,
  findPaymentMethod,
  insertCustomerStatement,
  updateCustomerRow,
} from './store.ts';

export * from './schema.ts';

export interface CustomerJSON {
  id: string;
  object: 'customer';
  email: string;
  name: string | null;
  phone: string | null;
  currency: string | null;
  locale: Locale | null;
  default_payment_method_id: string | null;
  metadata: Record<string, string>;
  /** `{ "USD": 1250 }`: credit owed to the customer per currency, non-zero only (as Stripe's `balance` on every customer) */
  credit_balance: Record<string, number>;
  created_at: string;
  updated_at: string;
}

/**
 * The customer object, with its credit balance (`creditBalanceOf`, or `creditBalancesOf` for a page
 * of them in one statement; `{}` for a customer just made). Every customer object the API shows
 * carries it: create, update, retrieve, lists and search, and the customer.* events.
 */
export function customerToJSON(c: Customer, creditBalance: Record<string, number>): CustomerJSON {
  return {
    id: c.id,
    object: 'customer',
    email: c.email,
    name: c.name,
    phone: c.phone,
    currency: c.currency,
    locale: localeOf(c),
    default_payment_method_id: c.defaultPaymentMethodId,
    metadata: (c.metadata ?? {}) as Record<string, string>,
    credit_balance: creditBalance,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

/** The customer object of one customer, its credit balance read (one statement). */
export async function customerJSON(ctx: Ctx, c: Customer, db: Db = ctx.db): Promise<CustomerJSON> {
  return customerToJSON(c, await creditBalanceOf(ctx, c.id, db));
}

/** The customer objects of a page of customers: their credit balances in one statement for the page (no statement per customer). */
export async function customersJSON(ctx: Ctx, cs: readonly Customer[], db: Db = ctx.db): Promise<CustomerJSON[]> {
  const balances = await creditBalancesOf(ctx, cs.map((c) => c.id), db);
  return cs.map((c) => customerToJSON(c, balances.get(c.id) ?? {}));
}

/** A customer's locale as the API shows it (null: not set, English). */
export function localeOf(c: Pick<Customer, 'locale'>): Locale | null {
  return (c.locale as Locale | null) ?? null;
}

function dropEmpty(meta: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(meta).filter(([, v]) => v !== ''));
}

export async function createCustomer(ctx: Ctx, input: CustomerCreateInput): Promise<Customer> {
  const data = parse(customerCreate, input);
  const c: Customer = {
    id: newId('customer'),
    merchantId: ctx.merchant.id,
    email: data.email,
    name: data.name ?? null,
    phone: data.phone ?? null,
    currency: data.currency ?? null,
    locale: data.locale ?? null,
    metadata: dropEmpty(data.metadata ?? {}),
    createdAt: new Date(0), // set below: the statement's time on the billing clock
    updatedAt: new Date(0),
    deletedAt: null,
    defaultPaymentMethodId: null,
  };
  // Raw SQL (the hot path of issue 14): one statement (the customer, the event and its
  // deliveries), sent on its own outside a transaction — or, inside the caller's transaction (an
  // idempotency key's) or when the merchant has more endpoints than one statement schedules,
  // BEGIN, that statement, COMMIT. The times are the statement's billing clock (recordEvent's
  // `clock`): a test merchant's offset is read in that statement, not in one of its own.
  // A customer just made has no credit balance.
  const json = customerToJSON(c, {});
  const opts = { with: [insertCustomerStatement(c)], stamp: ['created_at', 'updated_at'] };
  const alone = await recordEventAlone(ctx.db, ctx, 'customer.created', json, opts);
  const event = alone?.event ?? (await inRawTransaction(ctx.db, (tx) => recordEvent(tx, ctx, 'customer.created', json, undefined, opts)));
  c.createdAt = c.updatedAt = event.createdAt;
  return c;
}

/** The language of a customer's e-mails and hosted pages when nothing more specific says one (null: en). */
export function customerLocale(c: Pick<Customer, 'locale'> | null | undefined): Locale {
  return c?.locale === 'fr' ? 'fr' : 'en';
}

/** A live (not deleted) customer of this merchant, or 404. */
export async function getCustomer(ctx: Ctx, id: string, db: Db = ctx.db): Promise<Customer> {
  const c = await findLiveCustomer(db, ctx.merchant.id, id);
  if (!c) throw new NotFoundError('customer', id);
  return c;
}

/** Whether the customer is there and not deleted (the portal's session refresh). */
export async function isLiveCustomer(ctx: Ctx, id: string): Promise<boolean> {
  return (await findLiveCustomerId(ctx.db, id)) !== null;
}

/**
 * PATCH /v1/customers/:id without what a new default method sets off (a retry of the invoices
 * waiting on a payment: src/services/customers.ts, updateCustomer, is the API's).
 */
export async function updateCustomer(ctx: Ctx, id: string, input: CustomerUpdateInput): Promise<Customer> {
  return inTransaction(ctx.db, (tx) => updateCustomerIn(ctx, tx, id, input));
}

/** The same, in the caller's transaction. */
export async function updateCustomerIn(ctx: Ctx, tx: TenantTx, id: string, input: CustomerUpdateInput): Promise<Customer> {
  const data = parse(customerUpdate, input);
  // Lock the row so concurrent updates (and their events) apply one after the other.
  await lockRow(tx, 'customers', ctx.merchant.id, id);
  const before = await getCustomer(ctx, id, tx);
  const metadata = data.metadata
    ? dropEmpty({ ...(before.metadata as Record<string, string>), ...data.metadata })
    : undefined;
  if (data.default_payment_method_id !== undefined) {
    // Checked here (attached to this customer); its event is the customer.updated below.
    await checkDefaultMethod(tx, before, data.default_payment_method_id);
  }
  const after = await updateCustomerRow(tx, id, {
    // A customer row is on one clock: updated_at too is billing time (docs/database.md).
    updatedAt: await clockNow({ ...ctx, db: tx }),
    email: data.email,
    name: data.name,
    phone: data.phone,
    currency: data.currency,
    locale: data.locale,
    defaultPaymentMethodId: data.default_payment_method_id,
    metadata,
  });
  // An update does not move the credit balance: one read serves both.
  const balance = await creditBalanceOf(ctx, id, tx);
  const prevJson = customerToJSON(before, balance);
  const afterJson = customerToJSON(after, balance);
  const { updated_at: _u, ...prev } = previousAttributes(prevJson as any, afterJson as any);
  if (Object.keys(prev).length > 0) {
    await recordEvent(tx, ctx, 'customer.updated', afterJson, prev);
  }
  return after;
}

async function checkDefaultMethod(db: Db, customer: Customer, id: string | null): Promise<void> {
  if (id === null) return;
  const pm = await findPaymentMethod(db, id);
  if (!pm) throw new NotFoundError('payment method', id, 'default_payment_method_id');
  if (pm.customerId !== customer.id) {
    throw new ValidationError('parameter_invalid', `Invalid default_payment_method_id: payment method ${id} is not attached to customer ${customer.id}.`, 'default_payment_method_id');
  }
}

/**
 * The search text as the store's conditions: the whole text (an email prefix) and its distinct
 * words, split as the terms are (white space and ASCII punctuation: migration 20261128023337), at
 * most 8, longest first; lower-cased like PostgreSQL's lower() of the terms (Unicode, as on a
 * UTF-8 database: docs/conventions.md "Customer search").
 */
export function customerSearchOf(text: string, email?: string): CustomerSearch {
  const t = text.trim().toLowerCase();
  const words = [...new Set(t.split(/[\s!-/:-@[-`{-~]+/u).filter(Boolean))].sort((a, b) => b.length - a.length).slice(0, 8);
  return { text: t, words, email };
}

export async function listCustomers(ctx: Ctx, q: CustomerListQuery): Promise<Page<Customer>> {
  if (q.search !== undefined) {
    const s = customerSearchOf(q.search, q.email);
    return paginate(
      q,
      ({ take }) => searchCustomers(ctx.db, ctx.merchant.id, s, { take, after: q.after ? decodeCursor(q.after) : undefined }),
      () => countSearchedCustomers(ctx.db, ctx.merchant.id, s),
    );
  }
  const filters = [{ deletedAt: null }, q.email ? { email: q.email } : {}];
  return paginate(
    q,
    ({ where, ...page }) => findCustomers(ctx.db, { AND: [where, ...filters] }, page),
    () => countCustomers(ctx.db, { AND: filters }),
  );
}
