// Plans, subscriptions and invoices over GraphQL: the same domain functions as /v1/plans,
// /v1/subscriptions and /v1/invoices, the same list filters (through the REST query schemas) and
// the same error codes, as data.
import * as plans from '../domain/billing/plans.ts';
import * as schema from '../domain/billing/schema.ts';
import * as subs from '../domain/billing/subscriptions.ts';
import * as invoices from '../domain/billing/invoices.ts';
import * as upcoming from '../domain/billing/upcoming.ts';
import { INTERVALS } from '../domain/billing/periods.ts';
import type { InvoiceItem, Payment as PaymentRow } from '../generated/prisma/client.ts';
import { formatMoney } from '../platform/money.ts';
import { NotFoundError, PaymentFailedError, StateError } from '../platform/errors.ts';
import { builder, connectionComplexity, nodeKind, type GraphQLContext } from './builder.ts';
import { COMMON_ERRORS, ErrorInterface } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, PHASED, nestedConnection, orNull, requestLoader, toConnection } from './helpers.ts';
import { Payment } from './payments.ts';
import { Coupon, TaxRate } from './pricing.ts';
import * as coupons from '../domain/pricing/coupons.ts';
import * as taxRates from '../domain/pricing/tax-rates.ts';
import type { LineTax } from '../domain/pricing/rules.ts';


const PlanInterval = builder.enumType('PlanInterval', { values: INTERVALS });

/** The merchant's key for signed PDF links, read once per request (invoices' and credit notes' pdfUrl). */
export function pdfSigningKey(gctx: GraphQLContext): Promise<Buffer> {
  return requestLoader<string, Buffer>(gctx, 'Merchant.signingKey', (ids) => Promise.all(ids.map(() => invoices.signingKey(gctx.ctx)))).load(gctx.ctx.merchant.id);
}

