// The shared components: every page is made of these (state messages, tables, pager, fields,
// formatted values). Keep this set small; a page's own markup stays in its page.
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import type { CombinedError } from 'urql';

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
        {total !== undefined ? `${total} ${total === 1 ? singular(noun) : noun}` : ''} · page {pager.page}
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

/** How many minor-unit digits a currency has (2 for USD, 0 for JPY). */
export const minorDigits = (currency: string) => {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
};

export function formatMoney(amount: number, currency: string): string {
  const digits = minorDigits(currency);
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency, minimumFractionDigits: digits }).format(amount / 10 ** digits);
  } catch {
    return `${amount} ${currency}`;
  }
}

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

/** A list's status filter: a "Status" select with "Any" and the given statuses (the form field `status`). */
export function StatusFilter({ statuses, value, label = (s) => s }: { statuses: readonly string[]; value: string | null | undefined; label?: (status: string) => string }) {
  return (
    <Field label="Status">
      {(p) => (
        <select {...p} name="status" defaultValue={value ?? ''}>
          <option value="">Any</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {label(s)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
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
