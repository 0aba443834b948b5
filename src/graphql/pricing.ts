// Coupons and tax rates over GraphQL: the same domain functions as /v1/coupons and /v1/tax-rates,
// the same list filters and error codes, as data.
import type { Coupon as CouponRow } from '../generated/prisma/client.ts';
import * as coupons from '../domain/pricing/coupons.ts';
import * as taxRates from '../domain/pricing/tax-rates.ts';
import { formatMoney } from '../platform/money.ts';
import { clockNow } from '../platform/clock.ts';
import { NotFoundError, StateError } from '../platform/errors.ts';
import { builder, connectionComplexity, nodeKind } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, orNull, requestLoader, toConnection } from './helpers.ts';

const CouponDuration = builder.enumType('CouponDuration', {
  description: 'once: the next invoice only; repeating: durationInMonths months; forever.',
  values: coupons.COUPON_DURATIONS,
});

// Not a Node: a coupon's id may be a code the merchant chose (SUMMER25), unique per merchant only.
export const Coupon = builder.objectRef<CouponRow>('Coupon').implement({
  description: 'A percent or amount discount for subscriptions. Deleted coupons take no new redemptions; applied discounts go on.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The code the merchant chose, or a generated coupon_… id.' }),
    name: t.exposeString('name'),
    percentOff: t.float({ nullable: true, description: 'Percent off (up to 2 decimals); null for an amount off.', resolve: (c) => (c.percentOffBp === null ? null : c.percentOffBp / 100) }),
    amountOff: t.field({ type: 'Money', nullable: true, description: 'Amount off each discounted invoice (at most its subtotal).', resolve: (c) => c.amountOff }),
    amountOffFormatted: t.string({ nullable: true, resolve: (c) => (c.amountOff === null || c.currency === null ? null : formatMoney(c.amountOff, c.currency)) }),
    currency: t.exposeString('currency', { nullable: true }),
    duration: t.field({ type: CouponDuration, resolve: (c) => c.duration as coupons.CouponDuration }),
    durationInMonths: t.exposeInt('durationInMonths', { nullable: true }),
    maxRedemptions: t.exposeInt('maxRedemptions', { nullable: true }),
    redeemBy: t.expose('redeemBy', { type: 'DateTime', nullable: true }),
    timesRedeemed: t.exposeInt('timesRedeemed'),
    valid: t.boolean({
      description: 'Whether it can still be applied: not deleted, not past redeemBy, redemptions left.',
      // The billing clock read once for a page of coupons (a test merchant's offset is a statement,
      // and a page's resolvers all ask before the first answer is back).
      resolve: async (c, _, gctx) => coupons.couponValid(c, await requestLoader<string, Date>(gctx, 'Merchant.clockNow', (ids) => Promise.all(ids.map(() => clockNow(gctx.ctx)))).load(gctx.ctx.merchant.id)),
    }),
    deleted: t.boolean({ resolve: (c) => c.deletedAt !== null }),
    metadata: t.field({ type: 'JSON', resolve: (c) => c.metadata }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const TaxRate = builder.prismaNode('TaxRate', {
  id: { field: 'id' },
  description: 'An exclusive (added) or inclusive (contained) tax percentage applied to the lines of invoices.',
  fields: (t) => ({
    displayName: t.exposeString('displayName'),
    percentage: t.float({ description: 'Percent, up to 4 decimals.', resolve: (r) => r.percentage / 10_000 }),
    inclusive: t.exposeBoolean('inclusive'),
    country: t.exposeString('country', { nullable: true }),
    jurisdiction: t.exposeString('jurisdiction', { nullable: true }),
    active: t.exposeBoolean('active'),
    metadata: t.field({ type: 'JSON', resolve: (r) => r.metadata }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('tax_rate', TaxRate);

const CouponConnection = connectionType(Coupon, 'Coupon');
const TaxRateConnection = connectionType(TaxRate, 'TaxRate');

builder.queryFields((t) => ({
  coupon: t.field({ type: Coupon, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(coupons.getCoupon(ctx, String(id))) }),
  coupons: t.field({
    type: CouponConnection,
    description: 'Coupons, newest first (deleted ones left out).',
    complexity: connectionComplexity,
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), search: t.arg.string({ description: coupons.COUPON_SEARCH_DESCRIPTION }) },
    resolve: async (_, a, { ctx }) => toConnection(await coupons.listCoupons(ctx, listArgs(coupons.couponListQuery, a))),
  }),
  taxRate: t.field({ type: TaxRate, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(taxRates.getTaxRate(ctx, String(id))) }),
  taxRates: t.field({
    type: TaxRateConnection,
    description: 'Tax rates, newest first.',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      active: t.arg.boolean({ description: 'true: rates subscriptions may name; false: archived.' }),
      search: t.arg.string({ description: taxRates.TAX_RATE_SEARCH_DESCRIPTION }),
    },
    resolve: async (_, { active, ...a }, { ctx }) =>
      toConnection(await taxRates.listTaxRates(ctx, listArgs(taxRates.taxRateListQuery, { ...a, active: active === null || active === undefined ? undefined : String(active) }))),
  }),
}));

const CreateCouponInput = builder.inputType('CreateCouponInput', {
  fields: (t) => ({
    id: t.string({ description: 'A code of your choosing (letters, digits, _ and -, up to 64); default: a generated coupon_… id.' }),
    name: t.string({ required: true }),
    percentOff: t.float({ description: '0 < x ≤ 100, up to 2 decimals; or amountOff with currency.' }),
    amountOff: t.field({ type: 'Money', description: 'Amount off each discounted invoice; with currency.' }),
    currency: t.string(),
    duration: t.field({ type: CouponDuration, required: true }),
    durationInMonths: t.int({ description: 'With duration repeating.' }),
    maxRedemptions: t.int(),
    redeemBy: t.field({ type: 'DateTime' }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const DeleteCouponInput = builder.inputType('DeleteCouponInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});

const CreateTaxRateInput = builder.inputType('CreateTaxRateInput', {
  fields: (t) => ({
    displayName: t.string({ required: true }),
    percentage: t.float({ required: true, description: '0 to 100, up to 4 decimals.' }),
    inclusive: t.boolean({ description: 'Contained in the line amounts (default false: added to them).' }),
    country: t.string({ description: 'ISO 3166-1 alpha-2.' }),
    jurisdiction: t.string(),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const ArchiveTaxRateInput = builder.inputType('ArchiveTaxRateInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});

builder.mutationFields((t) => ({
  createCoupon: t.field({
    type: Coupon,
    description: 'Records coupon.created. StateError resource_already_exists when the id is taken.',
    errors: { types: [...COMMON_ERRORS, StateError], dataField: { name: 'coupon' }, result: { name: 'CreateCouponSuccess' }, union: { name: 'CreateCouponResult' } },
    args: { input: t.arg({ type: CreateCouponInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createCoupon', input, (ctx, fields) => coupons.createCoupon(ctx, domainInput(coupons.couponCreate, fields))),
  }),
  deleteCoupon: t.field({
    type: Coupon,
    description: 'No new redemptions; applied discounts go on. Records coupon.deleted.',
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'coupon' }, result: { name: 'DeleteCouponSuccess' }, union: { name: 'DeleteCouponResult' } },
    args: { input: t.arg({ type: DeleteCouponInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'deleteCoupon', input, (ctx, { id }) => coupons.deleteCoupon(ctx, String(id))),
  }),
  createTaxRate: t.field({
    type: TaxRate,
    errors: { types: COMMON_ERRORS, dataField: { name: 'taxRate' }, result: { name: 'CreateTaxRateSuccess' }, union: { name: 'CreateTaxRateResult' } },
    args: { input: t.arg({ type: CreateTaxRateInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createTaxRate', input, (ctx, fields) => taxRates.createTaxRate(ctx, domainInput(taxRates.taxRateCreate, fields))),
  }),
  archiveTaxRate: t.field({
    type: TaxRate,
    description: 'active → false (final; again: StateError tax_rate_archived): no new subscription may name it; those that have it keep it. No event.',
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'taxRate' }, result: { name: 'ArchiveTaxRateSuccess' }, union: { name: 'ArchiveTaxRateResult' } },
    args: { input: t.arg({ type: ArchiveTaxRateInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'archiveTaxRate', input, (ctx, { id }) => taxRates.archiveTaxRate(ctx, String(id))),
  }),
}));