export const Plan = builder.prismaNode('Plan', {
  id: { field: 'id' },
  description: 'A price per billing interval. Archived plans (active false) take no new subscriptions.',
  fields: (t) => ({
    name: t.exposeString('name'),
    amount: t.field({ type: 'Money', description: 'Price per period, smallest currency unit.', resolve: (p) => p.amount }),
    amountFormatted: t.string({ resolve: (p) => formatMoney(p.amount, p.currency) }),
    currency: t.exposeString('currency'),
    interval: t.field({ type: PlanInterval, resolve: (p) => p.interval as (typeof INTERVALS)[number] }),
    intervalCount: t.exposeInt('intervalCount'),
    trialPeriodDays: t.exposeInt('trialPeriodDays'),
    active: t.exposeBoolean('active'),
    applyWalletBalance: t.exposeBoolean('applyWalletBalance'),
    metadata: t.field({ type: 'JSON', resolve: (p) => p.metadata }),
    archivedAt: t.expose('archivedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});
nodeKind('plan', Plan);

const PlanConnection = connectionType(Plan, 'Plan');

builder.queryFields((t) => ({
  plan: t.field({ type: Plan, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(plans.getPlan(ctx, String(id))) }),
  plans: t.field({
    type: PlanConnection,
    description: 'Plans, newest first.',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      active: t.arg.boolean({ description: 'true: taking new subscriptions; false: archived.' }),
      search: t.arg.string({ description: plans.PLAN_SEARCH_DESCRIPTION }),
    },
    resolve: async (_, { active, ...a }, { ctx }) =>
      toConnection(await plans.listPlans(ctx, listArgs(plans.planListQuery, { ...a, active: active === null || active === undefined ? undefined : String(active) }))),
  }),
}));

const CreatePlanInput = builder.inputType('CreatePlanInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    amount: t.field({ type: 'Money', required: true, description: 'Price per period; 0 for a free plan.' }),
    currency: t.string({ required: true }),
    interval: t.field({ type: PlanInterval, required: true }),
    intervalCount: t.int({ description: 'Default 1; a period is at most one year.' }),
    trialPeriodDays: t.int({ description: 'Default trial for new subscriptions (0 to 730).' }),
    applyWalletBalance: t.boolean({ description: "Default of new subscriptions: invoices draw from the customer's wallet first." }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const ArchivePlanInput = builder.inputType('ArchivePlanInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});

builder.mutationFields((t) => ({
  createPlan: t.field({
    type: Plan,
    errors: { types: COMMON_ERRORS, dataField: { name: 'plan' }, result: { name: 'CreatePlanSuccess' }, union: { name: 'CreatePlanResult' } },
    args: { input: t.arg({ type: CreatePlanInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createPlan', input, (ctx, fields) => plans.createPlan(ctx, domainInput(plans.planCreate, fields))),
  }),
  archivePlan: t.field({
    type: Plan,
    description: 'No new subscriptions on the plan; existing ones go on.',
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'plan' }, result: { name: 'ArchivePlanSuccess' }, union: { name: 'ArchivePlanResult' } },
    args: { input: t.arg({ type: ArchivePlanInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'archivePlan', input, (ctx, { id }) => plans.archivePlan(ctx, id)),
  }),
}));

// ---------------------------------------------------------------- subscriptions and invoices

const SubscriptionStatus = builder.enumType('SubscriptionStatus', { values: schema.SUBSCRIPTION_STATUSES });
const InvoiceStatus = builder.enumType('InvoiceStatus', { values: schema.INVOICE_STATUSES });
const InvoiceBillingReason = builder.enumType('InvoiceBillingReason', { values: schema.BILLING_REASONS });
const ProrationBehavior = builder.enumType('ProrationBehavior', {
  description:
    'On a plan change: create_prorations (credit and charge for the rest of the period on the next invoice), always_invoice (invoice them now), none (the new price from the next period).',
  values: schema.PRORATION_BEHAVIORS,
});

/** Lines in the order REST shows them (the store's: plan lines, then prorations; each by creation, amount, id). */
const withLines = invoices.INVOICE_LINES;

type Line = InvoiceItem & { currency: string };

const InvoiceLine = builder.objectRef<Line>('InvoiceLine').implement({
  description: 'A line of an invoice: a period of a plan, or a proration (credit for unused time, charge for the rest of the period).',
  fields: (t) => ({
    id: t.exposeID('id'),
    description: t.exposeString('description'),
    periodStart: t.expose('periodStart', { type: 'DateTime' }),
    periodEnd: t.expose('periodEnd', { type: 'DateTime' }),
    amount: t.field({ type: 'Money', description: 'Negative for a credit.', resolve: (l) => l.amount }),
    amountFormatted: t.string({ resolve: (l) => formatMoney(l.amount, l.currency) }),
    proration: t.exposeBoolean('proration'),
    quantity: t.exposeInt('quantity', { nullable: true, description: 'Units billed (plan lines, one-off items and prorations); null for a carried credit.' }),
    unitAmount: t.field({ type: 'Money', nullable: true, description: 'Price of one unit on a plan line or a one-off item (amount = unitAmount × quantity); null on prorations and credits.', resolve: (l) => l.unitAmount }),
    discountAmount: t.field({ type: 'Money', description: "This line's share of the invoice's discount (negative on a credit line when the discount is negative).", resolve: (l) => l.discountAmount }),
    taxAmounts: t.field({ type: [InvoiceLineTax], resolve: (l) => (l.taxAmounts ?? []) as unknown as LineTax[] }),
  }),
});

const InvoiceLineTax = builder.objectRef<LineTax>('InvoiceLineTax').implement({
  description: "One tax of a line: on the line amount after its discount share, rounded half away from zero.",
  fields: (t) => ({
    taxRateId: t.exposeID('tax_rate'),
    amount: t.field({ type: 'Money', resolve: (x) => BigInt(x.amount) }),
    inclusive: t.exposeBoolean('inclusive', { description: 'Contained in the line amount (not added to the total).' }),
  }),
});

const PaymentError = builder.objectRef<invoices.PaymentError>('PaymentError').implement({
  description: "Why a charge failed (an invoice's lastPaymentError).",
  fields: (t) => ({
    code: t.exposeString('code', { description: 'card_declined, insufficient_funds, no_payment_method, payment_expired …' }),
    message: t.exposeString('message'),
  }),
});

export const Invoice = builder.prismaNode('Invoice', {
  id: { field: 'id' },
  // Every invoice this schema loads carries its lines (the domain functions include them too).
  include: withLines,
  description: 'draft → open → paid | void | uncollectible. Numbered (INV-000123) when finalised.',
  fields: (t) => ({
    customer: t.relation('customer'),
    subscription: t.relation('subscription', { nullable: true }),
    number: t.exposeString('number', { nullable: true, description: 'INV-000123; null while draft.' }),
    status: t.field({ type: InvoiceStatus, resolve: (i) => i.status as schema.InvoiceStatus }),
    billingReason: t.field({ type: InvoiceBillingReason, resolve: (i) => i.billingReason as schema.BillingReason }),
    currency: t.exposeString('currency'),
    lines: t.field({ type: [InvoiceLine], resolve: (i) => i.lines.map((l) => ({ ...l, currency: i.currency })) }),
    subtotal: t.field({ type: 'Money', description: 'The sum of the line amounts (inclusive taxes within).', resolve: (i) => i.subtotal }),
    discountAmount: t.field({ type: 'Money', description: "The coupon's discount: negative on a negative subtotal with a forever or repeating percent-off coupon (credits at the discounted price).", resolve: (i) => i.discountAmount }),
    couponId: t.exposeString('couponId', { nullable: true, description: 'The coupon whose discount it got.' }),
    taxAmount: t.field({ type: 'Money', description: 'Every tax of its lines, inclusive and exclusive.', resolve: (i) => i.taxAmount }),
    total: t.field({ type: 'Money', description: 'subtotal − discountAmount + exclusive taxes.', resolve: (i) => i.total }),
    totalFormatted: t.string({ resolve: (i) => formatMoney(i.total, i.currency) }),
    creditApplied: t.field({ type: 'Money', description: "Drawn from the customer's credit balance (before the wallet); given back if voided.", resolve: (i) => i.creditApplied }),
    creditedToBalance: t.field({
      type: 'Money',
      description: "A total below zero, as a credit: added to the customer's credit balance in the invoice's currency when it was finalised (ledger entry invoice_credit); 0 otherwise.",
      resolve: (i) => i.creditedToBalance,
    }),
    amountFromWallet: t.field({ type: 'Money', description: "Drawn from the customer's wallet (applyWalletBalance).", resolve: (i) => i.amountFromWallet }),
    amountDue: t.field({ type: 'Money', resolve: (i) => i.amountDue }),
    amountPaid: t.field({ type: 'Money', resolve: (i) => i.amountPaid }),
    amountRemaining: t.field({ type: 'Money', resolve: (i) => i.amountDue - i.amountPaid }),
    attemptCount: t.exposeInt('attemptCount'),
    nextPaymentAttempt: t.expose('nextPaymentAttempt', { type: 'DateTime', nullable: true }),
    lastPaymentError: t.field({
      type: PaymentError,
      nullable: true,
      description: 'Why the last attempt (automatic or manual) failed; null when none failed, and once paid.',
      resolve: (i) => invoices.lastPaymentError(i),
    }),
    payment: t.field({
      type: Payment,
      nullable: true,
      description: 'The payment of the latest charge attempt.',
      // One query for every invoice in the response.
      resolve: (i, _, gctx) =>
        i.paymentId
          ? requestLoader<string, PaymentRow | null>(gctx, 'Invoice.payment', async (ids) => {
              const rows = await invoices.invoicePaymentsById(gctx.ctx, ids);
              const byId = new Map(rows.map((r) => [r.id, r]));
              return ids.map((id) => byId.get(id) ?? null);
            }).load(i.paymentId)
          : null,
    }),
    pdfUrl: t.string({
      description: 'A fresh signed address of the PDF, valid 5 minutes, that needs no credentials.',
      // The invoice is the parent, read for this merchant already; the key is read once per request.
      resolve: async (i, _, gctx) => invoices.signedPdfUrlOf(gctx.ctx, await pdfSigningKey(gctx), i.id),
    }),
    periodStart: t.expose('periodStart', { type: 'DateTime' }),
    periodEnd: t.expose('periodEnd', { type: 'DateTime' }),
    dueDate: t.expose('dueDate', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    finalizedAt: t.expose('finalizedAt', { type: 'DateTime', nullable: true }),
    paidAt: t.expose('paidAt', { type: 'DateTime', nullable: true }),
    voidedAt: t.expose('voidedAt', { type: 'DateTime', nullable: true }),
  }),
});
nodeKind('invoice', Invoice);

const InvoiceConnection = connectionType(Invoice, 'Invoice');

// ---------------------------------------------------------------- the upcoming invoice (a preview: not a Node, it has no id)

type PreviewJSON = upcoming.UpcomingInvoicePreviewJSON | invoices.InvoicePreviewJSON;
type PreviewLineJSON = invoices.InvoicePreviewJSON['lines'][number];

const UpcomingInvoiceLine = builder.objectRef<PreviewLineJSON & { currency: string }>('UpcomingInvoiceLine').implement({
  description: 'A line of an invoice not made yet, as it will be made.',
  fields: (t) => ({
    id: t.id({ nullable: true, description: 'Null for a line the invoice will make (the plan line, a change’s prorations, a waiting item’s line); the id of a line already waiting for it.', resolve: (l) => l.id }),
    description: t.exposeString('description'),
    periodStart: t.field({ type: 'DateTime', resolve: (l) => new Date(l.period.start) }),
    periodEnd: t.field({ type: 'DateTime', resolve: (l) => new Date(l.period.end) }),
    amount: t.field({ type: 'Money', description: 'Negative for a credit.', resolve: (l) => BigInt(l.amount) }),
    amountFormatted: t.exposeString('amount_formatted'),
    proration: t.exposeBoolean('proration'),
    quantity: t.exposeInt('quantity', { nullable: true }),
    unitAmount: t.field({ type: 'Money', nullable: true, resolve: (l) => (l.unit_amount === null ? null : BigInt(l.unit_amount)) }),
    discountAmount: t.field({ type: 'Money', resolve: (l) => BigInt(l.discount_amount) }),
    taxAmounts: t.field({ type: [InvoiceLineTax], resolve: (l) => l.tax_amounts }),
  }),
});

const UpcomingInvoice = builder.objectRef<PreviewJSON>('UpcomingInvoice');
UpcomingInvoice.implement({
  description:
    'An invoice not made yet (REST GET /v1/invoices/upcoming, the invoice.upcoming event): computed by the code that will make it, so the real invoice equals it line for line unless something changes in between.',
  fields: (t) => ({
    subscription: t.field({ type: Subscription, resolve: (i, _, { ctx }) => subs.getSubscription(ctx, i.subscription_id) }),
    customerId: t.id({ resolve: (i) => i.customer_id }),
    billingReason: t.field({ type: InvoiceBillingReason, description: 'subscription_update: the change’s invoice, made now; else the renewal’s.', resolve: (i) => i.billing_reason }),
    currency: t.exposeString('currency'),
    lines: t.field({ type: [UpcomingInvoiceLine], resolve: (i) => i.lines.map((l) => ({ ...l, currency: i.currency })) }),
    subtotal: t.field({ type: 'Money', resolve: (i) => BigInt(i.subtotal) }),
    discountAmount: t.field({ type: 'Money', resolve: (i) => BigInt(i.discount_amount) }),
    couponId: t.string({ nullable: true, resolve: (i) => i.coupon_id }),
    taxAmount: t.field({ type: 'Money', resolve: (i) => BigInt(i.tax_amount) }),
    total: t.field({ type: 'Money', resolve: (i) => BigInt(i.total) }),
    totalFormatted: t.exposeString('total_formatted'),
    creditApplied: t.field({ type: 'Money', description: 'What the customer’s credit balance would pay, as it stands now.', resolve: (i) => BigInt(i.credit_applied) }),
    creditedToBalance: t.field({ type: 'Money', description: 'A total below zero, as the credit it would add to the customer’s credit balance; 0 otherwise.', resolve: (i) => BigInt(i.credited_to_balance) }),
    amountFromWallet: t.field({ type: 'Money', description: 'What the wallet would pay (applyWalletBalance), as it stands now.', resolve: (i) => BigInt(i.amount_from_wallet) }),
    amountDue: t.field({ type: 'Money', resolve: (i) => BigInt(i.amount_due) }),
    nextPaymentAttempt: t.field({ type: 'DateTime', description: 'When it will be made and charged.', resolve: (i) => new Date(i.next_payment_attempt) }),
    periodStart: t.field({ type: 'DateTime', resolve: (i) => new Date(i.period_start) }),
    periodEnd: t.field({ type: 'DateTime', resolve: (i) => new Date(i.period_end) }),
    subscriptionProrationDate: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'With a change: the moment it counts from (prorationDate, else the preview’s now). Give it to updateSubscription as prorationDate with the same fields to be billed exactly this. Null without a change, and on nextInvoice.',
      resolve: (i) => ('subscription_proration_date' in i && i.subscription_proration_date ? new Date(i.subscription_proration_date) : null),
    }),
    nextInvoice: t.field({
      type: UpcomingInvoice,
      nullable: true,
      description: 'After a change invoiced now (alwaysInvoice with prorations, an interval change): the renewal that follows it. Null otherwise.',
      resolve: (i) => ('next_invoice' in i ? i.next_invoice : null),
    }),
  }),
});

const PauseCollection = builder.objectRef<{ resumesAt: Date | null }>('PauseCollection').implement({
  description: 'How a paused subscription resumes.',
  fields: (t) => ({
    resumesAt: t.expose('resumesAt', { type: 'DateTime', nullable: true, description: 'Null: paused until resumeSubscription.' }),
  }),
});

const SubscriptionDiscount = builder.objectRef<{ couponId: string; start: Date; end: Date | null }>('SubscriptionDiscount').implement({
  description: "A subscription's active discount.",
  fields: (t) => ({
    couponId: t.exposeID('couponId'),
    coupon: t.field({ type: Coupon, nullable: true, description: 'The coupon (deleted coupons too: applied discounts go on).', resolve: (d, _, { ctx }) => orNull(coupons.findCouponAny(ctx, d.couponId)) }),
    start: t.expose('start', { type: 'DateTime' }),
    end: t.expose('end', { type: 'DateTime', nullable: true, description: 'When a repeating discount ends; null for forever and once.' }),
  }),
});

// Named BillingSubscription: a type called Subscription is GraphQL's root subscription type by
// convention (graphql-js and every SDL reader would take it for the root).
export const Subscription = builder.prismaNode('Subscription', {
  name: 'BillingSubscription',
  id: { field: 'id' },
  description: "A customer's plan, billed per period on the merchant's billing clock.",
  fields: (t) => ({
    customer: t.relation('customer'),
    plan: t.relation('plan'),
    status: t.field({ type: SubscriptionStatus, resolve: (s) => s.status as schema.SubscriptionStatus }),
    currentPeriodStart: t.expose('currentPeriodStart', { type: 'DateTime' }),
    currentPeriodEnd: t.expose('currentPeriodEnd', { type: 'DateTime' }),
    billingCycleAnchor: t.expose('billingAnchor', { type: 'DateTime', description: 'Periods are counted from it: the trial end, or the start without a trial.' }),
    trialStart: t.expose('trialStart', { type: 'DateTime', nullable: true }),
    trialEnd: t.expose('trialEnd', { type: 'DateTime', nullable: true }),
    cancelAtPeriodEnd: t.exposeBoolean('cancelAtPeriodEnd'),
    cancelAt: t.expose('cancelAt', { type: 'DateTime', nullable: true }),
    cancelledAt: t.expose('cancelledAt', { type: 'DateTime', nullable: true }),
    pauseCollection: t.field({ type: PauseCollection, nullable: true, description: 'Set while paused.', resolve: (s) => (s.status === 'paused' ? { resumesAt: s.resumesAt } : null) }),
    pausedAt: t.expose('pausedAt', { type: 'DateTime', nullable: true }),
    resumesAt: t.expose('resumesAt', { type: 'DateTime', nullable: true }),
    paymentMethod: t.relation('paymentMethod', { nullable: true, description: "The saved method charged; null: the customer's default." }),
    latestInvoice: t.field({
      type: Invoice,
      nullable: true,
      // One query for every subscription in the response.
      resolve: (s, _, gctx) =>
        s.latestInvoiceId
          ? requestLoader<string, invoices.InvoiceWithLines | null>(gctx, 'Subscription.latestInvoice', async (ids) => {
              const rows = await invoices.invoicesById(gctx.ctx, ids, withLines);
              const byId = new Map(rows.map((r) => [r.id, r]));
              return ids.map((id) => byId.get(id) ?? null);
            }).load(s.latestInvoiceId)
          : null,
    }),
    applyWalletBalance: t.exposeBoolean('applyWalletBalance', { description: "Invoices are drawn from the customer's wallet in the plan's currency first." }),
    quantity: t.exposeInt('quantity', { description: 'Units of the plan billed each period.' }),
    discount: t.field({
      type: SubscriptionDiscount,
      nullable: true,
      resolve: (s) => (s.couponId && s.discountStart ? { couponId: s.couponId, start: s.discountStart, end: s.discountEnd } : null),
    }),
    defaultTaxRates: t.field({ type: [TaxRate], description: 'Applied to every line of its invoices, in this order.', resolve: (s, _, { ctx }) => taxRates.taxRatesByIds(ctx, s.defaultTaxRates) }),
    metadata: t.field({ type: 'JSON', resolve: (s) => s.metadata }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    invoices: t.field({
      type: InvoiceConnection,
      description: "This subscription's invoices, newest first.",
      complexity: connectionComplexity,
      args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), status: t.arg({ type: InvoiceStatus }) },
      resolve: (s, a, gctx) =>
        nestedConnection(gctx, 'Subscription.invoices', s.id, listArgs(schema.invoiceListQuery, a), invoices.listInvoicesOfSubscriptions, invoices.countInvoicesOfSubscriptions),
    }),
  }),
});
nodeKind('subscription', Subscription);

const SubscriptionConnection = connectionType(Subscription, 'BillingSubscription');

builder.prismaObjectField('Customer', 'subscriptions', (t) =>
  t.field({
    type: SubscriptionConnection,
    description: "This customer's subscriptions, newest first.",
    complexity: connectionComplexity,
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), status: t.arg({ type: SubscriptionStatus }) },
    resolve: (c, a, gctx) =>
      nestedConnection(gctx, 'Customer.subscriptions', c.id, listArgs(schema.subscriptionListQuery, a), subs.listSubscriptionsOfCustomers, subs.countSubscriptionsOfCustomers),
  }),
);

builder.queryFields((t) => ({
  subscription: t.field({ type: Subscription, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(subs.getSubscription(ctx, String(id))) }),
  subscriptions: t.field({
    type: SubscriptionConnection,
    description: 'Subscriptions, newest first.',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      customerId: t.arg.id(),
      planId: t.arg.id(),
      status: t.arg({ type: SubscriptionStatus }),
    },
    resolve: async (_, a, { ctx }) => toConnection(await subs.listSubscriptions(ctx, listArgs(schema.subscriptionListQuery, a))),
  }),
  invoice: t.field({ type: Invoice, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(invoices.getInvoice(ctx, String(id))) }),
  upcomingInvoice: t.field({
    type: UpcomingInvoice,
    description:
      "A subscription's next invoice, or what a change (planId, quantity, coupon — \"\" previews removing the discount —, defaultTaxRates, prorationBehavior, prorationDate: updateSubscription's fields, with its errors) would bill now and next; writes nothing. REST GET /v1/invoices/upcoming. Errors (not found, invoice_upcoming_none, the change's refusals) carry their code and param.",
    args: {
      subscriptionId: t.arg.id({ required: true }),
      planId: t.arg.id(),
      quantity: t.arg.int(),
      coupon: t.arg.string(),
      defaultTaxRates: t.arg.idList({ description: "Preview replacing the tax rates (updateSubscription's defaultTaxRates; [] previews none), from the change's own invoice on." }),
      prorationBehavior: t.arg({ type: ProrationBehavior }),
      prorationDate: t.arg({ type: 'DateTime' }),
    },
    // REST's query schema parses the arguments (a number or a list arrives there as a query string would).
    resolve: (_, { quantity, defaultTaxRates, ...a }, { ctx }) =>
      upcoming.previewInvoice(
        ctx,
        listArgs(schema.invoiceUpcomingQuery, {
          ...a,
          quantity: quantity === null || quantity === undefined ? undefined : String(quantity),
          defaultTaxRates: defaultTaxRates === null || defaultTaxRates === undefined ? undefined : defaultTaxRates.map(String).join(','),
        }),
      ),
  }),
  invoices: t.field({
    type: InvoiceConnection,
    description: 'Invoices, newest first.',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      customerId: t.arg.id(),
      subscriptionId: t.arg.id(),
      status: t.arg({ type: InvoiceStatus }),
    },
    resolve: async (_, a, { ctx }) => toConnection(await invoices.listInvoices(ctx, listArgs(schema.invoiceListQuery, a))),
  }),
}));

const CreateSubscriptionInput = builder.inputType('CreateSubscriptionInput', {
  fields: (t) => ({
    customerId: t.id({ required: true }),
    planId: t.id({ required: true, description: 'An active plan.' }),
    paymentMethodId: t.id({ description: "A saved method of the customer; default: the customer's default method." }),
    trialPeriodDays: t.int({ description: "Trial length in days (0 to 730); overrides the plan's trialPeriodDays." }),
    trialEnd: t.field({ type: 'DateTime', description: 'An explicit end of the trial (in the future, at most 730 days ahead); not with trialPeriodDays.' }),
    cancelAtPeriodEnd: t.boolean({ description: 'Cancel at the end of the first period.' }),
    applyWalletBalance: t.boolean({ description: "Draw invoices from the customer's active wallet in the plan's currency first." }),
    quantity: t.int({ description: 'Units of the plan billed each period (1 to 10,000; default 1).' }),
    coupon: t.string({ description: 'A coupon id: its discount applies to the invoices made while it lasts.' }),
    defaultTaxRates: t.idList({ description: 'Tax rate ids applied to every line of its invoices (at most 5).' }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const UpdateSubscriptionInput = builder.inputType('UpdateSubscriptionInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    planId: t.id({
      description:
        'Move to another plan of the same currency; see prorationBehavior. Another interval or intervalCount is an interval change: a new period from now (or prorationDate), the unused time credited, invoiced at once.',
    }),
    prorationBehavior: t.field({ type: ProrationBehavior, description: 'With planId or quantity; default create_prorations.' }),
    prorationDate: t.field({
      type: 'DateTime',
      description: 'With planId or quantity: prorate as if changed at this time (in the current period, not after now), e.g. the prorationDate of the upcomingInvoice preview accepted.',
    }),
    cancelAtPeriodEnd: t.boolean(),
    paymentMethodId: t.id({ description: "A saved method of the customer; null: the customer's default." }),
    trialEnd: t.field({ type: 'DateTime', description: 'A new end of the trial (only while trialing; in the future).' }),
    applyWalletBalance: t.boolean(),
    quantity: t.int({ description: 'A new number of units (1 to 10,000), prorated like a plan change (prorationBehavior).' }),
    coupon: t.string({ description: 'A coupon id to apply (replaces the discount); null removes the discount.' }),
    defaultTaxRates: t.idList({ description: 'Replaces the tax rate ids ([] for none), from the next invoice on.' }),
    metadata: t.field({ type: 'JSON', description: 'Merged into the existing metadata; a key set to an empty string is removed.' }),
    idempotencyKey: t.string(),
  }),
});

const CancelSubscriptionInput = builder.inputType('CancelSubscriptionInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    cancelAtPeriodEnd: t.boolean({ description: 'true: at the end of the current period; false (the default): now.' }),
    invoiceNow: t.boolean({
      description:
        "With an immediate cancel: charge the subscription's open invoices once at once (then the normal retry schedule) and invoice the prorations waiting for the next invoice now. Default false: automatic collection of its open invoices stops.",
    }),
    idempotencyKey: t.string(),
  }),
});

const PauseSubscriptionInput = builder.inputType('PauseSubscriptionInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    resumesAt: t.field({ type: 'DateTime', description: 'When to resume automatically (in the future); without it, paused until resumeSubscription.' }),
    idempotencyKey: t.string(),
  }),
});

