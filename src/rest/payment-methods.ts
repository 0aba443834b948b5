// Setup intents, saved payment methods and customer portal sessions.
import { exampleId } from '../platform/ids.ts';
import * as methods from '../domain/payment-methods/index.ts';
import * as portal from '../domain/portal/index.ts';
import { detachPaymentMethod } from '../services/payment-methods.ts';
import { route, listEnvelope } from './route.ts';
import { idParam, listOf, paymentMethodObject, portalSessionObject, setupIntentObject } from './schemas.ts';

export const paymentMethodRoutes = [
  route({
    method: 'post', path: '/v1/setup-intents', operationId: 'createSetupIntent', tag: 'Payment methods', summary: 'Start saving a payment method',
    example: { customer_id: exampleId('customer'), return_url: 'https://shop.example.com/account' },
    description: 'Send the customer to `setup_url`: the hosted page saves a card or mobile-money number for later charges, then redirects to `return_url?setup_intent_id=…&status=…`.',
    body: methods.setupIntentCreate,
    response: { status: 201, description: 'The new setup intent (requires_payment_method).', schema: setupIntentObject },
    handler: async (ctx, { body }) => methods.setupIntentToJSON(await methods.createSetupIntent(ctx, body), ctx.runtime.config.publicBaseUrl),
  }),
  route({
    method: 'get', path: '/v1/setup-intents/{id}', operationId: 'getSetupIntent', tag: 'Payment methods', summary: 'Retrieve a setup intent',
    params: idParam,
    response: { status: 200, description: 'The setup intent.', schema: setupIntentObject },
    handler: async (ctx, { params }) => methods.setupIntentToJSON(await methods.getSetupIntent(ctx, params.id), ctx.runtime.config.publicBaseUrl),
  }),
  route({
    method: 'get', path: '/v1/payment-methods/{id}', operationId: 'getPaymentMethod', tag: 'Payment methods', summary: 'Retrieve a saved payment method',
    params: idParam,
    response: { status: 200, description: 'The payment method.', schema: paymentMethodObject },
    handler: async (ctx, { params }) => methods.paymentMethodToJSON(await methods.getPaymentMethod(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/payment-methods', operationId: 'listPaymentMethods', tag: 'Payment methods', summary: "List a customer's saved methods, newest first",
    query: methods.paymentMethodListQuery,
    response: { status: 200, description: 'A page of attached payment methods.', schema: listOf(paymentMethodObject, 'PaymentMethodList') },
    handler: async (ctx, { query }) => listEnvelope(await methods.listPaymentMethods(ctx, query), methods.paymentMethodToJSON),
  }),
  route({
    method: 'delete', path: '/v1/payment-methods/{id}', operationId: 'detachPaymentMethod', tag: 'Payment methods', summary: 'Detach a payment method from its customer',
    description: 'A detached method cannot be charged. When it was the default, the newest remaining method becomes the default.',
    params: idParam, errors: [409],
    response: { status: 200, description: 'The detached method (customer_id null).', schema: paymentMethodObject },
    handler: async (ctx, { params }) => methods.paymentMethodToJSON(await detachPaymentMethod(ctx, params.id)),
  }),
  route({
    method: 'post', path: '/v1/customer-portal/sessions', operationId: 'createPortalSession', tag: 'Customer portal', summary: 'Open a customer portal session',
    description: 'Send the customer to `url` (valid for an hour, for this customer only): they can edit their details, manage saved methods and see their wallets.',
    body: portal.portalSessionCreate,
    response: { status: 201, description: 'The new portal session.', schema: portalSessionObject },
    handler: async (ctx, { body }) => portal.portalSessionToJSON(await portal.createPortalSession(ctx, body), ctx.runtime.config.publicBaseUrl),
  }),
  route({
    method: 'post', path: '/v1/test-helpers/setup-intents/{id}/complete', operationId: 'completeTestSetupIntent', tag: 'Test helpers',
    example: { card_number: '4242424242424242' },
    summary: 'Save a card for the intent’s customer as the setup page would (test mode)',
    description: 'card_number defaults to 4242424242424242. 4000000000000002 is refused (409 card_declined, nothing saved); 4000000000009995 saves, then every charge of it fails with insufficient_funds.',
    params: idParam, body: methods.setupIntentCompleteBody, errors: [409],
    response: { status: 200, description: 'The succeeded setup intent (payment_method_id set).', schema: setupIntentObject },
    phased: true,
    handler: async (ctx, { params, body }) => methods.setupIntentToJSON(await methods.completeSetupForTest(ctx, params.id, body), ctx.runtime.config.publicBaseUrl),
  }),
];
