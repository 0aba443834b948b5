import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { LISTS } from '../client.ts';
import { graphql } from '../graphql.ts';
import { DateTime, Details, Field, FormError, Json, PageHeader, Pager, QueryState, Status, Table, idempotencyKey, mutationError, usePager } from '../components/ui.tsx';

const EventsQuery = graphql(`
  query DashboardEvents($first: Int, $after: String, $type: String) {
    events(first: $first, after: $after, type: $type) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id type createdAt data { objectId objectType } } }
    }
  }
`);

export function EventsPage() {
  const [params, setParams] = useSearchParams();
  const type = params.get('type') || null;
  const pager = usePager(params.toString());
  const [{ data, fetching, error }] = useQuery({ query: EventsQuery, variables: { first: 20, after: pager.after, type }, context: LISTS.events });
  const conn = data?.events;
  return (
    <>
      <PageHeader title="Events" />
      <form
        className="filters"
        role="search"
        aria-label="Filter events"
        onSubmit={(e) => {
          e.preventDefault();
          const v = String(new FormData(e.currentTarget).get('type') ?? '').trim();
          setParams(v ? { type: v } : {});
        }}
      >
        <Field label="Event type" hint="Exact (payment.succeeded) or a prefix (payment.*).">
          {(p) => <input {...p} name="type" defaultValue={type ?? ''} placeholder="payment.*" />}
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      <QueryState fetching={fetching} error={error} empty={conn ? conn.edges.length === 0 : undefined} emptyText="No events match.">
        {conn && (
          <>
            <Table
              caption="Events"
              rows={conn.edges.map((e) => e.node)}
              rowKey={(n) => n.id}
              columns={[
                { header: 'Type', cell: (n) => <Link href={`/events/${n.id}`}>{n.type}</Link> },
                { header: 'Object', cell: (n) => <code>{n.data.objectId}</code> },
                { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
              ]}
            />
            <Pager pager={pager} pageInfo={conn.pageInfo} total={conn.totalCount} noun="events" />
          </>
        )}
      </QueryState>
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
        edges { node { id attemptNumber status responseStatus durationMs scheduledAt attemptedAt nextRetryAt endpoint { id url } } }
      }
    }
  }
`);

const ReplayEvent = graphql(`
  mutation DashboardReplayEvent($input: ReplayEventInput!) {
    replayEvent(input: $input) {
      __typename
      ... on ReplayEventSuccess { attempts { id } }
      ... on Error { code message param }
    }
  }
`);

export function EventPage({ id }: { id: string }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: EventQuery, variables: { id } });
  const [replayResult, replay] = useMutation(ReplayEvent);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const ev = data?.event;
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
                <button
                  type="button"
                  disabled={replayResult.fetching}
                  onClick={async () => {
                    setDone(null);
                    const r = await replay({ input: { id: ev.id, idempotencyKey: idempotencyKey() } });
                    const err = mutationError(r, 'replayEvent');
                    setMessage(err);
                    if (!err && r.data?.replayEvent.__typename === 'ReplayEventSuccess') {
                      setDone(`Replayed to ${r.data.replayEvent.attempts.length} endpoint(s).`);
                      refetch({ requestPolicy: 'network-only' });
                    }
                  }}
                >
                  Replay to webhook endpoints
                </button>
                <FormError message={message} />
                {done && (
                  <p className="success" role="status">
                    {done}
                  </p>
                )}
              </div>
              <DeliveryAttempts attempts={ev.deliveryAttempts.edges.map((e) => e.node)} />
            </section>
          </>
        )}
      </QueryState>
    </>
  );
}

export function DeliveryAttempts({
  attempts,
  showEndpoint = true,
}: {
  attempts: { id: string; attemptNumber: number; status: string; responseStatus?: number | null; durationMs?: number | null; scheduledAt: string; attemptedAt?: string | null; endpoint?: { id: string; url: string } }[];
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
        { header: 'Response', cell: (a) => (a.responseStatus != null ? `HTTP ${a.responseStatus}${a.durationMs != null ? ` in ${a.durationMs} ms` : ''}` : '—') },
        { header: 'When', cell: (a) => <DateTime value={a.attemptedAt ?? a.scheduledAt} /> },
      ]}
    />
  );
}
