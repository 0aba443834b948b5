import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../graphql.ts';
import { DateTime, Field, FormError, PageHeader, QueryState, idempotencyKey, mutationError } from '../components/ui.tsx';

const ClockQuery = graphql(`
  query DashboardTestClock { testClock { now } }
`);

const Advance = graphql(`
  mutation DashboardAdvanceTestClock($input: AdvanceTestClockInput!) {
    advanceTestClock(input: $input) {
      __typename
      ... on AdvanceTestClockSuccess { clock { now } }
      ... on Error { code message param }
    }
  }
`);

const PRESETS: [string, number][] = [
  ['1 hour', 3600],
  ['1 day', 86400],
  ['7 days', 7 * 86400],
  ['31 days', 31 * 86400],
];

export function TestClockPage({ mode }: { mode: string }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: ClockQuery, pause: mode !== 'test' });
  const [advancing, advance] = useMutation(Advance);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  async function run(seconds: number) {
    setDone(null);
    const r = await advance({ input: { seconds, idempotencyKey: idempotencyKey() } });
    const err = mutationError(r, 'advanceTestClock');
    setMessage(err);
    if (!err && r.data?.advanceTestClock.__typename === 'AdvanceTestClockSuccess') {
      setDone(`The clock moved on; the work that became due has run.`);
      refetch({ requestPolicy: 'network-only' });
    }
  }

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const amount = Number(f.get('amount'));
    const unit = Number(f.get('unit'));
    void run(Math.round(amount * unit));
  }

  if (mode !== 'test') {
    return (
      <>
        <PageHeader title="Test clock" />
        <p className="empty">The test clock is for test-mode merchants only: a live merchant's clock is real time.</p>
      </>
    );
  }

  return (
    <>
      <PageHeader title="Test clock" />
      <p>Renewals, retries, trial ends and checkout expiry follow this clock. Moving it runs what became due, in time order, before it answers.</p>
      <QueryState fetching={fetching} error={error} empty={data ? false : undefined}>
        {data && (
          <p className="clock">
            Billing clock now: <strong data-testid="clock-now"><DateTime value={data.testClock.now} /></strong>
          </p>
        )}
      </QueryState>
      <section aria-labelledby="advance-h" className="card">
        <h2 id="advance-h">Advance the clock</h2>
        <div className="button-row" role="group" aria-label="Advance by">
          {PRESETS.map(([label, seconds]) => (
            <button key={label} type="button" disabled={advancing.fetching} onClick={() => void run(seconds)}>
              Advance {label}
            </button>
          ))}
        </div>
        <form className="inline-form" onSubmit={submit}>
          <Field label="Amount">{(p) => <input {...p} name="amount" type="number" min="1" step="1" defaultValue="1" required />}</Field>
          <Field label="Unit">
            {(p) => (
              <select {...p} name="unit" defaultValue="86400">
                <option value="60">minutes</option>
                <option value="3600">hours</option>
                <option value="86400">days</option>
              </select>
            )}
          </Field>
          <button type="submit" disabled={advancing.fetching}>
            Advance
          </button>
        </form>
        {advancing.fetching && (
          <p className="muted" role="status">
            Advancing…
          </p>
        )}
        <FormError message={message} />
        {done && (
          <p className="success" role="status">
            {done}
          </p>
        )}
      </section>
    </>
  );
}
