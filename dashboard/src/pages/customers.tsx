// Customers: the list (search by email or name), a new customer, and one customer's page — its
// methods (a test card in test mode, the setup page otherwise), subscriptions, wallets (a new one),
// the one-off items waiting for its next invoice (add, delete, invoice them), invoices, payments.
import { useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { LISTS } from '../client.ts';
import { invoiceName, invoiceTotal } from './invoices.tsx';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConfirmMutation, ConnectionSection, ConnectionTable, DateTime, Details, Field, Filters, Money, PageHeader, Pager, QueryState, Status, TableSection, formatMoney, idempotencyKey, readForm, useOutcome, usePager } from '../components/ui.tsx';
import { CREDIT_NOTE_COLUMNS } from './credit-notes.tsx';

const CustomersQuery = graphql(`
  query DashboardCustomers($first: Int, $after: String, $search: String) {
    customers(first: $first, after: $after, search: $search) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id email name currency createdAt } }
    }
  }
`);

const CreateCustomer = graphql(`
  mutation DashboardCreateCustomer($input: CreateCustomerInput!) {
    createCustomer(input: $input) {
      __typename
      ... on CreateCustomerSuccess { customer { id email name } }
      ... on Error { code message param }
    }
  }
`);

type Locale = NonNullable<VariablesOf<typeof CreateCustomer>['input']['locale']>;

export function CustomersPage() {
  const [params] = useSearchParams();
  const search = params.get('search') || null;
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: CustomersQuery, variables: { first: 20, after: pager.after, search }, context: LISTS.customers });
  return (
    <>
      <PageHeader title="Customers" />
      <Filters label="Search customers" submitLabel="Search">
        <Field label="Email or name">{(p) => <input {...p} name="search" type="search" maxLength={100} placeholder="ada@ or ada lov" defaultValue={search ?? ''} />}</Field>
      </Filters>
      <ConnectionTable
        result={result}
        conn={result.data?.customers}
        caption="Customers"
        noun="customers"
        emptyText={search ? 'No customers match.' : 'No customers yet: create the first one below.'}
        pager={pager}
        columns={[
          { header: 'Email', cell: (n) => <Link href={`/customers/${n.id}`}>{n.email}</Link> },
          { header: 'Name', cell: (n) => n.name ?? '—' },
          { header: 'Currency', cell: (n) => n.currency ?? '—' },
          { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
        ]}
      />
      <CreateCustomerForm />
    </>
  );
}

function CreateCustomerForm() {
  const [state, create] = useMutation(CreateCustomer);
  const outcome = useOutcome();
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { form, text } = readForm(e);
    outcome.begin();
    const r = await create({
      input: { email: text('email') ?? '', name: text('name'), currency: text('currency')?.toUpperCase(), locale: text('locale') as Locale | undefined, idempotencyKey: idempotencyKey() },
    });
    if (outcome.settle(r, 'createCustomer') && r.data?.createCustomer.__typename === 'CreateCustomerSuccess') {
      const c = r.data.createCustomer.customer;
      outcome.succeed(
        <>
          Customer {c.email} created. <Link href={`/customers/${c.id}`}>Open {c.name ?? c.email}</Link>
        </>,
      );
      form.reset();
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="new-customer-h">
      <h2 id="new-customer-h">Create a customer</h2>
      <Field label="Customer email">{(p) => <input {...p} name="email" type="email" required autoComplete="off" />}</Field>
      <Field label="Customer name">{(p) => <input {...p} name="name" autoComplete="off" />}</Field>
      <Field label="Customer currency" hint="Optional: ISO 4217, e.g. USD.">
        {(p) => <input {...p} name="currency" maxLength={3} size={5} />}
      </Field>
      <Field label="Language of e-mails and hosted pages">
        {(p) => (
          <select {...p} name="locale" defaultValue="">
            <option value="">English (default)</option>
            <option value="fr">French</option>
          </select>
        )}
      </Field>
      <button type="submit" disabled={state.fetching}>
        Create customer
      </button>
      {outcome.view}
    </form>
  );
}

const CustomerQuery = graphql(`
  query DashboardCustomer($id: ID!) {
    customer(id: $id) { id email name phone currency locale createdAt creditBalance { amount currency } }
  }
`);

// The customer's lists: each its own query, paged with cursors without reloading the page ($id is
// the customer), 10 a page, and each refetched after the page's own actions, also when it was empty.

