// Coupons: the list (deleted ones left out, as the API lists them), a new coupon (percent or
// amount off, once / repeating / forever, limits), and deletion (no new redemptions; discounts
// already applied go on).
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConfirmMutation, ConnectionTable, DateTime, Field, Filters, PageHeader, Status, idempotencyKey, readForm, useOutcome, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';

const CouponsQuery = graphql(`
  query DashboardCoupons($first: Int, $after: String, $search: String) {
    coupons(first: $first, after: $after, search: $search) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id name percentOff amountOffFormatted duration durationInMonths maxRedemptions timesRedeemed redeemBy valid createdAt } }
    }
  }
`);

const CreateCoupon = graphql(`
  mutation DashboardCreateCoupon($input: CreateCouponInput!) {
    createCoupon(input: $input) {
      __typename
      ... on CreateCouponSuccess { coupon { id name } }
      ... on Error { code message param }
    }
  }
`);

const DeleteCoupon = graphql(`
  mutation DashboardDeleteCoupon($input: DeleteCouponInput!) {
    deleteCoupon(input: $input) {
      __typename
      ... on DeleteCouponSuccess { coupon { id deleted valid } }
      ... on Error { code message param }
    }
  }
`);

type Duration = VariablesOf<typeof CreateCoupon>['input']['duration'];

const duration = (c: { duration: string; durationInMonths?: number | null }) =>
  c.duration === 'repeating' ? `${c.durationInMonths} month${c.durationInMonths === 1 ? '' : 's'}` : c.duration === 'once' ? 'the next invoice' : 'forever';

export function CouponsPage() {
  const [params] = useSearchParams();
  const search = params.get('search') || null;
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: CouponsQuery, variables: { first: 20, after: pager.after, search }, context: LISTS.coupons });
  return (
    <>
      <PageHeader title="Coupons" />
      <p className="muted small">A coupon is applied when a customer is subscribed (or from the API on a subscription change).</p>
      <Filters label="Search coupons" submitLabel="Search">
        <Field label="Find coupons" hint="Code or words of the name.">{(p) => <input {...p} name="search" type="search" maxLength={100} placeholder="summer" defaultValue={search ?? ''} />}</Field>
      </Filters>
      <ConnectionTable
        result={result}
        conn={result.data?.coupons}
        caption="Coupons"
        noun="coupons"
        emptyText={search ? 'No coupons match.' : 'No coupons yet.'}
        pager={pager}
        columns={[
          { header: 'Code', cell: (c) => <code>{c.id}</code> },
          { header: 'Name', cell: (c) => c.name },
          { header: 'Discount', cell: (c) => (c.percentOff != null ? `${c.percentOff}% off` : `${c.amountOffFormatted} off`) },
          { header: 'Lasts', cell: duration },
          { header: 'Redeemed', className: 'num', cell: (c) => (c.maxRedemptions != null ? `${c.timesRedeemed} of ${c.maxRedemptions}` : c.timesRedeemed) },
          { header: 'Redeem by', cell: (c) => <DateTime value={c.redeemBy} /> },
          { header: 'Status', cell: (c) => <Status value={c.valid ? 'valid' : 'no_longer_valid'} /> },
          {
            header: 'Actions',
            cell: (c) => (
              <ConfirmMutation
                mutation={DeleteCoupon}
                variables={() => ({ input: { id: c.id, idempotencyKey: idempotencyKey() } })}
                field="deleteCoupon"
                label="Delete"
                ariaLabel={`Delete ${c.id}`}
                confirmLabel={`Yes, delete ${c.id}`}
              />
            ),
          },
        ]}
      />
      <CreateCouponForm />
    </>
  );
}

function CreateCouponForm() {
  const [state, create] = useMutation(CreateCoupon);
  const outcome = useOutcome();
  const [kind, setKind] = useState<'percent' | 'amount'>('percent');
  const [lasts, setLasts] = useState<Duration>('once');
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { form, text, num } = readForm(e);
    const redeemBy = text('redeemBy');
    outcome.begin();
    const r = await create({
      input: {
        id: text('code'),
        name: text('name') ?? '',
        percentOff: kind === 'percent' ? num('percentOff') : undefined,
        amountOff: kind === 'amount' ? num('amountOff') : undefined,
        currency: kind === 'amount' ? text('currency')?.toUpperCase() : undefined,
        duration: lasts,
        durationInMonths: lasts === 'repeating' ? num('durationInMonths') : undefined,
        maxRedemptions: num('maxRedemptions'),
        // The end of that day, UTC.
        redeemBy: redeemBy ? `${redeemBy}T23:59:59.000Z` : undefined,
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'createCoupon') && r.data?.createCoupon.__typename === 'CreateCouponSuccess') {
      outcome.succeed(`Coupon ${r.data.createCoupon.coupon.id} created.`);
      form.reset();
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="new-coupon-h">
      <h2 id="new-coupon-h">Create a coupon</h2>
      <Field label="Coupon name" hint="Shown on invoices.">
        {(p) => <input {...p} name="name" required maxLength={100} />}
      </Field>
      <Field label="Code" hint="Optional: letters, digits, _ and -; default a generated coupon_… id.">
        {(p) => <input {...p} name="code" maxLength={64} pattern="[A-Za-z0-9_\-]+" autoComplete="off" />}
      </Field>
      <fieldset className="choices">
        <legend>Discount</legend>
        <label>
          <input type="radio" name="kind" checked={kind === 'percent'} onChange={() => setKind('percent')} />
          A percentage
        </label>
        <label>
          <input type="radio" name="kind" checked={kind === 'amount'} onChange={() => setKind('amount')} />
          A fixed amount
        </label>
      </fieldset>
      {kind === 'percent' ? (
        <Field label="Percent off" hint="More than 0, at most 100, up to 2 decimals.">
          {(p) => <input {...p} name="percentOff" type="number" min="0.01" max="100" step="0.01" required />}
        </Field>
      ) : (
        <>
          <Field label="Amount off (smallest unit)" hint="500 is $5.00 in USD.">
            {(p) => <input {...p} name="amountOff" inputMode="numeric" pattern="[0-9]*" required />}
          </Field>
          <Field label="Amount currency">{(p) => <input {...p} name="currency" defaultValue="USD" maxLength={3} size={5} required />}</Field>
        </>
      )}
      <Field label="Duration">
        {(p) => (
          <select {...p} name="duration" value={lasts} onChange={(e) => setLasts(e.currentTarget.value as Duration)}>
            <option value="once">Once: the next invoice</option>
            <option value="repeating">Repeating: a number of months</option>
            <option value="forever">Forever</option>
          </select>
        )}
      </Field>
      {lasts === 'repeating' && (
        <Field label="Months">{(p) => <input {...p} name="durationInMonths" type="number" min="1" max="120" step="1" required />}</Field>
      )}
      <Field label="Maximum redemptions" hint="Optional: how many subscriptions may redeem it.">
        {(p) => <input {...p} name="maxRedemptions" type="number" min="1" step="1" />}
      </Field>
      <Field label="Redeem by" hint="Optional: the last day it can be applied (UTC).">
        {(p) => <input {...p} name="redeemBy" type="date" />}
      </Field>
      <button type="submit" disabled={state.fetching}>
        Create coupon
      </button>
      {outcome.view}
    </form>
  );
}
