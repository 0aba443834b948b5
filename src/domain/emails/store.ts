// The e-mails' statements: the merchant's switches (email_settings), the messages with their
// outcome (emails: the dev mailbox in test mode), and the reads the messages need on other areas'
// tables (each marked with whose table it is). The rules are in index.ts.
import type { Email, EmailSettings, Prisma, PrismaClient } from '../../generated/prisma/client.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { insertRows, rawQuery } from '../../platform/db/raw.ts';
import type { PageSlice } from '../../platform/pagination.ts';

// ---------------------------------------------------------------- settings

export function findEmailSettings(db: Db, merchantId: string): Promise<EmailSettings | null> {
  return db.emailSettings.findUnique({ where: { merchantId } });
}

export function upsertEmailSettings(db: Db, merchantId: string, data: Partial<Pick<EmailSettings, 'receipts' | 'failedPayments' | 'trialEnding' | 'upcomingRenewal' | 'invoices'>>): Promise<EmailSettings> {
  return db.emailSettings.upsert({ where: { merchantId }, create: { merchantId, ...data }, update: data });
}

// ---------------------------------------------------------------- messages

export function findEmailOfEvent(db: Db, merchantId: string, eventId: string): Promise<Email | null> {
  return db.email.findUnique({ where: { merchantId_eventId: { merchantId, eventId } } });
}

/** The message of an event, made once: a second call (a job run twice) finds the first one's row and changes nothing. */
export async function insertEmailOnce(db: Db, data: Prisma.EmailUncheckedCreateInput): Promise<Email> {
  await db.email.createMany({ data: [data], skipDuplicates: true });
  return (await findEmailOfEvent(db, data.merchantId, data.eventId))!;
}

export function updateEmail(db: Db, id: string, data: Prisma.EmailUncheckedUpdateInput): Promise<Email> {
  return db.email.update({ where: { id }, data });
}

export function findEmails(db: Db, where: Prisma.EmailWhereInput, page: PageSlice): Promise<Email[]> {
  return db.email.findMany({ where, ...page });
}

export function countEmails(db: Db, where: Prisma.EmailWhereInput): Promise<number> {
  return db.email.count({ where });
}

// ---------------------------------------------------------------- other areas' tables

/** The merchant a durable e-mail link names, with its link key, on the unscoped client. Reads merchants (the merchants area's table). */
export function findLinkMerchant(prisma: PrismaClient, merchantId: string) {
  return prisma.merchant.findUnique({ where: { id: merchantId }, select: { id: true, mode: true, name: true, signingKey: true } });
}

/** A payment's purpose and checkout options. Reads payments (the payments area's table). */
export function findPaymentForEmail(db: Db, id: string) {
  return db.payment.findUnique({ where: { id }, select: { purpose: true, checkout: true, methodDetails: true } });
}

/** A customer, deleted ones too (an e-mail about an event names who it was for). Reads customers (the customers area's table). */
export function findCustomerForEmail(db: Db, id: string) {
  return db.customer.findUnique({ where: { id }, select: { id: true, email: true, name: true, locale: true, deletedAt: true, defaultPaymentMethodId: true } });
}

/** A saved payment method's kind and details, and whose it is. Reads payment_methods (the payment-methods area's table). */
export function findPaymentMethodForEmail(db: Db, id: string) {
  return db.paymentMethod.findUnique({ where: { id }, select: { type: true, details: true, customerId: true } });
}

/** A plan's name and price. Reads plans (the billing area's table). */
export function findPlanForEmail(db: Db, id: string) {
  return db.plan.findUnique({ where: { id }, select: { name: true, amount: true, currency: true, interval: true, intervalCount: true } });
}

// ---------------------------------------------------------------- many messages at once (a batch of e-mail jobs)

export function findEmailsOfEvents(db: Db, merchantId: string, eventIds: string[]): Promise<Pick<Email, 'eventId'>[]> {
  return db.email.findMany({ where: { merchantId, eventId: { in: eventIds } }, select: { eventId: true } });
}

/** Events by id. Reads events (the events area's table). */
export function findEventsById(db: Db, ids: string[]) {
  return db.event.findMany({ where: { id: { in: ids } } });
}

const EMAIL_COLUMNS = [
  ['id', 'text'], ['merchant_id', 'text'], ['event_id', 'text'], ['kind', 'text'], ['recipient', 'text'], ['subject', 'text'], ['text', 'text'],
  ['html', 'text'], ['locale', 'text'], ['status', 'text'], ['transport', 'text'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'],
] as const;

/** Many messages in one statement, each made once per event (a second insert for an event changes nothing). */
export async function insertEmails(
  db: Db,
  rows: Pick<Email, 'id' | 'merchantId' | 'eventId' | 'kind' | 'recipient' | 'subject' | 'text' | 'html' | 'locale' | 'status' | 'transport' | 'createdAt'>[],
): Promise<void> {
  const now = new Date();
  await insertRows(
    rawQuery(db),
    'emails',
    EMAIL_COLUMNS,
    rows.map((e) => [e.id, e.merchantId, e.eventId, e.kind, e.recipient, e.subject, e.text, e.html, e.locale, e.status, e.transport, e.createdAt, now]),
    'ON CONFLICT (merchant_id, event_id) DO NOTHING',
  );
}

export function findCustomersForEmail(db: Db, ids: string[]) {
  return db.customer.findMany({ where: { id: { in: ids } }, select: { id: true, email: true, name: true, locale: true, deletedAt: true, defaultPaymentMethodId: true } });
}

export function findPaymentsForEmail(db: Db, ids: string[]) {
  return db.payment.findMany({ where: { id: { in: ids } }, select: { id: true, purpose: true, checkout: true, methodDetails: true } });
}

export function findSubscriptionsForEmail(db: Db, ids: string[]) {
  return db.subscription.findMany({ where: { id: { in: ids } }, select: { id: true, planId: true, paymentMethodId: true } });
}

export function findPlansForEmail(db: Db, ids: string[]) {
  return db.plan.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, amount: true, currency: true, interval: true, intervalCount: true } });
}

export function findPaymentMethodsForEmail(db: Db, ids: string[]) {
  return db.paymentMethod.findMany({ where: { id: { in: ids } }, select: { id: true, type: true, details: true, customerId: true } });
}
