import { exampleId } from '../platform/ids.ts';
import * as payments from '../domain/payments/index.ts';
import * as refunds from '../domain/refunds/index.ts';
import type { Ctx } from '../platform/context.ts';
import { route, listEnvelope } from './route.ts';
import { idParam, listOf, paymentObject, refundObject } from './schemas.ts';

const toJSON = (ctx: Ctx) => (p: payments.PaymentWithCustomer) => payments.paymentToJSON(p, ctx.runtime.config.publicBaseUrl);

export const paymentRoutes = [
  route({
    method: 'post', path: '/v1/payments', operationId: 'createPayment', tag: 'Payments', summary: 'Create a payment and its hosted checkout',
    example: {
      amount: 2599, currency: 'EUR', customer: { email: 'jane@example.com', name: 'Jane Doe' },
      redirect_url: 'https://shop.example.com/thanks', cancel_url: 'https://shop.example.com/cart',
      checkout: { title: 'Order #6735' }, metadata: { order_id: '6735' },
    },
    description: 'Send the customer to `checkout_url`. After paying they are redirected to `redirect_url?payment_id=…&status=…`.',
    body: payments.paymentCreate,
    response: { status: 201, description: 'The new payment (status created).', schema: paymentObject },
    phased: true,
    handler: async (ctx, { body }) => toJSON(ctx)(await payments.createPayment(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/payments/{id}', operationId: 'getPayment', tag: 'Payments', summary: 'Retrieve a payment',
    params: idParam,
    response: { status: 200, description: 'The payment.', schema: paymentObject },
    handler: async (ctx, { params }) => toJSON(ctx)(await payments.getPayment(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/payments', operationId: 'listPayments', tag: 'Payments', summary: 'List payments, newest first',
    query: payments.paymentListQuery,
    response: { status: 200, description: 'A page of payments.', schema: listOf(paymentObject, 'PaymentList') },
    handler: async (ctx, { query }) => listEnvelope(await payments.listPayments(ctx, query), toJSON(ctx)),
  }),
  route({
    method: 'post', path: '/v1/refunds', operationId: 'createRefund', tag: 'Refunds', summary: 'Refund a succeeded payment, fully or partly',
    example: { payment_id: exampleId('payment'), amount: 500, reason: 'customer_request' },
    conflict: { code: 'payment_not_succeeded', message: 'Only succeeded payments can be refunded; this payment is created.', param: 'payment_id' },
    body: refunds.refundCreate, errors: [409],
    response: { status: 201, description: 'The refund (the test processor settles it at once).', schema: refundObject },
    phased: true,
    handler: async (ctx, { body }) => refunds.refundToJSON(await refunds.createRefund(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/refunds/{id}', operationId: 'getRefund', tag: 'Refunds', summary: 'Retrieve a refund',
    params: idParam,
    response: { status: 200, description: 'The refund.', schema: refundObject },
    handler: async (ctx, { params }) => refunds.refundToJSON(await refunds.getRefund(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/refunds', operationId: 'listRefunds', tag: 'Refunds', summary: 'List refunds, newest first',
    query: refunds.refundListQuery,
    response: { status: 200, description: 'A page of refunds.', schema: listOf(refundObject, 'RefundList') },
    handler: async (ctx, { query }) => listEnvelope(await refunds.listRefunds(ctx, query), refunds.refundToJSON),
  }),
  route({
    method: 'post', path: '/v1/test-helpers/payments/{id}/complete', operationId: 'completeTestPayment', tag: 'Test helpers',
    example: { outcome: 'succeeded' },
    conflict: { code: 'payment_not_pending', message: 'This payment is succeeded; only a payment awaiting checkout (created, or failed and not yet expired) can be completed.' },
    summary: 'Finish a checkout as the customer would (test mode)',
    description: 'outcome succeeded/failed runs the test processor with a succeeding/declined card or mobile-money number; cancelled cancels.',
    params: idParam, body: payments.paymentCompleteBody, errors: [409],
    response: { status: 200, description: 'The payment after completion.', schema: paymentObject },
    phased: true,
    handler: async (ctx, { params, body }) => toJSON(ctx)(await payments.completeForTest(ctx, params.id, body)),
  }),
];
