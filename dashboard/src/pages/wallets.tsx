import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConfirmButton, ConnectionTable, DateTime, Details, Field, Filters, FormError, Money, PageHeader, Pager, QueryState, Status, StatusFilter, Table, formatMoney, idempotencyKey, mutationError, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';
import { idFilters, useIdFilter } from '../components/id-filter.tsx';

const WalletsQuery = graphql(`
  query DashboardWallets($first: Int, $after: String, $status: WalletStatus, $currency: String, $customerId: ID) {
    wallets(first: $first, after: $after, status: $status, currency: $currency, customerId: $customerId) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id currency balanceFormatted status createdAt customer { id email } } }
    }
  }
`);

type WalletStatus = NonNullable<VariablesOf<typeof WalletsQuery>['status']>;
const STATUSES: WalletStatus[] = ['active', 'frozen', 'closed'];

export function WalletsPage() {
  const [params] = useSearchParams();
  const status = (params.get('status') || null) as WalletStatus | null;
  const currency = params.get('currency') || null;
  const customer = useIdFilter('customer', params.get('customer') || null);
  const filter = idFilters(customer);
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: WalletsQuery, variables: { first: 20, after: pager.after, status, currency, customerId: customer.id }, context: LISTS.wallets, pause: filter.blocked });
  return (
    <>
      <PageHeader title="Wallets" />
      <p className="muted small">A wallet is created on its customer's page.</p>
      <Filters label="Filter wallets" upper={['currency']}>
        <StatusFilter statuses={STATUSES} value={status} />
        <Field label="Currency">{(p) => <input {...p} name="currency" defaultValue={currency ?? ''} maxLength={3} size={5} />}</Field>
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={params.get('customer') ?? ''} placeholder="cus_…" />}</Field>
      </Filters>
      {filter.notes}
      {!filter.blocked && <ConnectionTable
        result={result}
        conn={result.data?.wallets}
        caption="Wallets"
        noun="wallets"
        emptyText="No wallets match."
        pager={pager}
        columns={[
          { header: 'Wallet', cell: (n) => <Link href={`/wallets/${n.id}`}>{n.id}</Link> },
          { header: 'Balance', className: 'num', cell: (n) => n.balanceFormatted },
          { header: 'Status', cell: (n) => <Status value={n.status} /> },
          { header: 'Customer', cell: (n) => <Link href={`/customers/${n.customer.id}`}>{n.customer.email}</Link> },
          { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
        ]}
      />}
    </>
  );
}

const WalletQuery = graphql(`
  query DashboardWallet($id: ID!, $after: String) {
    wallet(id: $id) {
      id currency balance balanceFormatted status createdAt
      customer { id email }
      transactions(first: 20, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id type amount balanceAfter description reference createdAt } }
      }
    }
  }
`);

const Credit = graphql(`
  mutation DashboardCreditWallet($input: CreditWalletInput!) {
    creditWallet(input: $input) { __typename ... on CreditWalletSuccess { transaction { id amount wallet { id balance balanceFormatted } } } ... on Error { code message param } }
  }
`);
const Freeze = graphql(`
  mutation DashboardFreezeWallet($input: WalletIdInput!) {
    freezeWallet(input: $input) { __typename ... on FreezeWalletSuccess { wallet { id status } } ... on Error { code message param } }
  }
`);
const Unfreeze = graphql(`
  mutation DashboardUnfreezeWallet($input: WalletIdInput!) {
    unfreezeWallet(input: $input) { __typename ... on UnfreezeWalletSuccess { wallet { id status } } ... on Error { code message param } }
  }
`);
const Close = graphql(`
  mutation DashboardCloseWallet($input: WalletIdInput!) {
    closeWallet(input: $input) { __typename ... on CloseWalletSuccess { wallet { id status } } ... on Error { code message param } }
  }
`);

