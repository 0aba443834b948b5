// Plans over REST and GraphQL: the same domain, the same rules, the same codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let other: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
  other = await app.merchant();
});
afterAll(() => app?.close());

const pro = { name: 'Pro monthly', amount: 2900, currency: 'usd', interval: 'month', trial_period_days: 14, metadata: { tier: 'pro' } };

describe('plans over REST', () => {
  it('creates, reads, lists with active, archives (final), with events', async () => {
    const r = await api.post('/v1/plans', pro);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^plan_[0-9A-Za-z]{22}$/),
      object: 'plan',
      name: 'Pro monthly',
      amount: 2900,
      amount_formatted: '$29.00',
      currency: 'USD',
      interval: 'month',
      interval_count: 1,
      trial_period_days: 14,
      active: true,
      metadata: { tier: 'pro' },
      archived_at: null,
    });
    expect((await api.get(`/v1/plans/${r.body.id}`)).body).toEqual(r.body);
    const free = (await api.post('/v1/plans', { name: 'Free', amount: 0, currency: 'EUR', interval: 'year' })).body;
    expect(free.amount).toBe(0);

    const archived = await api.post(`/v1/plans/${free.id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ active: false, archived_at: expect.any(String) });
    const again = await api.post(`/v1/plans/${free.id}/archive`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('plan_archived');

    expect((await api.get('/v1/plans?active=true')).body.data.map((p: any) => p.id)).toEqual([r.body.id]);
    expect((await api.get('/v1/plans?active=false')).body.data.map((p: any) => p.id)).toEqual([free.id]);
    expect((await api.get('/v1/plans')).body.data.map((p: any) => p.id)).toEqual([free.id, r.body.id]);
    const page = await api.get('/v1/plans?limit=1');
    expect(page.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    expect((await api.get(`/v1/plans?limit=1&after=${page.body.next_cursor}`)).body.data.map((p: any) => p.id)).toEqual([r.body.id]);

    const events = (await api.get('/v1/events?type=plan.*')).body.data;
    expect(events.map((e: any) => e.type)).toEqual(['plan.archived', 'plan.created', 'plan.created']);
    expect(events[0].data.previous_attributes).toEqual({ active: true, archived_at: null });
  });

  it('refuses bad input with the error body', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...pro, name: undefined }, 'parameter_missing', 'name'],
      [{ ...pro, amount: -1 }, 'parameter_invalid', 'amount'],
      [{ ...pro, amount: 1.5 }, 'parameter_invalid', 'amount'],
      [{ ...pro, currency: 'xyz' }, 'parameter_invalid', 'currency'],
      [{ ...pro, interval: 'fortnight' }, 'parameter_invalid', 'interval'],
      [{ ...pro, interval_count: 0 }, 'parameter_invalid', 'interval_count'],
      [{ ...pro, interval_count: 13 }, 'parameter_invalid', 'interval_count'],
      [{ ...pro, interval: 'day', interval_count: 366 }, 'parameter_invalid', 'interval_count'],
      [{ ...pro, interval: 'year', interval_count: 2 }, 'parameter_invalid', 'interval_count'],
      [{ ...pro, trial_period_days: 731 }, 'parameter_invalid', 'trial_period_days'],
      [{ ...pro, name: 'a\u0000b' }, 'parameter_invalid', 'name'],
      [{ ...pro, colour: 'red' }, 'parameter_unknown', 'colour'],
    ];
    for (const [body, code, param] of cases) {
      const r = await api.post('/v1/plans', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatchObject({ code, param });
    }
    expect((await api.post('/v1/plans', { ...pro, interval: 'day', interval_count: 365 })).status).toBe(201);
    expect((await api.get('/v1/plans?active=yes')).body.error).toMatchObject({ code: 'parameter_invalid', param: 'active' });
    const theirs = (await other.post('/v1/plans', pro)).body;
    expect((await api.get(`/v1/plans/${theirs.id}`)).status).toBe(404);
    expect((await api.post(`/v1/plans/${theirs.id}/archive`)).status).toBe(404);
  });
});

describe('plan search', () => {
  it('finds plans by every word within the name, case-insensitive, or by id; combines with active and paging; the same over GraphQL', async () => {
    const m = await app.merchant();
    const mk = async (name: string) => (await m.post('/v1/plans', { name, amount: 1000, currency: 'USD', interval: 'month' })).body;
    const proMonthly = await mk('Pro monthly');
    const proYearly = await mk('PRO yearly');
    const basic = await mk('Basic (monthly)');
    const pct = await mk('100% off_deal');
    const slash = await mk('back\\slash');
    await (await app.merchant()).post('/v1/plans', { name: 'Pro monthly', amount: 1000, currency: 'USD', interval: 'month' });
    const ids = async (q: string) => (await m.get(`/v1/plans?${q}`)).body.data.map((p: any) => p.id);
    expect(await ids('search=pro')).toEqual([proYearly.id, proMonthly.id]);
    expect(await ids('search=MONTH')).toEqual([basic.id, proMonthly.id]);
    expect(await ids(`search=${encodeURIComponent('  pro   month ')}`)).toEqual([proMonthly.id]);
    expect(await ids('search=onthl')).toEqual([basic.id, proMonthly.id]);
    expect(await ids(`search=${basic.id}`)).toEqual([basic.id]);
    // % and _ are plain text, not wildcards.
    expect(await ids(`search=${encodeURIComponent('%')}`)).toEqual([pct.id]);
    expect(await ids('search=f_d')).toEqual([pct.id]);
    expect(await ids('search=f_')).toEqual([pct.id]);
    expect(await ids(`search=${encodeURIComponent('\\')}`)).toEqual([slash.id]);
    expect(await ids('search=enterprise')).toEqual([]);
    await m.post(`/v1/plans/${proYearly.id}/archive`);
    expect(await ids('search=pro&active=true')).toEqual([proMonthly.id]);
    expect(await ids('search=pro&active=false')).toEqual([proYearly.id]);
    const page = (await m.get('/v1/plans?search=o&limit=2')).body;
    expect(page).toMatchObject({ has_more: true, data: [{ id: pct.id }, { id: basic.id }] }); // 'back\\slash' has no o
    expect((await m.get(`/v1/plans?search=o&limit=2&after=${page.next_cursor}`)).body.data.map((p: any) => p.id)).toEqual([proYearly.id, proMonthly.id]);
    for (const bad of ['search=', `search=${'x'.repeat(101)}`, `search=${encodeURIComponent('   ')}`]) {
      const r = await m.get(`/v1/plans?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'search' });
    }

    const q = await m.gql(`query($s: String) { plans(search: $s, active: true, first: 5) { totalCount edges { node { id name } } } }`, { s: 'pro' });
    expect(q.data.plans).toEqual({ totalCount: 1, edges: [{ node: { id: proMonthly.id, name: 'Pro monthly' } }] });
    const bad = await m.gql(`{ plans(search: "") { totalCount } }`);
    expect(bad.errors?.[0]).toMatchObject({ extensions: { code: 'parameter_invalid', param: 'search' } });
  });
});

