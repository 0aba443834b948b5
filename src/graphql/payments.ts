import * as payments from '../domain/payments/index.ts';
import * as refunds from '../domain/refunds/index.ts';
import { NotFoundError, StateError } from '../platform/errors.ts';
import type { Ctx } from '../platform/context.ts';
import { builder, connectionComplexity } from './builder.ts';
import './customers.ts';
import { COMMON_ERRORS } from './errors.ts';
import { mutate, orNull, pageArgs, toConnection } from './helpers.ts';

const PaymentStatus = builder.enumType('PaymentStatus', { values: payments.PAYMENT_STATUSES });
const RefundStatus = builder.enumType('RefundStatus', { values: refunds.REFUND_STATUSES });
const RefundReason = builder.enumType('RefundReason', { values: refunds.REFUND_REASONS });
const PaymentMethodType = builder.enumType('PaymentMethodType', { values: payments.PAYMENT_METHODS });

export const Payment = builder.prismaNode('Payment', {
  id: { field: 'id' },
  fields: (t) => ({
    amount: t.field({ type: 'Money', resolve: (p) => p.amount }),
    currency: t.exposeString('currency'),
    status: t.field({ type: PaymentStatus, resolve: (p) => p.status as (typeof payments.PAYMENT_STATUSES)[number] }),
    checkoutUrl: t.string({
      description: 'Hosted checkout page for the customer.',
      resolve: (p, _, { services }) => payments.checkoutUrl(services.config.publicBaseUrl, p.checkoutToken),
    }),
    customer: t.relation('customer'),
    redirectUrl: t.exposeString('redirectUrl'),
    cancelUrl: t.exposeString('cancelUrl', { nullable: true }),
    checkout: t.field({ type: 'JSON', description: 'title, description, locale, payment_methods', resolve: (p) => p.checkout }),
    metadata: t.field({ type: 'JSON', resolve: (p) => p.metadata }),
    amountRefunded: t.field({ type: 'Money', resolve: (p) => p.amountRefunded }),
    refunded: t.boolean({ resolve: (p) => p.amountRefunded === p.amount }),
    paymentMethod: t.field({ type: 'JSON', nullable: true, description: 'The method used (card brand/last4/expiry or phone).', resolve: (p) => p.methodDetails }),
    failureCode: t.exposeString('failureCode', { nullable: true }),
    failureMessage: t.exposeString('failureMessage', { nullable: true }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    refunds: t.relation('refunds', { description: 'Refunds of this payment, newest first.', query: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } }),
  }),
});