const ReactivateSubscriptionInput = builder.inputType('ReactivateSubscriptionInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});
const ResumeSubscriptionInput = builder.inputType('ResumeSubscriptionInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});
const VoidInvoiceInput = builder.inputType('VoidInvoiceInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});

const PayInvoiceInput = builder.inputType('PayInvoiceInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    paymentMethodId: t.id({ description: "A saved method of the invoice's customer; default: the subscription's method, else the customer's default." }),
    idempotencyKey: t.string(),
  }),
});

builder.objectType(PaymentFailedError, {
  name: 'PaymentFailedError',
  description: "The charge asked for failed (REST: 402 card_error). code and message are the invoice's lastPaymentError.",
  interfaces: [ErrorInterface],
  isTypeOf: (e) => e instanceof PaymentFailedError,
  fields: (t) => ({
    invoiceId: t.id({ resolve: (e) => e.invoiceId }),
    lastPaymentError: t.field({ type: PaymentError, resolve: (e) => e.lastPaymentError }),
    invoice: t.field({ type: Invoice, description: 'The invoice as it stands after the failed attempt.', resolve: (e, _, { ctx }) => invoices.getInvoice(ctx, e.invoiceId) }),
  }),
});

const SUB_ERRORS = [...COMMON_ERRORS, NotFoundError, StateError];

