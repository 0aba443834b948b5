// Renewals in batches (issue 23, section 5; docs/jobs.md "Batches").
//
// A run of due `subscription.cycle` jobs of one merchant is renewed set-wise: what
// cycleSubscription and the first attempt at its invoice do for one renewal — the period moved,
// the invoice issued and finalised, its payment reserved and claimed, the charge, its outcome —
// done for up to CLOCK_ADVANCE_BATCH_SIZE renewals at once, in a few transactions whatever their number:
//
//   1. renew: the subscriptions locked; for each plain renewal the invoice (open, numbered in due
//      order), its line, its payment reserved (`created`, as reserveAttempt), the subscription
//      moved, the events (invoice.created, invoice.finalized, subscription.updated,
//      payment.created), the next cycle job (and its invoice.upcoming notice), the payment's expiry
//      and the reserved charge's recovery; and the cycle jobs marked done. A kill -9 after this
//      commit is finished by the recovery jobs, as after one renewal's reservation.
//   2. the charges, CHARGE_CONCURRENCY at a time, each group claimed right before its processor
//      calls (one transaction: payments then invoices locked; a charge is claimed only while its
//      invoice is open, still collected automatically and charged by this payment, its customer not
//      deleted and its method still theirs — as attemptPayment and chargeInvoice check under the
//      same locks), the calls outside any transaction;
//   3. settle the successes: payments succeeded, invoices paid, payment.succeeded and invoice.paid,
//      the safety jobs cancelled. Anything else (a decline, a subscription whose state moved
//      meanwhile) is recorded one by one by the payments' own outcome path (dunning and all).
//
// Each renewal's business times are its own job's (the billing clock when it came due), as
// when it runs alone. A renewal that is not plain — trialing, paused, past due or unpaid, set to
// cancel at period end, with prorations waiting, a credit balance or a wallet to draw on, a free
// plan, no method to charge, a deleted customer, locked elsewhere, or whose period moved — is left
// to the caller, which runs its job one by one (cycleSubscription). The rows and events are the
// ones the one-by-one path writes (test/billing.renewals-batch.test.ts compares them).
import type { Customer, InvoiceItem, Payment, PaymentMethod, Plan, Subscription } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inRawTransaction, rawQuery } from '../../platform/db/raw.ts';
import { newId } from '../../platform/ids.ts';
import { MAX_AMOUNT } from '../../platform/money.ts';
import { Clock } from '../../platform/clock.ts';
import { cancelWaitingJobs, enqueueJobs, finishClaimedJobs, type NewJob } from '../../platform/jobs.ts';
import type { ChargeResult } from '../../platform/processor.ts';
import { previousAttributes, recordEvents, type NewEvent } from '../events/index.ts';
import {
  attemptRecoveryJob,
  chargeIfReserved,
  chargeSavedAttempt,
  EXPIRE_JOB,
  expiryJob,
  newPaymentRow,
  paymentToJSON,
  recordOutcome,
  RECOVER_JOB,
  type PaymentWithCustomer,
} from '../payments/index.ts';
import { claimFirstAttempts, insertPayments, lockCreatedPayments, markFirstAttemptsSucceeded } from '../payments/store.ts';
import { balancesToSettle } from '../customers/balance.ts';
import type { InvoiceWithLines } from './hooks.ts';
import { attemptPaymentOf, chooseMethod, INVOICE_CHARGE_JOB, invoiceNumber, invoiceToJSON, reservedChargeRecoveryJob } from './invoices.ts';
import { periodAt, type Interval } from './periods.ts';
import { periodKey, planLine, renewalJobs, subscriptionToJSON } from './subscriptions.ts';
import { renewalInvoice, renewsAt } from './upcoming.ts';
import * as store from './store.ts';

/**
 * How far after the first renewal of a batch its last may be due: less than anything a renewal
 * schedules (the next period of a daily plan, a retry a day after a decline, a checkout's 24 h
 * expiry), so no job of the batch's making comes due before a renewal it has still to make.
 */
