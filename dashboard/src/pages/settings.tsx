// Settings: the merchant's name and branding (shown on hosted pages, e-mails and PDFs), which
// customer e-mails are sent, and the API keys (a new secret is shown once, right after creation).
import { useState, type ChangeEvent, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql, type ResultOf } from '../graphql.ts';
import { ConfirmButton, DateTime, Field, FormError, PageHeader, Pager, QueryState, Status, Table, idempotencyKey, mutationError, usePager } from '../components/ui.tsx';
import { LISTS } from '../client.ts';

const MerchantQuery = graphql(`
  query DashboardMerchantSettings { merchant { id name mode branding { accentColor logo } } }
`);

const UpdateMerchant = graphql(`
  mutation DashboardUpdateMerchantSettings($input: UpdateMerchantSettingsInput!) {
    updateMerchantSettings(input: $input) {
      __typename
      ... on UpdateMerchantSettingsSuccess { merchant { id name branding { accentColor logo } } }
      ... on Error { code message param }
    }
  }
`);

const EmailSettingsQuery = graphql(`
  query DashboardEmailSettings { emailSettings { receipts failedPayments trialEnding upcomingRenewal invoices } }
`);

const UpdateEmailSettings = graphql(`
  mutation DashboardUpdateEmailSettings($input: UpdateEmailSettingsInput!) {
    updateEmailSettings(input: $input) {
      __typename
      ... on UpdateEmailSettingsSuccess { emailSettings { receipts failedPayments trialEnding upcomingRenewal invoices } }
      ... on Error { code message param }
    }
  }
`);

const ApiKeysQuery = graphql(`
  query DashboardApiKeys($first: Int, $after: String) {
    apiKeys(first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { clientId secretLast4 active createdAt revokedAt } }
    }
  }
`);

const CreateApiKey = graphql(`
  mutation DashboardCreateApiKey {
    createApiKey {
      __typename
      ... on CreateApiKeySuccess { newApiKey { clientSecret apiKey { clientId secretLast4 active createdAt } } }
      ... on Error { code message param }
    }
  }
`);

const RevokeApiKey = graphql(`
  mutation DashboardRevokeApiKey($input: RevokeApiKeyInput!) {
    revokeApiKey(input: $input) {
      __typename
      ... on RevokeApiKeySuccess { apiKey { clientId active revokedAt } }
      ... on Error { code message param }
    }
  }
`);

export function SettingsPage() {
  return (
    <>
      <PageHeader title="Settings" />
      <MerchantSection />
      <EmailSection />
      <ApiKeysSection />
    </>
  );
}

type Merchant = ResultOf<typeof MerchantQuery>['merchant'];

function MerchantSection() {
  const [{ data, fetching, error }] = useQuery({ query: MerchantQuery });
  return (
    <section className="card" aria-labelledby="merchant-h">
      <h2 id="merchant-h">Name and branding</h2>
      <p className="muted small">Customers see these on the checkout and portal pages, in e-mails and on invoice PDFs.</p>
      <QueryState fetching={fetching} error={error} empty={data ? false : undefined}>
        {data && <MerchantForm merchant={data.merchant} />}
      </QueryState>
    </section>
  );
}

const readDataUrl = (file: File) =>
  new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read.'));
    reader.readAsDataURL(file);
  });

