// The merchant dashboard's overview (issue 24): MRR per currency, active subscriptions, and the
// last 30 days of the merchant's billing clock — revenue (succeeded payments minus succeeded
// refunds) per day and currency, failed payment attempts per day. Two statements (store.ts).
import type { Ctx } from '../../platform/context.ts';
import { clockNow } from '../../platform/clock.ts';
import { normalizeCurrency } from '../../platform/money.ts';
import { ValidationError } from '../../platform/errors.ts';
import { findDailyActivity, findMrr } from './store.ts';

export const OVERVIEW_DAYS = 30;

export interface Overview {
  /** the billing clock's now when it was computed */
  asOf: Date;
  /** the first and last UTC days of the series (inclusive) */
  from: string;
  to: string;
  mrr: { currency: string; amount: bigint; subscriptions: number }[];
  activeSubscriptions: number;
  days: {
    date: string;
    revenue: { currency: string; amount: bigint; payments: number; refunds: number }[];
    failedPayments: number;
  }[];
}

const DAY_MS = 86_400_000;

/**
 * The overview, optionally limited to one currency (MRR and revenue; counts of subscriptions and
 * failed payments are for all currencies). Days are UTC: today on the billing clock and the 29
 * before it, oldest first, every day present (zeros included).
 */
export async function getOverview(ctx: Ctx, opts: { currency?: string | null | undefined } = {}): Promise<Overview> {
  let currency: string | null = null;
  if (opts.currency !== undefined && opts.currency !== null) {
    currency = normalizeCurrency(opts.currency);
    if (!currency) throw new ValidationError('parameter_invalid', `Invalid currency: '${opts.currency}' is not a supported ISO 4217 currency code.`, 'currency');
  }
  const now = await clockNow(ctx);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const from = new Date(today - (OVERVIEW_DAYS - 1) * DAY_MS);
  const to = new Date(today + DAY_MS);
  const [mrrRows, daily] = await Promise.all([findMrr(ctx.db, ctx.merchant.id), findDailyActivity(ctx.db, ctx.merchant.id, from, to)]);

  const days = new Map<string, Overview['days'][number]>();
  for (let t = from.getTime(); t < to.getTime(); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    days.set(date, { date, revenue: [], failedPayments: 0 });
  }
  for (const r of daily) {
    const day = days.get(r.day);
    if (!day) continue;
    if (r.kind === 'failed') {
      day.failedPayments += Number(r.count);
      continue;
    }
    if (currency && r.currency !== currency) continue;
    let rev = day.revenue.find((x) => x.currency === r.currency);
    if (!rev) day.revenue.push((rev = { currency: r.currency, amount: 0n, payments: 0, refunds: 0 }));
    if (r.kind === 'payment') {
      rev.amount += BigInt(r.amount);
      rev.payments += Number(r.count);
    } else {
      rev.amount -= BigInt(r.amount);
      rev.refunds += Number(r.count);
    }
  }
  for (const d of days.values()) d.revenue.sort((a, b) => a.currency.localeCompare(b.currency));
  return {
    asOf: now,
    from: from.toISOString().slice(0, 10),
    to: new Date(today).toISOString().slice(0, 10),
    mrr: mrrRows.filter((m) => !currency || m.currency === currency).map((m) => ({ currency: m.currency, amount: BigInt(m.mrr), subscriptions: Number(m.subscriptions) })),
    activeSubscriptions: mrrRows.reduce((n, m) => n + Number(m.active), 0),
    days: [...days.values()],
  };
}