const MethodsQuery = graphql(`
  query DashboardCustomerMethods($id: ID!, $after: String) {
    customer(id: $id) {
      id
      defaultPaymentMethod { id }
      paymentMethods(first: 10, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id type createdAt card { brand last4 expMonth expYear } mobileMoney { provider phoneLast4 } } }
      }
    }
  }
`);
const METHODS_CONTEXT = { additionalTypenames: ['PaymentMethod', 'SetupIntent'] };

const SubscriptionsOfQuery = graphql(`
  query DashboardCustomerSubscriptions($id: ID!, $after: String) {
    customer(id: $id) {
      id
      subscriptions(first: 10, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id status currentPeriodEnd cancelAtPeriodEnd plan { id name amountFormatted } } }
      }
    }
  }
`);
const SUBSCRIPTIONS_CONTEXT = { additionalTypenames: ['BillingSubscription'] };

const WalletsOfQuery = graphql(`
  query DashboardCustomerWallets($id: ID!, $after: String) {
    wallets(customerId: $id, first: 10, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id currency balanceFormatted status } }
    }
  }
`);
const WALLETS_CONTEXT = { additionalTypenames: ['Wallet'] };

const InvoicesOfQuery = graphql(`
  query DashboardCustomerInvoices($id: ID!, $after: String) {
    invoices(customerId: $id, first: 10, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id number status subtotal total currency lines { amount } createdAt } }
    }
  }
`);
const INVOICES_CONTEXT = { additionalTypenames: ['Invoice'] };

const PaymentsOfQuery = graphql(`
  query DashboardCustomerPayments($id: ID!, $after: String) {
    customer(id: $id) {
      id
      payments(first: 10, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id amount amountRefunded currency status createdAt } }
      }
    }
  }
`);
const PAYMENTS_CONTEXT = { additionalTypenames: ['Payment'] };

const CreditNotesOfQuery = graphql(`
  query DashboardCustomerCreditNotes($id: ID!, $after: String) {
    creditNotes(customerId: $id, first: 10, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id number amount currency type reason refundAmount creditAmount memo createdAt pdfUrl invoice { id number } customer { id email } } }
    }
  }
`);
const NOTES_CONTEXT = { additionalTypenames: ['CreditNote'] };

const BalanceQuery = graphql(`
  query DashboardCustomerBalance($id: ID!, $after: String) {
    customer(id: $id) {
      id
      creditBalance { amount currency }
      balanceTransactions(first: 10, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id amount currency description type endingBalance invoiceId createdAt } }
      }
    }
  }
`);
const BALANCE_CONTEXT = { additionalTypenames: ['CustomerBalanceTransaction', 'Invoice', 'CreditNote'] };

// The one-off items waiting for the customer's next invoice: a query of their own, paged without
// reloading the page ($id is the customer).
const WaitingItemsQuery = graphql(`
  query DashboardWaitingInvoiceItems($id: ID!, $after: String) {
    invoiceItems(customerId: $id, pending: true, first: 20, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id description quantity unitAmount amount currency createdAt } }
    }
  }
`);
const ITEMS_CONTEXT = { additionalTypenames: ['InvoiceItem', 'DeletedInvoiceItem', 'Invoice'] };

const CreatePortalSession = graphql(`
  mutation DashboardCreatePortalSession($input: CreatePortalSessionInput!) {
    createPortalSession(input: $input) {
      __typename
      ... on CreatePortalSessionSuccess { portalSession { id url expiresAt } }
      ... on Error { code message param }
    }
  }
`);

const CUSTOMER_CONTEXT = { additionalTypenames: ['CustomerBalanceTransaction'] };

export function CustomerPage({ id, mode }: { id: string; mode: string }) {
  const [{ data, fetching, error }] = useQuery({ query: CustomerQuery, variables: { id }, context: CUSTOMER_CONTEXT });
  const c = data?.customer;
  return (
    <>
      <PageHeader title={c ? (c.name ?? c.email) : 'Customer'} />
      <p>
        <Link href="/customers">← All customers</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !c : undefined} emptyText={`No customer ${id}.`}>
        {c && (
          <>
            <Details
              items={[
                ['ID', <code>{c.id}</code>],
                ['Email', c.email],
                ['Name', c.name],
                ['Phone', c.phone],
                ['Currency', c.currency],
                ['Language', c.locale ?? 'en'],
                ['Credit balance', c.creditBalance.length ? <BalanceList balances={c.creditBalance} /> : null],
                ['Created', <DateTime value={c.createdAt} />],
              ]}
            />
            <p className="button-row">
              <Link className="button" href={`/subscriptions/new?customer=${c.id}`}>
                Subscribe this customer
              </Link>
              <Link href={`/events?object=${c.id}`}>Events about this customer</Link>
            </p>
            <PortalLink customerId={c.id} />
            <MethodsSection customerId={c.id}>{mode === 'test' ? <TestCardForm customerId={c.id} /> : <SetupLink customerId={c.id} />}</MethodsSection>
            <SubscriptionsSection customerId={c.id} />
            <WalletsSection customerId={c.id} currency={c.currency} />
            <CreditBalanceSection customerId={c.id} currency={c.currency} />
            <WaitingItems customerId={c.id} currency={c.currency} />
            <InvoicesSection customerId={c.id} />
            <CreditNotesSection customerId={c.id} />
            <PaymentsSection customerId={c.id} />
          </>
        )}
      </QueryState>
    </>
  );
}

