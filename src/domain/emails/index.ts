// Customer e-mails (docs/emails.md): what a billing system tells the customer — a receipt for a
// paid payment or invoice (with the invoice's PDF), a failed payment with a link to fix it (the
// portal), the end of a trial, an upcoming renewal (opt-in) — in the customer's language, text and HTML, through SMTP.
//
// The path of one message: recordEvent enqueues an `email.send` job keyed by the event in the
// event's own statement (src/domain/events/store.ts), for the event types that have a message;
// the job (this file's sendEventEmail) checks the merchant's switch, renders the message once and
// records it in `emails` (unique per event), then — outside any transaction — sends it through
// SMTP_URL. Without SMTP_URL a test-mode merchant's message stays in the dev mailbox
// (GET /v1/test-helpers/emails); a live merchant's is recorded as not sent. A refused or failed
// send throws: the job is retried with backoff, and the row keeps the attempts and the last error.
import type { Email, EmailSettings, Event } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { newId } from '../../platform/ids.ts';
import { mailerFor } from '../../platform/mailer.ts';
import { finishClaimedJobs } from '../../platform/jobs.ts';
import { formatMoney } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { email as emailAddress, listQuery, parse, z } from '../../platform/validation.ts';
import { findSubscription } from '../billing/store.ts';
import { requireTestMode } from '../clock/index.ts';
import { EMAIL_JOB, type EventType } from '../events/types.ts';
import { findEvent } from '../events/store.ts';
import { emailLinkKey, emailLinkUrl, type EmailLinkTarget } from './links.ts';
import {
  countEmails,
  findCustomerForEmail,
  findCustomersForEmail,
  findEmailOfEvent,
  findEmails,
  findEmailsOfEvents,
  findEmailSettings,
  findEventsById,
  findLinkMerchant,
  findPaymentForEmail,
  findPaymentMethodForEmail,
  findPaymentMethodsForEmail,
  findPaymentsForEmail,
  findPlanForEmail,
  findPlansForEmail,
  findSubscriptionsForEmail,
  insertEmailOnce,
  insertEmails,
  updateEmail,
  upsertEmailSettings,
} from './store.ts';
import { DECLINE_REASONS, EMAIL_LOCALES, fill, METHOD_NAMES, renderEmail, type EmailLocale, type MessageType, type MessageValues } from './templates.ts';

export { EMAIL_JOB };
export { verifyEmailLink, EMAIL_LINK_TTL_MS, type OpenedEmailLink } from './links.ts';

/** Delays before the next try of a send the SMTP server refused or that failed; after the last the message is `failed`. */
export const EMAIL_RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 3_600_000, 6 * 3_600_000];

// ---------------------------------------------------------------- settings

/** The switches, by their API names; `invoices` is for send_invoice invoices (the invoice to pay, with its hosted page). */
export const EMAIL_SETTINGS = ['receipts', 'failed_payments', 'trial_ending', 'upcoming_renewal', 'invoices'] as const;
export type EmailSetting = (typeof EMAIL_SETTINGS)[number];

const DEFAULTS: Record<EmailSetting, boolean> = { receipts: true, failed_payments: true, trial_ending: true, upcoming_renewal: false, invoices: true };

export const emailSettingsUpdate = z
  .strictObject({
    receipts: z.boolean().optional().meta({ description: 'Receipts for paid payments and invoices.' }),
    failed_payments: z.boolean().optional().meta({ description: 'A failed invoice payment, with a link to the portal to fix it.' }),
    trial_ending: z.boolean().optional().meta({ description: 'The end of a trial, three days before (subscription.trial_will_end).' }),
    upcoming_renewal: z.boolean().optional().meta({ description: 'An upcoming renewal, three days before it (invoice.upcoming): plan, date, amount, method. Off by default.' }),
    invoices: z.boolean().optional().meta({ description: 'Invoices of collection method send_invoice: the invoice to pay, with the link to its hosted page.' }),
  })
  .meta({ id: 'EmailSettingsUpdate' });
export type EmailSettingsUpdateInput = z.input<typeof emailSettingsUpdate>;

export type EmailSettingsJSON = { object: 'email_settings' } & Record<EmailSetting, boolean>;

