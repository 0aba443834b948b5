// Credit notes: every note, newest first, filtered by customer or invoice, each with its PDF. A
// note is issued from its invoice's page.
import { useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql } from '../graphql.ts';
import { ConnectionTable, DateTime, Field, Filters, Money, PageHeader, usePager, type Column } from '../components/ui.tsx';
import { LISTS } from '../client.ts';
import { idFilters, useIdFilter } from '../components/id-filter.tsx';

const CreditNotesQuery = graphql(`
  query DashboardCreditNotes($first: Int, $after: String, $customerId: ID, $invoiceId: ID) {
    creditNotes(first: $first, after: $after, customerId: $customerId, invoiceId: $invoiceId) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id number amount currency type reason refundAmount creditAmount memo createdAt pdfUrl invoice { id number } customer { id email } } }
    }
  }
`);

interface NoteRow {
  id: string;
  number: string;
  amount: number;
  currency: string;
  type: string;
  reason?: string | null;
  refundAmount: number;
  creditAmount: number;
  memo?: string | null;
  createdAt: string;
  pdfUrl: string;
  invoice: { id: string; number?: string | null };
  customer: { id: string; email: string };
}

/** How a note was settled: what it lowered on an open invoice, or what it refunded and credited on a paid one. */
function settlement(n: NoteRow) {
  if (n.type === 'pre_payment') return <>Lowered the amount due</>;
  return (
    <>
      {n.refundAmount > 0 && (
        <>
          Refunded <Money amount={n.refundAmount} currency={n.currency} />{' '}
        </>
      )}
      {n.creditAmount > 0 && (
        <>
          Credited <Money amount={n.creditAmount} currency={n.currency} />
        </>
      )}
    </>
  );
}

/** The columns of a list of credit notes (here, and on an invoice's page without Invoice and Customer). */
export const CREDIT_NOTE_COLUMNS: Column<NoteRow>[] = [
  { header: 'Credit note', cell: (n) => <code>{n.number}</code> },
  { header: 'Invoice', cell: (n) => <Link href={`/invoices/${n.invoice.id}`}>{n.invoice.number ?? n.invoice.id}</Link> },
  { header: 'Customer', cell: (n) => <Link href={`/customers/${n.customer.id}`}>{n.customer.email}</Link> },
  { header: 'Amount', className: 'num', cell: (n) => <Money amount={n.amount} currency={n.currency} /> },
  { header: 'Settled', cell: settlement },
  { header: 'Reason', cell: (n) => [n.reason?.replace(/_/g, ' '), n.memo].filter(Boolean).join(' · ') || '—' },
  { header: 'Issued', cell: (n) => <DateTime value={n.createdAt} /> },
  {
    header: 'PDF',
    cell: (n) => (
      <a href={n.pdfUrl} target="_blank" rel="noreferrer" aria-label={`PDF of ${n.number}`}>
        PDF
      </a>
    ),
  },
];

export function CreditNotesPage() {
  const [params] = useSearchParams();
  const customer = useIdFilter('customer', params.get('customer') || null);
  const invoice = useIdFilter('invoice', params.get('invoice') || null);
  const filter = idFilters(customer, invoice);
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: CreditNotesQuery, variables: { first: 20, after: pager.after, customerId: customer.id, invoiceId: invoice.id }, context: LISTS.creditNotes, pause: filter.blocked });
  return (
    <>
      <PageHeader title="Credit notes" />
      <p className="muted small">A credit note is issued from its invoice’s page (open, uncollectible or paid invoices).</p>
      <Filters label="Filter credit notes">
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={params.get('customer') ?? ''} placeholder="cus_…" />}</Field>
        <Field label="Invoice ID">{(p) => <input {...p} name="invoice" defaultValue={params.get('invoice') ?? ''} placeholder="in_…" />}</Field>
      </Filters>
      {filter.notes}
      {!filter.blocked && <ConnectionTable
        result={result}
        conn={result.data?.creditNotes}
        caption="Credit notes"
        noun="credit notes"
        emptyText={customer.id || invoice.id ? 'No credit notes match.' : 'No credit notes yet.'}
        pager={pager}
        columns={CREDIT_NOTE_COLUMNS}
      />}
    </>
  );
}