export const BATCH_SPAN_MS = 86_400_000 - 1;
/** Charges of a batch claimed together and in flight at once (processor calls, outside any transaction). */
const CHARGE_CONCURRENCY = 25;

/** A due renewal: its cycle job (claimed by the caller) and the time it runs at on the merchant's clock. */
export interface DueRenewal {
  jobId: bigint;
  /** the job's due time (renewals are made, and numbered, in (runAt, jobId) order) */
  runAt: Date;
  subscriptionId: string;
  /** the period end the job was enqueued for (the job's payload) */
  periodEnd: number;
  /** the billing time it happens at (the job's due time in a clock advance) */
  at: Date;
}

/** The upcoming invoice of a plain renewal (no discount, tax, waiting line or item, credit or wallet to draw): upcoming.ts's, with nothing else to read. */
function plainRenewalInvoice(sub: Subscription, plan: Plan, at: Date) {
  return renewalInvoice({ sub, plan, coupon: null, taxRates: [], pending: [], items: [], creditBalance: 0n, walletBalance: 0n }, at);
}

/** One renewal issued by the batch's first transaction, to be charged. */
interface Issued {
  due: DueRenewal;
  invoice: InvoiceWithLines;
  /** reserved (`created`) by the first transaction; `processing` once its charge is claimed */
  payment: PaymentWithCustomer;
  method: PaymentMethod;
  /** the due time of the batch's last renewal */
  lastAt: Date;
}

/**
 * Renews set-wise (above) the plain renewals that lead `due` in due order ((runAt, jobId)) and
 * returns the others, from the first one that is not plain on, in due order: the caller runs that
 * one by one, then may batch the rest again — so every renewal is made in due order, and invoice
 * numbers are given out in that order, as one by one. The jobs of the renewals it made are marked
 * done with them.
 */
