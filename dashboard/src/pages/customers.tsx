import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { LISTS } from '../client.ts';
import { graphql } from '../graphql.ts';
import { DateTime, Details, Field, FormError, Money, PageHeader, Pager, QueryState, Status, Table, idempotencyKey, mutationError, usePager } from '../components/ui.tsx';

const CustomersQuery = graphql(`
  query DashboardCustomers($first: Int, $after: String, $search: String) {
    customers(first: $first, after: $after, search: $search) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id email name currency createdAt } }
    }
  }
`);

export function CustomersPage() {
  const [params, setParams] = useSearchParams();
  const search = params.get('search') || null;
  const pager = usePager(params.toString());
  const [{ data, fetching, error }] = useQuery({ query: CustomersQuery, variables: { first: 20, after: pager.after, search }, context: LISTS.customers });
  const conn = data?.customers;
  return (
    <>
      <PageHeader title="Customers" />
      <form
        className="filters"
        role="search"
        aria-label="Search customers"
        onSubmit={(e) => {
          e.preventDefault();
          const v = String(new FormData(e.currentTarget).get('search') ?? '').trim();
          setParams(v ? { search: v } : {});
        }}
      >
        <Field label="Email or name">{(p) => <input {...p} name="search" type="search" maxLength={100} placeholder="ada@ or ada lov" defaultValue={search ?? ''} />}</Field>
        <button type="submit">Search</button>
      </form>
      <QueryState fetching={fetching} error={error} empty={conn ? conn.edges.length === 0 : undefined} emptyText="No customers match.">
        {conn && (
          <>
            <Table
              caption="Customers"
              rows={conn.edges.map((e) => e.node)}
              rowKey={(n) => n.id}
              columns={[
                { header: 'Email', cell: (n) => <Link href={`/customers/${n.id}`}>{n.email}</Link> },
                { header: 'Name', cell: (n) => n.name ?? '—' },
                { header: 'Currency', cell: (n) => n.currency ?? '—' },
                { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
              ]}
            />
            <Pager pager={pager} pageInfo={conn.pageInfo} total={conn.totalCount} noun="customers" />
          </>
        )}
      </QueryState>
    </>
  );
}

const CustomerQuery = graphql(`
  query DashboardCustomer($id: ID!) {
    customer(id: $id) {
      id email name phone currency locale createdAt
      creditBalance { amount currency }
      defaultPaymentMethod { id }
      paymentMethods(first: 20) { totalCount edges { node { id type createdAt card { brand last4 expMonth expYear } mobileMoney { provider phoneLast4 } } } }
      subscriptions(first: 20) { totalCount edges { node { id status currentPeriodEnd cancelAtPeriodEnd plan { id name amountFormatted } } } }
      wallets { id currency balanceFormatted status }
      payments(first: 10) { totalCount edges { node { id amount currency status createdAt } } }
    }
    invoices(customerId: $id, first: 20) { totalCount edges { node { id number status totalFormatted createdAt } } }
  }
`);

const CreatePortalSession = graphql(`
  mutation DashboardCreatePortalSession($input: CreatePortalSessionInput!) {
    createPortalSession(input: $input) {
      __typename
      ... on CreatePortalSessionSuccess { portalSession { id url expiresAt } }
      ... on Error { code message param }
    }
  }
`);

export function CustomerPage({ id }: { id: string }) {
  const [{ data, fetching, error }] = useQuery({ query: CustomerQuery, variables: { id } });
  const c = data?.customer;
  return (
    <>
      <PageHeader title={c ? (c.name ?? c.email) : 'Customer'} />
      <p>
        <Link href="/customers">← All customers</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !c : undefined} emptyText={`No customer ${id}.`}>
        {c && data && (
          <>
            <Details
              items={[
                ['ID', <code>{c.id}</code>],
                ['Email', c.email],
                ['Name', c.name],
                ['Phone', c.phone],
                ['Currency', c.currency],
                ['Language', c.locale ?? 'en'],
                ['Credit balance', c.creditBalance.length ? c.creditBalance.map((b) => <Money key={b.currency} amount={b.amount} currency={b.currency} />) : null],
                ['Created', <DateTime value={c.createdAt} />],
              ]}
            />
            <PortalLink customerId={c.id} />
            <section aria-labelledby="pm-h">
              <h2 id="pm-h">Payment methods ({c.paymentMethods.totalCount})</h2>
              {c.paymentMethods.edges.length === 0 ? (
                <p className="empty">No saved payment methods.</p>
              ) : (
                <Table
                  caption="Payment methods"
                  rows={c.paymentMethods.edges.map((e) => e.node)}
                  rowKey={(m) => m.id}
                  columns={[
                    { header: 'Method', cell: (m) => (m.card ? `${m.card.brand} •••• ${m.card.last4}` : m.mobileMoney ? `${m.mobileMoney.provider} •••• ${m.mobileMoney.phoneLast4}` : m.type) },
                    { header: 'Expires', cell: (m) => (m.card ? `${String(m.card.expMonth).padStart(2, '0')}/${m.card.expYear}` : '—') },
                    { header: 'Default', cell: (m) => (c.defaultPaymentMethod?.id === m.id ? 'Default' : '—') },
                    { header: 'Added', cell: (m) => <DateTime value={m.createdAt} /> },
                  ]}
                />
              )}
            </section>
            <section aria-labelledby="subs-h">
              <h2 id="subs-h">Subscriptions ({c.subscriptions.totalCount})</h2>
              {c.subscriptions.edges.length === 0 ? (
                <p className="empty">No subscriptions.</p>
              ) : (
                <Table
                  caption="Subscriptions"
                  rows={c.subscriptions.edges.map((e) => e.node)}
                  rowKey={(s) => s.id}
                  columns={[
                    { header: 'Subscription', cell: (s) => <Link href={`/subscriptions/${s.id}`}><code>{s.id}</code></Link> },
                    { header: 'Plan', cell: (s) => `${s.plan.name} · ${s.plan.amountFormatted}` },
                    { header: 'Status', cell: (s) => <Status value={s.cancelAtPeriodEnd ? `${s.status} (cancels)` : s.status} /> },
                    { header: 'Period ends', cell: (s) => <DateTime value={s.currentPeriodEnd} /> },
                  ]}
                />
              )}
            </section>
            <section aria-labelledby="wallets-h">
              <h2 id="wallets-h">Wallets</h2>
              {c.wallets.length === 0 ? (
                <p className="empty">No wallets.</p>
              ) : (
                <Table
                  caption="Wallets"
                  rows={c.wallets}
                  rowKey={(w) => w.id}
                  columns={[
                    { header: 'Wallet', cell: (w) => <code>{w.id}</code> },
                    { header: 'Balance', className: 'num', cell: (w) => w.balanceFormatted },
                    { header: 'Status', cell: (w) => <Status value={w.status} /> },
                  ]}
                />
              )}
            </section>
            <section aria-labelledby="inv-h">
              <h2 id="inv-h">Invoices ({data.invoices.totalCount})</h2>
              {data.invoices.edges.length === 0 ? (
                <p className="empty">No invoices.</p>
              ) : (
                <Table
                  caption="Invoices"
                  rows={data.invoices.edges.map((e) => e.node)}
                  rowKey={(i) => i.id}
                  columns={[
                    { header: 'Invoice', cell: (i) => <Link href={`/invoices?customer=${c.id}`}>{i.number ?? i.id}</Link> },
                    { header: 'Total', className: 'num', cell: (i) => i.totalFormatted },
                    { header: 'Status', cell: (i) => <Status value={i.status} /> },
                    { header: 'Created', cell: (i) => <DateTime value={i.createdAt} /> },
                  ]}
                />
              )}
            </section>
            <section aria-labelledby="pay-h">
              <h2 id="pay-h">Latest payments ({c.payments.totalCount})</h2>
              {c.payments.edges.length === 0 ? (
                <p className="empty">No payments.</p>
              ) : (
                <>
                  <Table
                    caption="Latest payments"
                    rows={c.payments.edges.map((e) => e.node)}
                    rowKey={(p) => p.id}
                    columns={[
                      { header: 'Payment', cell: (p) => <Link href={`/payments/${p.id}`}>{p.id}</Link> },
                      { header: 'Amount', className: 'num', cell: (p) => <Money amount={p.amount} currency={p.currency} /> },
                      { header: 'Status', cell: (p) => <Status value={p.status} /> },
                      { header: 'Created', cell: (p) => <DateTime value={p.createdAt} /> },
                    ]}
                  />
                  <p>
                    <Link href={`/payments?customer=${c.id}`}>All payments of this customer</Link>
                  </p>
                </>
              )}
            </section>
          </>
        )}
      </QueryState>
    </>
  );
}

function PortalLink({ customerId }: { customerId: string }) {
  const [result, create] = useMutation(CreatePortalSession);
  const [message, setMessage] = useState<string | null>(null);
  const [link, setLink] = useState<{ url: string; expiresAt: string } | null>(null);
  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const returnUrl = String(new FormData(e.currentTarget).get('returnUrl') ?? '').trim();
    const r = await create({ input: { customerId, returnUrl, idempotencyKey: idempotencyKey() } });
    setMessage(mutationError(r, 'createPortalSession'));
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
      <FormError message={message} />
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
