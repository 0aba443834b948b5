import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConfirmButton, ConnectionTable, DateTime, Details, Field, Filters, FormError, PageHeader, Pager, QueryError, QueryState, Status, StatusFilter, Table, idempotencyKey, mutationError, readForm, useOutcome, usePager } from '../components/ui.tsx';
import { CustomerPicker, PlanPicker } from '../components/picker.tsx';
import { taxRateLabel } from './tax-rates.tsx';
import { LISTS } from '../client.ts';

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
      ... on CreateSubscriptionSuccess { subscription { id status customer { id email } plan { id name } latestInvoice { id number status } } }
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
  const [params] = useSearchParams();
  const status = (params.get('status') || null) as SubStatus | null;
  const customerId = params.get('customer') || null;
  const planId = params.get('plan') || null;
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: SubscriptionsQuery, variables: { first: 20, after: pager.after, status, customerId, planId }, context: LISTS.subscriptions });
  return (
    <>
      <PageHeader title="Subscriptions">
        <Link className="button" href="/subscriptions/new">
          Subscribe a customer
        </Link>
      </PageHeader>
      <Filters label="Filter subscriptions">
        <StatusFilter statuses={STATUSES} value={status} label={(s) => s.replace('_', ' ')} />
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={customerId ?? ''} placeholder="cus_…" />}</Field>
        <Field label="Plan ID">{(p) => <input {...p} name="plan" defaultValue={planId ?? ''} placeholder="plan_…" />}</Field>
      </Filters>
      <ConnectionTable
        result={result}
        conn={result.data?.subscriptions}
        caption="Subscriptions"
        noun="subscriptions"
        emptyText="No subscriptions match."
        pager={pager}
        columns={[
          { header: 'Customer', cell: (n) => <Link href={`/customers/${n.customer.id}`}>{n.customer.email}</Link> },
          { header: 'Plan', cell: (n) => <Link href={`/subscriptions/${n.id}`} aria-label={`${n.plan.name} · ${n.plan.amountFormatted}: the subscription of ${n.customer.email}`}>{`${n.plan.name} · ${n.plan.amountFormatted}`}</Link> },
          { header: 'Status', cell: (n) => <Status value={n.cancelAtPeriodEnd && n.status !== 'cancelled' ? `${n.status}, cancels at period end` : n.status} /> },
          { header: 'Period ends', cell: (n) => <DateTime value={n.currentPeriodEnd} /> },
          { header: 'Actions', cell: (n) => <SubscriptionActions sub={n} /> },
        ]}
      />
    </>
  );
}

// "Subscribe a customer": the customer and the plan chosen with pickers (search, not ids), the
// quantity, and optionally a coupon and tax rates; the answer links to the new subscription.
const SubscribeOptions = graphql(`
  query DashboardSubscribeOptions {
    coupons(first: 100) { edges { node { id name valid percentOff amountOffFormatted } } }
    taxRates(active: true, first: 100) { edges { node { id displayName percentage inclusive } } }
  }
`);

