import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useSearchParams } from 'wouter';
import { graphql, type VariablesOf } from '../graphql.ts';
import { ConnectionSection, ConnectionTable, DateTime, Details, Field, Filters, FormError, PageHeader, QueryState, Status, StatusFilter, idempotencyKey, mutationError, useOutcome, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';
import { AttemptResponse, ReplayEvent } from './events.tsx';

const EndpointsQuery = graphql(`
  query DashboardWebhookEndpoints($first: Int, $after: String) {
    webhookEndpoints(first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id url description status events createdAt } }
    }
  }
`);

const CreateEndpoint = graphql(`
  mutation DashboardCreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      __typename
      ... on WebhookEndpointWithSecret { secret webhookEndpoint { id url } }
      ... on Error { code message param }
    }
  }
`);

/** A signing secret, shown once after it was made. */
function Secret({ secret }: { secret: string }) {
  return (
    <div className="success" role="status">
      <p>The signing secret, shown only now — copy it to your receiver:</p>
      <code className="break secret">{secret}</code>
    </div>
  );
}

export function WebhooksPage() {
  const pager = usePager('');
  const [result] = useQuery({ query: EndpointsQuery, variables: { first: 20, after: pager.after }, context: LISTS.webhookEndpoints });
  const [created, create] = useMutation(CreateEndpoint);
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const events = String(f.get('events') ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    const description = String(f.get('description') ?? '').trim() || undefined;
    const r = await create({ input: { url: String(f.get('url') ?? '').trim(), events, description, idempotencyKey: idempotencyKey() } });
    const err = mutationError(r, 'createWebhookEndpoint');
    setMessage(err);
    if (!err && r.data?.createWebhookEndpoint.__typename === 'WebhookEndpointWithSecret') {
      setSecret(r.data.createWebhookEndpoint.secret);
      form.reset();
    }
  }

  return (
    <>
      <PageHeader title="Webhooks" />
      <ConnectionTable
        result={result}
        conn={result.data?.webhookEndpoints}
        caption="Webhook endpoints"
        noun="endpoints"
        emptyText="No webhook endpoints yet."
        pager={pager}
        columns={[
          { header: 'URL', cell: (n) => <Link href={`/webhooks/${n.id}`}>{n.url}</Link> },
          { header: 'Events', cell: (n) => (n.events.length ? n.events.join(', ') : 'All events') },
          { header: 'Status', cell: (n) => <Status value={n.status} /> },
          { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
        ]}
      />
      <form className="card inline-form" onSubmit={submit} aria-labelledby="new-endpoint-h">
        <h2 id="new-endpoint-h">Add an endpoint</h2>
        <Field label="Endpoint URL">{(p) => <input {...p} name="url" type="url" required placeholder="https://example.com/webhooks" />}</Field>
        <Field label="Event types" hint="Separated by commas or spaces; empty: all events.">
          {(p) => <input {...p} name="events" placeholder="payment.succeeded, invoice.paid" />}
        </Field>
        <Field label="Description">{(p) => <input {...p} name="description" />}</Field>
        <button type="submit" disabled={created.fetching}>
          Add endpoint
        </button>
        <FormError message={message} />
        {secret && <Secret secret={secret} />}
      </form>
    </>
  );
}

const EndpointQuery = graphql(`
  query DashboardWebhookEndpoint($id: ID!) {
    webhookEndpoint(id: $id) { id url description status events createdAt updatedAt }
  }
`);

/** The endpoint's own attempts (of any event), newest first: WebhookEndpoint.deliveryAttempts. */
const DeliveriesQuery = graphql(`
  query DashboardWebhookDeliveries($id: ID!, $first: Int, $after: String, $status: DeliveryAttemptStatus) {
    webhookEndpoint(id: $id) {
      id
      deliveryAttempts(first: $first, after: $after, status: $status) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { id attemptNumber status responseStatus responseBody durationMs scheduledAt attemptedAt nextRetryAt event { id type } } }
      }
    }
  }
`);

type AttemptStatus = NonNullable<VariablesOf<typeof DeliveriesQuery>['status']>;
const ATTEMPT_STATUSES: AttemptStatus[] = ['pending', 'succeeded', 'failed'];

const RotateSecret = graphql(`
  mutation DashboardRotateWebhookSecret($input: WebhookEndpointIdInput!) {
    rotateWebhookEndpointSecret(input: $input) {
      __typename
      ... on WebhookEndpointWithSecret { secret webhookEndpoint { id updatedAt } }
      ... on Error { code message param }
    }
  }
`);

const UpdateEndpoint = graphql(`
  mutation DashboardUpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {
    updateWebhookEndpoint(input: $input) {
      __typename
      ... on UpdateWebhookEndpointSuccess { webhookEndpoint { id status updatedAt } }
      ... on Error { code message param }
    }
  }
`);

export function WebhookEndpointPage({ id }: { id: string }) {
  const [{ data, fetching, error }] = useQuery({ query: EndpointQuery, variables: { id } });
  const [rotating, rotate] = useMutation(RotateSecret);
  const [updating, update] = useMutation(UpdateEndpoint);
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const ep = data?.webhookEndpoint;
  return (
    <>
      <PageHeader title={ep ? `Endpoint ${ep.url}` : 'Webhook endpoint'} />
      <p>
        <Link href="/webhooks">← All endpoints</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !ep : undefined} emptyText={`No webhook endpoint ${id}.`}>
        {ep && (
          <>
            <Details
              items={[
                ['ID', <code>{ep.id}</code>],
                ['URL', <code className="break">{ep.url}</code>],
                ['Description', ep.description],
                ['Events', ep.events.length ? ep.events.join(', ') : 'All events'],
                ['Status', <Status value={ep.status} />],
                ['Created', <DateTime value={ep.createdAt} />],
              ]}
            />
            <div className="inline-form">
              <button
                type="button"
                disabled={rotating.fetching}
                onClick={async () => {
                  const r = await rotate({ input: { id: ep.id, idempotencyKey: idempotencyKey() } });
                  const err = mutationError(r, 'rotateWebhookEndpointSecret');
                  setMessage(err);
                  setSecret(!err && r.data?.rotateWebhookEndpointSecret.__typename === 'WebhookEndpointWithSecret' ? r.data.rotateWebhookEndpointSecret.secret : null);
                }}
              >
                Rotate signing secret
              </button>
              <button
                type="button"
                className="secondary"
                disabled={updating.fetching}
                onClick={async () => {
                  const r = await update({ input: { id: ep.id, status: ep.status === 'active' ? 'disabled' : 'active', idempotencyKey: idempotencyKey() } });
                  setMessage(mutationError(r, 'updateWebhookEndpoint'));
                }}
              >
                {ep.status === 'active' ? 'Disable endpoint' : 'Enable endpoint'}
              </button>
              <FormError message={message} />
              {secret && <Secret secret={secret} />}
            </div>
            <Deliveries endpoint={ep} />
          </>
        )}
      </QueryState>
    </>
  );
}

/**
 * The endpoint's delivery attempts, newest first, 20 a page, filtered by status (?status=); each
 * row's event can be replayed (to every active endpoint subscribed to its type, as on the event's page).
 */
function Deliveries({ endpoint }: { endpoint: { id: string; status: string } }) {
  const [params] = useSearchParams();
  const raw = params.get('status');
  const status = ATTEMPT_STATUSES.find((s) => s === raw) ?? null;
  const pager = usePager(`${endpoint.id}?${params.toString()}`);
  const [result, refetch] = useQuery({ query: DeliveriesQuery, variables: { id: endpoint.id, first: 20, after: pager.after, status } });
  const [replaying, replay] = useMutation(ReplayEvent);
  const outcome = useOutcome();

  async function replayIt(event: { id: string; type: string }) {
    outcome.begin();
    const r = await replay({ input: { id: event.id, idempotencyKey: idempotencyKey() } });
    if (!outcome.settle(r, 'replayEvent') || r.data?.replayEvent.__typename !== 'ReplayEventSuccess') return;
    const { attempts, disabledEndpoints } = r.data.replayEvent;
    const n = attempts.length;
    const thisOneDisabled = disabledEndpoints.some((d) => d.id === endpoint.id);
    outcome.succeed(
      <>
        {n > 0 ? `${event.type} ${event.id} sent again to ${n} endpoint${n === 1 ? '' : 's'}.` : `Nothing was sent for ${event.type} ${event.id}.`}
        {thisOneDisabled && ' This endpoint is disabled: enable it, then replay.'}
      </>,
    );
    if (n > 0) refetch({ requestPolicy: 'network-only' });
  }

  return (
    <ConnectionSection
      id="deliveries-h"
      title="Recent deliveries"
      caption="Delivery attempts to this endpoint"
      noun="attempts"
      result={result}
      conn={result.data?.webhookEndpoint?.deliveryAttempts}
      pager={pager}
      emptyText={status ? `No ${status} delivery attempts to this endpoint.` : 'No delivery attempts to this endpoint yet.'}
      note="Every attempt to send an event to this endpoint, newest first. Replay sends the event again, now, to every active endpoint subscribed to its type."
      columns={[
        { header: 'Event', cell: (a) => <Link href={`/events/${a.event.id}`}>{a.event.type}</Link> },
        { header: 'Attempt', className: 'num', cell: (a) => a.attemptNumber },
        { header: 'Status', cell: (a) => <Status value={a.status} /> },
        { header: 'Response', cell: (a) => <AttemptResponse a={a} /> },
        { header: 'When', cell: (a) => <DateTime value={a.attemptedAt ?? a.scheduledAt} /> },
        {
          header: 'Replay',
          cell: (a) => (
            <button type="button" className="secondary" disabled={replaying.fetching} aria-label={`Replay ${a.event.type} ${a.event.id}`} onClick={() => void replayIt(a.event)}>
              Replay
            </button>
          ),
        },
      ]}
      toolbar={
        <>
          <Filters label="Filter delivery attempts">
            <StatusFilter statuses={ATTEMPT_STATUSES} value={status} />
          </Filters>
          {outcome.view}
        </>
      }
    />
  );
}
