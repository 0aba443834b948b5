// The shared components: every page is made of these (state messages, tables, pager, fields,
// formatted values). Keep this set small; a page's own markup stays in its page.
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, type AnyVariables, type CombinedError, type TypedDocumentNode } from 'urql';
import { useSearchParams } from 'wouter';
import { formatMoney } from '../format.ts';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="muted" role="status">
      {label}
    </p>
  );
}

/** A query's error: the network or GraphQL error, said plainly. */
export function QueryError({ error }: { error: CombinedError }) {
  const message = error.graphQLErrors[0]?.message ?? (error.networkError ? 'The service could not be reached.' : error.message);
  return (
    <p className="error" role="alert">
      Could not load this: {message}
    </p>
  );
}

/** The loading, error and empty states of a query, or its content. */
export function QueryState({ fetching, error, empty, emptyText, children }: { fetching: boolean; error?: CombinedError | undefined; empty?: boolean; emptyText?: string; children?: ReactNode }) {
  if (error) return <QueryError error={error} />;
  if (fetching && empty !== false) return <Loading />;
  if (empty) return <p className="empty">{emptyText ?? 'Nothing here yet.'}</p>;
  return <>{children}</>;
}

export function PageHeader({ title, children }: { title: ReactNode; children?: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  // A new page takes the focus to its heading, so keyboard and screen-reader users start there.
  useEffect(() => ref.current?.focus(), []);
  return (
    <div className="page-header">
      <h1 tabIndex={-1} ref={ref}>
        {title}
      </h1>
      {children && <div className="actions">{children}</div>}
    </div>
  );
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  className?: string;
}

/** A table that becomes a list of cards on a narrow screen (each cell labelled by its header). */
export function Table<T>({ caption, rows, columns, rowKey }: { caption: string; rows: T[]; columns: Column<T>[]; rowKey: (row: T) => string }) {
  return (
    <table className="table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col" className={c.className}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={rowKey(r)}>
            {columns.map((c) => (
              <td key={c.header} data-label={c.header} className={c.className}>
                {c.cell(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Forward Relay-cursor paging with a stack of the cursors already passed (for "Previous"). */
export function usePager(resetKey: string) {
  const [stack, setStack] = useState<string[]>([]);
  const [key, setKey] = useState(resetKey);
  if (key !== resetKey) {
    setKey(resetKey);
    setStack([]);
  }
  return {
    after: stack[stack.length - 1] ?? null,
    page: stack.length + 1,
    next: (cursor: string | null | undefined) => cursor && setStack((s) => [...s, cursor]),
    previous: () => setStack((s) => s.slice(0, -1)),
  };
}

/** "1 payment", not "1 payments" (the nouns the pages pass are plain English plurals). */
const singular = (noun: string) => (noun.endsWith('ies') ? `${noun.slice(0, -3)}y` : noun.endsWith('s') ? noun.slice(0, -1) : noun);

export function Pager({ pager, pageInfo, total, noun }: { pager: ReturnType<typeof usePager>; pageInfo?: { hasNextPage: boolean; endCursor?: string | null } | undefined; total?: number | undefined; noun: string }) {
  if (!pageInfo) return null;
  return (
    <nav className="pager" aria-label={`Pages of ${noun}`}>
      <span className="muted">
        {total !== undefined ? `${total} ${total === 1 ? singular(noun) : noun} · page ${pager.page}` : `Page ${pager.page}`}
      </span>
      <button type="button" onClick={pager.previous} disabled={pager.page === 1}>
        Previous page
      </button>
      <button type="button" onClick={() => pager.next(pageInfo.endCursor)} disabled={!pageInfo.hasNextPage}>
        Next page
      </button>
    </nav>
  );
}

/** A Relay connection as the list queries select it. */
export interface Conn<T> {
  totalCount?: number;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
  edges: { node: T }[];
}

/**
 * A detail page's list: a titled section with its table, or a line saying it is empty; `footer`
 * (a pager, a link) follows a table that has rows, `children` (a form) follows either.
 */
export function TableSection<T>({
  id,
  title,
  caption,
  rows,
  rowKey,
  columns,
  emptyText,
  note,
  footer,
  children,
}: {
  id: string;
  title: ReactNode;
  caption: string;
  rows: T[];
  rowKey: (row: T) => string;
  columns: Column<T>[];
  emptyText: string;
  note?: ReactNode;
  footer?: ReactNode;
  children?: ReactNode;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {note && <p className="muted small">{note}</p>}
      {rows.length === 0 ? (
        <p className="empty">{emptyText}</p>
      ) : (
        <>
          <Table caption={caption} rows={rows} rowKey={rowKey} columns={columns} />
          {footer}
        </>
      )}
      {children}
    </section>
  );
}

/**
 * A detail page's list with its own query, paged with cursors (a customer's payments, invoices …):
 * its heading (with the total once known), the loading and error states, the table or the empty
 * line, the pager; `toolbar` (filters, an action's outcome) comes before the table, `footer`
 * follows the pager, `children` (a form) follows either.
 */
export function ConnectionSection<T extends { id: string }>({
  id,
  title,
  caption,
  noun,
  result,
  conn,
  columns,
  emptyText,
  pager,
  note,
  toolbar,
  footer,
  children,
}: {
  id: string;
  title: string;
  caption: string;
  noun: string;
  result: { fetching: boolean; error?: CombinedError | undefined };
  conn: Conn<T> | undefined;
  columns: Column<T>[];
  emptyText: string;
  pager: ReturnType<typeof usePager>;
  note?: ReactNode;
  toolbar?: ReactNode;
  footer?: ReactNode;
  children?: ReactNode;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{conn?.totalCount !== undefined ? `${title} (${conn.totalCount})` : title}</h2>
      {note && <p className="muted small">{note}</p>}
      {toolbar}
      <QueryState fetching={result.fetching} error={result.error} empty={conn ? conn.edges.length === 0 : undefined} emptyText={emptyText}>
        {conn && (
          <>
            <Table caption={caption} rows={conn.edges.map((e) => e.node)} rowKey={(n) => n.id} columns={columns} />
            <Pager pager={pager} pageInfo={conn.pageInfo} total={conn.totalCount} noun={noun} />
            {footer}
          </>
        )}
      </QueryState>
      {children}
    </section>
  );
}

/**
 * A list page's body: the loading, error and empty states of its query, then the table of the
 * connection's nodes and the pager (every list page is this, with its own columns).
 */
export function ConnectionTable<T extends { id: string }>({
  result,
  conn,
  caption,
  noun,
  emptyText,
  columns,
  pager,
}: {
  result: { fetching: boolean; error?: CombinedError | undefined };
  conn: Conn<T> | undefined;
  caption: string;
  noun: string;
  emptyText: string;
  columns: Column<T>[];
  pager: ReturnType<typeof usePager>;
}) {
  return (
    <QueryState fetching={result.fetching} error={result.error} empty={conn ? conn.edges.length === 0 : undefined} emptyText={emptyText}>
      {conn && (
        <>
          <Table caption={caption} rows={conn.edges.map((e) => e.node)} rowKey={(n) => n.id} columns={columns} />
          <Pager pager={pager} pageInfo={conn.pageInfo} total={conn.totalCount} noun={noun} />
        </>
      )}
    </QueryState>
  );
}

/**
 * A list's filters: on submit, the form's non-empty fields become the address's parameters
 * (?status=failed), so a filtered list can be bookmarked and reloaded; `upper` names the fields
 * sent upper-case (currencies).
 */
export function Filters({ label, upper = [], submitLabel = 'Apply filters', children }: { label: string; upper?: string[]; submitLabel?: string; children: ReactNode }) {
  const [, setParams] = useSearchParams();
  function apply(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(e.currentTarget)) {
      const t = String(v).trim();
      if (t) next.set(k, upper.includes(k) ? t.toUpperCase() : t);
    }
    setParams(next);
  }
  return (
    <form className="filters" role="search" aria-label={label} onSubmit={apply}>
      {children}
      <button type="submit">{submitLabel}</button>
    </form>
  );
}

/** The `active` filter of plans and tax rates (?active=true|false), as the API's Boolean. */
export function activeParam(params: URLSearchParams): boolean | null {
  const v = params.get('active');
  return v === 'true' ? true : v === 'false' ? false : null;
}

export function ActiveFilter({ value, all, active = 'Active', archived = 'Archived' }: { value: boolean | null; all: string; active?: string; archived?: string }) {
  return (
    <Field label="Show">
      {(p) => (
        <select {...p} name="active" defaultValue={value === null ? '' : String(value)}>
          <option value="">{all}</option>
          <option value="true">{active}</option>
          <option value="false">{archived}</option>
        </select>
      )}
    </Field>
  );
}

/** What an action did, said politely (a status message), next to its control. */
export function Success({ children }: { children?: ReactNode }) {
  if (children === null || children === undefined || children === false) return null;
  return (
    <p className="success" role="status">
      {children}
    </p>
  );
}

/**
 * A form's outcome: the error member's message (or the request's error) as an alert, or a success
 * note. `settle(result, field)` records a mutation's result and says whether it succeeded.
 */
export function useOutcome() {
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<ReactNode>(null);
  return {
    begin: () => setDone(null),
    settle: (result: { error?: CombinedError | undefined; data?: unknown }, field: string) => {
      const err = mutationError(result, field);
      setMessage(err);
      if (err) setDone(null);
      return !err;
    },
    succeed: (note: ReactNode) => setDone(note),
    /** A refusal made here, before any request (the form's own check). */
    fail: (message: string) => {
      setMessage(message);
      setDone(null);
    },
    view: (
      <>
        <FormError message={message} />
        <Success>{done}</Success>
      </>
    ),
  };
}

export { formatMoney, minorDigits } from '../format.ts';

export function Money({ amount, currency }: { amount: number; currency: string }) {
  return <span className="money">{formatMoney(amount, currency)}</span>;
}

export function formatDate(iso: string): string {
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';
}

export function DateTime({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="muted">—</span>;
  return <time dateTime={value}>{formatDate(value)}</time>;
}

export function Status({ value }: { value: string }) {
  return <span className={`status status-${value}`}>{value.replace(/_/g, ' ')}</span>;
}

/** An errors-as-data mutation error (or a request error), shown next to its control. */
export function FormError({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}

export function Field({ label, children, hint }: { label: string; hint?: string; children: (props: { id: string; 'aria-describedby'?: string }) => ReactNode }) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(hint ? { id, 'aria-describedby': hintId } : { id })}
      {hint && (
        <small id={hintId} className="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A select of an enum's values with a first "none" option (the empty value), e.g. a refund's reason. */
export function EnumSelect({ label, name, values, none = 'None', value, format = (v) => v.replace(/_/g, ' ') }: { label: string; name: string; values: readonly string[]; none?: string; value?: string | null | undefined; format?: (v: string) => string }) {
  return (
    <Field label={label}>
      {(p) => (
        <select {...p} name={name} defaultValue={value ?? ''}>
          <option value="">{none}</option>
          {values.map((v) => (
            <option key={v} value={v}>
              {format(v)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A list's status filter: a "Status" select with "Any" and the given statuses (the form field `status`). */
export function StatusFilter({ statuses, value, label = (s) => s }: { statuses: readonly string[]; value: string | null | undefined; label?: (status: string) => string }) {
  return <EnumSelect label="Status" name="status" values={statuses} none="Any" value={value} format={label} />;
}

export function Details({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="details">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v ?? <span className="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre className="json" tabIndex={0} aria-label={label}>
      <code>{JSON.stringify(value, null, 2)}</code>
    </pre>
  );
}

/** A mutation's result: the success member, or the message of the error member, or the request's error. */
export function mutationError(result: { error?: CombinedError | undefined; data?: unknown }, field: string): string | null {
  if (result.error) return result.error.graphQLErrors[0]?.message ?? 'The service could not be reached. Try again.';
  const value = (result.data as Record<string, { __typename?: string; message?: string } | undefined> | undefined)?.[field];
  if (value && typeof value.message === 'string') return value.message;
  return null;
}

export const idempotencyKey = () => crypto.randomUUID();

/**
 * A submitted form (its default submission prevented) and its fields: `text(k)` trimmed, undefined
 * when empty; `num(k)` as a number, undefined when empty; `all(k)` every value of a repeated field.
 */
export function readForm(e: FormEvent<HTMLFormElement>) {
  e.preventDefault();
  const form = e.currentTarget;
  const f = new FormData(form);
  const text = (k: string) => String(f.get(k) ?? '').trim() || undefined;
  return { form, text, num: (k: string) => (text(k) === undefined ? undefined : Number(text(k))), all: (k: string) => f.getAll(k).map(String) };
}

/** A button for an action that cannot be undone: a first press asks, a second one does it. */
export function ConfirmButton({ label, confirmLabel, onConfirm, disabled, className = 'secondary', ariaLabel }: { label: string; confirmLabel: string; onConfirm: () => void | Promise<void>; disabled?: boolean; className?: string; ariaLabel?: string }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={className} disabled={disabled} aria-label={ariaLabel} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="row-actions" role="group" aria-label={ariaLabel ?? label}>
      <button
        type="button"
        className={`${className} danger`}
        disabled={disabled}
        autoFocus
        onClick={async () => {
          setAsking(false);
          await onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" className={className} onClick={() => setAsking(false)}>
        Keep it
      </button>
    </span>
  );
}

/**
 * An irreversible mutation of one record (delete, archive, write off), behind a ConfirmButton; the
 * API's refusal is shown next to it. `variables` is called per press (a fresh idempotency key).
 */
export function ConfirmMutation<Data, Variables extends AnyVariables>({
  mutation,
  variables,
  field,
  label,
  confirmLabel,
  ariaLabel,
  className = 'small secondary',
}: {
  mutation: TypedDocumentNode<Data, Variables>;
  variables: () => Variables;
  field: string;
  label: string;
  confirmLabel: string;
  ariaLabel?: string;
  className?: string;
}) {
  const [state, run] = useMutation(mutation);
  const outcome = useOutcome();
  return (
    <div className="row-actions">
      <ConfirmButton className={className} label={label} ariaLabel={ariaLabel} confirmLabel={confirmLabel} disabled={state.fetching} onConfirm={async () => void outcome.settle(await run(variables()), field)} />
      {outcome.view}
    </div>
  );
}
