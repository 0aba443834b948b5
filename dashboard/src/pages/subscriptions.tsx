import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConfirmButton, DateTime, Field, FormError, PageHeader, Pager, QueryState, Status, Table, idempotencyKey, mutationError, usePager, StatusFilter } from '../components/ui.tsx';

const SubscriptionsQuery = graphql(`
  query DashboardSubscriptions($first: Int, $after: String, $status: SubscriptionStatus, $customerId: ID, $planId: ID) {
    subscriptions(first: $first, after: $after, status: $status, customerId: $customerId, planId: $planId) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id status cancelAtPeriodEnd currentPeriodEnd createdAt customer { id email } plan { id name amountFormatted } } }
    }
  }
`);

type SubStatus = NonNullable<VariablesOf<typeof SubscriptionsQuery>['status']>;
const STATUSES: SubStatus[] = ['trialing', 'active', 'incomplete', 'past_due', 'unpaid', 'paused', 'cancelled'];

const CreateSubscription = graphql(`
  mutation DashboardCreateSubscription($input: CreateSubscriptionInput!) {
    createSubscription(input: $input) {
      __typename
      ... on CreateSubscriptionSuccess { subscription { id status } }
      ... on Error { code message param }
    }
  }
`);


const Pause = graphql(`
  mutation DashboardPauseSubscription($input: PauseSubscriptionInput!) {
    pauseSubscription(input: $input) { __typename ... on PauseSubscriptionSuccess { subscription { id status } } ... on Error { code message param } }
  }
`);
const Resume = graphql(`
  mutation DashboardResumeSubscription($input: ResumeSubscriptionInput!) {
    resumeSubscription(input: $input) { __typename ... on ResumeSubscriptionSuccess { subscription { id status } } ... on Error { code message param } }
  }
`);
const Cancel = graphql(`
  mutation DashboardCancelSubscription($input: CancelSubscriptionInput!) {
    cancelSubscription(input: $input) { __typename ... on CancelSubscriptionSuccess { subscription { id status cancelAtPeriodEnd } } ... on Error { code message param } }
  }
`);
const Reactivate = graphql(`
  mutation DashboardReactivateSubscription($input: ReactivateSubscriptionInput!) {
    reactivateSubscription(input: $input) { __typename ... on ReactivateSubscriptionSuccess { subscription { id status cancelAtPeriodEnd } } ... on Error { code message param } }
  }
`);

