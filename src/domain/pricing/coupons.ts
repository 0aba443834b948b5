// Coupons (API-CONVENTIONS "Billing depth"; docs/billing.md "Coupons"): a percent or an amount
// off, for once (the next invoice), repeating N months or forever. Applying one to a subscription
// redeems it (times_redeemed + 1 under the coupon's row lock, so concurrent redemptions never pass
// max_redemptions); deleting one stops new redemptions, discounts already applied go on.
import type { Coupon, Prisma } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type Db, type TenantTx } from '../../platform/db/tenant.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { amount, currency, freeText, listQuery, metadata, parse, searchParam, searchWords, timestamp, z } from '../../platform/validation.ts';
import { clockNow } from '../../platform/clock.ts';
import { recordEvent } from '../events/index.ts';
import type { PricingCoupon } from './rules.ts';
import * as store from './store.ts';

export const COUPON_DURATIONS = ['once', 'repeating', 'forever'] as const;
export type CouponDuration = (typeof COUPON_DURATIONS)[number];
export const MAX_DURATION_MONTHS = 120;

const twoDecimals = (v: number) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-7;

export const couponCreate = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, _ or -' })
      .optional()
      .meta({ description: 'A code of your choosing (unique among your coupons), e.g. SUMMER25; default: a generated coupon_… id.', example: 'SUMMER25' }),
    name: freeText(256).meta({ example: 'Summer sale' }),
    percent_off: z
      .number({ error: 'must be a number' })
      .gt(0, { error: 'must be greater than 0' })
      .max(100, { error: 'must be at most 100' })
      .refine(twoDecimals, { error: 'must have at most 2 decimals' })
      .optional()
      .meta({ description: 'Percent off the invoice (0 < x ≤ 100, up to 2 decimals); or amount_off with currency.', example: 25 }),
    amount_off: amount(1).optional().meta({ description: 'Amount off each discounted invoice, smallest currency unit (at most its subtotal); with currency.', example: 500 }),
    currency: currency.optional().meta({ description: 'The currency of amount_off; only subscriptions billing it can use the coupon.' }),
    duration: z.enum(COUPON_DURATIONS).meta({ description: 'once: the next invoice only; repeating: the invoices of duration_in_months months; forever.' }),
    duration_in_months: z
      .number()
      .int({ error: 'must be a whole number of months' })
      .min(1, { error: 'must be at least 1' })
      .max(MAX_DURATION_MONTHS, { error: `must be at most ${MAX_DURATION_MONTHS}` })
      .optional()
      .meta({ description: 'With duration repeating: how many months the discount lasts from when it is applied.', example: 3 }),
    max_redemptions: z
      .number()
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(1_000_000_000, { error: 'must be at most 1000000000' })
      .optional()
      .meta({ description: 'How many times it can be applied to subscriptions in all.', example: 100 }),
    redeem_by: timestamp.optional().meta({ description: 'The last moment it can be applied (billing clock).' }),
    metadata: metadata.optional(),
  })
  .superRefine((v, ctx) => {
    if ((v.percent_off === undefined) === (v.amount_off === undefined)) {
      ctx.addIssue({ code: 'custom', path: [v.percent_off === undefined ? 'percent_off' : 'amount_off'], message: 'give either percent_off or amount_off (with currency)' });
    }
    if (v.amount_off !== undefined && v.currency === undefined) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'is required with amount_off' });
    if (v.percent_off !== undefined && v.currency !== undefined) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'applies to amount_off only' });
    if (v.duration === 'repeating' && v.duration_in_months === undefined) ctx.addIssue({ code: 'custom', path: ['duration_in_months'], message: 'is required with duration repeating' });
    if (v.duration !== 'repeating' && v.duration_in_months !== undefined) ctx.addIssue({ code: 'custom', path: ['duration_in_months'], message: 'applies to duration repeating only' });
  });
export type CouponCreateInput = z.input<typeof couponCreate>;

/** What `search` matches (docs/billing.md "Coupons"). */
export const COUPON_SEARCH_DESCRIPTION =
  'Case-insensitive search: coupons whose code (id) or name contains every word of the text ("summer 25" finds SUMMER25 "Summer sale"). 1 to 100 characters.';

