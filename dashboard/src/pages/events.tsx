import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { LISTS } from '../client.ts';
import { objectFilter } from '../components/id-filter.tsx';
import { graphql } from '../graphql.ts';
import { ConnectionTable, DateTime, Details, Field, Filters, Json, PageHeader, QueryState, Status, Table, idempotencyKey, useOutcome, usePager } from '../components/ui.tsx';

const EventsQuery = graphql(`
  query DashboardEvents($first: Int, $after: String, $type: String, $objectId: ID) {
    events(first: $first, after: $after, type: $type, objectId: $objectId) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id type createdAt data { objectId objectType } } }
    }
  }
`);

export function EventsPage() {
  const [params] = useSearchParams();
  const type = params.get('type') || null;
  const object = objectFilter(params.get('object') || null);
  const pager = usePager(params.toString());
  const [result] = useQuery({ query: EventsQuery, variables: { first: 20, after: pager.after, type, objectId: object.id }, context: LISTS.events, pause: object.blocked });
  return (
    <>
      <PageHeader title="Events" />
      <Filters label="Filter events">
        <Field label="Event type" hint="Exact (payment.succeeded) or a prefix (payment.*).">
          {(p) => <input {...p} name="type" defaultValue={type ?? ''} placeholder="payment.*" />}
        </Field>
        <Field label="Object ID" hint="The record the events are about: cus_…, pay_…, in_…">
          {(p) => <input {...p} name="object" defaultValue={params.get('object') ?? ''} placeholder="cus_…" />}
        </Field>
      </Filters>
      {object.note}
      {!object.blocked && <ConnectionTable
        result={result}
        conn={result.data?.events}
        caption="Events"
        noun="events"
        emptyText={object.id ? `No events about ${object.noun ? `the ${object.noun} ` : ''}${object.id}${type ? ` of type ${type}` : ''}.` : 'No events match.'}
        pager={pager}
        columns={[
          { header: 'Type', cell: (n) => <Link href={`/events/${n.id}`}>{n.type}</Link> },
          { header: 'Object', cell: (n) => (n.data.objectId ? <Link href={`/events?object=${encodeURIComponent(n.data.objectId)}`} aria-label={`Events about ${n.data.objectId}`}><code>{n.data.objectId}</code></Link> : '—') },
          { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
        ]}
      />}
    </>
  );
}

const EventQuery = graphql(`
  query DashboardEvent($id: ID!) {
    event(id: $id) {
      id type createdAt
      data { object objectId objectType previousAttributes }
      deliveryAttempts(first: 50) {
        totalCount
        edges { node { id attemptNumber status responseStatus responseBody durationMs scheduledAt attemptedAt nextRetryAt endpoint { id url } } }
      }
    }
  }
`);

export const ReplayEvent = graphql(`
  mutation DashboardReplayEvent($input: ReplayEventInput!) {
    replayEvent(input: $input) {
      __typename
      ... on ReplayEventSuccess { attempts { id } disabledEndpoints { id url } }
      ... on Error { code message param }
    }
  }
`);

export function EventPage({ id }: { id: string }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: EventQuery, variables: { id } });
  const [replayResult, replay] = useMutation(ReplayEvent);
  const outcome = useOutcome();
  const ev = data?.event;

  async function replayIt(ev: { id: string; type: string }) {
    outcome.begin();
    const r = await replay({ input: { id: ev.id, idempotencyKey: idempotencyKey() } });
    if (!outcome.settle(r, 'replayEvent') || r.data?.replayEvent.__typename !== 'ReplayEventSuccess') return;
    const { attempts, disabledEndpoints: disabled } = r.data.replayEvent;
    const n = attempts.length;
    // Why nothing (or less) was sent: the endpoints subscribed to the type that are disabled.
    const skipped = disabled.length > 0 && (
      <>
        {n > 0 ? ' ' : ''}
        Nothing was sent to {disabled.length === 1 ? 'the disabled endpoint' : `${disabled.length} disabled endpoints`}{' '}
        {disabled.map((d, i) => (
          <span key={d.id}>
            {i > 0 ? ', ' : ''}
            <Link href={`/webhooks/${d.id}`}>{d.url}</Link>
          </span>
        ))}
        {` subscribed to ${ev.type}: enable ${disabled.length === 1 ? 'it' : 'one'} on its page, then replay.`}
      </>
    );
    outcome.succeed(
      <>
        {n > 0 && `Sent again to ${n} endpoint${n === 1 ? '' : 's'}.`}
        {skipped}
        {n === 0 && disabled.length === 0 && `Nothing was sent: no webhook endpoint is subscribed to ${ev.type}.`}
      </>,
    );
    if (n > 0) refetch({ requestPolicy: 'network-only' });
  }

  return (
    <>
      <PageHeader title={ev ? ev.type : 'Event'} />
      <p>
        <Link href="/events">← All events</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !ev : undefined} emptyText={`No event ${id}.`}>
        {ev && (
          <>
            <Details
              items={[
                ['ID', <code>{ev.id}</code>],
                ['Object', <code>{ev.data.objectId}</code>],
                ['Object type', ev.data.objectType],
                ['Created', <DateTime value={ev.createdAt} />],
              ]}
            />
            <section aria-labelledby="data-h">
              <h2 id="data-h">Data</h2>
              <Json value={ev.data.object} label="Event object as JSON" />
              {ev.data.previousAttributes != null && (
                <>
                  <h3>Previous attributes</h3>
                  <Json value={ev.data.previousAttributes} label="Previous attributes as JSON" />
                </>
              )}
            </section>
            <section aria-labelledby="att-h">
              <h2 id="att-h">Webhook deliveries ({ev.deliveryAttempts.totalCount})</h2>
              <div className="inline-form">
                <button type="button" disabled={replayResult.fetching} onClick={() => void replayIt(ev)}>
                  Replay to webhook endpoints
                </button>
                {outcome.view}
              </div>
              <DeliveryAttempts attempts={ev.deliveryAttempts.edges.map((e) => e.node)} />
            </section>
          </>
        )}
      </QueryState>
    </>
  );
}