export async function renewBatch(ctx: Ctx, due: DueRenewal[]): Promise<DueRenewal[]> {
  if (due.length === 0) return [];
  const ordered = [...due].sort((a, b) => a.runAt.getTime() - b.runAt.getTime() || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
  const { issued, rest } = await issue(ctx, ordered);
  if (issued.length === 0) return rest;
  const results = await chargeAll(ctx, issued);
  await settle(ctx, issued, results);
  return rest;
}

// ---------------------------------------------------------------- 1. renew

async function issue(ctx: Ctx, due: DueRenewal[]): Promise<{ issued: Issued[]; rest: DueRenewal[] }> {
  const merchantId = ctx.merchant.id;
  return inRawTransaction(ctx.db, async (tx) => {
    const q = tx.raw;
    const subs = new Map((await store.lockRenewableSubscriptions(q, merchantId, due.map((d) => d.subscriptionId))).map((s) => [s.id, s]));
    const candidates = due.filter((d) => {
      const s = subs.get(d.subscriptionId);
      return s !== undefined && s.currentPeriodEnd.getTime() === d.periodEnd && d.at.getTime() >= d.periodEnd;
    });
    if (candidates[0] !== due[0]) return { issued: [], rest: due };
    const taken = candidates.map((d) => subs.get(d.subscriptionId)!);
    const ids = (f: (s: Subscription) => string | null) => [...new Set(taken.map(f).filter((x): x is string => x !== null))];
    const plans = new Map((await store.listPlansById(q, merchantId, ids((s) => s.planId))).map((p) => [p.id, p]));
    const customers = new Map((await store.listCustomersById(q, merchantId, ids((s) => s.customerId))).map((c) => [c.id, c]));
    const methodIds = [...new Set([...ids((s) => s.paymentMethodId), ...[...customers.values()].map((c) => c.defaultPaymentMethodId).filter((x): x is string => x !== null)])];
    const methods = new Map((await store.listPaymentMethodsById(q, merchantId, methodIds)).map((m) => [m.id, m]));
    const pending = await store.subscriptionsWithPendingLines(q, merchantId, taken.map((s) => s.id));
    const balances = await balancesToSettle(ctx, tx, ids((s) => s.customerId));
    // Customers with one-off items waiting (invoice-items.ts): their renewal takes them, one by one.
    const waiting = await store.customersWithWaitingItems(q, merchantId, ids((s) => s.customerId));

    // The plain renewals that lead, in due order (`due` is sorted): the first one that is not
    // plain, and everything after it, are the caller's.
    const plain: { d: DueRenewal; sub: Subscription; plan: Plan; customer: Customer; method: PaymentMethod }[] = [];
    for (const d of due) {
      const sub = candidates.includes(d) ? subs.get(d.subscriptionId)! : undefined;
      const plan = sub && plans.get(sub.planId);
      const customer = sub && customers.get(sub.customerId);
      if (!sub || !plan || plan.amount <= 0n || !customer || customer.deletedAt) break;
      if (pending.has(sub.id) || sub.applyWalletBalance || balances.has(`${customer.id}:${plan.currency}`) || waiting.has(`${customer.id}:${plan.currency}`)) break;
      // A discount or taxes to price: the one-by-one path's finalize prices them.
      if (sub.couponId || sub.defaultTaxRates.length > 0) break;
      // More than one invoice may bill (a price no request can set): the one-by-one path refuses
      // it visibly (subscriptions.ts renewOrCannot).
      if (plan.amount * BigInt(sub.quantity) > BigInt(MAX_AMOUNT)) break;
      const method = await chooseMethod(customer.id, sub.paymentMethodId ? methods.get(sub.paymentMethodId) : null, () =>
        customer.defaultPaymentMethodId ? methods.get(customer.defaultPaymentMethodId) : null,
      );
      if (!method) break;
      plain.push({ d, sub, plan, customer, method });
    }
    const rest = due.slice(plain.length);
    if (plain.length === 0) return { issued: [], rest };
    // Invoice numbers in due order, gap-free, as the renewals would take them one by one.
    const last = await store.takeInvoiceSeqs(q, merchantId, plain.length);
    const written = new Date(); // updated_at: real time, as Prisma's @updatedAt
    const lastAt = plain[plain.length - 1]!.d.at;

    const issued: Issued[] = [];
    const events: NewEvent[] = [];
    const jobs: NewJob[] = [];
    const moves: Parameters<typeof store.moveToNextPeriods>[2] = [];
    for (const [i, { d, sub, plan, customer, method }] of plain.entries()) {
      const now = d.at;
      const n = sub.periodIndex + 1;
      const period = periodAt(sub.billingAnchor, plan.interval as Interval, plan.intervalCount, n);
      const l = planLine(plan, period.start, period.end, sub.quantity);
      const invoiceId = newId('invoice');
      const line: InvoiceItem = {
        id: newId('invoice_line'),
        merchantId,
        subscriptionId: sub.id,
        invoiceId,
        description: l.description,
        periodStart: l.periodStart,
        periodEnd: l.periodEnd,
        amount: l.amount,
        proration: false,
        quantity: l.quantity ?? null,
        unitAmount: l.unitAmount ?? null,
        taxable: true,
        discountAmount: 0n,
        taxAmounts: [],
        createdAt: now,
      };
      const draft: InvoiceWithLines = {
        id: invoiceId,
        merchantId,
        customerId: sub.customerId,
        subscriptionId: sub.id,
        number: null,
        status: 'draft',
        billingReason: 'subscription_cycle',
        billingKey: periodKey(sub, n),
        currency: plan.currency,
        // A draft shows what it bills (no discount, tax or waiting line in a batched renewal).
        subtotal: l.amount,
        discountAmount: 0n,
        couponId: null,
        taxAmount: 0n,
        total: l.amount,
        amountFromWallet: 0n,
        creditApplied: 0n,
        creditedToBalance: 0n,
        amountDue: l.amount,
        amountPaid: 0n,
        attemptCount: 0,
        nextPaymentAttempt: null,
        firstFailedAt: null,
        paymentId: null,
        autoAdvance: true,
        lastPaymentErrorCode: null,
        lastPaymentErrorMessage: null,
        periodStart: period.start,
        periodEnd: period.end,
        dueDate: now,
        finalizedAt: null,
        paidAt: null,
        // One-off invoicing's columns (one-off.ts, credit-notes.ts): a renewal's are the defaults.
        collectionMethod: 'charge_automatically',
        daysUntilDue: null,
        hostedToken: null,
        overdueAt: null,
        prePaymentCreditNotesAmount: 0n,
        postPaymentCreditNotesAmount: 0n,
        voidedAt: null,
        createdAt: now,
        updatedAt: written,
        lines: [line],
      };
      const finalized: InvoiceWithLines = {
        ...draft,
        number: invoiceNumber(last - plain.length + 1 + i),
        status: 'open',
        subtotal: l.amount,
        total: l.amount,
        amountDue: l.amount,
        finalizedAt: now,
      };
      const row = newPaymentRow(merchantId, { id: newId('payment'), ...attemptPaymentOf(finalized, method, false) }, now);
      const created: PaymentWithCustomer = {
        id: row.id,
        merchantId,
        customerId: row.customerId,
        amount: BigInt(row.amount),
        currency: row.currency,
        checkoutToken: row.checkoutToken,
        expiresAt: row.expiresAt,
        checkout: row.checkout as Payment['checkout'],
        metadata: row.metadata as Payment['metadata'],
        status: 'created',
        method: null,
        methodDetails: null,
        failureCode: null,
        failureMessage: null,
        processorRef: null,
        completedAt: null,
        amountRefunded: 0n,
        attempts: 0,
        paymentMethodId: method.id,
        redirectUrl: null,
        cancelUrl: null,
        purpose: 'invoice',
        createdAt: now,
        updatedAt: written,
        customer,
      };
      const invoice: InvoiceWithLines = { ...finalized, paymentId: row.id, attemptCount: 1 };
      const moved: Subscription = {
        ...sub,
        periodIndex: n,
        currentPeriodStart: period.start,
        currentPeriodEnd: period.end,
        latestInvoiceId: invoiceId,
        updatedAt: written,
      };
      const base = ctx.runtime.config.publicBaseUrl;
      const { updated_at: _u, ...subPrev } = previousAttributes(subscriptionToJSON(sub) as never, subscriptionToJSON(moved) as never);
      events.push(
        { type: 'invoice.created', object: invoiceToJSON(draft, base), at: now },
        { type: 'invoice.finalized', object: invoiceToJSON({ ...finalized, paidAt: null }, base), previousAttributes: { status: 'draft', number: null }, at: now },
        { type: 'subscription.updated', object: subscriptionToJSON(moved), previousAttributes: subPrev, at: now },
        { type: 'payment.created', object: paymentToJSON(created, base), at: now },
      );
      jobs.push(
        ...renewalJobs(moved, plan),
        expiryJob(merchantId, row.id, row.expiresAt),
        // Due after the last renewal of the batch: no job of the batch's own making comes due
        // before a renewal it has still to make.
        reservedChargeRecoveryJob(ctx, invoiceId, row.id, lastAt),
      );
      moves.push({ id: sub.id, periodIndex: n, start: period.start, end: period.end, latestInvoiceId: invoiceId, updatedAt: written });
      issued.push({ due: d, invoice, payment: created, method, lastAt });
    }
    await store.insertInvoices(q, issued.map(({ invoice: { lines: _l, ...inv } }) => inv));
    await store.insertLines(q, issued.map((r) => r.invoice.lines[0]!));
    await insertPayments(q, issued.map(({ payment: { customer: _c, ...p } }) => p));
    await store.moveToNextPeriods(q, merchantId, moves);
    await recordEvents(tx, ctx, events);
    await enqueueJobs(tx, jobs);
    await finishClaimedJobs(tx, merchantId, issued.map((r) => r.due.jobId));
    return { issued, rest };
  });
}

// ---------------------------------------------------------------- 2. charge

/**
 * Each renewal's charge, CHARGE_CONCURRENCY at a time, each group claimed right before its calls
 * (claimGroup). null: not charged here — not claimable (its invoice no longer collected
 * automatically, its customer deleted: left as the change that stopped it left it; its method
 * removed: charged through the payments' own path, which fails it as `payment_method_detached`),
 * or an outcome that is unknown (the attempt's recovery finishes it).
 */
async function chargeAll(ctx: Ctx, issued: Issued[]): Promise<(ChargeResult | null)[]> {
  const results: (ChargeResult | null)[] = new Array(issued.length).fill(null);
  for (let from = 0; from < issued.length; from += CHARGE_CONCURRENCY) {
    const group = issued.slice(from, from + CHARGE_CONCURRENCY);
    const { claimed, detached } = await claimGroup(ctx, group);
    await Promise.all(
      group.map(async (r, k) => {
        if (claimed.has(r.payment.id)) {
          r.payment = { ...r.payment, status: 'processing', method: r.method.type, attempts: 1 };
          results[from + k] = await chargeSavedAttempt(ctx, r.payment, r.method);
        } else if (detached.has(r.payment.id)) {
          await chargeIfReserved({ ...ctx, clock: Clock.frozen(ctx.merchant, r.due.at) }, r.payment).catch((err: unknown) =>
            ctx.log.error({ err, payment_id: r.payment.id }, 'renewal batch: a removed method\'s payment not failed; its recovery job will'),
          );
        }
      }),
    );
  }
  return results;
}

/**
 * Claims the first attempt of a group's reserved payments in one transaction, locking payments
 * then invoices (the order of a payment's outcome): each only while its invoice is open, collected
 * automatically, charged by this payment and owed something, and its customer not deleted — and
 * its method still the customer's (else `detached`: the payments' own path fails it). A claimed
 * one is `processing` with its attempt's recovery job, as attemptPayment leaves it.
 */
async function claimGroup(ctx: Ctx, group: Issued[]): Promise<{ claimed: Set<string>; detached: Set<string> }> {
  const merchantId = ctx.merchant.id;
  // A raw transaction (BEGIN … COMMIT on one pooled connection): one per group, so the cheapest.
  return inRawTransaction(ctx.db, async (tx) => {
    const q = tx.raw;
    const reserved = await lockCreatedPayments(q, merchantId, group.map((r) => r.payment.id));
    const invoices = new Map((await store.lockInvoicesForCharge(q, merchantId, group.map((r) => r.invoice.id))).map((i) => [i.id, i]));
    const customers = new Map((await store.listCustomersById(q, merchantId, [...new Set(group.map((r) => r.invoice.customerId))])).map((c) => [c.id, c]));
    const methods = new Map((await store.listPaymentMethodsById(q, merchantId, [...new Set(group.map((r) => r.method.id))])).map((m) => [m.id, m]));
    const claimed = new Set<string>();
    const detached = new Set<string>();
    for (const r of group) {
      const inv = invoices.get(r.invoice.id);
      const chargeable =
        reserved.has(r.payment.id) &&
        inv?.status === 'open' &&
        inv.autoAdvance &&
        inv.paymentId === r.payment.id &&
        BigInt(inv.amountDue) > BigInt(inv.amountPaid) &&
        !customers.get(r.invoice.customerId)?.deletedAt;
      if (!chargeable) continue;
      if (methods.get(r.method.id)?.customerId === r.invoice.customerId) claimed.add(r.payment.id);
      else detached.add(r.payment.id);
    }
    const rows = group.filter((r) => claimed.has(r.payment.id));
    await claimFirstAttempts(q, merchantId, rows.map((r) => ({ id: r.payment.id, method: r.method.type })));
    await enqueueJobs(tx, rows.map((r) => attemptRecoveryJob(ctx, r.payment.id, 1, r.lastAt)));
    return { claimed, detached };
  });
}

// ---------------------------------------------------------------- 3. settle

/** Thrown inside the settling transaction when a row is not as the batch left it: the batch's outcomes are then recorded one by one. */
class MovedMeanwhile extends Error {}

async function settle(ctx: Ctx, issued: Issued[], results: (ChargeResult | null)[]): Promise<void> {
  const merchantId = ctx.merchant.id;
  const paid = issued.flatMap((r, i) => {
    const res = results[i];
    return res?.status === 'succeeded' ? [{ ...r, result: res }] : [];
  });
  const oneByOne: (Issued & { result: ChargeResult })[] = issued.flatMap((r, i) => {
    const res = results[i];
    return res && res.status !== 'succeeded' ? [{ ...r, result: res }] : [];
  });
  if (paid.length > 0) {
    try {
      await inRawTransaction(ctx.db, async (tx) => {
        const q = tx.raw;
        // The order a single outcome locks in: payments, then invoices, then subscriptions.
        const payments = await markFirstAttemptsSucceeded(
          q,
          merchantId,
          paid.map((p) => ({ id: p.payment.id, details: p.result.details ?? null, processorRef: p.result.processorRef, at: p.due.at })),
        );
        if (payments.length !== paid.length) throw new MovedMeanwhile('a payment of the batch is no longer processing its first attempt');
        const invoices = await store.markInvoicesPaid(q, merchantId, paid.map((p) => ({ id: p.invoice.id, paymentId: p.payment.id, at: p.due.at })));
        if (invoices.length !== paid.length) throw new MovedMeanwhile('an invoice of the batch is no longer open for its payment');
        const subs = await store.lockSubscriptionStatuses(q, merchantId, paid.map((p) => p.invoice.subscriptionId!));
        // An active subscription paid stays as it is (invoiceHooks.paid); any other takes the one-by-one path.
        if (subs.some((s) => s.status !== 'active')) throw new MovedMeanwhile('a subscription of the batch changed status meanwhile');
        const base = ctx.runtime.config.publicBaseUrl;
        const written = new Date();
        await recordEvents(
          tx,
          ctx,
          paid.flatMap((p) => {
            const payment: PaymentWithCustomer = {
              ...p.payment,
              status: 'succeeded',
              methodDetails: (p.result.details ?? null) as Payment['methodDetails'],
              processorRef: p.result.processorRef,
              completedAt: p.due.at,
              updatedAt: written,
            };
            const invoice: InvoiceWithLines = { ...p.invoice, status: 'paid', amountPaid: p.invoice.amountDue, paidAt: p.due.at, updatedAt: written };
            return [
              // No receipt of its own (transition in payments/index.ts): the invoice's is the one.
              { type: 'payment.succeeded' as const, object: paymentToJSON(payment, base), previousAttributes: { status: 'processing' }, at: p.due.at, email: false },
              { type: 'invoice.paid' as const, object: invoiceToJSON(invoice, base), previousAttributes: { status: 'open', paid_at: null }, at: p.due.at },
            ];
          }),
        );
        // Its safety work, unnecessary now: the attempt's recovery, the reserved charge's and the checkout's expiry.
        await cancelWaitingJobs(
          tx,
          paid.flatMap((p) => [
            { kind: RECOVER_JOB, key: `recover:${p.payment.id}:1` },
            { kind: EXPIRE_JOB, key: `expire:${p.payment.id}` },
            { kind: INVOICE_CHARGE_JOB, key: `recover:${p.payment.id}` },
          ]),
        );
      });
    } catch (err) {
      ctx.log.warn({ err: err instanceof Error ? err.message : String(err), renewals: paid.length }, 'renewal batch: recording the charges one by one');
      oneByOne.push(...paid);
    }
  }
  // Declines (dunning), and a batch whose rows moved: each through the payment's own outcome path.
  for (const r of oneByOne) {
    try {
      await recordOutcome({ ...ctx, clock: Clock.frozen(ctx.merchant, r.due.at) }, r.payment, r.result);
    } catch (err) {
      // The attempt stays processing: its recovery job (payment.recover) records it.
      ctx.log.error({ err, payment_id: r.payment.id }, 'renewal batch: outcome not recorded; the recovery job will finish it');
    }
  }
}

// ---------------------------------------------------------------- invoice.upcoming notices in batches

/** A due invoice.upcoming notice (its job, claimed by the caller). */
export interface DueNotice {
  jobId: bigint;
  subscriptionId: string;
  periodEnd: number;
  /** the billing time it happens at (the job's due time in a clock advance) */
  at: Date;
}

/**
 * Many invoice.upcoming notices of one merchant at once (noticeUpcomingRenewal for each, in a few
 * statements): a subscription that will no longer renew then gets none; a plain one (no waiting
 * lines, no credit balance or wallet to draw on) gets its event with the job marked done in one
 * transaction — the job's row is the lock, so a notice finished by another run meanwhile records
 * nothing. Returns the jobs of the others, to run one by one.
 */
export async function noticeUpcomingRenewals(ctx: Ctx, due: DueNotice[]): Promise<bigint[]> {
  if (due.length === 0) return [];
  const merchantId = ctx.merchant.id;
  const q = rawQuery(ctx.db);
  const subs = new Map((await store.listSubscriptionsById(ctx.db, [...new Set(due.map((d) => d.subscriptionId))])).map((s) => [s.id, s]));
  const live = due.filter((d) => {
    const s = subs.get(d.subscriptionId);
    return s !== undefined && renewsAt(s, d.periodEnd) && d.at.getTime() < d.periodEnd;
  });
  const taken = live.map((d) => subs.get(d.subscriptionId)!);
  const plans = new Map((taken.length ? await store.listPlansById(q, merchantId, [...new Set(taken.map((s) => s.planId))]) : []).map((p) => [p.id, p]));
  const pending = taken.length ? await store.subscriptionsWithPendingLines(q, merchantId, taken.map((s) => s.id)) : new Set<string>();
  const balances = await balancesToSettle(ctx, ctx.db, [...new Set(taken.map((s) => s.customerId))]);
  // Customers with one-off items waiting: their notice reads them (upcomingInvoice), one by one.
  const waiting = taken.length ? await store.customersWithWaitingItems(q, merchantId, [...new Set(taken.map((s) => s.customerId))]) : new Set<string>();
  const alone: bigint[] = [];
  const plain: { d: DueNotice; sub: Subscription; plan: Plan }[] = [];
  for (const d of live) {
    const sub = subs.get(d.subscriptionId)!;
    const plan = plans.get(sub.planId);
    if (!plan || pending.has(sub.id) || sub.applyWalletBalance || balances.has(`${sub.customerId}:${plan.currency}`) || waiting.has(`${sub.customerId}:${plan.currency}`) || sub.couponId || sub.defaultTaxRates.length > 0) {
      alone.push(d.jobId);
    } else plain.push({ d, sub, plan });
  }
  const finished = due.filter((d) => !alone.includes(d.jobId)).map((d) => d.jobId);
  await inRawTransaction(ctx.db, async (tx) => {
    const marked = new Set(await finishClaimedJobs(tx, merchantId, finished));
    await recordEvents(
      tx,
      ctx,
      plain
        .filter((p) => marked.has(p.d.jobId))
        .map((p) => ({ type: 'invoice.upcoming' as const, object: plainRenewalInvoice(p.sub, p.plan, p.d.at), at: p.d.at })),
    );
  });
  return alone;
}
