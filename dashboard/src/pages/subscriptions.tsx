import { useState, type FormEvent } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type ResultOf, type VariablesOf } from '../graphql.ts';
import { ConfirmButton, ConnectionTable, DateTime, Details, Field, Filters, FormError, PageHeader, Pager, QueryState, Status, StatusFilter, Success, Table, formatDate, formatMoney, idempotencyKey, mutationError, readForm, useOutcome, usePager } from '../components/ui.tsx';
import { CouponPicker, CustomerPicker, PlanPicker, TaxRatePicker, couponLabel, couponTerms, taxRateChoice, taxRateLabel, type Choice } from '../components/picker.tsx';
import { invoiceTotal, type InvoiceMoney } from './invoices.tsx';
import { LISTS } from '../client.ts';
import { idFilters, useIdFilter } from '../components/id-filter.tsx';

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
  const customer = useIdFilter('customer', params.get('customer') || null);
  const plan = useIdFilter('plan', params.get('plan') || null);
  const filter = idFilters(customer, plan);
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: SubscriptionsQuery, variables: { first: 20, after: pager.after, status, customerId: customer.id, planId: plan.id }, context: LISTS.subscriptions, pause: filter.blocked });
  return (
    <>
      <PageHeader title="Subscriptions">
        <Link className="button" href="/subscriptions/new">
          Subscribe a customer
        </Link>
      </PageHeader>
      <Filters label="Filter subscriptions">
        <StatusFilter statuses={STATUSES} value={status} label={(s) => s.replace('_', ' ')} />
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={params.get('customer') ?? ''} placeholder="cus_…" />}</Field>
        <Field label="Plan ID">{(p) => <input {...p} name="plan" defaultValue={params.get('plan') ?? ''} placeholder="plan_…" />}</Field>
      </Filters>
      {filter.notes}
      {!filter.blocked && <ConnectionTable
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
      />}
    </>
  );
}

