// Plans, subscriptions and invoices.
import { exampleId } from '../platform/ids.ts';
import * as plans from '../domain/billing/plans.ts';
import * as schema from '../domain/billing/schema.ts';
import * as subs from '../domain/billing/subscriptions.ts';
import * as invoices from '../domain/billing/invoices.ts';
import * as upcoming from '../domain/billing/upcoming.ts';
import type { Ctx } from '../platform/context.ts';
import { route, listEnvelope } from './route.ts';
import { idParam, invoiceObject, listOf, planObject, redirectObject, subscriptionObject, upcomingInvoicePreviewObject } from './schemas.ts';

const tag = 'Plans';
const subTag = 'Subscriptions';
const invTag = 'Invoices';
const invoiceJSON = (ctx: Ctx) => (i: invoices.InvoiceWithLines) => invoices.invoiceToJSON(i, ctx.runtime.config.publicBaseUrl);

export const billingRoutes = [
  route({
    method: 'post', path: '/v1/plans', operationId: 'createPlan', tag, summary: 'Create a plan',
    example: { name: 'Pro monthly', amount: 2900, currency: 'USD', interval: 'month', trial_period_days: 14 },
    body: plans.planCreate,
    response: { status: 201, description: 'The new plan (active).', schema: planObject },
    handler: async (ctx, { body }) => plans.planToJSON(await plans.createPlan(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/plans/{id}', operationId: 'getPlan', tag, summary: 'Retrieve a plan',
    params: idParam,
    response: { status: 200, description: 'The plan.', schema: planObject },
    handler: async (ctx, { params }) => plans.planToJSON(await plans.getPlan(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/plans', operationId: 'listPlans', tag, summary: 'List plans, newest first',
    query: plans.planListQuery,
    response: { status: 200, description: 'A page of plans.', schema: listOf(planObject, 'PlanList') },
    handler: async (ctx, { query }) => listEnvelope(await plans.listPlans(ctx, query), plans.planToJSON),
  }),
  route({
    method: 'post', path: '/v1/plans/{id}/archive', operationId: 'archivePlan', tag, summary: 'Archive a plan: no new subscriptions; existing ones go on',
    params: idParam, errors: [409],
    response: { status: 200, description: 'The archived plan (active false).', schema: planObject },
    handler: async (ctx, { params }) => plans.planToJSON(await plans.archivePlan(ctx, params.id)),
  }),

  route({
    method: 'post', path: '/v1/subscriptions', operationId: 'createSubscription', tag: subTag, summary: 'Subscribe a customer to a plan',
    description:
      'With a trial (trial_end, trial_period_days or the plan’s default): `trialing`, the first invoice at the trial end. The first invoice bills the plan and the customer’s invoice items waiting in the plan’s currency that fit (oldest first). Without a trial it is charged at once to payment_method_id or the customer’s default method: `active` when paid, `incomplete` otherwise (cancelled after 23 h unless paid).',
    body: schema.subscriptionCreate, errors: [409],
    response: { status: 201, description: 'The new subscription.', schema: subscriptionObject },
    phased: true,
    handler: async (ctx, { body }) => subs.subscriptionToJSON(await subs.createSubscription(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/subscriptions/{id}', operationId: 'getSubscription', tag: subTag, summary: 'Retrieve a subscription',
    params: idParam,
    response: { status: 200, description: 'The subscription.', schema: subscriptionObject },
    handler: async (ctx, { params }) => subs.subscriptionToJSON(await subs.getSubscription(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/subscriptions', operationId: 'listSubscriptions', tag: subTag, summary: 'List subscriptions, newest first',
    query: schema.subscriptionListQuery,
    response: { status: 200, description: 'A page of subscriptions.', schema: listOf(subscriptionObject, 'SubscriptionList') },
    handler: async (ctx, { query }) => listEnvelope(await subs.listSubscriptions(ctx, query), subs.subscriptionToJSON),
  }),
  route({
    method: 'patch', path: '/v1/subscriptions/{id}', operationId: 'updateSubscription', tag: subTag, summary: 'Update a subscription (plan change with proration, method, trial end, metadata)',
    example: { plan_id: exampleId('plan'), proration_behavior: 'create_prorations' },
    params: idParam, body: schema.subscriptionUpdate,
    response: { status: 200, description: 'The subscription after the change.', schema: subscriptionObject },
    phased: true,
    handler: async (ctx, { params, body }) => subs.subscriptionToJSON(await subs.updateSubscription(ctx, params.id, body)),
  }),
  route({
    method: 'post', path: '/v1/subscriptions/{id}/cancel', operationId: 'cancelSubscription', tag: subTag, summary: 'Cancel now, or at the end of the period',
    example: { cancel_at_period_end: true },
    params: idParam, body: schema.subscriptionCancel,
    response: { status: 200, description: 'The subscription: cancelled, or set to cancel at period end.', schema: subscriptionObject },
    // invoice_now charges after the cancel commits: a retry with the key finishes those charges.
    phased: true,
    handler: async (ctx, { params, body }) => subs.subscriptionToJSON(await subs.cancelSubscription(ctx, params.id, body)),
  }),
  route({
    method: 'post', path: '/v1/subscriptions/{id}/reactivate', operationId: 'reactivateSubscription', tag: subTag, summary: 'Undo a cancellation at period end',
    conflict: { code: 'subscription_not_cancelling', message: `Subscription ${exampleId('subscription')} is not set to cancel at the end of its period.` },
    params: idParam,
    response: { status: 200, description: 'The subscription, no longer set to cancel.', schema: subscriptionObject },
    handler: async (ctx, { params }) => subs.subscriptionToJSON(await subs.reactivateSubscription(ctx, params.id)),
  }),
  route({
    method: 'post', path: '/v1/subscriptions/{id}/pause', operationId: 'pauseSubscription', tag: subTag, summary: 'Pause collection (no invoices) until resumed or resumes_at',
    params: idParam, body: schema.subscriptionPause,
    response: { status: 200, description: 'The paused subscription.', schema: subscriptionObject },
    handler: async (ctx, { params, body }) => subs.subscriptionToJSON(await subs.pauseSubscription(ctx, params.id, body)),
  }),
  route({
    method: 'post', path: '/v1/subscriptions/{id}/resume', operationId: 'resumeSubscription', tag: subTag, summary: 'Resume a paused subscription',
    conflict: { code: 'subscription_not_paused', message: `Subscription ${exampleId('subscription')} is active, not paused.` },
    params: idParam,
    response: { status: 200, description: 'The active subscription.', schema: subscriptionObject },
    handler: async (ctx, { params }) => subs.subscriptionToJSON(await subs.resumeSubscription(ctx, params.id)),
  }),

  // Before /v1/invoices/{id}: the first route that matches answers.
  route({
    method: 'get', path: '/v1/invoices/upcoming', operationId: 'getUpcomingInvoice', tag: invTag,
    summary: "Preview a subscription's next invoice, or what a change would bill now and next",
    description:
      "Computed by the code that makes the real invoices, writing nothing (the coupon is not redeemed). Without a change: the invoice the next renewal will make (the plan line of the next period, the prorations and credits waiting, the customer's waiting items that fit, the discount active then, taxes, and what the credit balance and wallet would pay now). With plan_id, quantity, coupon, proration_behavior and proration_date — the fields of PATCH /v1/subscriptions/{id}, checked with the same errors —: create_prorations and none give that renewal with the change in it; always_invoice with prorations, and an interval change (another interval or interval_count: a new period from proration_date or now), give the invoice the change makes now, with next_invoice the renewal after it. A change made with the same fields and proration_date is billed exactly this, line for line. 409 invoice_upcoming_none when nothing will be invoiced (cancelled, set to cancel at its period end, paused without a resume by then, unpaid, incomplete).",
    query: schema.invoiceUpcomingQuery, errors: [409],
    conflict: { code: 'invoice_upcoming_none', message: `Subscription ${exampleId('subscription')} is active and set to cancel at its period end: it has no upcoming invoice.`, param: 'subscription_id' },
    response: { status: 200, description: 'The upcoming invoice (id null), and next_invoice after a change invoiced now.', schema: upcomingInvoicePreviewObject },
    handler: async (ctx, { query }) => upcoming.previewInvoice(ctx, query),
  }),
  route({
    method: 'get', path: '/v1/invoices/{id}', operationId: 'getInvoice', tag: invTag, summary: 'Retrieve an invoice',
    params: idParam,
    response: { status: 200, description: 'The invoice with its lines.', schema: invoiceObject },
    handler: async (ctx, { params }) => invoiceJSON(ctx)(await invoices.getInvoice(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/invoices', operationId: 'listInvoices', tag: invTag, summary: 'List invoices, newest first',
    query: schema.invoiceListQuery,
    response: { status: 200, description: 'A page of invoices.', schema: listOf(invoiceObject, 'InvoiceList') },
    handler: async (ctx, { query }) => listEnvelope(await invoices.listInvoices(ctx, query), invoiceJSON(ctx)),
  }),
  route({
    method: 'post', path: '/v1/invoices/{id}/void', operationId: 'voidInvoice', tag: invTag, summary: 'Void an open or uncollectible invoice',
    conflict: { code: 'invoice_not_open', message: `Invoice ${exampleId('invoice')} is paid; only an open or uncollectible invoice can be voided.` },
    description:
      'Only an open or uncollectible invoice (else 409 invoice_not_open). Its checkout closes, what it drew from the wallet is credited back and its automatic retries stop. A past_due or unpaid subscription that owes nothing else becomes active in its current period (subscription.updated).',
    params: idParam,
    response: { status: 200, description: 'The voided invoice.', schema: invoiceObject },
    handler: async (ctx, { params }) => invoiceJSON(ctx)(await invoices.voidInvoice(ctx, params.id)),
  }),
  route({
    method: 'post', path: '/v1/invoices/{id}/pay', operationId: 'payInvoice', tag: invTag, summary: 'Charge an open or uncollectible invoice now',
    conflict: { code: 'invoice_not_open', message: `Invoice ${exampleId('invoice')} is paid; only an open or uncollectible invoice can be paid.` },
    description:
      "One attempt now, with payment_method_id (a saved method of the invoice's customer) or the method dunning would use (the subscription's, else the customer's default). 200 with the paid invoice (a past_due or unpaid subscription becomes active); 402 card_error with the invoice's last_payment_error when the charge fails; 409 invoice_not_open for a paid, void or draft invoice, invoice_payment_in_progress while a charge of it is at the processor. The first attempt counts in attempt_count; later manual attempts change neither attempt_count nor next_payment_attempt (as Stripe).",
    params: idParam, body: schema.invoicePay,
    response: { status: 200, description: 'The invoice: paid (or still open while the processor has not answered).', schema: invoiceObject },
    errors: [402, 409],
    phased: true,
    handler: async (ctx, { params, body }) => invoiceJSON(ctx)(await invoices.payInvoice(ctx, params.id, body)),
  }),
  route({
    method: 'get', path: '/v1/invoices/{id}/pdf', operationId: 'getInvoicePdf', tag: invTag, summary: 'Download the invoice as PDF',
    description: 'Redirects (302) to a signed address of the PDF, valid 5 minutes, that needs no credentials (so a browser or a mail can open it).',
    params: idParam,
    response: { status: 302, description: 'Location: the signed address of the PDF.', schema: redirectObject },
    handler: async (ctx, { params }) => ({ location: await invoices.signedPdfUrl(ctx, params.id) }),
  }),
];
