// Filters by a record's id (?customer=cus_…, ?invoice=in_…, ?object=…), typed or pasted: checked
// before the list is asked for, so that an id of another kind, a mistyped one or one this account
// does not have says so next to the filters instead of showing an empty list. The prefixes are the
// API's documented id format (docs/conventions.md: the prefix names the record's type).
import type { ReactNode } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../graphql.ts';

/** The API's id prefixes and what they name. */
const KINDS: Record<string, string> = {
  pay: 'payment',
  re: 'refund',
  cus: 'customer',
  seti: 'setup intent',
  pm: 'payment method',
  cps: 'portal session',
  wal: 'wallet',
  wtx: 'wallet transaction',
  wtu: 'wallet top-up',
  cbtxn: 'credit balance transaction',
  plan: 'plan',
  sub: 'subscription',
  in: 'invoice',
  il: 'invoice line',
  txr: 'tax rate',
  ii: 'invoice item',
  cn: 'credit note',
  we: 'webhook endpoint',
  evt: 'event',
  wda: 'delivery attempt',
  em: 'e-mail',
  req: 'request',
  mer: 'merchant',
};

/** The kinds a list can be filtered by, with their prefix. */
export type FilterKind = 'customer' | 'plan' | 'invoice' | 'subscription';
const PREFIX: Record<FilterKind, string> = { customer: 'cus', plan: 'plan', invoice: 'in', subscription: 'sub' };

/** What an id names, from its prefix ("payment" for pay_…), or null when it is not one of the API's ids. */
export function kindOfId(id: string): string | null {
  const m = /^([a-z]+)_[0-9A-Za-z]+$/.exec(id);
  return (m && KINDS[m[1]!]) || null;
}

const a = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

/** Why `value` cannot be an id of `kind` (null when it can: the prefix and the characters are right). */
export function idProblem(kind: FilterKind, value: string): string | null {
  const prefix = PREFIX[kind];
  if (value.length <= 64 && new RegExp(`^${prefix}_[0-9A-Za-z]+$`).test(value)) return null;
  const other = kindOfId(value);
  if (other && other !== kind) return `${value} is ${a(other)} ID: this filter takes ${a(kind)} ID (${prefix}_…).`;
  return `“${value.length > 70 ? `${value.slice(0, 70)}…` : value}” is not ${a(kind)} ID: ${kind} IDs start with ${prefix}_ followed by letters and digits.`;
}

const Target = graphql(`
  query DashboardFilterTarget($id: ID!) {
    node(id: $id) {
      __typename id
      ... on Customer { email customerName: name }
      ... on Plan { planName: name amountFormatted }
      ... on Invoice { number }
      ... on BillingSubscription { plan { name } customer { email } }
    }
  }
`);

type Node = NonNullable<NonNullable<ReturnType<typeof useTarget>[0]['data']>['node']>;
const useTarget = (id: string | null) => useQuery({ query: Target, variables: { id: id ?? '' }, pause: !id });

/** The type node(id:) answers for each kind, and the page of one record (plans have none). */
const TYPENAME: Record<FilterKind, string> = { customer: 'Customer', plan: 'Plan', invoice: 'Invoice', subscription: 'BillingSubscription' };
const HREF: Record<FilterKind, string | null> = { customer: '/customers/', plan: null, invoice: '/invoices/', subscription: '/subscriptions/' };

function describe(node: Node): string {
  switch (node.__typename) {
    case 'Customer':
      return node.customerName ? `${node.customerName} (${node.email})` : node.email;
    case 'Plan':
      return `${node.planName} · ${node.amountFormatted}`;
    case 'Invoice':
      return node.number ?? `Draft ${node.id}`;
    case 'BillingSubscription':
      return `${node.plan.name} of ${node.customer.email}`;
    default:
      return node.id;
  }
}

export interface IdFilter {
  /** the id to send (null when there is none, or while it cannot be sent) */
  id: string | null;
  /** the list must not be asked for: the id cannot be one of this kind */
  blocked: boolean;
  /** what it is, or why not (an alert) */
  note: ReactNode;
}

/**
 * The filter `value` (from the address) of records of `kind`: its form is checked at once (another
 * kind or not an id: the list is not asked for), then whether this account has it (node(id:)): the
 * record is named, or an alert says it is not found above the list (empty, unless the record was
 * deleted and its records stay).
 */
export function useIdFilter(kind: FilterKind, value: string | null): IdFilter {
  const problem = value ? idProblem(kind, value) : null;
  const id = value && !problem ? value : null;
  const [target] = useTarget(id);
  if (!value) return { id: null, blocked: false, note: null };
  if (problem) return { id: null, blocked: true, note: <p className="error" role="alert">{problem}</p> };
  const node = target.data?.node;
  // Not found: mistyped, another account's, or deleted — whose records stay (a deleted customer's
  // invoices and payments), so the list is still asked for, under the alert.
  if (target.data && (!node || node.__typename !== TYPENAME[kind])) {
    return { id, blocked: false, note: <p className="error" role="alert">{`No ${kind} ${value} in this account${kind === 'customer' ? ' (a deleted customer’s records are still listed)' : ''}.`}</p> };
  }
  return {
    id,
    blocked: false,
    note: node ? (
      <p className="muted small" role="status">
        {`Filtered by ${kind}: `}
        {HREF[kind] ? <Link href={`${HREF[kind]}${node.id}`}>{describe(node)}</Link> : <span>{describe(node)}</span>}
      </p>
    ) : null,
  };
}

/** The filters of one list together: the ids to send, whether to ask at all, and their notes. */
export function idFilters(...filters: IdFilter[]) {
  return {
    blocked: filters.some((f) => f.blocked),
    notes: filters.some((f) => f.note) ? <div className="filter-notes">{filters.map((f, i) => <div key={i}>{f.note}</div>)}</div> : null,
  };
}

/**
 * Events about one record (?object=…): any of the API's ids (or a coupon's code, which the
 * merchant chose); a value that cannot be an id is refused, and the kind is named.
 */
export function objectFilter(value: string | null): { id: string | null; blocked: boolean; note: ReactNode; noun: string | null } {
  if (!value) return { id: null, blocked: false, note: null, noun: null };
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) {
    return { id: null, blocked: true, noun: null, note: <p className="error" role="alert">{`“${value.length > 70 ? `${value.slice(0, 70)}…` : value}” is not an ID: IDs are letters, digits, _ and - (cus_…, pay_…, in_…, or a coupon’s code).`}</p> };
  }
  const noun = kindOfId(value);
  return {
    id: value,
    blocked: false,
    noun,
    note: (
      <p className="muted small" role="status">
        {`Only the events about ${noun ? `the ${noun} ` : ''}`}
        <code>{value}</code>
      </p>
    ),
  };
}