function settingsOf(row: EmailSettings | null): Record<EmailSetting, boolean> {
  if (!row) return { ...DEFAULTS };
  return { receipts: row.receipts, failed_payments: row.failedPayments, trial_ending: row.trialEnding, upcoming_renewal: row.upcomingRenewal, invoices: row.invoices };
}

export async function getEmailSettings(ctx: Ctx): Promise<EmailSettingsJSON> {
  return { object: 'email_settings', ...settingsOf(await findEmailSettings(ctx.db, ctx.merchant.id)) };
}

export async function updateEmailSettings(ctx: Ctx, input: EmailSettingsUpdateInput): Promise<EmailSettingsJSON> {
  const data = parse(emailSettingsUpdate, input);
  const row = await upsertEmailSettings(ctx.db, ctx.merchant.id, {
    receipts: data.receipts,
    failedPayments: data.failed_payments,
    trialEnding: data.trial_ending,
    upcomingRenewal: data.upcoming_renewal,
    invoices: data.invoices,
  });
  return { object: 'email_settings', ...settingsOf(row) };
}

// ---------------------------------------------------------------- the dev mailbox

export const emailListQuery = z.strictObject({
  to: emailAddress.optional().meta({ description: 'Only messages to this address.', example: 'jane@example.com' }),
  ...listQuery,
});
export type EmailListQuery = z.output<typeof emailListQuery>;

export function emailToJSON(e: Email) {
  return {
    id: e.id,
    object: 'email' as const,
    kind: e.kind as EmailKind,
    to: e.recipient,
    subject: e.subject,
    text: e.text,
    html: e.html,
    locale: e.locale as EmailLocale,
    status: e.status as EmailStatus,
    attempts: e.attempts,
    last_error: e.lastError,
    event_id: e.eventId,
    created_at: e.createdAt.toISOString(),
    sent_at: e.sentAt?.toISOString() ?? null,
  };
}