export const couponListQuery = z.strictObject({ search: searchParam(COUPON_SEARCH_DESCRIPTION, 'summer').optional(), ...listQuery });
export type CouponListQuery = z.output<typeof couponListQuery>;

/** Whether a coupon can still be applied at `now`: not deleted, not past redeem_by, redemptions left. */
export function couponValid(c: Coupon, now: Date): boolean {
  if (c.deletedAt) return false;
  if (c.redeemBy && c.redeemBy.getTime() < now.getTime()) return false;
  return c.maxRedemptions === null || c.timesRedeemed < c.maxRedemptions;
}

export function couponToJSON(c: Coupon, now: Date) {
  return {
    id: c.id,
    object: 'coupon' as const,
    name: c.name,
    percent_off: c.percentOffBp === null ? null : c.percentOffBp / 100,
    amount_off: c.amountOff === null ? null : Number(c.amountOff),
    amount_off_formatted: c.amountOff === null || c.currency === null ? null : formatMoney(c.amountOff, c.currency),
    currency: c.currency,
    duration: c.duration as CouponDuration,
    duration_in_months: c.durationInMonths,
    max_redemptions: c.maxRedemptions,
    redeem_by: c.redeemBy?.toISOString() ?? null,
    times_redeemed: c.timesRedeemed,
    valid: couponValid(c, now),
    deleted: c.deletedAt !== null,
    metadata: c.metadata as Record<string, string>,
    created_at: c.createdAt.toISOString(),
  };
}
export type CouponJSON = ReturnType<typeof couponToJSON>;

export function pricingCoupon(c: Coupon): PricingCoupon {
  return { id: c.id, percentOffBp: c.percentOffBp, amountOff: c.amountOff, once: c.duration === 'once' };
}

export async function createCoupon(ctx: Ctx, input: CouponCreateInput): Promise<Coupon> {
  const data = parse(couponCreate, input);
  return inTransaction(ctx.db, async (tx) => {
    const id = data.id ?? newId('coupon');
    if (await store.lockCoupon(tx, ctx.merchant.id, id)) {
      throw new StateError('resource_already_exists', `A coupon with id '${id}' already exists (deleted coupons keep their id).`, 'id');
    }
    const now = await clockNow({ ...ctx, db: tx });
    // As Stripe: a coupon that could never be redeemed is refused rather than made already invalid.
    if (data.redeem_by && data.redeem_by.getTime() <= now.getTime()) {
      throw new ValidationError('parameter_invalid', `Invalid redeem_by: must be in the future (now is ${now.toISOString()} on the billing clock).`, 'redeem_by');
    }
    const c = await store.insertCoupon(tx, {
      merchantId: ctx.merchant.id,
      id,
      name: data.name,
      percentOffBp: data.percent_off === undefined ? null : Math.round(data.percent_off * 100),
      amountOff: data.amount_off === undefined ? null : BigInt(data.amount_off),
      currency: data.currency ?? null,
      duration: data.duration,
      durationInMonths: data.duration_in_months ?? null,
      maxRedemptions: data.max_redemptions ?? null,
      redeemBy: data.redeem_by ?? null,
      metadata: data.metadata ?? {},
      createdAt: now,
    });
    await recordEvent(tx, ctx, 'coupon.created', couponToJSON(c, now));
    return c;
  });
}

