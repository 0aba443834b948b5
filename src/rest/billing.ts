// Plans (subscriptions and invoices join this area with the billing engine).
import * as plans from '../domain/billing/plans.ts';
import { route, listEnvelope } from './route.ts';
import { idParam, listOf, planObject } from './schemas.ts';

const tag = 'Plans';

export const billingRoutes = [
  route({
    method: 'post', path: '/v1/plans', operationId: 'createPlan', tag, summary: 'Create a plan',
    body: plans.planCreate,
    response: { status: 201, description: 'The new plan (active).', schema: planObject },
    handler: async (ctx, { body }) => plans.planToJSON(await plans.createPlan(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/plans/{id}', operationId: 'getPlan', tag, summary: 'Retrieve a plan',
    params: idParam,
    response: { status: 200, description: 'The plan.', schema: planObject },
    handler: async (ctx, { params }) => plans.planToJSON(await plans.getPlan(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/plans', operationId: 'listPlans', tag, summary: 'List plans, newest first',
    query: plans.planListQuery,
    response: { status: 200, description: 'A page of plans.', schema: listOf(planObject, 'PlanList') },
    handler: async (ctx, { query }) => listEnvelope(await plans.listPlans(ctx, query), plans.planToJSON),
  }),
  route({
    method: 'post', path: '/v1/plans/{id}/archive', operationId: 'archivePlan', tag, summary: 'Archive a plan: no new subscriptions; existing ones go on',
    params: idParam, errors: [409],
    response: { status: 200, description: 'The archived plan (active false).', schema: planObject },
    handler: async (ctx, { params }) => plans.planToJSON(await plans.archivePlan(ctx, params.id)),
  }),
];
