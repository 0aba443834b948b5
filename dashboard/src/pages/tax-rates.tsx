// Tax rates: the list (active, archived), a new rate (exclusive: added to the lines; inclusive:
// contained in them), and archiving (no new subscription may name it; those that have it keep it).
import type { FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { useSearchParams } from 'wouter';
import { graphql } from '../graphql.ts';
import { ActiveFilter, ConfirmMutation, ConnectionTable, DateTime, Field, Filters, PageHeader, Status, activeParam, idempotencyKey, readForm, useOutcome, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';
import { taxRateLabel } from '../components/picker.tsx';

const TaxRatesQuery = graphql(`
  query DashboardTaxRates($first: Int, $after: String, $active: Boolean, $search: String) {
    taxRates(first: $first, after: $after, active: $active, search: $search) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id displayName percentage inclusive country jurisdiction active createdAt } }
    }
  }
`);

const CreateTaxRate = graphql(`
  mutation DashboardCreateTaxRate($input: CreateTaxRateInput!) {
    createTaxRate(input: $input) {
      __typename
      ... on CreateTaxRateSuccess { taxRate { id displayName percentage } }
      ... on Error { code message param }
    }
  }
`);

const ArchiveTaxRate = graphql(`
  mutation DashboardArchiveTaxRate($input: ArchiveTaxRateInput!) {
    archiveTaxRate(input: $input) {
      __typename
      ... on ArchiveTaxRateSuccess { taxRate { id active } }
      ... on Error { code message param }
    }
  }
`);


export function TaxRatesPage() {
  const [params] = useSearchParams();
  const active = activeParam(params);
  const search = params.get('search') || null;
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: TaxRatesQuery, variables: { first: 20, after: pager.after, active, search }, context: LISTS.taxRates });
  return (
    <>
      <PageHeader title="Tax rates" />
      <p className="muted small">A subscription names its tax rates when it is created; every line of its invoices is taxed with them.</p>
      <Filters label="Filter tax rates">
        <ActiveFilter value={active} all="All tax rates" />
        <Field label="Search tax rates">{(p) => <input {...p} name="search" type="search" maxLength={100} placeholder="vat fr" defaultValue={search ?? ''} />}</Field>
      </Filters>
      <ConnectionTable
        result={result}
        conn={result.data?.taxRates}
        caption="Tax rates"
        noun="tax rates"
        emptyText={active === null && !search ? 'No tax rates yet.' : 'No tax rates match.'}
        pager={pager}
        columns={[
          { header: 'Tax rate', cell: (t) => t.displayName },
          { header: 'ID', cell: (t) => <code>{t.id}</code> },
          { header: 'Rate', className: 'num', cell: (t) => `${t.percentage}%` },
          { header: 'Applied', cell: (t) => (t.inclusive ? 'Included in prices' : 'Added to prices') },
          { header: 'Where', cell: (t) => [t.country, t.jurisdiction].filter(Boolean).join(' · ') || '—' },
          { header: 'Status', cell: (t) => <Status value={t.active ? 'active' : 'archived'} /> },
          { header: 'Created', cell: (t) => <DateTime value={t.createdAt} /> },
          {
            header: 'Actions',
            cell: (t) =>
              t.active ? (
                <ConfirmMutation
                  mutation={ArchiveTaxRate}
                  variables={() => ({ input: { id: t.id, idempotencyKey: idempotencyKey() } })}
                  field="archiveTaxRate"
                  label="Archive"
                  ariaLabel={`Archive ${taxRateLabel(t)}`}
                  confirmLabel={`Yes, archive ${taxRateLabel(t)}`}
                />
              ) : (
                '—'
              ),
          },
        ]}
      />
      <CreateTaxRateForm />
    </>
  );
}

function CreateTaxRateForm() {
  const [state, create] = useMutation(CreateTaxRate);
  const outcome = useOutcome();
  async function submit(e: FormEvent<HTMLFormElement>) {
    const { form, text, num } = readForm(e);
    outcome.begin();
    const r = await create({
      input: {
        displayName: text('displayName') ?? '',
        percentage: num('percentage') ?? 0,
        inclusive: text('inclusive') === 'on',
        country: text('country'),
        jurisdiction: text('jurisdiction'),
        idempotencyKey: idempotencyKey(),
      },
    });
    if (outcome.settle(r, 'createTaxRate') && r.data?.createTaxRate.__typename === 'CreateTaxRateSuccess') {
      const t = r.data.createTaxRate.taxRate;
      outcome.succeed(`Tax rate ${t.displayName} ${t.percentage}% created.`);
      form.reset();
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-labelledby="new-tax-h">
      <h2 id="new-tax-h">Create a tax rate</h2>
      <Field label="Tax name" hint="Shown on invoices, e.g. VAT.">
        {(p) => <input {...p} name="displayName" required maxLength={100} />}
      </Field>
      <Field label="Percentage" hint="0 to 100, up to 4 decimals.">
        {(p) => <input {...p} name="percentage" type="number" min="0" max="100" step="0.0001" required />}
      </Field>
      <label className="check">
        <input type="checkbox" name="inclusive" /> Included in prices (otherwise added to them)
      </label>
      <Field label="Country" hint="Optional: two letters (ISO 3166-1).">
        {(p) => <input {...p} name="country" maxLength={2} size={4} />}
      </Field>
      <Field label="Jurisdiction">{(p) => <input {...p} name="jurisdiction" maxLength={100} />}</Field>
      <button type="submit" disabled={state.fetching}>
        Create tax rate
      </button>
      {outcome.view}
    </form>
  );
}
