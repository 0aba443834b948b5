// Saved payment methods, setup intents and customer portal sessions over GraphQL: the same domain
// functions as /v1/setup-intents, /v1/payment-methods and /v1/customer-portal/sessions.
import * as methods from '../domain/payment-methods/index.ts';
import * as portal from '../domain/portal/index.ts';
import { setDefaultPaymentMethod } from '../services/customers.ts';
import { detachPaymentMethod } from '../services/payment-methods.ts';
import type { SavedDetails } from '../platform/processor.ts';
import { NotFoundError, StateError } from '../platform/errors.ts';
import { builder, connectionComplexity, nodeKind } from './builder.ts';
import { Customer } from './customers.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, PHASED, nestedConnection, orNull, requestLoader } from './helpers.ts';
import type { PaymentMethod as PaymentMethodRow } from '../generated/prisma/client.ts';
import { CheckoutLocale, PaymentMethodType } from './payments.ts';

const SetupIntentStatus = builder.enumType('SetupIntentStatus', { values: methods.SETUP_INTENT_STATUSES });

type SavedCard = Extract<SavedDetails, { type: 'card' }>['card'];
type SavedMobileMoney = Extract<SavedDetails, { type: 'mobile_money' }>['mobile_money'];

const SavedCardType = builder.objectRef<SavedCard>('SavedCard').implement({
  description: 'A saved card as it can be shown (never the full number).',
  fields: (t) => ({
    brand: t.exposeString('brand', { description: 'visa, mastercard, amex …' }),
    last4: t.exposeString('last4'),
    expMonth: t.exposeInt('exp_month'),
    expYear: t.exposeInt('exp_year'),
  }),
});

const SavedMobileMoneyType = builder.objectRef<SavedMobileMoney>('SavedMobileMoney').implement({
  description: 'A saved mobile-money account: only the last digits of its number.',
  fields: (t) => ({ phoneLast4: t.exposeString('phone_last4'), provider: t.exposeString('provider') }),
});

