// Coupons and tax rates (src/domain/pricing).
import { clockNow } from '../platform/clock.ts';
import * as coupons from '../domain/pricing/coupons.ts';
import * as taxRates from '../domain/pricing/tax-rates.ts';
import { route, listEnvelope } from './route.ts';
import { couponObject, idParam, listOf, taxRateObject } from './schemas.ts';

const couponTag = 'Coupons';
const taxTag = 'Tax rates';

export const pricingRoutes = [
  route({
    method: 'post', path: '/v1/coupons', operationId: 'createCoupon', tag: couponTag, summary: 'Create a coupon',
    description:
      'percent_off (0 < x ≤ 100, up to 2 decimals) or amount_off with currency; duration once (the next invoice), repeating (duration_in_months) or forever. `id` may be a code of your choosing (409 resource_already_exists when taken). Records coupon.created.',
    example: { id: 'SUMMER25', name: 'Summer sale', percent_off: 25, duration: 'repeating', duration_in_months: 3 },
    body: coupons.couponCreate, errors: [409],
    response: { status: 201, description: 'The new coupon (times_redeemed 0, valid true).', schema: couponObject },
    handler: async (ctx, { body }) => coupons.couponToJSON(await coupons.createCoupon(ctx, body), await clockNow(ctx)),
  }),
  route({
    method: 'get', path: '/v1/coupons/{id}', operationId: 'getCoupon', tag: couponTag, summary: 'Retrieve a coupon',
    params: idParam,
    response: { status: 200, description: 'The coupon (404 once deleted).', schema: couponObject },
    handler: async (ctx, { params }) => coupons.couponToJSON(await coupons.getCoupon(ctx, params.id), await clockNow(ctx)),
  }),
  route({
    method: 'get', path: '/v1/coupons', operationId: 'listCoupons', tag: couponTag, summary: 'List coupons, newest first (deleted ones left out)',
    query: coupons.couponListQuery,
    response: { status: 200, description: 'A page of coupons.', schema: listOf(couponObject, 'CouponList') },
    handler: async (ctx, { query }) => {
      const now = await clockNow(ctx);
      return listEnvelope(await coupons.listCoupons(ctx, query), (c) => coupons.couponToJSON(c, now));
    },
  }),
  route({
    method: 'delete', path: '/v1/coupons/{id}', operationId: 'deleteCoupon', tag: couponTag, summary: 'Delete a coupon: no new redemptions; applied discounts go on',
    params: idParam,
    response: { status: 200, description: 'The deleted coupon (deleted true, valid false). Records coupon.deleted.', schema: couponObject },
    handler: async (ctx, { params }) => coupons.couponToJSON(await coupons.deleteCoupon(ctx, params.id), await clockNow(ctx)),
  }),

  route({
    method: 'post', path: '/v1/tax-rates', operationId: 'createTaxRate', tag: taxTag, summary: 'Create a tax rate',
    description: 'percentage 0 to 100 with up to 4 decimals; inclusive (default false): contained in the line amounts rather than added. Name it in a subscription’s default_tax_rates.',
    example: { display_name: 'VAT', percentage: 20, inclusive: false, country: 'FR', jurisdiction: 'FR' },
    body: taxRates.taxRateCreate,
    response: { status: 201, description: 'The new tax rate.', schema: taxRateObject },
    handler: async (ctx, { body }) => taxRates.taxRateToJSON(await taxRates.createTaxRate(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/tax-rates/{id}', operationId: 'getTaxRate', tag: taxTag, summary: 'Retrieve a tax rate',
    params: idParam,
    response: { status: 200, description: 'The tax rate.', schema: taxRateObject },
    handler: async (ctx, { params }) => taxRates.taxRateToJSON(await taxRates.getTaxRate(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/tax-rates', operationId: 'listTaxRates', tag: taxTag, summary: 'List tax rates, newest first',
    query: taxRates.taxRateListQuery,
    response: { status: 200, description: 'A page of tax rates.', schema: listOf(taxRateObject, 'TaxRateList') },
    handler: async (ctx, { query }) => listEnvelope(await taxRates.listTaxRates(ctx, query), taxRates.taxRateToJSON),
  }),
  route({
    method: 'post', path: '/v1/tax-rates/{id}/archive', operationId: 'archiveTaxRate', tag: taxTag, summary: 'Archive a tax rate: no new subscription may name it; those that have it keep it',
    description: 'Final (409 tax_rate_archived when already archived). The subscriptions that name it keep it and their invoices are taxed with it as before. Records no event.',
    params: idParam, errors: [409],
    response: { status: 200, description: 'The archived tax rate (active false).', schema: taxRateObject },
    handler: async (ctx, { params }) => taxRates.taxRateToJSON(await taxRates.archiveTaxRate(ctx, params.id)),
  }),
];

