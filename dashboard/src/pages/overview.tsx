// The overview (the dashboard's home page): MRR, active subscriptions, and the last 30 days'
// revenue and failed payments, from one `overview` query. The answer holds every currency; the
// currency selector picks which one the money figures and the chart show (the counts are for all).
import { useMemo } from 'react';
import { useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { DateTime, Field, PageHeader, QueryState, Table, formatMoney } from '../components/ui.tsx';
import { RevenueChart, type ChartDay } from '../components/chart.tsx';

const OverviewQuery = graphql(`
  query DashboardOverview {
    overview {
      asOf
      from
      to
      activeSubscriptions
      mrr { currency amount amountFormatted subscriptions }
      days { date failedPayments revenue { currency amount payments refunds } }
    }
  }
`);

type Overview = ResultOf<typeof OverviewQuery>['overview'];

/** The currencies the merchant has numbers in: MRR's first (most subscriptions), then revenue's (most payments). */
export function currenciesOf(o: Overview): string[] {
  const weight = new Map<string, number>();
  for (const m of o.mrr) weight.set(m.currency, (weight.get(m.currency) ?? 0) + 1_000_000 * m.subscriptions);
  for (const d of o.days) for (const r of d.revenue) weight.set(r.currency, (weight.get(r.currency) ?? 0) + r.payments + r.refunds);
  return [...weight.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([c]) => c);
}

export function OverviewPage() {
  const [params, setParams] = useSearchParams();
  const [{ data, fetching, error }] = useQuery({ query: OverviewQuery });
  const o = data?.overview;
  return (
    <>
      <PageHeader title="Overview" />
      <QueryState fetching={fetching} error={error} empty={o ? false : undefined}>
        {o && <OverviewBody o={o} asked={params.get('currency')} onCurrency={(c) => setParams(c ? { currency: c } : {})} />}
      </QueryState>
    </>
  );
}

function OverviewBody({ o, asked, onCurrency }: { o: Overview; asked: string | null; onCurrency: (c: string) => void }) {
  const currencies = useMemo(() => currenciesOf(o), [o]);
  const currency = asked && currencies.includes(asked) ? asked : (currencies[0] ?? null);
  const shown = currency ?? 'USD';
  const days: ChartDay[] = useMemo(
    () => o.days.map((d) => ({ date: d.date, failedPayments: d.failedPayments, revenue: d.revenue.find((r) => r.currency === currency)?.amount ?? 0 })),
    [o, currency],
  );
  const mrr = o.mrr.find((m) => m.currency === currency);
  const revenue = days.reduce((n, d) => n + d.revenue, 0);
  const failed = days.reduce((n, d) => n + d.failedPayments, 0);
  const payments = o.days.reduce((n, d) => n + (d.revenue.find((r) => r.currency === currency)?.payments ?? 0), 0);
  const quiet = currencies.length === 0 && failed === 0 && o.activeSubscriptions === 0;
  const best = days.reduce<ChartDay | null>((b, d) => (d.revenue > (b?.revenue ?? 0) ? d : b), null);
  const summary =
    `Revenue in ${shown} and failed payments per day from ${o.from} to ${o.to}: ${formatMoney(revenue, shown)} in total` +
    (best ? `, most on ${best.date} (${formatMoney(best.revenue, shown)})` : '') +
    `; ${failed} failed payment${failed === 1 ? '' : 's'}. The table below has every day.`;

  return (
    <>
      <p className="muted small">
        The last 30 days on the billing clock, {o.from} to {o.to} (UTC); now: <DateTime value={o.asOf} />.
      </p>
      {currencies.length > 1 && (
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            onCurrency(String(new FormData(e.currentTarget).get('currency') ?? ''));
          }}
        >
          <Field label="Currency">
            {(p) => (
              <select {...p} name="currency" defaultValue={currency ?? ''} key={currency}>
                {currencies.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button type="submit">Show</button>
        </form>
      )}
      <dl className="kpis">
        <div className="kpi">
          <dt>MRR</dt>
          <dd data-testid="kpi-mrr">{mrr ? mrr.amountFormatted : formatMoney(0, shown)}</dd>
          <dd className="muted small">
            {mrr ? `${mrr.subscriptions} subscription${mrr.subscriptions === 1 ? '' : 's'} in ${shown}` : currency ? `No paying subscriptions in ${shown}` : 'No subscriptions yet'}
          </dd>
        </div>
        <div className="kpi">
          <dt>Active subscriptions</dt>
          <dd data-testid="kpi-active">{o.activeSubscriptions}</dd>
          <dd className="muted small">Every currency</dd>
        </div>
        <div className="kpi">
          <dt>Revenue, 30 days</dt>
          <dd data-testid="kpi-revenue">{formatMoney(revenue, shown)}</dd>
          <dd className="muted small">
            {payments === 0 ? 'No payments' : `${payments} payment${payments === 1 ? '' : 's'}, less refunds`}
          </dd>
        </div>
        <div className="kpi">
          <dt>Failed payments, 30 days</dt>
          <dd data-testid="kpi-failed">{failed}</dd>
          <dd className="muted small">Every currency</dd>
        </div>
      </dl>
      {quiet ? (
        <div className="empty" data-testid="overview-empty">
          <p>
            <strong>Nothing to count yet.</strong> These numbers fill in as you take payments and bill subscriptions.
          </p>
          <p>
            Start with a <Link href="/plans">plan</Link> and subscribe a <Link href="/customers">customer</Link> to it, or create a payment through the API. In test mode the{' '}
            <Link href="/test-clock">test clock</Link> moves time forward to see renewals.
          </p>
        </div>
      ) : (
        <section className="card" aria-labelledby="chart-h">
          <h2 id="chart-h">Revenue and failed payments by day</h2>
          <RevenueChart days={days} currency={shown} summary={summary} />
          <details className="chart-table">
            <summary>The numbers by day</summary>
            <Table
              caption={`Revenue in ${shown} and failed payments by day`}
              rows={[...days].reverse()}
              rowKey={(d) => d.date}
              columns={[
                { header: 'Day', cell: (d) => d.date },
                { header: `Revenue (${shown})`, className: 'num', cell: (d) => formatMoney(d.revenue, shown) },
                { header: 'Failed payments', className: 'num', cell: (d) => d.failedPayments },
              ]}
            />
          </details>
        </section>
      )}
    </>
  );
}