describe('plans over GraphQL', () => {
  it('creates, lists with active, archives with typed errors', async () => {
    const m = await app.merchant();
    const CREATE = `mutation($input: CreatePlanInput!) { createPlan(input: $input) { __typename ... on Error { code param } ... on CreatePlanSuccess { plan { id name amount amountFormatted currency interval intervalCount trialPeriodDays active } } } }`;
    const r = await m.gql(CREATE, { input: { name: 'Team', amount: 9900, currency: 'eur', interval: 'year', idempotencyKey: 'plan-team' } });
    const plan = r.data.createPlan.plan;
    expect(plan).toMatchObject({ name: 'Team', amount: 9900, currency: 'EUR', interval: 'year', intervalCount: 1, trialPeriodDays: 0, active: true });
    expect((await m.gql(CREATE, { input: { name: 'Team', amount: 9900, currency: 'eur', interval: 'year', idempotencyKey: 'plan-team' } })).data.createPlan.plan.id).toBe(plan.id);
    const bad = await m.gql(CREATE, { input: { name: 'X', amount: 100, currency: 'USD', interval: 'month', intervalCount: 24 } });
    expect(bad.data.createPlan).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'intervalCount' });

    const ARCHIVE = `mutation($input: ArchivePlanInput!) { archivePlan(input: $input) { __typename ... on Error { code } ... on ArchivePlanSuccess { plan { active archivedAt } } } }`;
    expect((await m.gql(ARCHIVE, { input: { id: plan.id } })).data.archivePlan.plan.active).toBe(false);
    expect((await m.gql(ARCHIVE, { input: { id: plan.id } })).data.archivePlan).toEqual({ __typename: 'StateError', code: 'plan_archived' });
    expect((await m.gql(ARCHIVE, { input: { id: 'plan_nope' } })).data.archivePlan).toEqual({ __typename: 'NotFoundError', code: 'resource_missing' });

    await m.gql(CREATE, { input: { name: 'Starter', amount: 500, currency: 'USD', interval: 'week', intervalCount: 2 } });
    const list = await m.gql(`{ active: plans(active: true) { totalCount edges { node { name } } } archived: plans(active: false) { totalCount } all: plans(first: 10) { totalCount } }`);
    expect(list.data).toEqual({ active: { totalCount: 1, edges: [{ node: { name: 'Starter' } }] }, archived: { totalCount: 1 }, all: { totalCount: 2 } });
    expect((await m.gql(`query($id: ID!) { node(id: $id) { __typename ... on Plan { name } } }`, { id: plan.id })).data.node).toEqual({ __typename: 'Plan', name: 'Team' });
    // The same plan through REST.
    expect((await m.get(`/v1/plans/${plan.id}`)).body).toMatchObject({ id: plan.id, active: false, amount: 9900 });
  });
});