export const EMAIL_KINDS = ['receipt', 'failed_payment', 'trial_ending', 'upcoming_renewal', 'invoice'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];
export const EMAIL_STATUSES = ['sending', 'retrying', 'sent', 'kept', 'failed', 'not_sent'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/** GET /v1/test-helpers/emails: the merchant's customer e-mails, newest first (test mode only). */
export async function listEmails(ctx: Ctx, q: EmailListQuery): Promise<Page<Email>> {
  requireTestMode(ctx.merchant);
  const filter = q.to ? { recipient: q.to } : {};
  return paginate(
    q,
    ({ where, ...page }) => findEmails(ctx.db, { AND: [where, filter] }, page),
    () => countEmails(ctx.db, filter),
  );
}

// ---------------------------------------------------------------- sending

interface MessageSpec {
  type: MessageType;
  kind: EmailKind;
  setting: EmailSetting;
}

/** The message of each event type that has one (EMAIL_EVENT_TYPES in events/types.ts lists the same types). */
const MESSAGES: Partial<Record<EventType, MessageSpec>> = {
  'payment.succeeded': { type: 'payment_receipt', kind: 'receipt', setting: 'receipts' },
  'invoice.paid': { type: 'invoice_receipt', kind: 'receipt', setting: 'receipts' },
  'invoice.payment_failed': { type: 'invoice_payment_failed', kind: 'failed_payment', setting: 'failed_payments' },
  'subscription.trial_will_end': { type: 'trial_will_end', kind: 'trial_ending', setting: 'trial_ending' },
  'invoice.upcoming': { type: 'upcoming_renewal', kind: 'upcoming_renewal', setting: 'upcoming_renewal' },
  'invoice.finalized': { type: 'invoice_to_pay', kind: 'invoice', setting: 'invoices' },
};

export type SendOutcome = 'no_message' | 'disabled' | 'already_sent' | 'sent' | 'kept' | 'not_sent';

const DONE: ReadonlySet<string> = new Set(['sent', 'kept', 'not_sent']);

/**
 * The `email.send` job: the message of one event. Idempotent: the message is rendered and
 * recorded once per event (a second run finds the row); a send that failed is sent again from the
 * row. Throws when the SMTP server refused or could not be reached (the job retries; `last`: no
 * retry follows, the row becomes `failed`).
 */
export async function sendEventEmail(ctx: Ctx, eventId: string, opts: { last: boolean }): Promise<SendOutcome> {
  let row = await findEmailOfEvent(ctx.db, ctx.merchant.id, eventId);
  if (row && DONE.has(row.status)) return 'already_sent';
  if (!row) {
    const event = await findEvent(ctx.db, eventId);
    const spec = event ? MESSAGES[event.type as EventType] : undefined;
    if (!event || !spec) return 'no_message';
    const settings = settingsOf(await findEmailSettings(ctx.db, ctx.merchant.id));
    if (!settings[spec.setting]) return 'disabled';
    const composed = await compose(ctx, event, spec);
    if (!composed) return 'no_message';
    const mailer = mailerFor(ctx.runtime.config);
    const transport = mailer ? 'smtp' : ctx.merchant.mode === 'test' ? 'mailbox' : 'none';
    row = await insertEmailOnce(ctx.db, {
      id: newId('email'),
      merchantId: ctx.merchant.id,
      eventId,
      kind: spec.kind,
      recipient: composed.to,
      locale: composed.locale,
      ...composed.rendered,
      status: transport === 'smtp' ? 'sending' : transport === 'mailbox' ? 'kept' : 'not_sent',
      transport,
      createdAt: event.createdAt,
    });
    if (transport === 'none') ctx.log.warn({ event_id: eventId, email_id: row.id }, 'customer e-mail not sent: SMTP_URL is not set');
    if (DONE.has(row.status)) return row.status as SendOutcome;
  }
  const mailer = mailerFor(ctx.runtime.config);
  if (!mailer) {
    // Recorded for SMTP, which is no longer configured: test mode keeps it in the mailbox.
    await updateEmail(ctx.db, row.id, ctx.merchant.mode === 'test' ? { status: 'kept', transport: 'mailbox' } : { status: 'not_sent', transport: 'none' });
    return ctx.merchant.mode === 'test' ? 'kept' : 'not_sent';
  }
  try {
    const info = await mailer.send({
      from: ctx.runtime.config.EMAIL_FROM,
      to: row.recipient,
      subject: row.subject,
      text: row.text,
      html: row.html,
      headers: { 'X-Billing-Event-Id': row.eventId },
    });
    // Real time: when the SMTP server took it.
    await updateEmail(ctx.db, row.id, { status: 'sent', attempts: { increment: 1 }, messageId: info.messageId, lastError: null, sentAt: new Date() });
    return 'sent';
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 1000);
    await updateEmail(ctx.db, row.id, { status: opts.last ? 'failed' : 'retrying', attempts: { increment: 1 }, lastError: message });
    throw err;
  }
}

/**
 * Many `email.send` jobs of one merchant at once (a clock advance's run of them: JobKind.batch):
 * the messages of their events composed from records read for all of them (a few statements
 * instead of a few per message) and recorded in one statement, and the jobs marked done. Returns
 * the jobs to run one by one: an event whose message exists already (a retry), and every message
 * to send through SMTP (recorded here as `sending`; the job sends it from its row, with its own
 * retries). Without SMTP a message is final when recorded (the dev mailbox, or not sent).
 */