builder.mutationFields((t) => ({
  createSubscription: t.field({
    type: Subscription,
    description:
      "With a trial: trialing, the first invoice at the trial end. The first invoice bills the plan and the customer's invoice items waiting in the plan's currency that fit (oldest first). Without a trial it is charged at once to paymentMethodId or the customer's default method: active when paid, incomplete otherwise (cancelled after 23 h unless paid).",
    errors: { types: SUB_ERRORS, dataField: { name: 'subscription' }, result: { name: 'CreateSubscriptionSuccess' }, union: { name: 'CreateSubscriptionResult' } },
    args: { input: t.arg({ type: CreateSubscriptionInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'createSubscription', input, (ctx, fields) => subs.createSubscription(ctx, domainInput(schema.subscriptionCreate, fields)), PHASED),
  }),
  updateSubscription: t.field({
    type: Subscription,
    description: 'Plan change (with proration), payment method, trial end, cancelAtPeriodEnd, metadata.',
    errors: { types: SUB_ERRORS, dataField: { name: 'subscription' }, result: { name: 'UpdateSubscriptionSuccess' }, union: { name: 'UpdateSubscriptionResult' } },
    args: { input: t.arg({ type: UpdateSubscriptionInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'updateSubscription', input, (ctx, { id, ...fields }) => subs.updateSubscription(ctx, id, domainInput(schema.subscriptionUpdate, fields)), PHASED),
  }),
  cancelSubscription: t.field({
    type: Subscription,
    description: 'Cancels now (final), or at the end of the current period (undone by reactivateSubscription).',
    errors: { types: SUB_ERRORS, dataField: { name: 'subscription' }, result: { name: 'CancelSubscriptionSuccess' }, union: { name: 'CancelSubscriptionResult' } },
    args: { input: t.arg({ type: CancelSubscriptionInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'cancelSubscription', input, (ctx, { id, ...fields }) => subs.cancelSubscription(ctx, id, domainInput(schema.subscriptionCancel, fields)), PHASED),
  }),
  reactivateSubscription: t.field({
    type: Subscription,
    description: 'Undoes a cancellation at period end before the period ends (else StateError subscription_not_cancelling).',
    errors: { types: SUB_ERRORS, dataField: { name: 'subscription' }, result: { name: 'ReactivateSubscriptionSuccess' }, union: { name: 'ReactivateSubscriptionResult' } },
    args: { input: t.arg({ type: ReactivateSubscriptionInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'reactivateSubscription', input, (ctx, { id }) => subs.reactivateSubscription(ctx, id)),
  }),
  pauseSubscription: t.field({
    type: Subscription,
    description: 'active → paused: no invoices until resumed (periods go on).',
    errors: { types: SUB_ERRORS, dataField: { name: 'subscription' }, result: { name: 'PauseSubscriptionSuccess' }, union: { name: 'PauseSubscriptionResult' } },
    args: { input: t.arg({ type: PauseSubscriptionInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'pauseSubscription', input, (ctx, { id, ...fields }) => subs.pauseSubscription(ctx, id, domainInput(schema.subscriptionPause, fields))),
  }),
  resumeSubscription: t.field({
    type: Subscription,
    description: 'paused → active (else StateError subscription_not_paused).',
    errors: { types: SUB_ERRORS, dataField: { name: 'subscription' }, result: { name: 'ResumeSubscriptionSuccess' }, union: { name: 'ResumeSubscriptionResult' } },
    args: { input: t.arg({ type: ResumeSubscriptionInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'resumeSubscription', input, (ctx, { id }) => subs.resumeSubscription(ctx, id)),
  }),
  voidInvoice: t.field({
    type: Invoice,
    description:
      'Voids an open or uncollectible invoice (else StateError invoice_not_open); its checkout closes and its automatic retries stop. A past_due or unpaid subscription that owes nothing else becomes active in its current period.',
    errors: { types: SUB_ERRORS, dataField: { name: 'invoice' }, result: { name: 'VoidInvoiceSuccess' }, union: { name: 'VoidInvoiceResult' } },
    args: { input: t.arg({ type: VoidInvoiceInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'voidInvoice', input, (ctx, { id }) => invoices.voidInvoice(ctx, id)),
  }),
  payInvoice: t.field({
    type: Invoice,
    description:
      "Charges an open or uncollectible invoice once, now (else StateError invoice_not_open; invoice_payment_in_progress while a charge of it is at the processor), with paymentMethodId or the method dunning would use. Success: the paid invoice (a past_due or unpaid subscription becomes active). A failed charge: PaymentFailedError with the invoice's lastPaymentError.",
    errors: {
      types: [...SUB_ERRORS, PaymentFailedError],
      dataField: { name: 'invoice' },
      result: { name: 'PayInvoiceSuccess' },
      union: { name: 'PayInvoiceResult' },
    },
    args: { input: t.arg({ type: PayInvoiceInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'payInvoice', input, (ctx, { id, ...fields }) => invoices.payInvoice(ctx, id, domainInput(schema.invoicePay, fields)), PHASED),
  }),
}));
