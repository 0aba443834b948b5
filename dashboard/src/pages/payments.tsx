import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConnectionTable, DateTime, Details, EnumSelect, Field, Filters, FormError, Json, Money, PageHeader, QueryState, Status, StatusFilter, TableSection, formatMoney, idempotencyKey, mutationError, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';
import { idFilters, useIdFilter } from '../components/id-filter.tsx';

const PaymentsQuery = graphql(`
  query DashboardPayments($first: Int, $after: String, $status: PaymentStatus, $currency: String, $customerId: ID) {
    payments(first: $first, after: $after, status: $status, currency: $currency, customerId: $customerId) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id amount amountRefunded currency status createdAt customer { id email } } }
    }
  }
`);

type PaymentStatus = NonNullable<VariablesOf<typeof PaymentsQuery>['status']>;
export const PAYMENT_STATUSES: PaymentStatus[] = ['created', 'processing', 'succeeded', 'failed', 'cancelled', 'expired'];

export function PaymentsPage() {
  const [params] = useSearchParams();
  const status = (params.get('status') || null) as PaymentStatus | null;
  const currency = params.get('currency') || null;
  const customer = useIdFilter('customer', params.get('customer') || null);
  const filter = idFilters(customer);
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: PaymentsQuery, variables: { first: 20, after: pager.after, status, currency, customerId: customer.id }, context: LISTS.payments, pause: filter.blocked });

  return (
    <>
      <PageHeader title="Payments" />
      <Filters label="Filter payments" upper={['currency']}>
        <StatusFilter statuses={PAYMENT_STATUSES} value={status} />
        <Field label="Currency">{(p) => <input {...p} name="currency" defaultValue={currency ?? ''} placeholder="USD" maxLength={3} size={5} />}</Field>
        <Field label="Customer ID">{(p) => <input {...p} name="customer" defaultValue={params.get('customer') ?? ''} placeholder="cus_…" />}</Field>
      </Filters>
      {filter.notes}
      {!filter.blocked && <ConnectionTable
        result={result}
        conn={result.data?.payments}
        caption="Payments"
        noun="payments"
        emptyText="No payments match."
        pager={pager}
        columns={[
          { header: 'Payment', cell: (n) => <Link href={`/payments/${n.id}`}>{n.id}</Link> },
          { header: 'Amount', className: 'num', cell: (n) => <Money amount={n.amount} currency={n.currency} /> },
          { header: 'Status', cell: (n) => <Status value={n.amountRefunded > 0 ? (n.amountRefunded >= n.amount ? 'refunded' : 'partially_refunded') : n.status} /> },
          { header: 'Customer', cell: (n) => <Link href={`/customers/${n.customer.id}`}>{n.customer.email}</Link> },
          { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
        ]}
      />}
    </>
  );
}

const PaymentQuery = graphql(`
  query DashboardPayment($id: ID!) {
    payment(id: $id) {
      id amount amountRefunded currency status refunded createdAt updatedAt expiresAt failureCode failureMessage checkoutUrl metadata
      customer { id email name }
      paymentMethod { type card { brand last4 expMonth expYear } mobileMoney { phone } }
      refunds { id amount currency status reason createdAt }
    }
  }
`);

const CreateRefund = graphql(`
  mutation DashboardCreateRefund($input: CreateRefundInput!) {
    createRefund(input: $input) {
      __typename
      ... on CreateRefundSuccess { refund { id amount status payment { id amountRefunded refunded refunds { id amount currency status reason createdAt } } } }
      ... on Error { code message param }
    }
  }
`);

type RefundReason = NonNullable<VariablesOf<typeof CreateRefund>['input']['reason']>;
const REASONS: RefundReason[] = ['customer_request', 'duplicate', 'fraudulent', 'other'];

