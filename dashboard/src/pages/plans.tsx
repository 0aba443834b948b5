import type { FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ActiveFilter, ConnectionTable, DateTime, Field, Filters, PageHeader, Status, activeParam, idempotencyKey, useOutcome, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';

const PlansQuery = graphql(`
  query DashboardPlans($first: Int, $after: String, $active: Boolean) {
    plans(first: $first, after: $after, active: $active) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id name amountFormatted currency interval intervalCount active createdAt } }
    }
  }
`);

const CreatePlan = graphql(`
  mutation DashboardCreatePlan($input: CreatePlanInput!) {
    createPlan(input: $input) {
      __typename
      ... on CreatePlanSuccess { plan { id name active } }
      ... on Error { code message param }
    }
  }
`);

const ArchivePlan = graphql(`
  mutation DashboardArchivePlan($input: ArchivePlanInput!) {
    archivePlan(input: $input) {
      __typename
      ... on ArchivePlanSuccess { plan { id active } }
      ... on Error { code message param }
    }
  }
`);

type Interval = VariablesOf<typeof CreatePlan>['input']['interval'];
const INTERVALS: Interval[] = ['day', 'week', 'month', 'year'];

export function PlansPage() {
  const [params] = useSearchParams();
  const active = activeParam(params);
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: PlansQuery, variables: { first: 20, after: pager.after, active }, context: LISTS.plans });
  const [creating, create] = useMutation(CreatePlan);
  const outcome = useOutcome();

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const trial = String(f.get('trial') ?? '').trim();
    outcome.begin();
    const r = await create({
      input: {
        name: String(f.get('name') ?? '').trim(),
        amount: Number(f.get('amount')),
        currency: String(f.get('currency') ?? '').trim().toUpperCase(),
        interval: String(f.get('interval')) as Interval,
        trialPeriodDays: trial === '' ? undefined : Number(trial),
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'createPlan') && r.data?.createPlan.__typename === 'CreatePlanSuccess') {
      outcome.succeed(`Plan ${r.data.createPlan.plan.name} created.`);
      form.reset();
    }
  }

  return (
    <>
      <PageHeader title="Plans" />
      <Filters label="Filter plans">
        <ActiveFilter value={active} all="All plans" />
      </Filters>
      <ConnectionTable
        result={result}
        conn={result.data?.plans}
        caption="Plans"
        noun="plans"
        emptyText={active === null ? 'No plans yet.' : 'No plans match.'}
        pager={pager}
        columns={[
          { header: 'Plan', cell: (n) => n.name },
          { header: 'ID', cell: (n) => <code>{n.id}</code> },
          { header: 'Price', className: 'num', cell: (n) => `${n.amountFormatted} / ${n.intervalCount > 1 ? `${n.intervalCount} ` : ''}${n.interval}` },
          { header: 'Status', cell: (n) => <Status value={n.active ? 'active' : 'archived'} /> },
          { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
          { header: 'Actions', cell: (n) => (n.active ? <ArchiveButton id={n.id} name={n.name} /> : '—') },
        ]}
      />
      <form className="card inline-form" onSubmit={submit} aria-labelledby="new-plan-h">
        <h2 id="new-plan-h">Create a plan</h2>
        <Field label="Plan name">{(p) => <input {...p} name="name" required />}</Field>
        <Field label="Price (smallest unit)" hint="2900 is $29.00 in USD.">
          {(p) => <input {...p} name="amount" inputMode="numeric" pattern="[0-9]*" required />}
        </Field>
        <Field label="Plan currency">{(p) => <input {...p} name="currency" defaultValue="USD" maxLength={3} required />}</Field>
        <Field label="Billing interval">
          {(p) => (
            <select {...p} name="interval" defaultValue="month">
              {INTERVALS.map((i) => (
                <option key={i} value={i}>
                  {i}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Trial days">{(p) => <input {...p} name="trial" inputMode="numeric" pattern="[0-9]*" />}</Field>
        <button type="submit" disabled={creating.fetching}>
          Create plan
        </button>
        {outcome.view}
      </form>
    </>
  );
}

function ArchiveButton({ id, name }: { id: string; name: string }) {
  const [state, archive] = useMutation(ArchivePlan);
  const outcome = useOutcome();
  return (
    <div className="row-actions">
      <button type="button" className="small secondary" disabled={state.fetching} aria-label={`Archive ${name}`} onClick={async () => outcome.settle(await archive({ input: { id, idempotencyKey: idempotencyKey() } }), 'archivePlan')}>
        Archive
      </button>
      {outcome.view}
    </div>
  );
}