function BalanceList({ balances }: { balances: { amount: number; currency: string }[] }) {
  return (
    <span className="row-actions">
      {balances.map((b) => (
        <Money key={b.currency} amount={b.amount} currency={b.currency} />
      ))}
    </span>
  );
}

function MethodsSection({ customerId, children }: { customerId: string; children: ReactNode }) {
  const pager = usePager(customerId);
  const [result] = useQuery({ query: MethodsQuery, variables: { id: customerId, after: pager.after }, context: METHODS_CONTEXT });
  const c = result.data?.customer;
  return (
    <ConnectionSection
      id="pm-h"
      title="Payment methods"
      caption="Payment methods"
      noun="payment methods"
      result={result}
      conn={c?.paymentMethods}
      pager={pager}
      emptyText="No saved payment methods."
      columns={[
        { header: 'Method', cell: (m) => (m.card ? `${m.card.brand} •••• ${m.card.last4}` : m.mobileMoney ? `${m.mobileMoney.provider} •••• ${m.mobileMoney.phoneLast4}` : m.type) },
        { header: 'Expires', cell: (m) => (m.card ? `${String(m.card.expMonth).padStart(2, '0')}/${m.card.expYear}` : '—') },
        { header: 'Default', cell: (m) => (c?.defaultPaymentMethod?.id === m.id ? 'Default' : '—') },
        { header: 'Added', cell: (m) => <DateTime value={m.createdAt} /> },
      ]}
    >
      {children}
    </ConnectionSection>
  );
}

function SubscriptionsSection({ customerId }: { customerId: string }) {
  const pager = usePager(customerId);
  const [result] = useQuery({ query: SubscriptionsOfQuery, variables: { id: customerId, after: pager.after }, context: SUBSCRIPTIONS_CONTEXT });
  return (
    <ConnectionSection
      id="subs-h"
      title="Subscriptions"
      caption="Subscriptions"
      noun="subscriptions"
      result={result}
      conn={result.data?.customer?.subscriptions}
      pager={pager}
      emptyText="No subscriptions."
      columns={[
        { header: 'Subscription', cell: (s) => <Link href={`/subscriptions/${s.id}`}><code>{s.id}</code></Link> },
        { header: 'Plan', cell: (s) => `${s.plan.name} · ${s.plan.amountFormatted}` },
        { header: 'Status', cell: (s) => <Status value={s.cancelAtPeriodEnd ? `${s.status} (cancels)` : s.status} /> },
        { header: 'Period ends', cell: (s) => <DateTime value={s.currentPeriodEnd} /> },
      ]}
    />
  );
}

function WalletsSection({ customerId, currency }: { customerId: string; currency?: string | null | undefined }) {
  const pager = usePager(customerId);
  const [result] = useQuery({ query: WalletsOfQuery, variables: { id: customerId, after: pager.after }, context: WALLETS_CONTEXT });
  return (
    <ConnectionSection
      id="wallets-h"
      title="Wallets"
      caption="Wallets"
      noun="wallets"
      result={result}
      conn={result.data?.wallets}
      pager={pager}
      emptyText="No wallets."
      columns={[
        { header: 'Wallet', cell: (w) => <Link href={`/wallets/${w.id}`}>{w.id}</Link> },
        { header: 'Currency', cell: (w) => w.currency },
        { header: 'Balance', className: 'num', cell: (w) => w.balanceFormatted },
        { header: 'Status', cell: (w) => <Status value={w.status} /> },
      ]}
    >
      <CreateWalletForm customerId={customerId} currency={currency} />
    </ConnectionSection>
  );
}