export const Refund = builder.prismaNode('Refund', {
  id: { field: 'id' },
  fields: (t) => ({
    payment: t.relation('payment'),
    amount: t.field({ type: 'Money', resolve: (r) => r.amount }),
    currency: t.exposeString('currency'),
    status: t.field({ type: RefundStatus, resolve: (r) => r.status as (typeof refunds.REFUND_STATUSES)[number] }),
    reason: t.field({ type: RefundReason, nullable: true, resolve: (r) => r.reason as (typeof refunds.REFUND_REASONS)[number] | null }),
    failureCode: t.exposeString('failureCode', { nullable: true }),
    metadata: t.field({ type: 'JSON', resolve: (r) => r.metadata }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const PaymentConnection = builder.connectionObject({ type: Payment, name: 'PaymentConnection' }, { name: 'PaymentEdge' });
const RefundConnection = builder.connectionObject({ type: Refund, name: 'RefundConnection' }, { name: 'RefundEdge' });

/** The list arguments payments and refunds share. */
const paymentLikeArgs = builder.args((t) => ({
  first: t.int({ description: '1 to 100, default 20.' }),
  after: t.string(),
  currency: t.string(),
  customerId: t.id(),
  createdAfter: t.field({ type: 'DateTime', description: 'Exclusive.' }),
  createdBefore: t.field({ type: 'DateTime', description: 'Exclusive.' }),
}));

function commonFilters(a: { currency?: string | null; customerId?: string | number | null; createdAfter?: Date | null; createdBefore?: Date | null }) {
  return {
    currency: a.currency ? a.currency.toUpperCase() : undefined,
    customer_id: a.customerId ? String(a.customerId) : undefined,
    created_after: a.createdAfter ?? undefined,
    created_before: a.createdBefore ?? undefined,
  };
}

builder.queryFields((t) => ({
  payment: t.field({ type: Payment, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(payments.getPayment(ctx, String(id))) }),
  payments: t.field({
    type: PaymentConnection,
    description: 'Payments, newest first.',
    complexity: connectionComplexity,
    args: { ...paymentLikeArgs, status: t.arg({ type: PaymentStatus }) },
    resolve: async (_, a, { ctx }) => toConnection(await payments.listPayments(ctx, { ...pageArgs(a), ...commonFilters(a), status: a.status ?? undefined })),
  }),
  refund: t.field({ type: Refund, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(refunds.getRefund(ctx, String(id))) }),
  refunds: t.field({
    type: RefundConnection,
    description: 'Refunds, newest first. customerId filters on the refunded payment’s customer.',
    complexity: connectionComplexity,
    args: { ...paymentLikeArgs, status: t.arg({ type: RefundStatus }), paymentId: t.arg.id() },
    resolve: async (_, a, { ctx }) =>
      toConnection(
        await refunds.listRefunds(ctx, { ...pageArgs(a), ...commonFilters(a), status: a.status ?? undefined, payment_id: a.paymentId ? String(a.paymentId) : undefined }),
      ),
  }),
}));

builder.prismaObjectField('Customer', 'payments', (t) =>
  t.field({
    type: PaymentConnection,
    description: 'This customer’s payments, newest first.',
    complexity: connectionComplexity,
    args: { first: t.arg.int(), after: t.arg.string(), status: t.arg({ type: PaymentStatus }) },
    resolve: async (c, a, { ctx }) => toConnection(await payments.listPayments(ctx, { ...pageArgs(a), customer_id: c.id, status: a.status ?? undefined })),
  }),
);

const PaymentCustomerInput = builder.inputType('PaymentCustomerInput', {
  fields: (t) => ({ email: t.string({ required: true }), name: t.string(), phone: t.string({ description: 'E.164' }) }),
});

const CheckoutOptionsInput = builder.inputType('CheckoutOptionsInput', {
  fields: (t) => ({
    title: t.string(),
    description: t.string(),
    locale: t.string({ description: 'en or fr' }),
    paymentMethods: t.field({ type: [PaymentMethodType] }),
  }),
});

const CreatePaymentInput = builder.inputType('CreatePaymentInput', {
  fields: (t) => ({
    amount: t.field({ type: 'Money', required: true }),
    currency: t.string({ required: true }),
    customer: t.field({ type: PaymentCustomerInput, description: 'Ignored when customerId is given.' }),
    customerId: t.id(),
    redirectUrl: t.string({ required: true }),
    cancelUrl: t.string(),
    checkout: t.field({ type: CheckoutOptionsInput }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const CreateRefundInput = builder.inputType('CreateRefundInput', {
  fields: (t) => ({
    paymentId: t.id({ required: true }),
    amount: t.field({ type: 'Money', description: 'Omit to refund what remains.' }),
    reason: t.field({ type: RefundReason }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const CompleteTestPaymentInput = builder.inputType('CompleteTestPaymentInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    outcome: t.string({ required: true, description: 'succeeded, failed or cancelled' }),
    method: t.field({ type: PaymentMethodType }),
    idempotencyKey: t.string(),
  }),
});


builder.mutationFields((t) => ({
  createPayment: t.field({
    type: Payment,
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'payment' }, result: { name: 'CreatePaymentSuccess' }, union: { name: 'CreatePaymentResult' } },
    args: { input: t.arg({ type: CreatePaymentInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createPayment', input, (ctx, data: payments.PaymentCreateInput) => payments.createPayment(ctx, data)),
  }),
  createRefund: t.field({
    type: Refund,
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'refund' }, result: { name: 'CreateRefundSuccess' }, union: { name: 'CreateRefundResult' } },
    args: { input: t.arg({ type: CreateRefundInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'createRefund', input, (ctx, data: refunds.RefundCreateInput) => refunds.createRefund(ctx, data)),
  }),
  completeTestPayment: t.field({
    type: Payment,
    description: 'Test mode only: finish a checkout as the customer would.',
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'payment' }, result: { name: 'CompleteTestPaymentSuccess' }, union: { name: 'CompleteTestPaymentResult' } },
    args: { input: t.arg({ type: CompleteTestPaymentInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(
        gctx,
        'completeTestPayment',
        input,
        (ctx, { id, ...body }: { id: string } & payments.PaymentCompleteInput) => {
          if (ctx.merchant.mode !== 'test') throw new NotFoundError('payment', id);
          return payments.completeForTest(ctx, String(id), body);
        },
      ),
  }),
}));
