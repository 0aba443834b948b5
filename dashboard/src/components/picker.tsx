// Pickers: choose a customer, a plan, a coupon or tax rates by searching (the API's
// customers(search:), plans(search:), coupons(search:) and taxRates(search:)), never by typing an
// id. A picker is a group of radio buttons (or checkboxes, for tax rates) under a search box:
// typing narrows the choices (a quarter of a second after the last key), the arrow keys move
// between radios, and the chosen ones stay listed first whatever is typed next. The inputs carry
// the form field (`name`), so the form reads the chosen ids like any other field.
import { useEffect, useState, type ReactNode } from 'react';
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

const CouponChoices = graphql(`
  query DashboardPickCoupons($first: Int, $search: String) {
    coupons(first: $first, search: $search) { edges { node { id name valid percentOff amountOffFormatted duration durationInMonths } } }
  }
`);

const TaxRateChoices = graphql(`
  query DashboardPickTaxRates($first: Int, $search: String) {
    taxRates(first: $first, search: $search, active: true) { edges { node { id displayName percentage inclusive country jurisdiction } } }
  }
`);

export interface Choice {
  id: string;
  label: string;
  detail?: string;
  /** shown, but not to be chosen (a coupon no longer valid): says why */
  disabled?: string;
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

/** The search text as typed, and as sent (trimmed, a quarter of a second after the last key; null when empty). */
function useSearch() {
  const [text, setText] = useState('');
  const search = useDebounced(text.trim());
  return { text, setText, search: search || null };
}

interface ViewProps {
  legend: string;
  searchLabel: string;
  hint: string;
  name: string;
  text: string;
  setText: (t: string) => void;
  choices: Choice[];
  fetching: boolean;
  error?: Parameters<typeof QueryError>[0]['error'] | undefined;
  none: string;
  /** choices listed before the found ones whatever is typed ("No coupon", "Keep the current discount") */
  fixed?: Choice[];
  /** below the choices */
  footer?: ReactNode;
}

/** The search box, the choices found and the chosen ones (listed first when the search no longer finds them); `found` counts what the search found. */
function PickerFrame({ legend, searchLabel, hint, text, setText, error, fetching, none, found, children, footer }: ViewProps & { found: number; children: ReactNode }) {
  return (
    <fieldset className="picker">
      <legend>{legend}</legend>
      <Field label={searchLabel} hint={hint}>
        {(p) => <input {...p} type="search" value={text} maxLength={100} autoComplete="off" onChange={(e) => setText(e.currentTarget.value)} />}
      </Field>
      {error && <QueryError error={error} />}
      {found === 0 && !fetching && !error && <p className="muted small">{none}</p>}
      <div className="picker-choices">{children}</div>
      {fetching && (
        <p className="muted small" role="status">
          Searching…
        </p>
      )}
      {footer}
    </fieldset>
  );
}

function ChoiceLabel({ c }: { c: Choice }) {
  return (
    <span>
      {c.label}
      {c.detail && <span className="muted small"> · {c.detail}</span>}
      {c.disabled && <span className="muted small"> · {c.disabled}</span>}
    </span>
  );
}

/** One choice among radios; `initial` is chosen until another one is. */
function SinglePicker(props: ViewProps & { initial?: Choice | null | undefined; required?: boolean; onChange?: () => void }) {
  const { name, choices, initial, fixed = [], required = true, onChange } = props;
  const [picked, setPicked] = useState<Choice | null>(null);
  const chosen = picked ?? initial ?? null;
  const found = chosen && !choices.some((c) => c.id === chosen.id) && !fixed.some((c) => c.id === chosen.id) ? [chosen, ...choices] : choices;
  const shown = [...fixed, ...found];
  return (
    <PickerFrame {...props} found={choices.length}>
      {shown.map((c) => (
        <label key={c.id} className="picker-choice">
          <input
            type="radio"
            name={name}
            value={c.id}
            required={required}
            disabled={!!c.disabled}
            checked={chosen?.id === c.id}
            onChange={() => {
              setPicked(c);
              onChange?.();
            }}
          />
          <ChoiceLabel c={c} />
        </label>
      ))}
    </PickerFrame>
  );
}

/** Several choices among checkboxes, in the order chosen; `initial` are chosen to begin with. */
function MultiPicker(props: ViewProps & { initial?: Choice[]; max: number; onChange?: (chosen: Choice[]) => void }) {
  const { name, choices, initial = [], max, onChange } = props;
  const [picked, setPicked] = useState<Choice[] | null>(null);
  const chosen = picked ?? initial;
  const shown = [...chosen, ...choices.filter((c) => !chosen.some((p) => p.id === c.id))];
  return (
    <PickerFrame {...props} found={choices.length} footer={chosen.length > max ? <p className="error small">{`At most ${max}: ${chosen.length} are chosen.`}</p> : props.footer}>
      {shown.map((c) => {
        const on = chosen.some((p) => p.id === c.id);
        return (
          <label key={c.id} className="picker-choice">
            <input
              type="checkbox"
              name={name}
              value={c.id}
              checked={on}
              onChange={() => {
                const next = on ? chosen.filter((p) => p.id !== c.id) : [...chosen, c];
                setPicked(next);
                onChange?.(next);
              }}
            />
            <ChoiceLabel c={c} />
          </label>
        );
      })}
    </PickerFrame>
  );
}

const customerChoice = (c: { id: string; email: string; name?: string | null }): Choice => (c.name ? { id: c.id, label: c.name, detail: c.email } : { id: c.id, label: c.email });

/** A customer, found by email or name; `initialId` (from the address) is chosen to begin with. */
export function CustomerPicker({ name, initialId }: { name: string; initialId?: string | null }) {
  const { text, setText, search } = useSearch();
  const [{ data, fetching, error }] = useQuery({ query: CustomerChoices, variables: { first: SHOWN, search } });
  const [initial] = useQuery({ query: CustomerChosen, variables: { id: initialId ?? '' }, pause: !initialId });
  const first = initial.data?.customer;
  return (
    <SinglePicker
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
    <SinglePicker
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

type CouponNode = { id: string; name: string; valid: boolean; percentOff?: number | null; amountOffFormatted?: string | null; duration: string; durationInMonths?: number | null };

/** "SUMMER25: Summer sale", "25% off for 3 months". */
export const couponLabel = (c: Pick<CouponNode, 'id' | 'name'>) => `${c.id}: ${c.name}`;
export const couponTerms = (c: Omit<CouponNode, 'id' | 'name' | 'valid'>) =>
  `${c.percentOff != null ? `${c.percentOff}%` : c.amountOffFormatted} off ${c.duration === 'repeating' ? `for ${c.durationInMonths} month${c.durationInMonths === 1 ? '' : 's'}` : c.duration === 'once' ? 'once' : 'forever'}`;
const couponChoice = (c: CouponNode): Choice => ({ id: c.id, label: couponLabel(c), detail: couponTerms(c), ...(c.valid ? {} : { disabled: 'no longer valid' }) });

/**
 * A coupon, found by code or name (coupons no longer valid are listed, not choosable). `fixed`
 * are the choices listed first — "No coupon" when subscribing, "Keep …" / "Remove …" on a
 * subscription —, the first of them chosen to begin with.
 */
export function CouponPicker({ name, fixed, hint, onChange }: { name: string; fixed: Choice[]; hint?: string; onChange?: () => void }) {
  const { text, setText, search } = useSearch();
  const [{ data, fetching, error }] = useQuery({ query: CouponChoices, variables: { first: SHOWN, search } });
  return (
    <SinglePicker
      legend="Coupon"
      searchLabel="Find a coupon"
      hint={hint ?? 'Code or words of its name; the newest coupons are listed first.'}
      name={name}
      text={text}
      setText={setText}
      fixed={fixed}
      initial={fixed[0] ?? null}
      required={false}
      onChange={onChange}
      choices={(data?.coupons.edges ?? []).map((e) => couponChoice(e.node))}
      fetching={fetching}
      error={error}
      none={search ? `No coupon matches “${search}”.` : 'No coupons yet: create one on the Coupons page.'}
    />
  );
}

type TaxRateNode = { id: string; displayName: string; percentage: number; inclusive: boolean; country?: string | null; jurisdiction?: string | null };

/** "VAT 20%", "TVA 5.5% (included)". */
export const taxRateLabel = (t: { displayName: string; percentage: number; inclusive: boolean }) => `${t.displayName} ${t.percentage}%${t.inclusive ? ' (included)' : ''}`;
export const taxRateChoice = (t: TaxRateNode & { active?: boolean }): Choice => ({
  id: t.id,
  label: taxRateLabel(t),
  ...(t.country || t.jurisdiction ? { detail: [t.country, t.jurisdiction].filter(Boolean).join(', ') } : {}),
  ...(t.active === false ? { detail: 'archived: kept, but it cannot be added again' } : {}),
});

/** Active tax rates (at most 5, in the order chosen), found by name, country or jurisdiction; `initial` are chosen to begin with. */
export function TaxRatePicker({ name, initial, onChange }: { name: string; initial?: Choice[]; onChange?: (chosen: Choice[]) => void }) {
  const { text, setText, search } = useSearch();
  const [{ data, fetching, error }] = useQuery({ query: TaxRateChoices, variables: { first: SHOWN, search } });
  return (
    <MultiPicker
      legend="Tax rates"
      searchLabel="Find a tax rate"
      hint="Name, country or jurisdiction; at most 5, applied in the order chosen."
      name={name}
      text={text}
      setText={setText}
      initial={initial}
      max={5}
      onChange={onChange}
      choices={(data?.taxRates.edges ?? []).map((e) => taxRateChoice(e.node))}
      fetching={fetching}
      error={error}
      none={search ? `No active tax rate matches “${search}”.` : 'No active tax rates: create one on the Tax rates page.'}
    />
  );
}