function MerchantForm({ merchant }: { merchant: Merchant }) {
  const [state, update] = useMutation(UpdateMerchant);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  // A new logo chosen in the file field, as a data: URL (the API takes the logo that way).
  const [logo, setLogo] = useState<string | null>(null);
  const [logoError, setLogoError] = useState<string | null>(null);

  async function chooseLogo(e: ChangeEvent<HTMLInputElement>) {
    const file = e.currentTarget.files?.[0];
    setLogoError(null);
    if (!file) return setLogo(null);
    try {
      setLogo(await readDataUrl(file));
    } catch (err) {
      setLogo(null);
      setLogoError((err as Error).message);
    }
  }

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const accent = String(f.get('accentColor') ?? '').trim();
    const removeLogo = f.get('removeLogo') === 'on';
    setDone(null);
    const r = await update({
      input: {
        name: String(f.get('name') ?? '').trim(),
        branding: {
          accentColor: accent === '' ? null : accent,
          // Left out: the logo stays as it is.
          ...(removeLogo ? { logo: null } : logo ? { logo } : {}),
        },
        idempotencyKey: idempotencyKey(),
      },
    });
    const err = mutationError(r, 'updateMerchantSettings');
    setMessage(err);
    if (!err && r.data?.updateMerchantSettings.__typename === 'UpdateMerchantSettingsSuccess') {
      setDone('Saved. Hosted pages, e-mails and PDFs use it from now on.');
      setLogo(null);
    }
  }

  const accent = merchant.branding.accentColor;
  return (
    <form className="inline-form" onSubmit={submit} aria-labelledby="merchant-h" noValidate>
      <Field label="Business name" hint="1 to 200 characters.">
        {(p) => <input {...p} name="name" defaultValue={merchant.name} autoComplete="organization" />}
      </Field>
      <Field label="Accent colour" hint={`#RRGGBB, e.g. #1f5fd1. Empty: the default blue.${accent ? ` Now ${accent}.` : ''}`}>
        {(p) => <input {...p} name="accentColor" defaultValue={accent ?? ''} placeholder="#1f5fd1" maxLength={7} spellCheck={false} />}
      </Field>
      {merchant.branding.logo ? (
        <div className="logo-preview">
          <img src={merchant.branding.logo} alt={`The logo of ${merchant.name}`} />
          <label className="check">
            <input type="checkbox" name="removeLogo" /> Remove the logo
          </label>
        </div>
      ) : (
        <p className="muted small">No logo yet: the name is shown instead.</p>
      )}
      <Field label={merchant.branding.logo ? 'Replace the logo' : 'Logo'} hint="PNG or JPEG, at most 128 KiB.">
        {(p) => <input {...p} type="file" name="logo" accept="image/png,image/jpeg" onChange={chooseLogo} />}
      </Field>
      <FormError message={logoError} />
      <button type="submit" disabled={state.fetching}>
        Save name and branding
      </button>
      <FormError message={message} />
      {done && (
        <p className="success" role="status">
          {done}
        </p>
      )}
    </form>
  );
}

type EmailKey = keyof ResultOf<typeof EmailSettingsQuery>['emailSettings'];
const EMAIL_KINDS: [EmailKey, string, string][] = [
  ['receipts', 'Receipts', 'For paid payments and invoices.'],
  ['failedPayments', 'Failed payments', 'A failed invoice payment, with a link to fix it in the portal.'],
  ['trialEnding', 'Trial ending', 'Three days before a trial ends.'],
  ['upcomingRenewal', 'Upcoming renewal', 'Three days before a subscription renews.'],
  ['invoices', 'Invoices to pay', 'Invoices sent for payment (send_invoice).'],
];

function EmailSection() {
  const [{ data, fetching, error }] = useQuery({ query: EmailSettingsQuery });
  const [state, update] = useMutation(UpdateEmailSettings);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const input = Object.fromEntries(EMAIL_KINDS.map(([k]) => [k, f.get(k) === 'on'])) as Record<EmailKey, boolean>;
    setDone(null);
    const r = await update({ input: { ...input, idempotencyKey: idempotencyKey() } });
    const err = mutationError(r, 'updateEmailSettings');
    setMessage(err);
    if (!err) setDone('E-mail settings saved.');
  }

  return (
    <section className="card" aria-labelledby="emails-h">
      <h2 id="emails-h">Customer e-mails</h2>
      <QueryState fetching={fetching} error={error} empty={data ? false : undefined}>
        {data && (
          <form className="inline-form" onSubmit={submit} aria-labelledby="emails-h">
            <fieldset className="checks">
              <legend>Send these e-mails to customers</legend>
              {EMAIL_KINDS.map(([key, label, hint]) => (
                <label key={key} className="check">
                  <input type="checkbox" name={key} defaultChecked={data.emailSettings[key]} />
                  <span>
                    {label} <span className="muted small">{hint}</span>
                  </span>
                </label>
              ))}
            </fieldset>
            <button type="submit" disabled={state.fetching}>
              Save e-mail settings
            </button>
            <FormError message={message} />
            {done && (
              <p className="success" role="status">
                {done}
              </p>
            )}
          </form>
        )}
      </QueryState>
    </section>
  );
}