export async function sendEventEmails(ctx: Ctx, jobs: { jobId: bigint; eventId: string }[]): Promise<bigint[]> {
  const merchantId = ctx.merchant.id;
  const made = new Set((await findEmailsOfEvents(ctx.db, merchantId, jobs.map((j) => j.eventId))).map((e) => e.eventId));
  const todo = jobs.filter((j) => !made.has(j.eventId));
  const events = new Map((await findEventsById(ctx.db, todo.map((j) => j.eventId))).map((e) => [e.id, e]));
  const settings = settingsOf(await findEmailSettings(ctx.db, merchantId));
  const wanted = todo.flatMap((j) => {
    const event = events.get(j.eventId);
    const spec = event ? MESSAGES[event.type as EventType] : undefined;
    return event && spec && settings[spec.setting] ? [{ ...j, event, spec }] : [];
  });
  const src = await preloaded(ctx, wanted.map((w) => w.event));
  const transport = mailerFor(ctx.runtime.config) ? 'smtp' : ctx.merchant.mode === 'test' ? 'mailbox' : 'none';
  const rows = [];
  for (const w of wanted) {
    const composed = await compose(ctx, w.event, w.spec, src);
    if (!composed) continue;
    rows.push({
      id: newId('email'),
      merchantId,
      eventId: w.eventId,
      kind: w.spec.kind,
      recipient: composed.to,
      locale: composed.locale,
      ...composed.rendered,
      status: transport === 'smtp' ? 'sending' : transport === 'mailbox' ? 'kept' : 'not_sent',
      transport,
      createdAt: w.event.createdAt,
    });
  }
  await insertEmails(ctx.db, rows);
  if (transport === 'none' && rows.length > 0) ctx.log.warn({ emails: rows.length }, 'customer e-mails not sent: SMTP_URL is not set');
  const toSend = new Set(transport === 'smtp' ? rows.map((r) => r.eventId) : []);
  const alone = new Set(jobs.filter((j) => made.has(j.eventId) || toSend.has(j.eventId)).map((j) => j.jobId));
  await finishClaimedJobs(ctx.db, merchantId, jobs.filter((j) => !alone.has(j.jobId)).map((j) => j.jobId));
  return jobs.filter((j) => alone.has(j.jobId)).map((j) => j.jobId);
}

interface Composed {
  to: string;
  locale: EmailLocale;
  rendered: { subject: string; text: string; html: string };
}

const localeOf = (v: unknown): EmailLocale | undefined => (EMAIL_LOCALES as readonly unknown[]).includes(v) ? (v as EmailLocale) : undefined;

const INTERVALS: Record<EmailLocale, Record<string, [string, string]>> = {
  en: { day: ['day', 'days'], week: ['week', 'weeks'], month: ['month', 'months'], year: ['year', 'years'] },
  fr: { day: ['jour', 'jours'], week: ['semaine', 'semaines'], month: ['mois', 'mois'], year: ['an', 'ans'] },
};

function price(amount: bigint, currency: string, interval: string, count: number, locale: EmailLocale): string {
  const [one, many] = INTERVALS[locale][interval] ?? [interval, interval];
  return `${formatMoney(amount, currency, locale)} / ${count > 1 ? `${count} ${many}` : one}`;
}

/** The recipient, language and rendered message of an event; null when there is nobody to tell (no customer, deleted) or nothing to say (a zero invoice). */
/**
 * What composing a message reads, one record at a time (sourcesOf: a job's own reads) or from
 * records read for many messages at once (preloaded: a batch of e-mail jobs).
 */
interface Sources {
  customer(id: string): Promise<CustomerForEmail | null>;
  merchantName(): Promise<string>;
  payment(id: string): Promise<PaymentForEmail | null>;
  subscription(id: string): Promise<{ planId: string; paymentMethodId: string | null } | null>;
  plan(id: string): Promise<PlanForEmail | null>;
  method(id: string): Promise<MethodForEmail | null>;
  link(target: EmailLinkTarget, locale: EmailLocale): Promise<string>;
}
type CustomerForEmail = NonNullable<Awaited<ReturnType<typeof findCustomerForEmail>>>;
type PaymentForEmail = NonNullable<Awaited<ReturnType<typeof findPaymentForEmail>>>;
type PlanForEmail = NonNullable<Awaited<ReturnType<typeof findPlanForEmail>>>;
type MethodForEmail = NonNullable<Awaited<ReturnType<typeof findPaymentMethodForEmail>>>;

function sourcesOf(ctx: Ctx): Sources {
  return {
    customer: (id) => findCustomerForEmail(ctx.db, id),
    merchantName: async () => (await findLinkMerchant(ctx.runtime.prisma, ctx.merchant.id))?.name ?? '',
    payment: (id) => findPaymentForEmail(ctx.db, id),
    subscription: (id) => findSubscription(ctx.db, id),
    plan: (id) => findPlanForEmail(ctx.db, id),
    method: (id) => findPaymentMethodForEmail(ctx.db, id),
    link: (target, locale) => emailLinkUrl(ctx, target, locale),
  };
}