export const PaymentMethod = builder.prismaNode('PaymentMethod', {
  id: { field: 'id' },
  description: 'A saved card or mobile-money account, charged later with createPayment(paymentMethodId).',
  fields: (t) => ({
    customer: t.relation('customer', { nullable: true, description: 'Null once detached.' }),
    type: t.field({ type: PaymentMethodType, resolve: (m) => m.type as 'card' | 'mobile_money' }),
    card: t.field({ type: SavedCardType, nullable: true, resolve: (m) => ((m.details as SavedDetails).type === 'card' ? (m.details as Extract<SavedDetails, { type: 'card' }>).card : null) }),
    mobileMoney: t.field({
      type: SavedMobileMoneyType,
      nullable: true,
      resolve: (m) => ((m.details as SavedDetails).type === 'mobile_money' ? (m.details as Extract<SavedDetails, { type: 'mobile_money' }>).mobile_money : null),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('payment_method', PaymentMethod);

export const SetupIntent = builder.prismaNode('SetupIntent', {
  id: { field: 'id' },
  description: 'Saves a payment method through the hosted page at setupUrl.',
  fields: (t) => ({
    customer: t.relation('customer'),
    status: t.field({ type: SetupIntentStatus, resolve: (s) => s.status as methods.SetupIntentStatus }),
    setupUrl: t.string({ description: 'Hosted page where the customer saves a method.', resolve: (s, _, { services }) => methods.setupUrl(services.config.publicBaseUrl, s.token) }),
    returnUrl: t.exposeString('returnUrl', { nullable: true }),
    paymentMethodTypes: t.field({ type: [PaymentMethodType], resolve: (s) => methods.offeredSetupMethods(s) }),
    paymentMethod: t.relation('paymentMethod', { nullable: true, description: 'The saved method, once succeeded.' }),
    metadata: t.field({ type: 'JSON', resolve: (s) => s.metadata }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('setup_intent', SetupIntent);

export const PortalSession = builder.prismaNode('PortalSession', {
  id: { field: 'id' },
  description: 'An hour in the hosted customer portal for one customer.',
  fields: (t) => ({
    customer: t.relation('customer'),
    url: t.string({ description: 'The portal, for this customer only: a link that opens once (the browser that opens it gets a session cookie until expiresAt).', resolve: (s, _, { services }) => portal.portalUrl(services.config.publicBaseUrl, s.token) }),
    returnUrl: t.exposeString('returnUrl'),
    locale: t.field({ type: CheckoutLocale, resolve: (s) => s.locale as 'en' | 'fr' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('portal_session', PortalSession);

const PaymentMethodConnection = connectionType(PaymentMethod, 'PaymentMethod');

builder.prismaObjectFields('Customer', (t) => ({
  paymentMethods: t.field({
    type: PaymentMethodConnection,
    description: 'Attached saved methods, newest first.',
    complexity: connectionComplexity,
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string() },
    resolve: (c, a, gctx) => {
      // Checked with the REST list's rules; the customer is the parent, not part of the batch key.
      const { customer_id: _c, ...page } = listArgs(methods.paymentMethodListQuery, { ...a, customerId: c.id });
      return nestedConnection(
        gctx,
        'Customer.paymentMethods',
        c.id,
        page,
        (ctx, ids, q) => methods.listPaymentMethodsOfCustomers(ctx, ids, q),
        (ctx, ids) => methods.countPaymentMethodsOfCustomers(ctx, ids),
      );
    },
  }),
  defaultPaymentMethod: t.field({
    type: PaymentMethod,
    nullable: true,
    description: 'The saved method charged when none is named.',
    // One query for every customer in the response.
    resolve: (c, _, gctx) =>
      c.defaultPaymentMethodId
        ? requestLoader<string, PaymentMethodRow | null>(gctx, 'Customer.defaultPaymentMethod', async (ids) => {
            const rows = await methods.paymentMethodsByIds(gctx.ctx, [...ids]);
            const byId = new Map(rows.map((r) => [r.id, r]));
            return ids.map((id) => byId.get(id) ?? null);
          }).load(c.defaultPaymentMethodId)
        : null,
  }),
}));

builder.prismaObjectField('Payment', 'savedPaymentMethod', (t) =>
  t.relation('paymentMethod', { nullable: true, description: 'The saved method this payment charged off-session.' }),
);

builder.queryFields((t) => ({
  setupIntent: t.field({ type: SetupIntent, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(methods.getSetupIntent(ctx, String(id))) }),
  paymentMethod: t.field({ type: PaymentMethod, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(methods.getPaymentMethod(ctx, String(id))) }),
}));

const CreateSetupIntentInput = builder.inputType('CreateSetupIntentInput', {
  fields: (t) => ({
    customerId: t.id({ required: true }),
    returnUrl: t.string({ description: 'Where the setup page sends the customer afterwards (with setup_intent_id and status).' }),
    paymentMethodTypes: t.field({ type: [PaymentMethodType], description: 'Default both.' }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const DetachPaymentMethodInput = builder.inputType('DetachPaymentMethodInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});

const SetDefaultPaymentMethodInput = builder.inputType('SetDefaultPaymentMethodInput', {
  fields: (t) => ({ customerId: t.id({ required: true }), paymentMethodId: t.id({ required: true }), idempotencyKey: t.string() }),
});

const CreatePortalSessionInput = builder.inputType('CreatePortalSessionInput', {
  fields: (t) => ({
    customerId: t.id({ required: true }),
    returnUrl: t.string({ required: true, description: 'Where the portal’s “Return to …” link goes.' }),
    locale: t.field({ type: CheckoutLocale }),
    idempotencyKey: t.string(),
  }),
});

const CompleteTestSetupIntentInput = builder.inputType('CompleteTestSetupIntentInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    cardNumber: t.string({ description: 'Default 4242424242424242; 4000000000000002 is refused; 4000000000009995 saves but its charges fail.' }),
    idempotencyKey: t.string(),
  }),
});

builder.mutationFields((t) => ({
  createSetupIntent: t.field({
    type: SetupIntent,
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'setupIntent' }, result: { name: 'CreateSetupIntentSuccess' }, union: { name: 'CreateSetupIntentResult' } },
    args: { input: t.arg({ type: CreateSetupIntentInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createSetupIntent', input, (ctx, fields) => methods.createSetupIntent(ctx, domainInput(methods.setupIntentCreate, fields))),
  }),
  detachPaymentMethod: t.field({
    type: PaymentMethod,
    description: 'Detaches a saved method from its customer: it can no longer be charged.',
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'paymentMethod' }, result: { name: 'DetachPaymentMethodSuccess' }, union: { name: 'DetachPaymentMethodResult' } },
    args: { input: t.arg({ type: DetachPaymentMethodInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'detachPaymentMethod', input, (ctx, { id }) => detachPaymentMethod(ctx, id)),
  }),
  setDefaultPaymentMethod: t.field({
    type: Customer,
    description: 'Makes an attached method the customer’s default; the open or uncollectible invoices of its past_due and unpaid subscriptions that charge the default are retried at once.',
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'customer' }, result: { name: 'SetDefaultPaymentMethodSuccess' }, union: { name: 'SetDefaultPaymentMethodResult' } },
    args: { input: t.arg({ type: SetDefaultPaymentMethodInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'setDefaultPaymentMethod', input, (ctx, { customerId, paymentMethodId }) => setDefaultPaymentMethod(ctx, customerId, paymentMethodId, 'payment_method_id'), PHASED),
  }),
  createPortalSession: t.field({
    type: PortalSession,
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'portalSession' }, result: { name: 'CreatePortalSessionSuccess' }, union: { name: 'CreatePortalSessionResult' } },
    args: { input: t.arg({ type: CreatePortalSessionInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createPortalSession', input, (ctx, fields) => portal.createPortalSession(ctx, domainInput(portal.portalSessionCreate, fields))),
  }),
  completeTestSetupIntent: t.field({
    type: SetupIntent,
    description: 'Test mode only: save a card for the intent’s customer as the setup page would.',
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'setupIntent' }, result: { name: 'CompleteTestSetupIntentSuccess' }, union: { name: 'CompleteTestSetupIntentResult' } },
    args: { input: t.arg({ type: CompleteTestSetupIntentInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'completeTestSetupIntent', input, (ctx, { id, ...fields }) => methods.completeSetupForTest(ctx, id, domainInput(methods.setupIntentCompleteBody, fields)), PHASED),
  }),
}));