function InvoicesSection({ customerId }: { customerId: string }) {
  const pager = usePager(customerId);
  const [result] = useQuery({ query: InvoicesOfQuery, variables: { id: customerId, after: pager.after }, context: INVOICES_CONTEXT });
  return (
    <ConnectionSection
      id="inv-h"
      title="Invoices"
      caption="Invoices"
      noun="invoices"
      result={result}
      conn={result.data?.invoices}
      pager={pager}
      emptyText="No invoices."
      columns={[
        { header: 'Invoice', cell: (i) => <Link href={`/invoices/${i.id}`}>{invoiceName(i)}</Link> },
        { header: 'Total', className: 'num', cell: invoiceTotal },
        { header: 'Status', cell: (i) => <Status value={i.status} /> },
        { header: 'Created', cell: (i) => <DateTime value={i.createdAt} /> },
      ]}
      footer={
        <p>
          <Link href={`/invoices?customer=${customerId}`}>All invoices of this customer, with filters</Link>
        </p>
      }
    />
  );
}

function CreditNotesSection({ customerId }: { customerId: string }) {
  const pager = usePager(customerId);
  const [result] = useQuery({ query: CreditNotesOfQuery, variables: { id: customerId, after: pager.after }, context: NOTES_CONTEXT });
  return (
    <ConnectionSection
      id="notes-h"
      title="Credit notes"
      caption="Credit notes"
      noun="credit notes"
      result={result}
      conn={result.data?.creditNotes}
      pager={pager}
      emptyText="No credit notes."
      note="Issued from an invoice's page."
      columns={CREDIT_NOTE_COLUMNS.filter((c) => c.header !== 'Customer')}
    />
  );
}

function PaymentsSection({ customerId }: { customerId: string }) {
  const pager = usePager(customerId);
  const [result] = useQuery({ query: PaymentsOfQuery, variables: { id: customerId, after: pager.after }, context: PAYMENTS_CONTEXT });
  return (
    <ConnectionSection
      id="pay-h"
      title="Payments"
      caption="Payments"
      noun="payments"
      result={result}
      conn={result.data?.customer?.payments}
      pager={pager}
      emptyText="No payments."
      columns={[
        { header: 'Payment', cell: (p) => <Link href={`/payments/${p.id}`}>{p.id}</Link> },
        { header: 'Amount', className: 'num', cell: (p) => <Money amount={p.amount} currency={p.currency} /> },
        { header: 'Status', cell: (p) => <Status value={p.amountRefunded > 0 ? (p.amountRefunded >= p.amount ? 'refunded' : 'partially_refunded') : p.status} /> },
        { header: 'Created', cell: (p) => <DateTime value={p.createdAt} /> },
      ]}
      footer={
        <p>
          <Link href={`/payments?customer=${customerId}`}>All payments of this customer, with filters</Link>
        </p>
      }
    />
  );
}

// ---------------------------------------------------------------- the credit balance

const BALANCE_TYPES: Record<string, string> = {
  adjustment: 'Adjustment',
  applied_to_invoice: 'Applied to an invoice',
  unapplied_from_invoice: 'Given back by a voided invoice',
  credit_note: 'Credit note',
  subscription_credit: 'Unused subscription time',
  invoice_credit: 'Credit from an invoice below zero',
};

/**
 * The credit balance per currency, its ledger (newest first, paged) and an adjustment: credit (the
 * customer's next invoices use it before charging) or a debit of unused credit, with a description.
 */
function CreditBalanceSection({ customerId, currency }: { customerId: string; currency?: string | null | undefined }) {
  const pager = usePager(customerId);
  const [result] = useQuery({ query: BalanceQuery, variables: { id: customerId, after: pager.after }, context: BALANCE_CONTEXT });
  const c = result.data?.customer;
  return (
    <ConnectionSection
      id="balance-h"
      title="Credit balance"
      caption="Credit balance ledger"
      noun="balance entries"
      result={result}
      conn={c?.balanceTransactions}
      pager={pager}
      note={
        c && c.creditBalance.length ? (
          <>
            Owed to the customer, drawn by their invoices before charging: <BalanceList balances={c.creditBalance} />
          </>
        ) : (
          'Owed to the customer, drawn by their invoices before charging: none.'
        )
      }
      emptyText="No credit balance entries."
      columns={[
        { header: 'Date', cell: (t) => <DateTime value={t.createdAt} /> },
        { header: 'Type', cell: (t) => BALANCE_TYPES[t.type] ?? t.type.replace(/_/g, ' ') },
        { header: 'Description', cell: (t) => t.description ?? '—' },
        { header: 'Invoice', cell: (t) => (t.invoiceId ? <Link href={`/invoices/${t.invoiceId}`}>{t.invoiceId}</Link> : '—') },
        { header: 'Amount', className: 'num', cell: (t) => `${t.amount > 0 ? '+' : '−'}${formatMoney(Math.abs(t.amount), t.currency)}` },
        { header: 'Balance after', className: 'num', cell: (t) => <Money amount={t.endingBalance} currency={t.currency} /> },
      ]}
    >
      <AdjustBalanceForm customerId={customerId} currency={currency ?? c?.creditBalance[0]?.currency} />
    </ConnectionSection>
  );
}

