import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../graphql.ts';
import { ConnectionTable, DateTime, Details, Field, FormError, PageHeader, Pager, QueryState, Status, Table, idempotencyKey, mutationError, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';

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
  query DashboardWebhookEndpoint($id: ID!, $after: String) {
    webhookEndpoint(id: $id) { id url description status events createdAt updatedAt }
    events(first: 10, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { node { id type createdAt deliveryAttempts(endpointId: $id, first: 5) { edges { node { id attemptNumber status responseStatus durationMs scheduledAt attemptedAt } } } } }
    }
  }
`);

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
  const pager = usePager(id);
  const [{ data, fetching, error }] = useQuery({ query: EndpointQuery, variables: { id, after: pager.after } });
  const [rotating, rotate] = useMutation(RotateSecret);
  const [updating, update] = useMutation(UpdateEndpoint);
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const ep = data?.webhookEndpoint;
  const withAttempts = (data?.events.edges ?? []).filter((e) => e.node.deliveryAttempts.edges.length > 0);
  return (
    <>
      <PageHeader title={ep ? `Endpoint ${ep.url}` : 'Webhook endpoint'} />
      <p>
        <Link href="/webhooks">← All endpoints</Link>
      </p>
      <QueryState fetching={fetching} error={error} empty={data ? !ep : undefined} emptyText={`No webhook endpoint ${id}.`}>
        {ep && data && (
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
            <section aria-labelledby="deliveries-h">
              <h2 id="deliveries-h">Recent deliveries</h2>
              {withAttempts.length === 0 ? (
                <p className="empty">No deliveries to this endpoint among these events.</p>
              ) : (
                <Table
                  caption="Recent deliveries to this endpoint"
                  rows={withAttempts.map((e) => e.node)}
                  rowKey={(n) => n.id}
                  columns={[
                    { header: 'Event', cell: (n) => <Link href={`/events/${n.id}`}>{n.type}</Link> },
                    { header: 'Attempts', className: 'num', cell: (n) => n.deliveryAttempts.edges.length },
                    { header: 'Latest', cell: (n) => <Status value={n.deliveryAttempts.edges[0]!.node.status} /> },
                    {
                      header: 'Response',
                      cell: (n) => {
                        const a = n.deliveryAttempts.edges[0]!.node;
                        return a.responseStatus != null ? `HTTP ${a.responseStatus}` : '—';
                      },
                    },
                    { header: 'When', cell: (n) => <DateTime value={n.deliveryAttempts.edges[0]!.node.attemptedAt ?? n.deliveryAttempts.edges[0]!.node.scheduledAt} /> },
                  ]}
                />
              )}
              <Pager pager={pager} pageInfo={data.events.pageInfo} noun="events" />
              <p className="muted small">Open an event to see each attempt and to replay it.</p>
            </section>
          </>
        )}
      </QueryState>
    </>
  );
}