export function SubscriptionsPage() {
  const [params, setParams] = useSearchParams();
  const status = (params.get('status') || null) as SubStatus | null;
  const customerId = params.get('customer') || null;
  const planId = params.get('plan') || null;
  const pager = usePager(params.toString());
  const [{ data, fetching, error }] = useQuery({ query: SubscriptionsQuery, variables: { first: 20, after: pager.after, status, customerId, planId } });
  const [creating, create] = useMutation(CreateSubscription);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const conn = data?.subscriptions;

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setDone(null);
    const r = await create({ input: { customerId: String(f.get('customerId') ?? '').trim(), planId: String(f.get('planId') ?? '').trim(), idempotencyKey: idempotencyKey() } });
    const err = mutationError(r, 'createSubscription');
    setMessage(err);
    if (!err && r.data?.createSubscription.__typename === 'CreateSubscriptionSuccess') {
      setDone(`Subscription ${r.data.createSubscription.subscription.id} created (${r.data.createSubscription.subscription.status}).`);
    }
  }

  return (
    <>
      <PageHeader title="Subscriptions" />
      <form
        className="filters"
        role="search"
        aria-label="Filter subscriptions"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const next = new URLSearchParams();
          for (const k of ['status', 'customer', 'plan']) {
            const v = String(f.get(k) ?? '').trim();
            if (v) next.set(k, v);
          }
          setParams(next);
        }}
      >
        <StatusFilter statuses={STATUSES} value={status} label={(s) => s.replace('_', ' ')} />
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={customerId ?? ''} placeholder="cus_…" />}</Field>
        <Field label="Plan ID">{(p) => <input {...p} name="plan" defaultValue={planId ?? ''} placeholder="plan_…" />}</Field>
        <button type="submit">Apply filters</button>
      </form>
      <QueryState fetching={fetching} error={error} empty={conn ? conn.edges.length === 0 : undefined} emptyText="No subscriptions match.">
        {conn && (
          <>
            <Table
              caption="Subscriptions"
              rows={conn.edges.map((e) => e.node)}
              rowKey={(n) => n.id}
              columns={[
                { header: 'Customer', cell: (n) => <Link href={`/customers/${n.customer.id}`}>{n.customer.email}</Link> },
                { header: 'Plan', cell: (n) => `${n.plan.name} · ${n.plan.amountFormatted}` },
                { header: 'Status', cell: (n) => <Status value={n.cancelAtPeriodEnd && n.status !== 'cancelled' ? `${n.status}, cancels at period end` : n.status} /> },
                { header: 'Period ends', cell: (n) => <DateTime value={n.currentPeriodEnd} /> },
                { header: 'Actions', cell: (n) => <SubscriptionActions sub={n} /> },
              ]}
            />
            <Pager pager={pager} pageInfo={conn.pageInfo} total={conn.totalCount} noun="subscriptions" />
          </>
        )}
      </QueryState>
      <form className="card inline-form" onSubmit={submit} aria-labelledby="new-sub-h">
        <h2 id="new-sub-h">Subscribe a customer</h2>
        <Field label="Subscriber customer ID" hint="The first invoice is charged at once to the customer's default method.">
          {(p) => <input {...p} name="customerId" required placeholder="cus_…" />}
        </Field>
        <Field label="Subscribed plan ID">{(p) => <input {...p} name="planId" required placeholder="plan_…" />}</Field>
        <button type="submit" disabled={creating.fetching}>
          Create subscription
        </button>
        <FormError message={message} />
        {done && (
          <p className="success" role="status">
            {done}
          </p>
        )}
      </form>
    </>
  );
}

function SubscriptionActions({ sub }: { sub: { id: string; status: string; cancelAtPeriodEnd: boolean; customer: { email: string } } }) {
  const [s1, pause] = useMutation(Pause);
  const [s2, resume] = useMutation(Resume);
  const [s3, cancel] = useMutation(Cancel);
  const [s4, reactivate] = useMutation(Reactivate);
  const [message, setMessage] = useState<string | null>(null);
  const busy = s1.fetching || s2.fetching || s3.fetching || s4.fetching;
  const who = `the subscription of ${sub.customer.email}`;
  const key = () => ({ id: sub.id, idempotencyKey: idempotencyKey() });
  if (sub.status === 'cancelled') return <span className="muted">—</span>;
  return (
    <div className="row-actions">
      {sub.status === 'active' && (
        <button type="button" className="small secondary" disabled={busy} aria-label={`Pause ${who}`} onClick={async () => setMessage(mutationError(await pause({ input: key() }), 'pauseSubscription'))}>
          Pause
        </button>
      )}
      {sub.status === 'paused' && (
        <button type="button" className="small secondary" disabled={busy} aria-label={`Resume ${who}`} onClick={async () => setMessage(mutationError(await resume({ input: key() }), 'resumeSubscription'))}>
          Resume
        </button>
      )}
      {sub.cancelAtPeriodEnd ? (
        <button type="button" className="small secondary" disabled={busy} aria-label={`Reactivate ${who}`} onClick={async () => setMessage(mutationError(await reactivate({ input: key() }), 'reactivateSubscription'))}>
          Reactivate
        </button>
      ) : (
        <button type="button" className="small secondary" disabled={busy} aria-label={`Cancel at period end ${who}`} onClick={async () => setMessage(mutationError(await cancel({ input: { ...key(), cancelAtPeriodEnd: true } }), 'cancelSubscription'))}>
          Cancel at period end
        </button>
      )}
      <ConfirmButton
        className="small secondary"
        label="Cancel now"
        ariaLabel={`Cancel now ${who}`}
        confirmLabel="Yes, cancel now"
        disabled={busy}
        onConfirm={async () => setMessage(mutationError(await cancel({ input: { ...key(), cancelAtPeriodEnd: false } }), 'cancelSubscription'))}
      />
      <FormError message={message} />
    </div>
  );
}