const AdjustBalance = graphql(`
  mutation DashboardAdjustCreditBalance($input: CreateCustomerBalanceTransactionInput!) {
    createCustomerBalanceTransaction(input: $input) {
      __typename
      ... on CreateCustomerBalanceTransactionSuccess { transaction { id amount currency endingBalance description customer { id creditBalance { amount currency } } } }
      ... on Error { code message param }
    }
  }
`);

function AdjustBalanceForm({ customerId, currency }: { customerId: string; currency?: string | null | undefined }) {
  const [state, adjust] = useMutation(AdjustBalance);
  const outcome = useOutcome();
  const [direction, setDirection] = useState<'credit' | 'debit'>('credit');
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { form, text } = readForm(e);
    outcome.begin();
    // An amount the API refuses (0, not a whole number) goes to it as typed: its refusal is shown.
    const typed = text('amount');
    const n = typed === undefined ? NaN : Number(typed);
    if (typed !== undefined && /^[-+]/.test(typed)) {
      outcome.fail('Give the amount without a sign: choose Credit or Debit above.');
      return;
    }
    if (!Number.isSafeInteger(n)) {
      outcome.fail("The amount must be a whole number of the currency's smallest unit (2500 is $25.00).");
      return;
    }
    const r = await adjust({
      input: { id: customerId, amount: direction === 'debit' ? -n : n, currency: text('currency')?.toUpperCase() ?? '', description: text('description'), idempotencyKey: idempotencyKey() },
    });
    if (outcome.settle(r, 'createCustomerBalanceTransaction') && r.data?.createCustomerBalanceTransaction.__typename === 'CreateCustomerBalanceTransactionSuccess') {
      const t = r.data.createCustomerBalanceTransaction.transaction;
      outcome.succeed(`${t.amount > 0 ? 'Credited' : 'Debited'} ${formatMoney(Math.abs(t.amount), t.currency)}: the ${t.currency} credit balance is now ${formatMoney(t.endingBalance, t.currency)}.`);
      form.reset();
      setDirection('credit');
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="adjust-h">
      <h3 id="adjust-h">Adjust the credit balance</h3>
      <fieldset className="choices">
        <legend>Adjustment</legend>
        <label>
          <input type="radio" name="direction" checked={direction === 'credit'} onChange={() => setDirection('credit')} />
          Credit: the customer's next invoices use it before charging
        </label>
        <label>
          <input type="radio" name="direction" checked={direction === 'debit'} onChange={() => setDirection('debit')} />
          Debit: take unused credit back (never below zero)
        </label>
      </fieldset>
      <Field label="Adjustment amount (smallest unit)" hint="2500 is $25.00 in USD.">
        {(p) => <input {...p} name="amount" inputMode="numeric" required autoComplete="off" />}
      </Field>
      <Field label="Balance currency">{(p) => <input {...p} name="currency" defaultValue={currency ?? 'USD'} maxLength={3} size={5} required />}</Field>
      <Field label="Adjustment description" hint="Shown in the ledger, e.g. “Goodwill for the outage”.">
        {(p) => <input {...p} name="description" maxLength={500} autoComplete="off" />}
      </Field>
      <button type="submit" disabled={state.fetching}>
        {direction === 'credit' ? 'Credit the balance' : 'Debit the balance'}
      </button>
      {outcome.view}
    </form>
  );
}

