import * as payments from '../domain/payments/index.ts';
import { PAYMENT_METHODS } from '../platform/processor.ts';
import * as refunds from '../domain/refunds/index.ts';
import { NotFoundError, StateError } from '../platform/errors.ts';
import { builder, connectionComplexity, nodeKind } from './builder.ts';
import { CheckoutLocale } from './customers.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, PHASED, nestedConnection, orNull, toConnection } from './helpers.ts';

const PaymentStatus = builder.enumType('PaymentStatus', { values: payments.PAYMENT_STATUSES });
const RefundStatus = builder.enumType('RefundStatus', { values: refunds.REFUND_STATUSES });
const RefundReason = builder.enumType('RefundReason', { values: refunds.REFUND_REASONS });
export const PaymentMethodType = builder.enumType('PaymentMethodType', { values: PAYMENT_METHODS });
// The languages (en, fr): defined with the customer's locale (customers.ts, below payments).
export { CheckoutLocale };
export const TestOutcome = builder.enumType('TestOutcome', {
  description: 'How a test-mode checkout ends: paid, declined, or cancelled by the customer.',
  values: ['succeeded', 'failed', 'cancelled'] as const,
});

type MethodDetails = import('../platform/processor.ts').MethodDetails;
type CheckoutOptions = payments.CheckoutOptions;

const CardDetails = builder.objectRef<{ brand: string; last4: string; exp_month: number; exp_year: number }>('CardDetails').implement({
  description: 'The card a payment was made with (never the full number).',
  fields: (t) => ({
    brand: t.exposeString('brand', { description: 'visa, mastercard, amex …' }),
    last4: t.exposeString('last4'),
    expMonth: t.exposeInt('exp_month'),
    expYear: t.exposeInt('exp_year'),
  }),
});

const MobileMoneyDetails = builder.objectRef<{ phone: string }>('MobileMoneyDetails').implement({
  fields: (t) => ({ phone: t.exposeString('phone', { description: 'E.164' }) }),
});

const PaymentMethodDetails = builder.objectRef<MethodDetails>('PaymentMethodDetails').implement({
  description: 'The method the customer paid (or tried to pay) with: `card` or `mobileMoney` is set according to `type`.',
  fields: (t) => ({
    type: t.field({ type: PaymentMethodType, resolve: (m) => m.type }),
    card: t.field({ type: CardDetails, nullable: true, resolve: (m) => (m.type === 'card' ? m.card : null) }),
    mobileMoney: t.field({ type: MobileMoneyDetails, nullable: true, resolve: (m) => (m.type === 'mobile_money' ? m.mobile_money : null) }),
  }),
});

const CheckoutOptionsType = builder.objectRef<CheckoutOptions>('CheckoutOptions').implement({
  description: 'The checkout page options given when the payment was created (null where the default applies).',
  fields: (t) => ({
    title: t.string({ nullable: true, resolve: (o) => o.title ?? null }),
    description: t.string({ nullable: true, resolve: (o) => o.description ?? null }),
    locale: t.field({ type: CheckoutLocale, nullable: true, resolve: (o) => o.locale ?? null }),
    paymentMethods: t.field({ type: [PaymentMethodType], nullable: true, resolve: (o) => o.payment_methods ?? null }),
  }),
});

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
    redirectUrl: t.exposeString('redirectUrl', { nullable: true, description: 'Null for an off-session payment of a saved method created without one.' }),
    cancelUrl: t.exposeString('cancelUrl', { nullable: true }),
    checkout: t.field({ type: CheckoutOptionsType, resolve: (p) => p.checkout as CheckoutOptions }),
    metadata: t.field({ type: 'JSON', resolve: (p) => p.metadata }),
    amountRefunded: t.field({ type: 'Money', resolve: (p) => p.amountRefunded }),
    refunded: t.boolean({ resolve: (p) => p.amountRefunded === p.amount }),
    paymentMethod: t.field({ type: PaymentMethodDetails, nullable: true, resolve: (p) => (p.methodDetails as MethodDetails | null) ?? null }),
    failureCode: t.exposeString('failureCode', { nullable: true }),
    failureMessage: t.exposeString('failureMessage', { nullable: true }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    refunds: t.relation('refunds', { description: 'Refunds of this payment, newest first.', query: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } }),
  }),
});
nodeKind('payment', Payment);

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
nodeKind('refund', Refund);

