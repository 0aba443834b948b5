// Plans: a price per billing interval. active: true → false (archived, final): an archived plan
// takes no new subscriptions (409 plan_archived); existing subscriptions go on.
import type { Plan, Prisma } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type Db } from '../../platform/db/tenant.ts';
import { lockRow } from '../../platform/db/raw.ts';
import { NotFoundError, StateError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { amount, currency, freeText, listQuery, metadata, parse, searchParam, searchWords, z } from '../../platform/validation.ts';
import { clockNow } from '../../platform/clock.ts';
import { recordEvent } from '../events/index.ts';
import { INTERVALS, MAX_INTERVAL_COUNT, type Interval } from './periods.ts';
import * as store from './store.ts';

export const MAX_TRIAL_DAYS = 730;

export const planCreate = z
  .strictObject({
    name: freeText(256).meta({ example: 'Pro monthly' }),
    amount: amount(0).meta({ description: 'Price per period in the smallest currency unit (0 for a free plan).', example: 2900 }),
    currency,
    interval: z.enum(INTERVALS).meta({ description: 'Billing interval.' }),
    interval_count: z
      .number()
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(365, { error: 'must be at most 365' })
      .optional()
      .meta({ description: 'Intervals per period (default 1); a period is at most one year (365 days, 52 weeks, 12 months, 1 year).', example: 1 }),
    trial_period_days: z
      .number()
      .int({ error: 'must be a whole number of days' })
      .min(0, { error: 'must be at least 0' })
      .max(MAX_TRIAL_DAYS, { error: `must be at most ${MAX_TRIAL_DAYS}` })
      .optional()
      .meta({ description: 'Default trial for new subscriptions, in days (default 0).', example: 14 }),
    apply_wallet_balance: z
      .boolean()
      .optional()
      .meta({ description: "Default of new subscriptions: draw invoices from the customer's active wallet in the plan's currency first (default false)." }),
    metadata: metadata.optional(),
  })
  .superRefine((v, ctx) => {
    const max = MAX_INTERVAL_COUNT[v.interval as Interval];
    if (v.interval_count !== undefined && max !== undefined && v.interval_count > max) {
      ctx.addIssue({ code: 'custom', path: ['interval_count'], message: `must be at most ${max} for interval ${v.interval} (a period is at most one year)` });
    }
  });
export type PlanCreateInput = z.input<typeof planCreate>;

/** What `search` matches (docs/billing.md "Plans"). */
export const PLAN_SEARCH_DESCRIPTION =
  'Case-insensitive search: plans whose name contains every word of the text ("pro month" finds "Pro monthly"), or whose id is the text. 1 to 100 characters; combines with active.';

export const planListQuery = z.strictObject({
  active: z.enum(['true', 'false']).optional().meta({ description: 'true: plans taking new subscriptions; false: archived plans.' }),
  search: searchParam(PLAN_SEARCH_DESCRIPTION, 'pro').optional(),
  ...listQuery,
});
export type PlanListQuery = z.output<typeof planListQuery>;

export function planToJSON(p: Plan) {
  return {
    id: p.id,
    object: 'plan' as const,
    name: p.name,
    amount: Number(p.amount),
    amount_formatted: formatMoney(p.amount, p.currency),
    currency: p.currency,
    interval: p.interval as Interval,
    interval_count: p.intervalCount,
    trial_period_days: p.trialPeriodDays,
    active: p.active,
    apply_wallet_balance: p.applyWalletBalance,
    metadata: p.metadata as Record<string, string>,
    archived_at: p.archivedAt?.toISOString() ?? null,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export async function createPlan(ctx: Ctx, input: PlanCreateInput): Promise<Plan> {
  const data = parse(planCreate, input);
  return inTransaction(ctx.db, async (tx) => {
    const p = await store.insertPlan(tx, {
      id: newId('plan'),
      merchantId: ctx.merchant.id,
      name: data.name,
      amount: BigInt(data.amount),
      currency: data.currency,
      interval: data.interval,
      intervalCount: data.interval_count ?? 1,
      trialPeriodDays: data.trial_period_days ?? 0,
      applyWalletBalance: data.apply_wallet_balance ?? false,
      metadata: data.metadata ?? {},
      createdAt: await clockNow({ ...ctx, db: tx }),
    });
    await recordEvent(tx, ctx, 'plan.created', planToJSON(p));
    return p;
  });
}

export async function getPlan(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<Plan> {
  const p = await store.findPlan(db, id);
  if (!p) throw new NotFoundError('plan', id, param);
  return p;
}

/** A plan that takes new subscriptions (for the subscription area): 404 unknown, 409 plan_archived. */
export async function subscribablePlan(ctx: Ctx, id: string, db: Db = ctx.db): Promise<Plan> {
  const p = await getPlan(ctx, id, db, 'plan_id');
  if (!p.active) throw new StateError('plan_archived', `Plan ${id} is archived and takes no new subscriptions.`, 'plan_id');
  return p;
}

/**
 * The search as a filter: the id, or every word (split at white space, at most 8) within the name,
 * case-insensitive. A merchant has few plans, so a scan of its own plans is cheap (no terms table,
 * unlike customers: docs/conventions.md "Customer search").
 */
function planSearchFilter(search: string | undefined): Prisma.PlanWhereInput {
  if (search === undefined) return {};
  return { OR: [{ id: search }, { AND: searchWords(search).map((w) => ({ name: { contains: w, mode: 'insensitive' as const } })) }] };
}

export async function listPlans(ctx: Ctx, q: PlanListQuery): Promise<Page<Plan>> {
  const filter: Prisma.PlanWhereInput = { AND: [q.active === undefined ? {} : { active: q.active === 'true' }, planSearchFilter(q.search)] };
  return paginate(
    q,
    ({ where, ...page }) => store.listPlans(ctx.db, { AND: [where, filter] }, page),
    () => store.countPlans(ctx.db, filter),
  );
}

/** Archives a plan (final). Archiving an archived plan is 409 plan_archived. */
export async function archivePlan(ctx: Ctx, id: string): Promise<Plan> {
  return inTransaction(ctx.db, async (tx) => {
    await lockRow(tx, 'plans', ctx.merchant.id, id);
    const before = await getPlan(ctx, id, tx);
    if (!before.active) throw new StateError('plan_archived', `Plan ${id} is already archived.`, null);
    const after = await store.updatePlan(tx, id, { active: false, archivedAt: await clockNow({ ...ctx, db: tx }) });
    await recordEvent(tx, ctx, 'plan.archived', planToJSON(after), { active: true, archived_at: null });
    return after;
  });
}
