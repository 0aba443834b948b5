// Pickers: choose a customer or a plan by searching (the API's customers(search:) and
// plans(search:)), never by typing an id. A picker is a group of radio buttons under a search box:
// typing narrows the choices (a quarter of a second after the last key), the arrow keys move
// between them, and the chosen one stays listed first whatever is typed next. The radios carry the
// form field (`name`), so the form reads the chosen id like any other field.
import { useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../graphql.ts';
import { Field, QueryError } from './ui.tsx';

const CustomerChoices = graphql(`
  query DashboardPickCustomers($first: Int, $search: String) {
    customers(first: $first, search: $search) { edges { node { id email name } } }
  }
`);

const CustomerChosen = graphql(`
  query DashboardPickedCustomer($id: ID!) { customer(id: $id) { id email name } }
`);

const PlanChoices = graphql(`
  query DashboardPickPlans($first: Int, $search: String) {
    plans(first: $first, search: $search, active: true) { edges { node { id name amountFormatted interval intervalCount trialPeriodDays } } }
  }
`);

export interface Choice {
  id: string;
  label: string;
  detail?: string;
}

/** How many choices a picker shows at once: search to narrow them. */
const SHOWN = 8;

function useDebounced<T>(value: T, ms = 250): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** The search box and the radio choices; it keeps the chosen one (`initial` until another is chosen). */
function PickerView({
  legend,
  searchLabel,
  hint,
  name,
  text,
  setText,
  choices,
  initial,
  fetching,
  error,
  none,
}: {
  legend: string;
  searchLabel: string;
  hint: string;
  name: string;
  text: string;
  setText: (t: string) => void;
  choices: Choice[];
  initial?: Choice | null | undefined;
  fetching: boolean;
  error?: Parameters<typeof QueryError>[0]['error'] | undefined;
  none: string;
}) {
  const [picked, setPicked] = useState<Choice | null>(null);
  const chosen = picked ?? initial ?? null;
  const shown = chosen && !choices.some((c) => c.id === chosen.id) ? [chosen, ...choices] : choices;
  return (
    <fieldset className="picker">
      <legend>{legend}</legend>
      <Field label={searchLabel} hint={hint}>
        {(p) => <input {...p} type="search" value={text} maxLength={100} autoComplete="off" onChange={(e) => setText(e.currentTarget.value)} />}
      </Field>
      {error && <QueryError error={error} />}
      {shown.length === 0 && !fetching && !error && <p className="muted small">{none}</p>}
      <div className="picker-choices">
        {shown.map((c) => (
          <label key={c.id} className="picker-choice">
            <input type="radio" name={name} value={c.id} required checked={chosen?.id === c.id} onChange={() => setPicked(c)} />
            <span>
              {c.label}
              {c.detail && <span className="muted small"> · {c.detail}</span>}
            </span>
          </label>
        ))}
      </div>
      {fetching && (
        <p className="muted small" role="status">
          Searching…
        </p>
      )}
    </fieldset>
  );
}

/** The search text as typed, and as sent (trimmed, a quarter of a second after the last key; null when empty). */
function useSearch() {
  const [text, setText] = useState('');
  const search = useDebounced(text.trim());
  return { text, setText, search: search || null };
}

const customerChoice = (c: { id: string; email: string; name?: string | null }): Choice => (c.name ? { id: c.id, label: c.name, detail: c.email } : { id: c.id, label: c.email });

/** A customer, found by email or name; `initialId` (from the address) is chosen to begin with. */
export function CustomerPicker({ name, initialId }: { name: string; initialId?: string | null }) {
  const { text, setText, search } = useSearch();
  const [{ data, fetching, error }] = useQuery({ query: CustomerChoices, variables: { first: SHOWN, search } });
  const [initial] = useQuery({ query: CustomerChosen, variables: { id: initialId ?? '' }, pause: !initialId });
  const first = initial.data?.customer;
  return (
    <PickerView
      legend="Customer"
      searchLabel="Find a customer"
      hint="Email or the start of a name; the newest customers are listed first."
      name={name}
      text={text}
      setText={setText}
      choices={(data?.customers.edges ?? []).map((e) => customerChoice(e.node))}
      initial={first ? customerChoice(first) : null}
      fetching={fetching}
      error={error}
      none={search ? `No customer matches “${search}”.` : 'No customers yet.'}
    />
  );
}

const every = (interval: string, count: number) => (count === 1 ? `a ${interval}` : `every ${count} ${interval}s`);

/** An active plan (archived plans take no new subscriptions), found by name. */
export function PlanPicker({ name }: { name: string }) {
  const { text, setText, search } = useSearch();
  const [{ data, fetching, error }] = useQuery({ query: PlanChoices, variables: { first: SHOWN, search } });
  return (
    <PickerView
      legend="Plan"
      searchLabel="Find a plan"
      hint="Words of its name; only active plans."
      name={name}
      text={text}
      setText={setText}
      choices={(data?.plans.edges ?? []).map(({ node: p }) => ({
        id: p.id,
        label: p.name,
        detail: `${p.amountFormatted} ${every(p.interval, p.intervalCount)}${p.trialPeriodDays ? `, ${p.trialPeriodDays}-day trial` : ''}`,
      }))}
      fetching={fetching}
      error={error}
      none={search ? `No active plan matches “${search}”.` : 'No active plans yet: create one on the Plans page.'}
    />
  );
}