/** A coupon of the merchant, deleted ones included (their discounts go on); 404 when unknown. */
export async function findCouponAny(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<Coupon> {
  const c = await store.findCoupon(db, ctx.merchant.id, id);
  if (!c) throw new NotFoundError('coupon', id, param);
  return c;
}

/** GET /v1/coupons/:id: 404 for an unknown or deleted coupon. */
export async function getCoupon(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<Coupon> {
  const c = await findCouponAny(ctx, id, db, param);
  if (c.deletedAt) throw new NotFoundError('coupon', id, param);
  return c;
}

/**
 * The search as a filter: every word (searchWords) within the code or the name, case-insensitive.
 * A merchant's coupons are a catalogue (hundreds, not millions): a scan of its own rows, as plans.
 */
function couponSearchFilter(search: string | undefined): Prisma.CouponWhereInput {
  if (search === undefined) return {};
  return { AND: searchWords(search).map((w) => ({ OR: [{ id: { contains: w, mode: 'insensitive' as const } }, { name: { contains: w, mode: 'insensitive' as const } }] })) };
}

export async function listCoupons(ctx: Ctx, q: CouponListQuery): Promise<Page<Coupon>> {
  const filter: Prisma.CouponWhereInput = { AND: [{ deletedAt: null }, couponSearchFilter(q.search)] };
  return paginate(
    q,
    ({ where, ...page }) => store.listCoupons(ctx.db, { AND: [where, filter] }, page),
    () => store.countCoupons(ctx.db, filter),
  );
}

/** DELETE /v1/coupons/:id: no new redemptions; discounts applied go on. 404 when unknown or deleted already. */
export async function deleteCoupon(ctx: Ctx, id: string): Promise<Coupon> {
  return inTransaction(ctx.db, async (tx) => {
    const c = await store.lockCoupon(tx, ctx.merchant.id, id);
    if (!c || c.deletedAt) throw new NotFoundError('coupon', id, 'id');
    const now = await clockNow({ ...ctx, db: tx });
    const after = await store.updateCoupon(tx, ctx.merchant.id, id, { deletedAt: now });
    await recordEvent(tx, ctx, 'coupon.deleted', couponToJSON(after, now), { deleted: false, valid: couponValid(c, now) });
    return after;
  });
}

/**
 * Whether coupon `id` (its row, or null) can be redeemed at `now` by a subscription billing
 * `billingCurrency`: 404 unknown or deleted, 409 coupon_expired past redeem_by, 409
 * coupon_max_redemptions, 409 currency_mismatch for an amount_off in another currency.
 */
function checkRedeemable(c: Coupon | null, id: string, billingCurrency: string, now: Date, param: string): Coupon {
  if (!c || c.deletedAt) throw new NotFoundError('coupon', id, param);
  if (c.redeemBy && c.redeemBy.getTime() < now.getTime()) {
    throw new StateError('coupon_expired', `Coupon ${id} could be redeemed until ${c.redeemBy.toISOString()}.`, param);
  }
  if (c.maxRedemptions !== null && c.timesRedeemed >= c.maxRedemptions) {
    throw new StateError('coupon_max_redemptions', `Coupon ${id} was redeemed ${c.timesRedeemed} times, its maximum.`, param);
  }
  if (c.currency !== null && c.currency !== billingCurrency) {
    throw new StateError('currency_mismatch', `Coupon ${id} takes ${c.currency} off; the subscription bills ${billingCurrency}.`, param);
  }
  return c;
}

/**
 * Redeems a coupon for a subscription billing `billingCurrency`, in the caller's transaction: the
 * coupon's row locked, then checked (checkRedeemable) and times_redeemed + 1. Returns the coupon
 * as redeemed.
 */
export async function redeemCoupon(ctx: Ctx, tx: TenantTx, id: string, billingCurrency: string, now: Date, param = 'coupon'): Promise<Coupon> {
  checkRedeemable(await store.lockCoupon(tx, ctx.merchant.id, id), id, billingCurrency, now, param);
  return store.updateCoupon(tx, ctx.merchant.id, id, { timesRedeemed: { increment: 1 } });
}

/** The coupon redeemCoupon would redeem, with the same refusals, read only (the upcoming-invoice preview of a coupon change). */
export async function redeemableCoupon(ctx: Ctx, db: Db, id: string, billingCurrency: string, now: Date, param = 'coupon'): Promise<Coupon> {
  return checkRedeemable(await store.findCoupon(db, ctx.merchant.id, id), id, billingCurrency, now, param);
}

/** The coupons of these ids (deleted ones included), for pricing invoices. */
export async function couponForPricing(ctx: Ctx, id: string, db: Db): Promise<PricingCoupon | null> {
  const c = await store.findCoupon(db, ctx.merchant.id, id);
  return c ? pricingCoupon(c) : null;
}
