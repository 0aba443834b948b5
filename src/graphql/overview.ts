// The merchant dashboard's overview over GraphQL (issue 24): src/domain/billing/overview.ts.
import * as overview from '../domain/billing/overview.ts';
import { formatMoney } from '../platform/money.ts';
import { builder } from './builder.ts';

const MrrAmount = builder.objectRef<overview.Overview['mrr'][number]>('MrrAmount').implement({
  description: 'Monthly recurring revenue in one currency.',
  fields: (t) => ({
    currency: t.exposeString('currency'),
    amount: t.field({ type: 'Money', description: 'Minor units: the exact monthly sum rounded once, half away from zero.', resolve: (m) => m.amount }),
    amountFormatted: t.string({ resolve: (m) => formatMoney(m.amount, m.currency) }),
    subscriptions: t.exposeInt('subscriptions', { description: 'The active and past_due subscriptions counted in it.' }),
  }),
});

const DailyRevenue = builder.objectRef<overview.Overview['days'][number]['revenue'][number]>('DailyRevenue').implement({
  description: 'One day’s revenue in one currency: succeeded payments minus succeeded refunds (may be negative).',
  fields: (t) => ({
    currency: t.exposeString('currency'),
    amount: t.field({ type: 'Money', resolve: (r) => r.amount }),
    amountFormatted: t.string({ resolve: (r) => formatMoney(r.amount, r.currency) }),
    payments: t.exposeInt('payments', { description: 'Succeeded payments that day (by completion time).' }),
    refunds: t.exposeInt('refunds', { description: 'Succeeded refunds that day.' }),
  }),
});

const OverviewDay = builder.objectRef<overview.Overview['days'][number]>('OverviewDay').implement({
  description: 'One UTC day of the merchant’s billing clock.',
  fields: (t) => ({
    date: t.exposeString('date', { description: 'YYYY-MM-DD (UTC).' }),
    revenue: t.field({ type: [DailyRevenue], description: 'Per currency, only those with activity that day.', resolve: (d) => d.revenue }),
    failedPayments: t.exposeInt('failedPayments', { description: 'Failed payment attempts that day (payment.failed events), every currency.' }),
  }),
});

const Overview = builder.objectRef<overview.Overview>('Overview').implement({
  description:
    'The merchant’s key numbers (the dashboard’s home page). MRR: active and past_due subscriptions’ plan amount brought to a month (daily × 365/12, weekly × 52/12, yearly ÷ 12, each ÷ the interval count), summed exactly and rounded once per currency; trialing, paused, unpaid, incomplete and cancelled subscriptions are not counted. Days: the last 30 UTC days of the merchant’s billing clock, today included.',
  fields: (t) => ({
    asOf: t.expose('asOf', { type: 'DateTime', description: 'Now on the merchant’s billing clock (a test clock may be ahead).' }),
    from: t.exposeString('from', { description: 'The first day of `days` (YYYY-MM-DD).' }),
    to: t.exposeString('to', { description: 'The last day of `days`: today on the billing clock.' }),
    mrr: t.field({ type: [MrrAmount], description: 'Per currency (only currencies with counted subscriptions).', resolve: (o) => o.mrr }),
    activeSubscriptions: t.exposeInt('activeSubscriptions', { description: 'Subscriptions with status active (past_due not included; every currency).' }),
    days: t.field({ type: [OverviewDay], description: '30 days, oldest first, every day present.', resolve: (o) => o.days }),
  }),
});

builder.queryFields((t) => ({
  overview: t.field({
    type: Overview,
    description: 'MRR, active subscriptions, and the last 30 days’ revenue and failed payments. `currency` limits MRR and revenue to one currency (counts stay for all).',
    args: { currency: t.arg.string({ description: 'ISO 4217, any case.' }) },
    resolve: (_, a, { ctx }) => overview.getOverview(ctx, { currency: a.currency }),
  }),
}));
