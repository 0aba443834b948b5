import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConfirmButton, DateTime, Field, FormError, PageHeader, Pager, QueryState, Status, Table, idempotencyKey, mutationError, usePager, StatusFilter } from '../components/ui.tsx';
import { LISTS } from '../client.ts';

const InvoicesQuery = graphql(`
  query DashboardInvoices($first: Int, $after: String, $status: InvoiceStatus, $customerId: ID) {
    invoices(first: $first, after: $after, status: $status, customerId: $customerId) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id number status totalFormatted amountRemaining currency createdAt pdfUrl customer { id email } } }
    }
  }
`);

type InvoiceStatus = NonNullable<VariablesOf<typeof InvoicesQuery>['status']>;
const STATUSES: InvoiceStatus[] = ['draft', 'open', 'paid', 'uncollectible', 'void'];

const VoidInvoice = graphql(`
  mutation DashboardVoidInvoice($input: VoidInvoiceInput!) {
    voidInvoice(input: $input) {
      __typename
      ... on VoidInvoiceSuccess { invoice { id status amountRemaining } }
      ... on Error { code message param }
    }
  }
`);

const PayInvoice = graphql(`
  mutation DashboardPayInvoice($input: PayInvoiceInput!) {
    payInvoice(input: $input) {
      __typename
      ... on PayInvoiceSuccess { invoice { id status amountRemaining } }
      ... on Error { code message param }
    }
  }
`);

export function InvoicesPage() {
  const [params, setParams] = useSearchParams();
  const status = (params.get('status') || null) as InvoiceStatus | null;
  const customerId = params.get('customer') || null;
  const pager = usePager(params.toString());
  const [{ data, fetching, error }] = useQuery({ query: InvoicesQuery, variables: { first: 20, after: pager.after, status, customerId }, context: LISTS.invoices });
  const conn = data?.invoices;
  return (
    <>
      <PageHeader title="Invoices" />
      <form
        className="filters"
        role="search"
        aria-label="Filter invoices"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const next = new URLSearchParams();
          for (const k of ['status', 'customer']) {
            const v = String(f.get(k) ?? '').trim();
            if (v) next.set(k, v);
          }
          setParams(next);
        }}
      >
        <StatusFilter statuses={STATUSES} value={status} />
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={customerId ?? ''} placeholder="cus_…" />}</Field>
        <button type="submit">Apply filters</button>
      </form>
      <QueryState fetching={fetching} error={error} empty={conn ? conn.edges.length === 0 : undefined} emptyText="No invoices match.">
        {conn && (
          <>
            <Table
              caption="Invoices"
              rows={conn.edges.map((e) => e.node)}
              rowKey={(n) => n.id}
              columns={[
                { header: 'Invoice', cell: (n) => <code>{n.number ?? n.id}</code> },
                { header: 'Total', className: 'num', cell: (n) => n.totalFormatted },
                { header: 'Status', cell: (n) => <Status value={n.status} /> },
                { header: 'Customer', cell: (n) => <Link href={`/customers/${n.customer.id}`}>{n.customer.email}</Link> },
                { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
                { header: 'Actions', cell: (n) => <InvoiceActions invoice={n} /> },
              ]}
            />
            <Pager pager={pager} pageInfo={conn.pageInfo} total={conn.totalCount} noun="invoices" />
          </>
        )}
      </QueryState>
    </>
  );
}

function InvoiceActions({ invoice }: { invoice: { id: string; number?: string | null; status: string; pdfUrl: string } }) {
  const [voiding, voidIt] = useMutation(VoidInvoice);
  const [paying, pay] = useMutation(PayInvoice);
  const [message, setMessage] = useState<string | null>(null);
  const name = invoice.number ?? invoice.id;
  const payable = invoice.status === 'open' || invoice.status === 'uncollectible';
  return (
    <div className="row-actions">
      {invoice.status !== 'draft' && (
        <a href={invoice.pdfUrl} target="_blank" rel="noreferrer" aria-label={`PDF of ${name}`}>
          PDF
        </a>
      )}
      {payable && (
        <>
          <button type="button" className="small" disabled={paying.fetching} aria-label={`Pay ${name}`} onClick={async () => setMessage(mutationError(await pay({ input: { id: invoice.id, idempotencyKey: idempotencyKey() } }), 'payInvoice'))}>
            Pay
          </button>
          <ConfirmButton
            className="small secondary"
            label="Void"
            ariaLabel={`Void ${name}`}
            confirmLabel={`Yes, void ${name}`}
            disabled={voiding.fetching}
            onConfirm={async () => setMessage(mutationError(await voidIt({ input: { id: invoice.id, idempotencyKey: idempotencyKey() } }), 'voidInvoice'))}
          />
        </>
      )}
      <FormError message={message} />
    </div>
  );
}
