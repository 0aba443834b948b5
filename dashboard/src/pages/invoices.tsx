// Invoices: the list (filters, PDF, pay, void) and one invoice's page — its lines and totals, its
// actions by status (finalize a draft: charged or sent; pay, write off, void), its credit notes
// and a form to issue one.
import type { FormEvent, ReactNode } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type ResultOf, type VariablesOf } from '../graphql.ts';
import { ConfirmButton, ConfirmMutation, ConnectionTable, DateTime, Details, EnumSelect, Field, Filters, Money, PageHeader, Pager, QueryState, Status, StatusFilter, Table, TableSection, formatMoney, idempotencyKey, readForm, useOutcome, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';
import { CREDIT_NOTE_COLUMNS } from './credit-notes.tsx';
import { idFilters, useIdFilter } from '../components/id-filter.tsx';

const InvoicesQuery = graphql(`
  query DashboardInvoices($first: Int, $after: String, $status: InvoiceStatus, $customerId: ID) {
    invoices(first: $first, after: $after, status: $status, customerId: $customerId) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id number status subtotal total amountRemaining currency createdAt pdfUrl lines { amount } customer { id email } } }
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

const FinalizeInvoice = graphql(`
  mutation DashboardFinalizeInvoice($input: FinalizeInvoiceInput!) {
    finalizeInvoice(input: $input) {
      __typename
      ... on FinalizeInvoiceSuccess { invoice { id number status amountRemaining hostedInvoiceUrl lastPaymentError { code message } } }
      ... on Error { code message param }
    }
  }
`);

const MarkUncollectible = graphql(`
  mutation DashboardMarkInvoiceUncollectible($input: MarkInvoiceUncollectibleInput!) {
    markInvoiceUncollectible(input: $input) {
      __typename
      ... on MarkInvoiceUncollectibleSuccess { invoice { id status } }
      ... on Error { code message param }
    }
  }
`);

/** An invoice's name: its number once finalised, else "Draft in_…". */
export const invoiceName = (i: { id: string; number?: string | null }) => i.number ?? `Draft ${i.id}`;

export { invoiceTotal, totalsKnown, type InvoiceMoney } from '../invoice-money.ts';
import { invoiceTotal, totalsKnown } from '../invoice-money.ts';

export function InvoicesPage() {
  const [params] = useSearchParams();
  const status = (params.get('status') || null) as InvoiceStatus | null;
  const customer = useIdFilter('customer', params.get('customer') || null);
  const filter = idFilters(customer);
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: InvoicesQuery, variables: { first: 20, after: pager.after, status, customerId: customer.id }, context: LISTS.invoices, pause: filter.blocked });
  return (
    <>
      <PageHeader title="Invoices" />
      <p className="muted small">A one-off invoice starts on its customer's page: add items, then invoice them.</p>
      <Filters label="Filter invoices">
        <StatusFilter statuses={STATUSES} value={status} />
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={params.get('customer') ?? ''} placeholder="cus_…" />}</Field>
      </Filters>
      {filter.notes}
      {!filter.blocked && <ConnectionTable
        result={result}
        conn={result.data?.invoices}
        caption="Invoices"
        noun="invoices"
        emptyText="No invoices match."
        pager={pager}
        columns={[
          { header: 'Invoice', cell: (n) => <Link href={`/invoices/${n.id}`}>{invoiceName(n)}</Link> },
          { header: 'Total', className: 'num', cell: invoiceTotal },
          { header: 'Status', cell: (n) => <Status value={n.status} /> },
          { header: 'Customer', cell: (n) => <Link href={`/customers/${n.customer.id}`}>{n.customer.email}</Link> },
          { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
          { header: 'Actions', cell: (n) => <InvoiceActions invoice={n} /> },
        ]}
      />}
    </>
  );
}

/** Pay and void an open (or uncollectible) invoice, its PDF; a draft is finalised from its page. */
function InvoiceActions({ invoice, children }: { invoice: { id: string; number?: string | null; status: string; pdfUrl: string }; children?: ReactNode }) {
  const [voiding, voidIt] = useMutation(VoidInvoice);
  const [paying, pay] = useMutation(PayInvoice);
  const outcome = useOutcome();
  const name = invoiceName(invoice);
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
          <button type="button" className="small" disabled={paying.fetching} aria-label={`Pay ${name}`} onClick={async () => outcome.settle(await pay({ input: { id: invoice.id, idempotencyKey: idempotencyKey() } }), 'payInvoice')}>
            Pay
          </button>
          <ConfirmButton
            className="small secondary"
            label="Void"
            ariaLabel={`Void ${name}`}
            confirmLabel={`Yes, void ${name}`}
            disabled={voiding.fetching}
            onConfirm={async () => void outcome.settle(await voidIt({ input: { id: invoice.id, idempotencyKey: idempotencyKey() } }), 'voidInvoice')}
          />
        </>
      )}
      {children}
      {outcome.view}
    </div>
  );
}

// ---------------------------------------------------------------- one invoice

const InvoiceQuery = graphql(`
  query DashboardInvoice($id: ID!, $notesAfter: String) {
    invoice(id: $id) {
      id number status billingReason collectionMethod currency createdAt finalizedAt dueDate paidAt voidedAt periodStart periodEnd
      subtotal discountAmount couponId taxAmount total totalFormatted creditApplied creditedToBalance amountFromWallet amountDue amountPaid amountRemaining
      prePaymentCreditNotesAmount postPaymentCreditNotesAmount hostedInvoiceUrl pdfUrl
      lastPaymentError { code message }
      customer { id email name }
      subscription { id plan { id name } }
      payment { id }
      lines { id description quantity unitAmount amount discountAmount proration taxAmounts { taxRateId amount inclusive } }
    }
    creditNotes(invoiceId: $id, first: 20, after: $notesAfter) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id number amount currency type reason refundAmount creditAmount memo createdAt pdfUrl invoice { id number } customer { id email } } }
    }
  }