/** Sources for the messages of `events`, read in a few statements for all of them. */
async function preloaded(ctx: Ctx, events: Event[]): Promise<Sources> {
  const objects = events.map((e) => (e.data as { object?: Record<string, unknown> }).object ?? {});
  const str = (v: unknown): v is string => typeof v === 'string';
  const uniq = (xs: unknown[]) => [...new Set(xs.filter(str))];
  const paymentIds = uniq(events.map((e, i) => objects[i]!.payment_id ?? (e.type.startsWith('payment.') ? objects[i]!.id : null)));
  const subIds = uniq(events.map((e, i) => (e.type.startsWith('subscription.') ? objects[i]!.id : objects[i]!.subscription_id)));
  const [customers, payments, subs, merchant, key] = await Promise.all([
    findCustomersForEmail(ctx.db, uniq(objects.map((o) => o.customer_id))),
    paymentIds.length ? findPaymentsForEmail(ctx.db, paymentIds) : [],
    subIds.length ? findSubscriptionsForEmail(ctx.db, subIds) : [],
    findLinkMerchant(ctx.runtime.prisma, ctx.merchant.id),
    emailLinkKey(ctx),
  ]);
  const methodIds = uniq([...subs.map((s) => s.paymentMethodId), ...customers.map((c) => c.defaultPaymentMethodId)]);
  const [plans, methods] = await Promise.all([
    findPlansForEmail(ctx.db, uniq(subs.map((s) => s.planId))),
    methodIds.length ? findPaymentMethodsForEmail(ctx.db, methodIds) : [],
  ]);
  const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((r) => [r.id, r]));
  const [c, p, s, pl, m] = [byId(customers), byId(payments), byId(subs), byId(plans), byId(methods)];
  return {
    customer: async (id) => c.get(id) ?? null,
    merchantName: async () => merchant?.name ?? '',
    payment: async (id) => p.get(id) ?? null,
    subscription: async (id) => s.get(id) ?? null,
    plan: async (id) => pl.get(id) ?? null,
    method: async (id) => m.get(id) ?? null,
    link: (target, locale) => emailLinkUrl(ctx, target, locale, new Date(), key),
  };
}