export function WalletPage({ id }: { id: string }) {
  const pager = usePager(id);
  const [{ data, fetching, error }] = useQuery({ query: WalletQuery, variables: { id, after: pager.after } });
  const [credited, credit] = useMutation(Credit);
  const [s1, freeze] = useMutation(Freeze);
  const [s2, unfreeze] = useMutation(Unfreeze);
  const [s3, close] = useMutation(Close);
  const [creditMessage, setCreditMessage] = useState<string | null>(null);
  const [statusMessage, setStatusMessage] = useState<string | null>(null);
  const w = data?.wallet;

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const r = await credit({
      input: { id, amount: Number(f.get('amount')), description: String(f.get('description') ?? '').trim(), reference: idempotencyKey(), idempotencyKey: idempotencyKey() },
    });
    const err = mutationError(r, 'creditWallet');
    setCreditMessage(err);
    if (!err) form.reset();
  }

  const busy = s1.fetching || s2.fetching || s3.fetching;
  return (
    <>
      <PageHeader title={w ? `Wallet ${w.balanceFormatted}` : 'Wallet'} />
      <p>
        <Link href="/wallets">← All wallets</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !w : undefined} emptyText={`No wallet ${id}.`}>
        {w && (
          <>
            <Details
              items={[
                ['ID', <code>{w.id}</code>],
                ['Balance', w.balanceFormatted],
                ['Status', <Status value={w.status} />],
                ['Customer', <Link href={`/customers/${w.customer.id}`}>{w.customer.email}</Link>],
                ['Created', <DateTime value={w.createdAt} />],
              ]}
            />
            {w.status !== 'closed' && (
              <div className="inline-form">
                <div className="button-row">
                  {w.status === 'active' ? (
                    <button type="button" className="secondary" disabled={busy} onClick={async () => setStatusMessage(mutationError(await freeze({ input: { id, idempotencyKey: idempotencyKey() } }), 'freezeWallet'))}>
                      Freeze wallet
                    </button>
                  ) : (
                    <button type="button" className="secondary" disabled={busy} onClick={async () => setStatusMessage(mutationError(await unfreeze({ input: { id, idempotencyKey: idempotencyKey() } }), 'unfreezeWallet'))}>
                      Unfreeze wallet
                    </button>
                  )}
                  <ConfirmButton
                    label="Close wallet"
                    confirmLabel="Yes, close this wallet"
                    disabled={busy}
                    onConfirm={async () => setStatusMessage(mutationError(await close({ input: { id, idempotencyKey: idempotencyKey() } }), 'closeWallet'))}
                  />
                </div>
                <FormError message={statusMessage} />
              </div>
            )}
            {w.status === 'active' && (
              <form className="card inline-form" onSubmit={submit} aria-labelledby="credit-h">
                <h2 id="credit-h">Credit this wallet</h2>
                <Field label="Credit amount (smallest unit)" hint={`In ${w.currency}: 1000 is ${formatMoney(1000, w.currency)}.`}>
                  {(p) => <input {...p} name="amount" inputMode="numeric" pattern="[0-9]*" required />}
                </Field>
                <Field label="Description">{(p) => <input {...p} name="description" required />}</Field>
                <button type="submit" disabled={credited.fetching}>
                  Credit
                </button>
                <FormError message={creditMessage} />
              </form>
            )}
            <section aria-labelledby="ledger-h">
              <h2 id="ledger-h">Ledger ({w.transactions.totalCount})</h2>
              {w.transactions.edges.length === 0 ? (
                <p className="empty">No movements yet.</p>
              ) : (
                <>
                  <Table
                    caption="Ledger"
                    rows={w.transactions.edges.map((e) => e.node)}
                    rowKey={(t) => t.id}
                    columns={[
                      { header: 'Type', cell: (t) => t.type.replace('_', ' ') },
                      { header: 'Amount', className: 'num', cell: (t) => <Money amount={t.amount} currency={w.currency} /> },
                      { header: 'Balance after', className: 'num', cell: (t) => <Money amount={t.balanceAfter} currency={w.currency} /> },
                      { header: 'Description', cell: (t) => t.description ?? '—' },
                      { header: 'When', cell: (t) => <DateTime value={t.createdAt} /> },
                    ]}
                  />
                  <Pager pager={pager} pageInfo={w.transactions.pageInfo} total={w.transactions.totalCount} noun="movements" />
                </>
              )}
            </section>
          </>
        )}
      </QueryState>
    </>
  );
}