/** How much of a receiver's answer (or of the connection error) a row shows; the API has it all. */
const REASON_CHARS = 120;

interface AttemptOutcome {
  status: string;
  responseStatus?: number | null;
  responseBody?: string | null;
  durationMs?: number | null;
  nextRetryAt?: string | null;
}

/**
 * A delivery attempt's "Response" cell: the HTTP status and time; for a failed attempt also why
 * (the receiver's body, or the connection error when there was no HTTP answer, e.g.
 * "connect ECONNREFUSED …"), cut to REASON_CHARS and shown as text, and when it is tried again.
 */
export function AttemptResponse({ a }: { a: AttemptOutcome }) {
  const http = a.responseStatus != null ? `HTTP ${a.responseStatus}${a.durationMs != null ? ` in ${a.durationMs} ms` : ''}` : null;
  const body = a.status === 'failed' ? a.responseBody?.trim() : undefined;
  const reason = body ? (body.length > REASON_CHARS ? `${body.slice(0, REASON_CHARS - 1)}…` : body) : null;
  if (!http && !reason && !a.nextRetryAt) return <>—</>;
  return (
    <span className="attempt-response">
      {http}
      {http && reason && ': '}
      {reason && <span className="reason" title={body !== reason ? body : undefined}>{reason}</span>}
      {a.nextRetryAt && (
        <span className="next-retry">
          Next try <DateTime value={a.nextRetryAt} />
        </span>
      )}
    </span>
  );
}

export function DeliveryAttempts({
  attempts,
  showEndpoint = true,
}: {
  attempts: ({ id: string; attemptNumber: number; scheduledAt: string; attemptedAt?: string | null; endpoint?: { id: string; url: string } } & AttemptOutcome)[];
  showEndpoint?: boolean;
}) {
  if (attempts.length === 0) return <p className="empty">No delivery attempts.</p>;
  return (
    <Table
      caption="Delivery attempts"
      rows={attempts}
      rowKey={(a) => a.id}
      columns={[
        ...(showEndpoint ? [{ header: 'Endpoint', cell: (a: (typeof attempts)[number]) => (a.endpoint ? <Link href={`/webhooks/${a.endpoint.id}`}>{a.endpoint.url}</Link> : '—') }] : []),
        { header: 'Attempt', className: 'num', cell: (a) => a.attemptNumber },
        { header: 'Status', cell: (a) => <Status value={a.status} /> },
        { header: 'Response', cell: (a) => <AttemptResponse a={a} /> },
        { header: 'When', cell: (a) => <DateTime value={a.attemptedAt ?? a.scheduledAt} /> },
      ]}
    />
  );
}