`);

// The page refetches after its own actions, the first credit note included.
const INVOICE_CONTEXT = { additionalTypenames: ['CreditNote', 'Invoice'] };

type Invoice = NonNullable<ResultOf<typeof InvoiceQuery>['invoice']>;

export function InvoicePage({ id }: { id: string }) {
  const pager = usePager(id);
  const [{ data, fetching, error }] = useQuery({ query: InvoiceQuery, variables: { id, notesAfter: pager.after }, context: INVOICE_CONTEXT });
  const inv = data?.invoice;
  const money = (amount: number | null | undefined) => (inv && amount !== null && amount !== undefined ? <Money amount={amount} currency={inv.currency} /> : '—');
  return (
    <>
      <PageHeader title={inv ? `Invoice ${invoiceName(inv)}` : 'Invoice'} />
      <p>
        <Link href="/invoices">← All invoices</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !inv : undefined} emptyText={`No invoice ${id}.`}>
        {inv && data && (
          <>
            <Details
              items={[
                ['ID', <code>{inv.id}</code>],
                ['Status', <Status value={inv.status} />],
                ['Customer', <Link href={`/customers/${inv.customer.id}`}>{inv.customer.name ? `${inv.customer.name} (${inv.customer.email})` : inv.customer.email}</Link>],
                ['Reason', inv.billingReason.replace(/_/g, ' ')],
                ['Subscription', inv.subscription ? <Link href={`/subscriptions/${inv.subscription.id}`}>{inv.subscription.plan.name}</Link> : null],
                ['Collection', inv.collectionMethod === 'send_invoice' ? 'Sent to the customer, paid on its page' : 'Charged to the payment method'],
                ['Period', <><DateTime value={inv.periodStart} /> – <DateTime value={inv.periodEnd} /></>],
                ['Due', inv.dueDate ? <DateTime value={inv.dueDate} /> : null],
                ['Payment', inv.payment ? <Link href={`/payments/${inv.payment.id}`}>{inv.payment.id}</Link> : null],
                ['Last payment error', inv.lastPaymentError ? `${inv.lastPaymentError.message} (${inv.lastPaymentError.code})` : null],
                ['Created', <DateTime value={inv.createdAt} />],
                ['Finalized', inv.finalizedAt ? <DateTime value={inv.finalizedAt} /> : null],
                ['Paid', inv.paidAt ? <DateTime value={inv.paidAt} /> : null],
                ['Voided', inv.voidedAt ? <DateTime value={inv.voidedAt} /> : null],
              ]}
            />
            <InvoiceActions invoice={inv}>
              {inv.hostedInvoiceUrl && (
                <a href={inv.hostedInvoiceUrl} target="_blank" rel="noreferrer">
                  Hosted invoice page
                </a>
              )}
            </InvoiceActions>
            <FinalizeForm invoice={inv} />
            {inv.status === 'open' && (
              <ConfirmMutation
                mutation={MarkUncollectible}
                variables={() => ({ input: { id: inv.id, idempotencyKey: idempotencyKey() } })}
                field="markInvoiceUncollectible"
                className="secondary"
                label="Mark uncollectible"
                confirmLabel={`Yes, write off ${invoiceName(inv)}`}
              />
            )}
            <section aria-labelledby="lines-h">
              <h2 id="lines-h">Lines ({inv.lines.length})</h2>
              <Table
                caption="Invoice lines"
                rows={inv.lines}
                rowKey={(l) => l.id}
                columns={[
                  { header: 'Description', cell: (l) => l.description },
                  { header: 'Quantity', className: 'num', cell: (l) => l.quantity ?? '—' },
                  { header: 'Unit price', className: 'num', cell: (l) => (l.unitAmount != null ? money(l.unitAmount) : '—') },
                  { header: 'Amount', className: 'num', cell: (l) => money(l.amount) },
                  { header: 'Discount', className: 'num', cell: (l) => (l.discountAmount ? money(-l.discountAmount) : '—') },
                  { header: 'Tax', className: 'num', cell: (l) => (l.taxAmounts.length ? l.taxAmounts.map((t) => <span key={t.taxRateId}>{money(t.amount)}{t.inclusive ? ' incl.' : ''} </span>) : '—') },
                ]}
              />
              {!totalsKnown(inv) ? (
                <p className="muted">
                  The lines add up to {money(inv.lines.reduce((n, l) => n + l.amount, 0))}. The totals (discount, taxes, what the credit balance covers) are computed when it is finalized.
                </p>
              ) : (
                <>
                {inv.status === 'draft' && <p className="muted small">The totals as the draft stands. What the credit balance and the wallet pay, and the amount due, are settled when it is finalized.</p>}
                <Details
                  items={[
                    ['Subtotal', money(inv.subtotal)],
                    ['Discount', inv.discountAmount ? <>{money(-inv.discountAmount)} ({inv.couponId})</> : null],
                    ['Tax', inv.taxAmount ? money(inv.taxAmount) : null],
                    ['Total', <strong>{money(inv.total)}</strong>],
                    ...(inv.status === 'draft' ? [] : settled(inv, money)),
                  ]}
                />
                </>
              )}
            </section>
            <TableSection
              id="notes-h"
              title={`Credit notes (${data.creditNotes.totalCount})`}
              caption="Credit notes of this invoice"
              rows={data.creditNotes.edges.map((e) => e.node)}
              rowKey={(n) => n.id}
              emptyText="No credit notes."
              columns={CREDIT_NOTE_COLUMNS.filter((c) => c.header !== 'Invoice' && c.header !== 'Customer')}
              footer={<Pager pager={pager} pageInfo={data.creditNotes.pageInfo} total={data.creditNotes.totalCount} noun="credit notes" />}
            >
              {(inv.status === 'open' || inv.status === 'uncollectible' || inv.status === 'paid') && <CreditNoteForm invoice={inv} />}
            </TableSection>
          </>
        )}
      </QueryState>
    </>
  );
}

/** What was drawn, paid and credited: the totals of a finalized invoice after its total. */
function settled(inv: Invoice, money: (amount: number | null | undefined) => ReactNode): [string, ReactNode][] {
  return [
    ['Credit balance applied', inv.creditApplied ? money(-inv.creditApplied) : null],
    ['Credited to the balance', inv.creditedToBalance ? money(inv.creditedToBalance) : null],
    ['From the wallet', inv.amountFromWallet ? money(-inv.amountFromWallet) : null],
    ['Credit notes before payment', inv.prePaymentCreditNotesAmount ? money(-inv.prePaymentCreditNotesAmount) : null],
    ['Amount due', money(inv.amountDue)],
    ['Paid', money(inv.amountPaid)],
    ['Remaining', money(inv.amountRemaining)],
    ['Credit notes after payment', inv.postPaymentCreditNotesAmount ? money(inv.postPaymentCreditNotesAmount) : null],
  ];
}

function FinalizeForm({ invoice }: { invoice: Invoice }) {
  const [state, finalize] = useMutation(FinalizeInvoice);
  const outcome = useOutcome();
  const sends = invoice.collectionMethod === 'send_invoice';
  // Mounted for every status, so that the outcome stays in view once the invoice is no longer a draft.
  if (invoice.status !== 'draft') return outcome.view;
  async function run() {
    outcome.begin();
    const r = await finalize({ input: { id: invoice.id, idempotencyKey: idempotencyKey() } });
    if (outcome.settle(r, 'finalizeInvoice') && r.data?.finalizeInvoice.__typename === 'FinalizeInvoiceSuccess') {
      const f = r.data.finalizeInvoice.invoice;
      outcome.succeed(`Invoice ${f.number} finalized: ${f.status}${f.lastPaymentError ? ` (${f.lastPaymentError.message})` : ''}.`);
    }
  }
  return (
    <div className="card inline-form">
      <h2>Finalize</h2>
      <p className="muted small">
        {sends
          ? `Numbers the invoice and e-mails it to ${invoice.customer.email} with a link to its hosted page, due in the days chosen.`
          : "Numbers the invoice and charges the customer's default payment method at once (the credit balance first)."}
      </p>
      <button type="button" disabled={state.fetching} onClick={() => void run()}>
        {sends ? 'Finalize and send' : 'Finalize and charge'}
      </button>
      {outcome.view}
    </div>
  );
}

const CreateCreditNote = graphql(`
  mutation DashboardCreateCreditNote($input: CreateCreditNoteInput!) {
    createCreditNote(input: $input) {
      __typename
      ... on CreateCreditNoteSuccess { creditNote { id number amount currency type } }
      ... on Error { code message param }
    }
  }