const PaymentConnection = connectionType(Payment, 'Payment');
const RefundConnection = connectionType(Refund, 'Refund');

/** The list arguments payments and refunds share. */
const paymentLikeArgs = builder.args((t) => ({
  first: t.int({ description: '1 to 100, default 20.' }),
  after: t.string(),
  currency: t.string(),
  customerId: t.id(),
  createdAfter: t.field({ type: 'DateTime', description: 'Exclusive.' }),
  createdBefore: t.field({ type: 'DateTime', description: 'Exclusive.' }),
}));

builder.queryFields((t) => ({
  payment: t.field({ type: Payment, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(payments.getPayment(ctx, String(id))) }),
  payments: t.field({
    type: PaymentConnection,
    description: 'Payments, newest first.',
    complexity: connectionComplexity,
    args: { ...paymentLikeArgs, status: t.arg({ type: PaymentStatus }) },
    resolve: async (_, a, { ctx }) => toConnection(await payments.listPayments(ctx, listArgs(payments.paymentListQuery, a))),
  }),
  refund: t.field({ type: Refund, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(refunds.getRefund(ctx, String(id))) }),
  refunds: t.field({
    type: RefundConnection,
    description: 'Refunds, newest first. customerId filters on the refunded payment’s customer.',
    complexity: connectionComplexity,
    args: { ...paymentLikeArgs, status: t.arg({ type: RefundStatus }), paymentId: t.arg.id() },
    resolve: async (_, a, { ctx }) => toConnection(await refunds.listRefunds(ctx, listArgs(refunds.refundListQuery, a))),
  }),
}));

builder.prismaObjectField('Customer', 'payments', (t) =>
  t.field({
    type: PaymentConnection,
    description: 'This customer’s payments, newest first.',
    complexity: connectionComplexity,
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), status: t.arg({ type: PaymentStatus }) },
    resolve: (c, a, gctx) =>
      nestedConnection(gctx, 'Customer.payments', c.id, listArgs(payments.paymentListQuery, a), payments.listPaymentsOfCustomers, payments.countPaymentsOfCustomers),
  }),
);

const PaymentCustomerInput = builder.inputType('PaymentCustomerInput', {
  fields: (t) => ({ email: t.string({ required: true }), name: t.string(), phone: t.string({ description: 'E.164' }) }),
});

const CheckoutOptionsInput = builder.inputType('CheckoutOptionsInput', {
  fields: (t) => ({
    title: t.string(),
    description: t.string(),
    locale: t.field({ type: CheckoutLocale }),
    paymentMethods: t.field({ type: [PaymentMethodType] }),
  }),
});

const CreatePaymentInput = builder.inputType('CreatePaymentInput', {
  fields: (t) => ({
    amount: t.field({ type: 'Money', required: true }),
    currency: t.string({ required: true }),
    customer: t.field({ type: PaymentCustomerInput, description: 'Ignored when customerId is given.' }),
    customerId: t.id({ description: 'Optional with paymentMethodId (the method’s customer).' }),
    redirectUrl: t.string({ description: 'Required unless paymentMethodId is given.' }),
    paymentMethodId: t.id({ description: 'A saved method to charge at once, off-session; a failed charge can still be paid at checkoutUrl until it expires.' }),
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
    outcome: t.field({ type: TestOutcome, required: true }),
    method: t.field({ type: PaymentMethodType }),
    idempotencyKey: t.string(),
  }),
});


builder.mutationFields((t) => ({
  createPayment: t.field({
    type: Payment,
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'payment' }, result: { name: 'CreatePaymentSuccess' }, union: { name: 'CreatePaymentResult' } },
    args: { input: t.arg({ type: CreatePaymentInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createPayment', input, (ctx, fields) => payments.createPayment(ctx, domainInput(payments.paymentCreate, fields)), PHASED),
  }),
  createRefund: t.field({
    type: Refund,
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'refund' }, result: { name: 'CreateRefundSuccess' }, union: { name: 'CreateRefundResult' } },
    args: { input: t.arg({ type: CreateRefundInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'createRefund', input, (ctx, fields) => refunds.createRefund(ctx, domainInput(refunds.refundCreate, fields)), PHASED),
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
        (ctx, { id, ...fields }) => payments.completeForTest(ctx, id, domainInput(payments.paymentCompleteBody, fields)),
        PHASED,
      ),
  }),
}));