function PortalLink({ customerId }: { customerId: string }) {
  const [result, create] = useMutation(CreatePortalSession);
  const outcome = useOutcome();
  const [link, setLink] = useState<{ url: string; expiresAt: string } | null>(null);
  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const returnUrl = String(new FormData(e.currentTarget).get('returnUrl') ?? '').trim();
    const r = await create({ input: { customerId, returnUrl, idempotencyKey: idempotencyKey() } });
    outcome.settle(r, 'createPortalSession');
    setLink(r.data?.createPortalSession.__typename === 'CreatePortalSessionSuccess' ? r.data.createPortalSession.portalSession : null);
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="portal-h">
      <h2 id="portal-h">Customer portal</h2>
      <Field label="Return address" hint="Where the portal's “Return” link goes.">
        {(p) => <input {...p} name="returnUrl" type="url" defaultValue={window.location.origin + '/'} required />}
      </Field>
      <button type="submit" disabled={result.fetching}>
        Create portal link
      </button>
      {outcome.view}
      {link && (
        <p className="success" role="status">
          A single-use link, valid until <DateTime value={link.expiresAt} />:{' '}
          <a href={link.url} target="_blank" rel="noreferrer">
            Open portal link
          </a>{' '}
          <code className="break">{link.url}</code>
        </p>
      )}
    </form>
  );
}

// ---------------------------------------------------------------- saving a card

const CreateSetupIntent = graphql(`
  mutation DashboardCreateSetupIntent($input: CreateSetupIntentInput!) {
    createSetupIntent(input: $input) {
      __typename
      ... on CreateSetupIntentSuccess { setupIntent { id setupUrl expiresAt } }
      ... on Error { code message param }
    }
  }
`);

const CompleteTestSetupIntent = graphql(`
  mutation DashboardCompleteTestSetupIntent($input: CompleteTestSetupIntentInput!) {
    completeTestSetupIntent(input: $input) {
      __typename
      ... on CompleteTestSetupIntentSuccess { setupIntent { id status paymentMethod { id card { brand last4 } } } }
      ... on Error { code message param }
    }
  }
`);

// The built-in test processor's cards (docs/payment-methods.md).
const TEST_CARDS: [string, string][] = [
  ['4242424242424242', '4242 4242 4242 4242: charges succeed'],
  ['4000000000009995', '4000 0000 0000 9995: saved, every charge fails (insufficient funds)'],
  ['4000000000000002', '4000 0000 0000 0002: declined, nothing saved'],
];

