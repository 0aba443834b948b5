// Plans over GraphQL (subscriptions and invoices join with the billing engine): the same domain
// functions as /v1/plans.
import * as plans from '../domain/billing/plans.ts';
import { INTERVALS } from '../domain/billing/periods.ts';
import { formatMoney } from '../platform/money.ts';
import { NotFoundError, StateError } from '../platform/errors.ts';
import { builder, connectionComplexity } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, listArgs, mutate, orNull, toConnection } from './helpers.ts';

const PlanInterval = builder.enumType('PlanInterval', { values: INTERVALS });

export const Plan = builder.prismaNode('Plan', {
  id: { field: 'id' },
  description: 'A price per billing interval. Archived plans (active false) take no new subscriptions.',
  fields: (t) => ({
    name: t.exposeString('name'),
    amount: t.field({ type: 'Money', description: 'Price per period, smallest currency unit.', resolve: (p) => p.amount }),
    amountFormatted: t.string({ resolve: (p) => formatMoney(p.amount, p.currency) }),
    currency: t.exposeString('currency'),
    interval: t.field({ type: PlanInterval, resolve: (p) => p.interval as (typeof INTERVALS)[number] }),
    intervalCount: t.exposeInt('intervalCount'),
    trialPeriodDays: t.exposeInt('trialPeriodDays'),
    active: t.exposeBoolean('active'),
    metadata: t.field({ type: 'JSON', resolve: (p) => p.metadata }),
    archivedAt: t.expose('archivedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const PlanConnection = connectionType(Plan, 'Plan');

builder.queryFields((t) => ({
  plan: t.field({ type: Plan, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(plans.getPlan(ctx, String(id))) }),
  plans: t.field({
    type: PlanConnection,
    description: 'Plans, newest first.',
    complexity: connectionComplexity,
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), active: t.arg.boolean({ description: 'true: taking new subscriptions; false: archived.' }) },
    resolve: async (_, { active, ...a }, { ctx }) =>
      toConnection(await plans.listPlans(ctx, listArgs(plans.planListQuery, { ...a, active: active === null || active === undefined ? undefined : String(active) }))),
  }),
}));

const CreatePlanInput = builder.inputType('CreatePlanInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    amount: t.field({ type: 'Money', required: true, description: 'Price per period; 0 for a free plan.' }),
    currency: t.string({ required: true }),
    interval: t.field({ type: PlanInterval, required: true }),
    intervalCount: t.int({ description: 'Default 1; a period is at most one year.' }),
    trialPeriodDays: t.int({ description: 'Default trial for new subscriptions (0 to 730).' }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});

const ArchivePlanInput = builder.inputType('ArchivePlanInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});

builder.mutationFields((t) => ({
  createPlan: t.field({
    type: Plan,
    errors: { types: COMMON_ERRORS, dataField: { name: 'plan' }, result: { name: 'CreatePlanSuccess' }, union: { name: 'CreatePlanResult' } },
    args: { input: t.arg({ type: CreatePlanInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createPlan', input, (ctx, data: plans.PlanCreateInput) => plans.createPlan(ctx, data)),
  }),
  archivePlan: t.field({
    type: Plan,
    description: 'No new subscriptions on the plan; existing ones go on.',
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'plan' }, result: { name: 'ArchivePlanSuccess' }, union: { name: 'ArchivePlanResult' } },
    args: { input: t.arg({ type: ArchivePlanInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'archivePlan', input, (ctx) => plans.archivePlan(ctx, String(input.id))),
  }),
}));