export function PaymentPage({ id }: { id: string }) {
  const [{ data, fetching, error }] = useQuery({ query: PaymentQuery, variables: { id } });
  const p = data?.payment;
  return (
    <>
      <PageHeader title={p ? `Payment ${formatMoney(p.amount, p.currency)}` : 'Payment'} />
      <p>
        <Link href="/payments">← All payments</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !p : undefined} emptyText={`No payment ${id}.`}>
        {p && (
          <>
            <Details
              items={[
                ['ID', <code>{p.id}</code>],
                ['Status', <Status value={p.status} />],
                ['Amount', <Money amount={p.amount} currency={p.currency} />],
                ['Refunded', <Money amount={p.amountRefunded} currency={p.currency} />],
                ['Customer', <Link href={`/customers/${p.customer.id}`}>{p.customer.name ? `${p.customer.name} (${p.customer.email})` : p.customer.email}</Link>],
                ['Method', p.paymentMethod?.card ? `${p.paymentMethod.card.brand} •••• ${p.paymentMethod.card.last4}` : p.paymentMethod?.mobileMoney ? `Mobile money ${p.paymentMethod.mobileMoney.phone}` : null],
                ['Failure', p.failureMessage ? `${p.failureMessage} (${p.failureCode})` : null],
                ['Created', <DateTime value={p.createdAt} />],
                // Only while the checkout can still be paid: a charge that has an outcome has no checkout to expire.
                ['Checkout expires', p.status === 'created' ? <DateTime value={p.expiresAt} /> : null],
              ]}
            />
            <TableSection
              id="refunds-h"
              title="Refunds"
              caption="Refunds"
              rows={p.refunds}
              rowKey={(r) => r.id}
              emptyText="No refunds."
              columns={[
                { header: 'Refund', cell: (r) => <code>{r.id}</code> },
                { header: 'Amount', className: 'num', cell: (r) => <Money amount={r.amount} currency={r.currency} /> },
                { header: 'Status', cell: (r) => <Status value={r.status} /> },
                { header: 'Reason', cell: (r) => r.reason?.replace(/_/g, ' ') ?? '—' },
                { header: 'Created', cell: (r) => <DateTime value={r.createdAt} /> },
              ]}
            >
              {p.status === 'succeeded' && <RefundForm paymentId={p.id} currency={p.currency} remaining={p.amount - p.amountRefunded} />}
            </TableSection>
            <section aria-labelledby="meta-h">
              <h2 id="meta-h">Metadata</h2>
              <Json value={p.metadata} label="Metadata as JSON" />
            </section>
          </>
        )}
      </QueryState>
    </>
  );
}

function RefundForm({ paymentId, currency, remaining }: { paymentId: string; currency: string; remaining: number }) {
  const [result, refund] = useMutation(CreateRefund);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const raw = String(f.get('amount') ?? '').trim();
    const reason = (String(f.get('reason') ?? '') || undefined) as RefundReason | undefined;
    setDone(null);
    const r = await refund({ input: { paymentId, amount: raw === '' ? undefined : Number(raw), reason, idempotencyKey: idempotencyKey() } });
    const err = mutationError(r, 'createRefund');
    setMessage(err);
    if (!err && r.data?.createRefund.__typename === 'CreateRefundSuccess') setDone(`Refund ${r.data.createRefund.refund.id} created (${r.data.createRefund.refund.status}).`);
  }
  const doneNote = done && (
    <p className="success" role="status">
      {done}
    </p>
  );
  // Fully refunded: no form, but the outcome of the refund just made stays in view.
  if (remaining <= 0) return <div className="inline-form">{doneNote ?? <p className="muted">Fully refunded.</p>}</div>;
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="refund-h">
      <h3 id="refund-h">Refund this payment</h3>
      <Field label="Refund amount (smallest unit)" hint={`Leave empty to refund what remains: ${formatMoney(remaining, currency)} (${remaining}).`}>
        {(p) => <input {...p} name="amount" inputMode="numeric" pattern="[0-9]*" />}
      </Field>
      <EnumSelect label="Reason" name="reason" values={REASONS} />
      <button type="submit" disabled={result.fetching}>
        Refund
      </button>
      <FormError message={message} />
      {doneNote}
    </form>
  );
}