/** Test mode: a card saved through a setup intent completed by the test helper, as the setup page would. */
function TestCardForm({ customerId }: { customerId: string }) {
  const [s1, createIntent] = useMutation(CreateSetupIntent);
  const [s2, complete] = useMutation(CompleteTestSetupIntent);
  const outcome = useOutcome();
  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const cardNumber = String(new FormData(e.currentTarget).get('cardNumber') ?? TEST_CARDS[0]![0]);
    outcome.begin();
    const si = await createIntent({ input: { customerId, paymentMethodTypes: ['card'], idempotencyKey: idempotencyKey() } });
    if (!outcome.settle(si, 'createSetupIntent') || si.data?.createSetupIntent.__typename !== 'CreateSetupIntentSuccess') return;
    const r = await complete({ input: { id: si.data.createSetupIntent.setupIntent.id, cardNumber, idempotencyKey: idempotencyKey() } });
    if (outcome.settle(r, 'completeTestSetupIntent') && r.data?.completeTestSetupIntent.__typename === 'CompleteTestSetupIntentSuccess') {
      const card = r.data.completeTestSetupIntent.setupIntent.paymentMethod?.card;
      outcome.succeed(card ? `Test card ${card.brand} •••• ${card.last4} saved.` : 'Test card saved.');
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="test-card-h">
      <h3 id="test-card-h">Add a test card</h3>
      <p className="muted small">Saved as the customer's card through a setup intent, as if they had filled in the setup page (the first saved method becomes the default).</p>
      <Field label="Card to save">
        {(p) => (
          <select {...p} name="cardNumber" defaultValue={TEST_CARDS[0]![0]}>
            {TEST_CARDS.map(([n, label]) => (
              <option key={n} value={n}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <button type="submit" disabled={s1.fetching || s2.fetching}>
        Add test card
      </button>
      {outcome.view}
    </form>
  );
}

/** Live mode: a setup intent whose hosted page the customer opens to save a method. */
function SetupLink({ customerId }: { customerId: string }) {
  const [state, createIntent] = useMutation(CreateSetupIntent);
  const outcome = useOutcome();
  async function create() {
    outcome.begin();
    const r = await createIntent({ input: { customerId, idempotencyKey: idempotencyKey() } });
    if (outcome.settle(r, 'createSetupIntent') && r.data?.createSetupIntent.__typename === 'CreateSetupIntentSuccess') {
      const si = r.data.createSetupIntent.setupIntent;
      outcome.succeed(
        <>
          Send the customer this page to save a card or mobile money (valid until <DateTime value={si.expiresAt} />):{' '}
          <a href={si.setupUrl} target="_blank" rel="noreferrer">
            Open the setup page
          </a>{' '}
          <code className="break">{si.setupUrl}</code>
        </>,
      );
    }
  }
  return (
    <div className="inline-form">
      <button type="button" className="secondary" disabled={state.fetching} onClick={() => void create()}>
        Create a setup link
      </button>
      {outcome.view}
    </div>
  );
}

// ---------------------------------------------------------------- wallets

const CreateWallet = graphql(`
  mutation DashboardCreateWallet($input: CreateWalletInput!) {
    createWallet(input: $input) {
      __typename
      ... on CreateWalletSuccess { wallet { id currency balanceFormatted status } }
      ... on Error { code message param }
    }
  }
`);

function CreateWalletForm({ customerId, currency }: { customerId: string; currency?: string | null | undefined }) {
  const [state, create] = useMutation(CreateWallet);
  const outcome = useOutcome();
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { text } = readForm(e);
    outcome.begin();
    const r = await create({ input: { customerId, currency: text('currency')?.toUpperCase() ?? '', idempotencyKey: idempotencyKey() } });
    if (outcome.settle(r, 'createWallet') && r.data?.createWallet.__typename === 'CreateWalletSuccess') {
      const w = r.data.createWallet.wallet;
      outcome.succeed(
        <>
          {w.currency} wallet created. <Link href={`/wallets/${w.id}`}>Open it to credit it</Link>
        </>,
      );
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="new-wallet-h">
      <h3 id="new-wallet-h">Create a wallet</h3>
      <Field label="Wallet currency" hint="One wallet per currency.">
        {(p) => <input {...p} name="currency" defaultValue={currency ?? 'USD'} maxLength={3} size={5} required />}
      </Field>
      <button type="submit" disabled={state.fetching}>
        Create wallet
      </button>
      {outcome.view}
    </form>
  );
}

// ---------------------------------------------------------------- one-off items and invoices

function WaitingItems({ customerId, currency }: { customerId: string; currency?: string | null | undefined }) {
  const pager = usePager(customerId);
  const [{ data, fetching, error }] = useQuery({ query: WaitingItemsQuery, variables: { id: customerId, after: pager.after }, context: ITEMS_CONTEXT });
  const items = data?.invoiceItems;
  if (!items) {
    return (
      <section aria-labelledby="items-h">
        <h2 id="items-h">Waiting invoice items</h2>
        <QueryState fetching={fetching} error={error} />
      </section>
    );
  }
  return (
    <TableSection
      id="items-h"
      title={`Waiting invoice items (${items.totalCount})`}
      note="One-off charges for this customer's next invoice in their currency: a draft made here, or the next invoice of a subscription."
      caption="Waiting invoice items"
      rows={items.edges.map((e) => e.node)}
      rowKey={(i) => i.id}
      emptyText="No items waiting."
      columns={[
        { header: 'Description', cell: (i) => i.description },
        { header: 'Quantity', className: 'num', cell: (i) => i.quantity },
        { header: 'Unit price', className: 'num', cell: (i) => <Money amount={i.unitAmount} currency={i.currency} /> },
        { header: 'Amount', className: 'num', cell: (i) => <Money amount={i.amount} currency={i.currency} /> },
        { header: 'Added', cell: (i) => <DateTime value={i.createdAt} /> },
        {
          header: 'Actions',
          cell: (i) => (
            <ConfirmMutation
              mutation={DeleteInvoiceItem}
              variables={() => ({ input: { id: i.id, idempotencyKey: idempotencyKey() } })}
              field="deleteInvoiceItem"
              label="Delete"
              ariaLabel={`Delete ${i.description}`}
              confirmLabel={`Yes, delete ${i.description}`}
            />
          ),
        },
      ]}
      footer={<Pager pager={pager} pageInfo={items.pageInfo} total={items.totalCount} noun="items" />}
    >
      <AddItemForm customerId={customerId} currency={currency} />
      <InvoiceItemsForm customerId={customerId} currency={items.edges[0]?.node.currency ?? currency} />
    </TableSection>
  );
}

const CreateInvoiceItem = graphql(`
  mutation DashboardCreateInvoiceItem($input: CreateInvoiceItemInput!) {
    createInvoiceItem(input: $input) {
      __typename
      ... on CreateInvoiceItemSuccess { invoiceItem { id description amount currency } }
      ... on Error { code message param }
    }
  }
`);

const DeleteInvoiceItem = graphql(`
  mutation DashboardDeleteInvoiceItem($input: DeleteInvoiceItemInput!) {
    deleteInvoiceItem(input: $input) {
      __typename
      ... on DeleteInvoiceItemSuccess { deletedInvoiceItem { id deleted } }
      ... on Error { code message param }
    }
  }
`);

const CreateInvoice = graphql(`
  mutation DashboardCreateInvoice($input: CreateInvoiceInput!) {
    createInvoice(input: $input) {
      __typename
      ... on CreateInvoiceSuccess { invoice { id status currency lines { id amount } } }
      ... on Error { code message param }
    }
  }
`);

type CollectionMethod = NonNullable<VariablesOf<typeof CreateInvoice>['input']['collectionMethod']>;

function AddItemForm({ customerId, currency }: { customerId: string; currency?: string | null | undefined }) {
  const [state, create] = useMutation(CreateInvoiceItem);
  const outcome = useOutcome();
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { form, text, num } = readForm(e);
    outcome.begin();
    const r = await create({
      input: {
        customerId,
        description: text('description') ?? '',
        amount: num('amount') ?? 0,
        quantity: num('quantity'),
        currency: text('currency')?.toUpperCase() ?? '',
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'createInvoiceItem') && r.data?.createInvoiceItem.__typename === 'CreateInvoiceItemSuccess') {
      const item = r.data.createInvoiceItem.invoiceItem;
      outcome.succeed(`${item.description} (${formatMoney(item.amount, item.currency)}) waits for the next invoice.`);
      form.reset();
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="new-item-h">
      <h3 id="new-item-h">Add an invoice item</h3>
      <Field label="Item description">{(p) => <input {...p} name="description" required />}</Field>
      <Field label="Unit price (smallest unit)" hint="2500 is $25.00 in USD.">
        {(p) => <input {...p} name="amount" inputMode="numeric" pattern="[0-9]*" required />}
      </Field>
      <Field label="Quantity">{(p) => <input {...p} name="quantity" inputMode="numeric" pattern="[0-9]*" defaultValue="1" />}</Field>
      <Field label="Item currency">{(p) => <input {...p} name="currency" defaultValue={currency ?? 'USD'} maxLength={3} size={5} required />}</Field>
      <button type="submit" disabled={state.fetching}>
        Add item
      </button>
      {outcome.view}
    </form>
  );
}

/** A draft invoice of every item waiting in a currency; it is finalised (charged or sent) from its page. */
function InvoiceItemsForm({ customerId, currency }: { customerId: string; currency?: string | null | undefined }) {
  const [state, create] = useMutation(CreateInvoice);
  const outcome = useOutcome();
  const [method, setMethod] = useState<CollectionMethod>('charge_automatically');
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { text, num } = readForm(e);
    outcome.begin();
    const r = await create({
      input: {
        customerId,
        currency: text('currency')?.toUpperCase() ?? '',
        collectionMethod: method,
        daysUntilDue: method === 'send_invoice' ? num('daysUntilDue') : undefined,
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'createInvoice') && r.data?.createInvoice.__typename === 'CreateInvoiceSuccess') {
      const inv = r.data.createInvoice.invoice;
      outcome.succeed(
        <>
          Draft invoice of {inv.lines.length} {inv.lines.length === 1 ? 'item' : 'items'}, {formatMoney(inv.lines.reduce((n, l) => n + l.amount, 0), inv.currency)}.{' '}
          <Link href={`/invoices/${inv.id}`}>Open the draft to finalize it</Link>
        </>,
      );
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="invoice-items-h">
      <h3 id="invoice-items-h">Invoice the waiting items</h3>
      <Field label="Invoice currency" hint="The items waiting in this currency all go on the draft.">
        {(p) => <input {...p} name="currency" defaultValue={currency ?? 'USD'} maxLength={3} size={5} required />}
      </Field>
      <fieldset className="choices">
        <legend>Collection</legend>
        <label>
          <input type="radio" name="collection" checked={method === 'charge_automatically'} onChange={() => setMethod('charge_automatically')} />
          Charge the customer's default payment method when finalized
        </label>
        <label>
          <input type="radio" name="collection" checked={method === 'send_invoice'} onChange={() => setMethod('send_invoice')} />
          Send the invoice by e-mail, to pay on its hosted page
        </label>
      </fieldset>
      {method === 'send_invoice' && <Field label="Days until due">{(p) => <input {...p} name="daysUntilDue" inputMode="numeric" pattern="[0-9]*" defaultValue="30" />}</Field>}
      <button type="submit" disabled={state.fetching}>
        Create draft invoice
      </button>
      {outcome.view}
    </form>
  );
}