async function compose(ctx: Ctx, event: Event, spec: MessageSpec, src: Sources = sourcesOf(ctx)): Promise<Composed | null> {
  const o = (event.data as { object?: Record<string, unknown> }).object ?? {};
  const customer = typeof o.customer_id === 'string' ? await src.customer(o.customer_id) : null;
  if (!customer || customer.deletedAt || !customer.email) return null;
  const merchantName = await src.merchantName();
  // The checkout's language when the event has a checkout that names one (its payment's), else the
  // customer's `locale`, else English (docs/emails.md, "Language").
  const paymentId = typeof o.payment_id === 'string' ? o.payment_id : event.type.startsWith('payment.') && typeof o.id === 'string' ? o.id : null;
  const payment = paymentId ? await src.payment(paymentId) : null;
  const locale = localeOf((payment?.checkout as { locale?: unknown } | null)?.locale) ?? localeOf(customer.locale) ?? 'en';
  const day = (iso: unknown) => (typeof iso === 'string' ? new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(iso)) : '');
  const money = (amount: unknown, currency: unknown) => (typeof amount === 'number' && typeof currency === 'string' ? formatMoney(amount, currency, locale) : '');
  const values: MessageValues = { merchant: merchantName, customer_name: customer.name ?? customer.email };
  let link: string | undefined;
  const planOf = async (subscriptionId: unknown) => {
    const sub = typeof subscriptionId === 'string' ? await src.subscription(subscriptionId) : null;
    return sub ? src.plan(sub.planId) : null;
  };
  switch (spec.type) {
    case 'payment_receipt': {
      // An invoice's payment: its receipt is the invoice's (invoice.paid, with the PDF).
      if (!payment || payment.purpose === 'invoice') return null;
      values.amount = money(o.amount, o.currency);
      values.date = day(event.createdAt.toISOString());
      values.reference = String(o.id ?? '');
      const m = o.payment_method as { type?: string; card?: { brand?: string; last4?: string }; mobile_money?: { phone?: string } } | null;
      if (m?.type === 'card' && m.card) values.method = fill(METHOD_NAMES[locale].card, { brand: capitalise(m.card.brand ?? ''), last4: m.card.last4 ?? '' });
      else if (m?.type === 'mobile_money' && m.mobile_money) values.method = fill(METHOD_NAMES[locale].mobile_money, { last4: (m.mobile_money.phone ?? '').slice(-4) });
      break;
    }
    case 'upcoming_renewal': {
      // The renewal's invoice preview: nothing to announce when it will charge nothing.
      if (typeof o.amount_due !== 'number' || o.amount_due <= 0) return null;
      const sub = typeof o.subscription_id === 'string' ? await src.subscription(o.subscription_id) : null;
      values.plan = sub ? ((await src.plan(sub.planId))?.name ?? '') : '';
      values.amount = money(o.amount_due, o.currency);
      values.date = day(o.next_payment_attempt ?? o.period_start);
      // The method the renewal will charge: the subscription's own while still the customer's, else the customer's default.
      const own = sub?.paymentMethodId ? await src.method(sub.paymentMethodId) : null;
      const method = own?.customerId === customer.id ? own : customer.defaultPaymentMethodId ? await src.method(customer.defaultPaymentMethodId) : null;
      if (method?.customerId === customer.id) values.method = methodName(method.type, method.details, locale);
      link = await src.link({ kind: 'portal', customerId: customer.id }, locale);
      break;
    }
    case 'invoice_receipt': {
      if (typeof o.amount_paid !== 'number' || o.amount_paid <= 0) return null;
      values.amount = money(o.amount_paid, o.currency);
      values.number = String(o.number ?? o.id);
      values.date = day(o.paid_at ?? event.createdAt.toISOString());
      values.plan = (await planOf(o.subscription_id))?.name ?? '';
      link = await src.link({ kind: 'pdf', invoiceId: String(o.id) }, locale);
      break;
    }
    case 'invoice_payment_failed': {
      const remaining = typeof o.amount_remaining === 'number' ? o.amount_remaining : o.amount_due;
      values.amount = money(remaining, o.currency);
      values.number = String(o.number ?? o.id);
      const code = (o.last_payment_error as { code?: string } | null)?.code ?? '';
      values.reason = DECLINE_REASONS[locale][code] ?? DECLINE_REASONS[locale].other;
      values.next_attempt = day(o.next_payment_attempt);
      link = await src.link({ kind: 'portal', customerId: customer.id }, locale);
      break;
    }
    case 'invoice_to_pay': {
      // A send_invoice invoice: what it asks, by when, and its hosted page (which does not expire).
      if (o.collection_method !== 'send_invoice' || typeof o.hosted_invoice_url !== 'string' || typeof o.amount_due !== 'number' || o.amount_due <= 0) return null;
      values.amount = money(o.amount_due, o.currency);
      values.number = String(o.number ?? o.id);
      values.date = day(o.due_date);
      link = o.hosted_invoice_url;
      break;
    }
    case 'trial_will_end': {
      const plan = await planOf(o.id);
      values.plan = plan?.name ?? '';
      values.price = plan ? price(plan.amount, plan.currency, plan.interval, plan.intervalCount, locale) : '';
      values.date = day(o.trial_end);
      link = await src.link({ kind: 'portal', customerId: customer.id }, locale);
      break;
    }
  }
  return { to: customer.email, locale, rendered: renderEmail(spec.type, locale, values, link) };
}

const capitalise = (s: string) => (s ? s[0]!.toUpperCase() + s.slice(1) : s);

/** A saved method as the e-mails name it ("Visa ending in 4242"); '' when its details say too little. */
function methodName(type: string, details: unknown, locale: EmailLocale): string {
  const d = (details ?? {}) as { card?: { brand?: string; last4?: string }; mobile_money?: { phone_last4?: string } };
  if (type === 'card' && d.card?.last4) return fill(METHOD_NAMES[locale].card, { brand: capitalise(d.card.brand ?? ''), last4: d.card.last4 });
  if (type === 'mobile_money' && d.mobile_money?.phone_last4) return fill(METHOD_NAMES[locale].mobile_money, { last4: d.mobile_money.phone_last4 });
  return '';
}