`);

type CreditNoteReason = NonNullable<VariablesOf<typeof CreateCreditNote>['input']['reason']>;
const REASONS: CreditNoteReason[] = ['duplicate', 'fraudulent', 'order_change', 'product_unsatisfactory'];

/**
 * Credits the invoice: on an open one it lowers what is due; on a paid one the amount is refunded
 * to its payment and/or added to the customer's credit balance (both empty: all to the balance).
 */
function CreditNoteForm({ invoice }: { invoice: Invoice }) {
  const [state, create] = useMutation(CreateCreditNote);
  const outcome = useOutcome();
  const paid = invoice.status === 'paid';
  const left = paid ? invoice.total - invoice.postPaymentCreditNotesAmount : invoice.amountRemaining;
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { form, text, num } = readForm(e);
    outcome.begin();
    const r = await create({
      input: {
        invoiceId: invoice.id,
        amount: num('amount'),
        reason: text('reason') as CreditNoteReason | undefined,
        memo: text('memo'),
        refundAmount: paid ? num('refundAmount') : undefined,
        creditAmount: paid ? num('creditAmount') : undefined,
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'createCreditNote') && r.data?.createCreditNote.__typename === 'CreateCreditNoteSuccess') {
      const n = r.data.createCreditNote.creditNote;
      outcome.succeed(`Credit note ${n.number} issued for ${formatMoney(n.amount, n.currency)}.`);
      form.reset();
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="new-note-h">
      <h3 id="new-note-h">Issue a credit note</h3>
      <p className="muted small">
        {paid
          ? 'The invoice is paid: the credit is refunded to its payment and/or added to the customer’s credit balance.'
          : 'The invoice is not paid: the credit lowers what is due.'}
      </p>
      <Field label="Credit amount (smallest unit)" hint={`At most ${formatMoney(left, invoice.currency)} (${left}).`}>
        {(p) => <input {...p} name="amount" inputMode="numeric" pattern="[0-9]*" required />}
      </Field>
      {paid && (
        <>
          <Field label="Refund to the payment (smallest unit)" hint="Refund and balance must add up to the amount; both empty: all to the credit balance.">
            {(p) => <input {...p} name="refundAmount" inputMode="numeric" pattern="[0-9]*" />}
          </Field>
          <Field label="Add to the credit balance (smallest unit)">{(p) => <input {...p} name="creditAmount" inputMode="numeric" pattern="[0-9]*" />}</Field>
        </>
      )}
      <EnumSelect label="Credit reason" name="reason" values={REASONS} />
      <Field label="Memo">{(p) => <input {...p} name="memo" maxLength={500} />}</Field>
      <button type="submit" disabled={state.fetching}>
        Issue credit note
      </button>
      {outcome.view}
    </form>
  );
}