export function NewSubscriptionPage() {
  const [params] = useSearchParams();
  const [options] = useQuery({ query: SubscribeOptions });
  const [creating, create] = useMutation(CreateSubscription);
  const outcome = useOutcome();
  const coupons = (options.data?.coupons.edges ?? []).map((e) => e.node).filter((c) => c.valid);
  const taxRates = (options.data?.taxRates.edges ?? []).map((e) => e.node);

  async function submit(e: FormEvent<HTMLFormElement>) {
    const { text, num, all } = readForm(e);
    outcome.begin();
    const r = await create({
      input: {
        customerId: text('customerId') ?? '',
        planId: text('planId') ?? '',
        quantity: num('quantity'),
        coupon: text('coupon'),
        defaultTaxRates: all('taxRate'),
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'createSubscription') && r.data?.createSubscription.__typename === 'CreateSubscriptionSuccess') {
      const s = r.data.createSubscription.subscription;
      outcome.succeed(
        <>
          {s.customer.email} is subscribed to {s.plan.name}: {s.status.replace(/_/g, ' ')}
          {s.latestInvoice ? `, first invoice ${s.latestInvoice.number ?? s.latestInvoice.id} ${s.latestInvoice.status}` : ''}.{' '}
          <Link href={`/subscriptions/${s.id}`}>Open the subscription</Link>
        </>,
      );
    }
  }

  return (
    <>
      <PageHeader title="Subscribe a customer" />
      <p>
        <Link href="/subscriptions">← All subscriptions</Link>
      </p>
      <form className="card inline-form" onSubmit={submit} aria-label="Subscribe a customer">
        <CustomerPicker name="customerId" initialId={params.get('customer')} />
        <PlanPicker name="planId" />
        <Field label="Quantity" hint="Units of the plan billed each period.">
          {(p) => <input {...p} name="quantity" type="number" min="1" max="10000" step="1" defaultValue="1" />}
        </Field>
        {options.error && <QueryError error={options.error} />}
        <Field label="Coupon" hint={coupons.length ? undefined : 'No valid coupons: create one on the Coupons page.'}>
          {(p) => (
            <select {...p} name="coupon" defaultValue="">
              <option value="">None</option>
              {coupons.map((c) => (
                <option key={c.id} value={c.id}>
                  {`${c.id}: ${c.name} (${c.percentOff != null ? `${c.percentOff}%` : c.amountOffFormatted} off)`}
                </option>
              ))}
            </select>
          )}
        </Field>
        {taxRates.length > 0 && (
          <fieldset className="checks">
            <legend>Tax rates (at most 5)</legend>
            {taxRates.map((t) => (
              <label key={t.id} className="check">
                <input type="checkbox" name="taxRate" value={t.id} /> {taxRateLabel(t)}
              </label>
            ))}
          </fieldset>
        )}
        <p className="muted small">Without a trial, the first invoice is charged at once to the customer's default payment method.</p>
        <button type="submit" disabled={creating.fetching}>
          Create subscription
        </button>
        {outcome.view}
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

// One subscription: its plan, status, periods, latest invoice and invoices, its actions, and a
// plan change with the proration behaviour the API offers (updateSubscription).
const SubscriptionQuery = graphql(`
  query DashboardSubscription($id: ID!, $after: String) {
    subscription(id: $id) {
      id status cancelAtPeriodEnd cancelAt cancelledAt createdAt
      currentPeriodStart currentPeriodEnd billingCycleAnchor trialStart trialEnd pausedAt resumesAt applyWalletBalance
      customer { id email name }
      plan { id name amountFormatted currency interval intervalCount }
      paymentMethod { id card { brand last4 } mobileMoney { provider phoneLast4 } }
      latestInvoice { id number status totalFormatted pdfUrl payment { id } }
      invoices(first: 20, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id number status billingReason totalFormatted amountRemaining periodStart periodEnd createdAt pdfUrl payment { id } } }
      }
    }
    plans(active: true, first: 100) { edges { node { id name amountFormatted currency interval intervalCount } } }
  }
`);

const ChangePlan = graphql(`
  mutation DashboardChangeSubscriptionPlan($input: UpdateSubscriptionInput!) {
    updateSubscription(input: $input) {
      __typename
      ... on UpdateSubscriptionSuccess { subscription { id status plan { id name amountFormatted } latestInvoice { id number status totalFormatted } } }
      ... on Error { code message param }
    }
  }
`);

type Proration = NonNullable<VariablesOf<typeof ChangePlan>['input']['prorationBehavior']>;
const PRORATIONS: [Proration, string][] = [
  ['create_prorations', 'Prorate on the next invoice: credit the unused time, charge the rest of the period at the new price'],
  ['always_invoice', 'Prorate and invoice now: the same credit and charge, invoiced and charged at once'],
  ['none', 'No proration: the new price from the next period'],
];

const every = (interval: string, count: number) => (count === 1 ? `every ${interval}` : `every ${count} ${interval}s`);

export function SubscriptionPage({ id }: { id: string }) {
  const pager = usePager(id);
  const [{ data, fetching, error }] = useQuery({ query: SubscriptionQuery, variables: { id, after: pager.after } });
  const s = data?.subscription;
  return (
    <>
      <PageHeader title={s ? `Subscription to ${s.plan.name}` : 'Subscription'} />
      <p>
        <Link href="/subscriptions">← All subscriptions</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !s : undefined} emptyText={`No subscription ${id}.`}>
        {s && data && (
          <>
            <Details
              items={[
                ['ID', <code>{s.id}</code>],
                ['Status', <Status value={s.cancelAtPeriodEnd && s.status !== 'cancelled' ? `${s.status}, cancels at period end` : s.status} />],
                ['Customer', <Link href={`/customers/${s.customer.id}`}>{s.customer.name ? `${s.customer.name} (${s.customer.email})` : s.customer.email}</Link>],
                ['Plan', `${s.plan.name} · ${s.plan.amountFormatted} ${every(s.plan.interval, s.plan.intervalCount)}`],
                ['Current period', <>
                  <DateTime value={s.currentPeriodStart} /> – <DateTime value={s.currentPeriodEnd} />
                </>],
                ['Trial', s.trialEnd ? <>
                  <DateTime value={s.trialStart} /> – <DateTime value={s.trialEnd} />
                </> : null],
                ['Payment method', s.paymentMethod?.card ? `${s.paymentMethod.card.brand} •••• ${s.paymentMethod.card.last4}` : s.paymentMethod?.mobileMoney ? `${s.paymentMethod.mobileMoney.provider} •••• ${s.paymentMethod.mobileMoney.phoneLast4}` : "The customer's default"],
                ['Wallet first', s.applyWalletBalance ? 'Yes' : 'No'],
                ['Paused', s.pausedAt ? <><DateTime value={s.pausedAt} />{s.resumesAt ? <> (resumes <DateTime value={s.resumesAt} />)</> : null}</> : null],
                ['Cancels', s.cancelAt ? <DateTime value={s.cancelAt} /> : null],
                ['Cancelled', s.cancelledAt ? <DateTime value={s.cancelledAt} /> : null],
                ['Latest invoice', s.latestInvoice ? <InvoiceRef invoice={s.latestInvoice} /> : null],
                ['Created', <DateTime value={s.createdAt} />],
              ]}
            />
            <SubscriptionActions sub={s} />
            {s.status !== 'cancelled' && <ChangePlanForm sub={s} plans={data.plans.edges.map((e) => e.node)} />}
            <section aria-labelledby="sub-invoices-h">
              <h2 id="sub-invoices-h">Invoices ({s.invoices.totalCount})</h2>
              {s.invoices.edges.length === 0 ? (
                <p className="empty">No invoices yet.</p>
              ) : (
                <>
                  <Table
                    caption="Invoices of this subscription"
                    rows={s.invoices.edges.map((e) => e.node)}
                    rowKey={(n) => n.id}
                    columns={[
                      { header: 'Invoice', cell: (n) => <InvoiceRef invoice={n} brief /> },
                      { header: 'Reason', cell: (n) => n.billingReason.replace(/_/g, ' ') },
                      { header: 'Total', className: 'num', cell: (n) => n.totalFormatted },
                      { header: 'Status', cell: (n) => <Status value={n.status} /> },
                      { header: 'Period', cell: (n) => <><DateTime value={n.periodStart} /> – <DateTime value={n.periodEnd} /></> },
                      { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
                    ]}
                  />
                  <Pager pager={pager} pageInfo={s.invoices.pageInfo} total={s.invoices.totalCount} noun="invoices" />
                </>
              )}
            </section>
          </>
        )}
      </QueryState>
    </>
  );
}

/** An invoice's number (with its total and status unless `brief`), its PDF and the payment of its latest charge. */
function InvoiceRef({ invoice, brief }: { invoice: { id: string; number?: string | null; status: string; totalFormatted: string; pdfUrl: string; payment?: { id: string } | null }; brief?: boolean }) {
  const name = invoice.number ?? invoice.id;
  return (
    <span className="row-actions">
      <code>{name}</code>
      {!brief && <span className="muted">{`${invoice.totalFormatted}, ${invoice.status}`}</span>}
      {invoice.status !== 'draft' && (
        <a href={invoice.pdfUrl} target="_blank" rel="noreferrer" aria-label={`PDF of ${name}`}>
          PDF
        </a>
      )}
      {invoice.payment && (
        <Link href={`/payments/${invoice.payment.id}`} aria-label={`Payment of ${name}`}>
          Payment
        </Link>
      )}
    </span>
  );
}

type PlanOption = { id: string; name: string; amountFormatted: string; currency: string; interval: string; intervalCount: number };

function ChangePlanForm({ sub, plans }: { sub: { id: string; plan: PlanOption }; plans: PlanOption[] }) {
  const [changing, change] = useMutation(ChangePlan);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  // The API moves a subscription only to a plan of the same currency, interval and interval count.
  const options = plans.filter((p) => p.id !== sub.plan.id && p.currency === sub.plan.currency && p.interval === sub.plan.interval && p.intervalCount === sub.plan.intervalCount);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setDone(null);
    const r = await change({
      input: { id: sub.id, planId: String(f.get('planId') ?? ''), prorationBehavior: String(f.get('proration') ?? 'create_prorations') as Proration, idempotencyKey: idempotencyKey() },
    });
    const err = mutationError(r, 'updateSubscription');
    setMessage(err);
    const u = r.data?.updateSubscription;
    if (!err && u?.__typename === 'UpdateSubscriptionSuccess') {
      const inv = u.subscription.latestInvoice;
      setDone(`Plan changed to ${u.subscription.plan.name} (${u.subscription.plan.amountFormatted}).${inv ? ` Latest invoice: ${inv.number ?? inv.id}, ${inv.totalFormatted}, ${inv.status}.` : ''}`);
    }
  }

  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="change-plan-h">
      <h2 id="change-plan-h">Change plan</h2>
      {options.length === 0 ? (
        <p className="muted">{`No other active plan in ${sub.plan.currency} billed ${every(sub.plan.interval, sub.plan.intervalCount)}. Create one on the Plans page.`}</p>
      ) : (
        <>
          <Field label="New plan" hint={`Plans in ${sub.plan.currency} billed ${every(sub.plan.interval, sub.plan.intervalCount)}, as the subscription; the period stays.`}>
            {(p) => (
              <select {...p} name="planId" required defaultValue="">
                <option value="" disabled>
                  Choose a plan
                </option>
                {options.map((o) => (
                  <option key={o.id} value={o.id}>
                    {`${o.name} · ${o.amountFormatted}`}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <fieldset className="choices">
            <legend>Proration</legend>
            {PRORATIONS.map(([value, text]) => (
              <label key={value}>
                <input type="radio" name="proration" value={value} defaultChecked={value === 'create_prorations'} />
                <span>{text}</span>
              </label>
            ))}
          </fieldset>
          <button type="submit" disabled={changing.fetching}>
            Change plan
          </button>
        </>
      )}
      <FormError message={message} />
      {done && (
        <p className="success" role="status">
          {done}
        </p>
      )}
    </form>
  );
}