function ApiKeysSection() {
  const pager = usePager('');
  const [{ data, fetching, error }] = useQuery({ query: ApiKeysQuery, variables: { first: 20, after: pager.after }, context: LISTS.apiKeys });
  const [creating, create] = useMutation(CreateApiKey);
  const [message, setMessage] = useState<string | null>(null);
  const [created, setCreated] = useState<{ clientId: string; clientSecret: string } | null>(null);
  const conn = data?.apiKeys;

  async function createKey() {
    setCreated(null);
    const r = await create({});
    const err = mutationError(r, 'createApiKey');
    setMessage(err);
    if (!err && r.data?.createApiKey.__typename === 'CreateApiKeySuccess') {
      const k = r.data.createApiKey.newApiKey;
      setCreated({ clientId: k.apiKey.clientId, clientSecret: k.clientSecret });
    }
  }

  return (
    <section className="card" aria-labelledby="keys-h">
      <h2 id="keys-h">API keys</h2>
      <p className="muted small">
        A key is an HTTP Basic user name (the client id) and password (the secret). Only a hash of the secret is stored: it is shown once, when the key is made.
      </p>
      <div className="button-row">
        <button type="button" onClick={createKey} disabled={creating.fetching}>
          Create an API key
        </button>
      </div>
      <FormError message={message} />
      {created && <NewKey clientId={created.clientId} secret={created.clientSecret} onDone={() => setCreated(null)} />}
      <QueryState fetching={fetching} error={error} empty={conn ? conn.edges.length === 0 : undefined} emptyText="No API keys.">
        {conn && (
          <>
            <Table
              caption="API keys"
              rows={conn.edges.map((e) => e.node)}
              rowKey={(n) => n.clientId}
              columns={[
                { header: 'Client id', cell: (n) => <code className="break">{n.clientId}</code> },
                { header: 'Secret ends in', cell: (n) => <code>…{n.secretLast4}</code> },
                { header: 'Created', cell: (n) => <DateTime value={n.createdAt} /> },
                { header: 'Status', cell: (n) => (n.active ? <Status value="active" /> : <span><Status value="revoked" /> <DateTime value={n.revokedAt} /></span>) },
                { header: 'Actions', cell: (n) => (n.active ? <RevokeButton clientId={n.clientId} /> : '—') },
              ]}
            />
            <Pager pager={pager} pageInfo={conn.pageInfo} total={conn.totalCount} noun="keys" />
          </>
        )}
      </QueryState>
    </section>
  );
}

/** A key just made: its secret, shown this once, with a copy button. */
function NewKey({ clientId, secret, onDone }: { clientId: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  return (
    <div className="notice new-key" role="status" data-testid="new-api-key">
      <p>
        <strong>Copy the secret now: it is shown only this once.</strong> Store it where your backend reads its configuration. If it is lost, create another key and
        revoke this one.
      </p>
      <p>
        Client id: <code className="break">{clientId}</code>
      </p>
      <p>
        Secret: <code className="break secret" data-testid="new-api-key-secret">{secret}</code>
      </p>
      <div className="row-actions">
        <button
          type="button"
          className="small"
          onClick={() =>
            navigator.clipboard.writeText(secret).then(
              () => setCopied('Copied to the clipboard.'),
              () => setCopied('Copying failed: select the secret and copy it.'),
            )
          }
        >
          Copy the secret
        </button>
        <button type="button" className="small secondary" onClick={onDone}>
          I have stored it
        </button>
        {copied && <span className="muted small">{copied}</span>}
      </div>
    </div>
  );
}

function RevokeButton({ clientId }: { clientId: string }) {
  const [state, revoke] = useMutation(RevokeApiKey);
  const [message, setMessage] = useState<string | null>(null);
  return (
    <div className="row-actions">
      <ConfirmButton
        label="Revoke"
        confirmLabel="Yes, revoke"
        className="small secondary"
        ariaLabel={`Revoke ${clientId}`}
        disabled={state.fetching}
        onConfirm={async () => setMessage(mutationError(await revoke({ input: { clientId, idempotencyKey: idempotencyKey() } }), 'revokeApiKey'))}
      />
      <FormError message={message} />
    </div>
  );
}