// "Subscribe a customer": the customer, the plan, the coupon and the tax rates chosen with
// pickers (search, not ids), and the quantity; the answer links to the new subscription.
export function NewSubscriptionPage() {
  const [params] = useSearchParams();
  const [creating, create] = useMutation(CreateSubscription);
  const outcome = useOutcome();

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
        <CouponPicker name="coupon" fixed={[{ id: '', label: 'No coupon' }]} />
        <TaxRatePicker name="taxRate" />
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
      currentPeriodStart currentPeriodEnd billingCycleAnchor trialStart trialEnd pausedAt resumesAt applyWalletBalance quantity
      discount { couponId end coupon { id name percentOff amountOffFormatted duration durationInMonths } }
      defaultTaxRates { id displayName percentage inclusive country jurisdiction active }
      customer { id email name }
      plan { id name amountFormatted currency interval intervalCount }
      paymentMethod { id card { brand last4 } mobileMoney { provider phoneLast4 } }
      latestInvoice { id number status subtotal total currency lines { amount } pdfUrl payment { id } }
      invoices(first: 20, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id number status billingReason subtotal total currency lines { amount } amountRemaining periodStart periodEnd createdAt pdfUrl payment { id } } }
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
                ['Quantity', String(s.quantity)],
                ['Discount', s.discount ? <>{s.discount.coupon ? `${couponLabel(s.discount.coupon)} (${couponTerms(s.discount.coupon)})` : s.discount.couponId}{s.discount.end ? <> until <DateTime value={s.discount.end} /></> : null}</> : null],
                ['Tax rates', s.defaultTaxRates.length ? s.defaultTaxRates.map((t) => taxRateLabel(t)).join(', ') : null],
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
            {s.status !== 'cancelled' && <EditSubscription sub={s} />}
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
                      { header: 'Total', className: 'num', cell: invoiceTotal },
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
function InvoiceRef({ invoice, brief }: { invoice: InvoiceMoney & { id: string; number?: string | null; pdfUrl: string; payment?: { id: string } | null }; brief?: boolean }) {
  const name = invoice.number ?? invoice.id;
  return (
    <span className="row-actions">
      <code>{name}</code>
      {!brief && <span className="muted">{`${invoiceTotal(invoice)}, ${invoice.status}`}</span>}
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

// ---------------------------------------------------------------- quantity, coupon and tax rates, previewed first

const PreviewQuery = graphql(`
  query DashboardSubscriptionPreview($id: ID!, $quantity: Int, $coupon: String, $defaultTaxRates: [ID!], $prorationBehavior: ProrationBehavior) {
    upcomingInvoice(subscriptionId: $id, quantity: $quantity, coupon: $coupon, defaultTaxRates: $defaultTaxRates, prorationBehavior: $prorationBehavior) {
      billingReason currency subtotal discountAmount couponId taxAmount total creditApplied creditedToBalance amountFromWallet amountDue nextPaymentAttempt subscriptionProrationDate
      lines { description amount proration }
      nextInvoice { currency total amountDue nextPaymentAttempt }
    }
  }
`);

type Preview = NonNullable<ResultOf<typeof PreviewQuery>['upcomingInvoice']>;

const UpdateSubscription = graphql(`
  mutation DashboardUpdateSubscription($input: UpdateSubscriptionInput!) {
    updateSubscription(input: $input) {
      __typename
      ... on UpdateSubscriptionSuccess {
        subscription { id quantity discount { couponId } defaultTaxRates { id displayName percentage inclusive } latestInvoice { id number status subtotal total currency lines { amount } } }
      }
      ... on Error { code message param }
    }
  }
`);

const QUANTITY_PRORATIONS: [Proration, string][] = [
  ['create_prorations', 'On the next invoice: credit the unused units, charge the new ones for the rest of the period'],
  ['always_invoice', 'Invoiced now: the same credit and charge, charged at once'],
  ['none', 'Without proration: the new number of units from the next period'],
];

/** The coupon picker's first choices on a subscription: keep what it has, or remove it. Colons are not in coupon codes. */
const KEEP = '(keep)';
const REMOVE = '(remove)';

interface EditableSub {
  id: string;
  quantity: number;
  discount?: { couponId: string; coupon?: { id: string; name: string } | null } | null;
  defaultTaxRates: { id: string; displayName: string; percentage: number; inclusive: boolean; country?: string | null; jurisdiction?: string | null; active: boolean }[];
}

/** The change the form asks for: only what differs from the subscription (undefined: unchanged). */
interface Change {
  quantity?: number;
  /** a coupon id, or null to remove the discount */
  coupon?: string | null;
  defaultTaxRates?: string[];
  prorationBehavior?: Proration;
}

function describeChange(c: Change, taxNames: Map<string, string>): string {
  const parts: string[] = [];
  if (c.quantity !== undefined) parts.push(`quantity ${c.quantity}`);
  if (c.coupon === null) parts.push('the discount removed');
  else if (c.coupon !== undefined) parts.push(`coupon ${c.coupon}`);
  if (c.defaultTaxRates) parts.push(c.defaultTaxRates.length ? `tax rates ${c.defaultTaxRates.map((id) => taxNames.get(id) ?? id).join(', ')}` : 'no tax rates');
  return parts.join(', ');
}

/** The form, started again from the subscription as it is after each change; the last change's note stays. */
function EditSubscription({ sub }: { sub: EditableSub }) {
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <EditSubscriptionForm key={`${sub.quantity}:${sub.discount?.couponId ?? ''}:${sub.defaultTaxRates.map((t) => t.id).join()}`} sub={sub} onDone={setDone} />
      <Success>{done}</Success>
    </>
  );
}

/**
 * The quantity, the coupon (apply another, or remove the discount) and the default tax rates,
 * changed as Stripe's dashboard does: "Preview" asks upcomingInvoice what the change bills today
 * and next, "Confirm" makes it with updateSubscription and the preview's moment
 * (subscriptionProrationDate), so that what is billed is what was shown.
 */
function EditSubscriptionForm({ sub, onDone }: { sub: EditableSub; onDone: (note: string | null) => void }) {
  const client = useClient();
  const [updating, update] = useMutation(UpdateSubscription);
  const [previewing, setPreviewing] = useState(false);
  const [preview, setPreview] = useState<{ change: Change; invoice: Preview } | null>(null);
  const outcome = useOutcome();
  const [note, setNote] = useState<string | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [taxChoices, setTaxChoices] = useState<Choice[]>(() => sub.defaultTaxRates.map(taxRateChoice));
  const taxNames = new Map(taxChoices.map((t) => [t.id, t.label]));
  const current = sub.discount ? (sub.discount.coupon ? couponLabel(sub.discount.coupon) : sub.discount.couponId) : null;
  const couponChoices: Choice[] = current
    ? [
        { id: KEEP, label: `Keep ${current}` },
        { id: REMOVE, label: 'Remove the discount' },
      ]
    : [{ id: KEEP, label: 'No coupon' }];
  const stale = () => {
    setPreview(null);
    setNote(null);
    setPreviewError(null);
  };

  async function previewIt(e: FormEvent<HTMLFormElement>) {
    const { num, text, all } = readForm(e);
    outcome.begin();
    onDone(null);
    stale();
    const change: Change = {};
    const quantity = num('quantity');
    if (quantity !== undefined && quantity !== sub.quantity) {
      change.quantity = quantity;
      change.prorationBehavior = (text('proration') ?? 'create_prorations') as Proration;
    }
    const coupon = text('coupon') ?? KEEP;
    if (coupon === REMOVE) change.coupon = null;
    else if (coupon !== KEEP && coupon !== sub.discount?.couponId) change.coupon = coupon;
    const taxes = all('taxRate');
    if (taxes.join() !== sub.defaultTaxRates.map((t) => t.id).join()) change.defaultTaxRates = taxes;
    if (Object.keys(change).length === 0) {
      setNote('Nothing to change: this is the quantity, the coupon and the tax rates the subscription has.');
      return;
    }
    setPreviewing(true);
    const r = await client
      .query(PreviewQuery, { id: sub.id, quantity: change.quantity, coupon: change.coupon === null ? '' : change.coupon, defaultTaxRates: change.defaultTaxRates, prorationBehavior: change.prorationBehavior }, { requestPolicy: 'network-only' })
      .toPromise();
    setPreviewing(false);
    if (r.error || !r.data) setPreviewError(`Could not preview this change: ${r.error?.graphQLErrors[0]?.message ?? 'the service could not be reached.'}`);
    else setPreview({ change, invoice: r.data.upcomingInvoice });
  }

  async function confirm() {
    if (!preview) return;
    const { change, invoice } = preview;
    outcome.begin();
    onDone(null);
    const r = await update({
      input: {
        id: sub.id,
        quantity: change.quantity,
        coupon: change.coupon,
        defaultTaxRates: change.defaultTaxRates,
        prorationBehavior: change.prorationBehavior,
        prorationDate: change.quantity !== undefined ? invoice.subscriptionProrationDate : undefined,
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'updateSubscription') && r.data?.updateSubscription.__typename === 'UpdateSubscriptionSuccess') {
      const u = r.data.updateSubscription.subscription;
      const inv = u.latestInvoice;
      // The page's query refetches the subscription and this form starts again from it: the note is the parent's.
      onDone(`Subscription updated: ${describeChange(change, taxNames)}.${inv && change.prorationBehavior === 'always_invoice' ? ` Latest invoice: ${inv.number ?? inv.id}, ${invoiceTotal(inv)}, ${inv.status}.` : ''}`);
      setPreview(null);
    }
  }

  return (
    <form
      className="card inline-form"
      onSubmit={previewIt}
      aria-labelledby="edit-sub-h"
      onChange={(e) => {
        if (['quantity', 'coupon', 'taxRate', 'proration'].includes((e.target as Element).getAttribute('name') ?? '')) stale();
      }}
    >
      <h2 id="edit-sub-h">Quantity, coupon and tax rates</h2>
      <p className="muted small">Preview a change to see what it bills today and next, then confirm it.</p>
      <Field label="New quantity" hint={`Now ${sub.quantity}. A new quantity is prorated as chosen below.`}>
        {(p) => <input {...p} name="quantity" type="number" min="1" max="10000" step="1" defaultValue={sub.quantity} />}
      </Field>
      <fieldset className="choices">
        <legend>Proration of a new quantity</legend>
        {QUANTITY_PRORATIONS.map(([value, text]) => (
          <label key={value}>
            <input type="radio" name="proration" value={value} defaultChecked={value === 'create_prorations'} />
            <span>{text}</span>
          </label>
        ))}
      </fieldset>
      <CouponPicker name="coupon" fixed={couponChoices} hint="Another coupon replaces the current discount from the next invoice." />
      <TaxRatePicker name="taxRate" initial={sub.defaultTaxRates.map(taxRateChoice)} onChange={setTaxChoices} />
      <button type="submit" disabled={previewing || updating.fetching}>
        Preview the change
      </button>
      {previewing && <p className="muted small" role="status">Previewing…</p>}
      {note && <p className="muted" role="status">{note}</p>}
      <FormError message={previewError} />
      {preview && <PreviewPanel invoice={preview.invoice} busy={updating.fetching} onConfirm={() => void confirm()} onCancel={stale} />}
      {outcome.view}
    </form>
  );
}

/** What the previewed change bills: today (an invoice made now) or at the next renewal, line by line. */
function PreviewPanel({ invoice: p, busy, onConfirm, onCancel }: { invoice: Preview; busy: boolean; onConfirm: () => void; onCancel: () => void }) {
  const money = (n: number) => formatMoney(n, p.currency);
  const now = p.billingReason === 'subscription_update';
  const headline = now
    ? p.amountDue > 0
      ? `You'll be charged ${money(p.amountDue)} today.`
      : `Nothing is charged today: ${p.total < 0 ? `${money(-p.total)} is credited to the next invoices` : 'credit covers the change'}.`
    : `Nothing is charged today. The next invoice, on ${formatDate(p.nextPaymentAttempt)}, will be ${money(p.amountDue)}.`;
  return (
    <section className="preview" aria-labelledby="preview-h">
      <h3 id="preview-h">{now ? 'Invoiced now' : 'The next invoice'}</h3>
      <p className="preview-headline">
        <strong>{headline}</strong>
      </p>
      <Table
        caption="Lines of the previewed invoice"
        rows={p.lines.map((l, i) => ({ ...l, key: String(i) }))}
        rowKey={(l) => l.key}
        columns={[
          { header: 'Description', cell: (l) => l.description },
          { header: 'Amount', className: 'num', cell: (l) => money(l.amount) },
        ]}
      />
      <Details
        items={[
          ['Subtotal', money(p.subtotal)],
          ['Discount', p.discountAmount ? `${money(-p.discountAmount)} (${p.couponId})` : null],
          ['Tax', p.taxAmount ? money(p.taxAmount) : null],
          ['Total', money(p.total)],
          ['Credit balance applied', p.creditApplied ? money(-p.creditApplied) : null],
          ['Credited to the balance', p.creditedToBalance ? money(p.creditedToBalance) : null],
          ['From the wallet', p.amountFromWallet ? money(-p.amountFromWallet) : null],
          ['Amount due', money(p.amountDue)],
        ]}
      />
      {now && p.nextInvoice && <p>{`Then ${formatMoney(p.nextInvoice.amountDue, p.nextInvoice.currency)} on ${formatDate(p.nextInvoice.nextPaymentAttempt)}, the next renewal.`}</p>}
      <div className="button-row">
        <button type="button" disabled={busy} onClick={onConfirm}>
          Confirm the change
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Keep it as it is
        </button>
      </div>
    </section>
  );
}
