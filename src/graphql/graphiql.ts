// GraphiQL at GET /graphql, from the local bundle of @graphql-yoga/render-graphiql (no CDN).
//
// It never relies on the browser's Basic-auth prompt: a browser that has answered that prompt
// re-sends the credentials to this origin on its own, which is what cross-site request forgery
// feeds on. Instead a small sign-in form asks for the client id and secret, keeps the resulting
// `Authorization` value in sessionStorage (gone when the tab closes) and GraphiQL sends it as an
// explicit header with `credentials: 'omit'`, so no cookie or cached credential ever rides along.
//
// The page asks for a secret, so it runs under a strict Content-Security-Policy
// (`graphiqlSecurityHeaders`): only its own two inline scripts run, by a nonce that is new for
// every response (`withNonce`); nothing is loaded from or sent to anywhere but this origin (and
// the `data:`/`blob:` URLs the page makes itself). What GraphiQL's bundle needs beyond that was
// checked in Chromium (test/graphiql.browser.test.ts, zero violations):
// - Monaco's editor workers are created from `blob:` URLs → `worker-src blob:`;
// - its fonts (codicons, Roboto) and icons are `data:` URLs inside the CSS → `font-src data:`,
//   `img-src 'self' data:`;
// - Monaco (and a React helper) add <style> elements and style attributes at run time, without
//   a nonce → `style-src 'unsafe-inline'` (styles only; scripts get no 'unsafe-inline' and no
//   'unsafe-eval': the bundle uses neither eval nor new Function).
import { randomBytes } from 'node:crypto';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions } from 'graphql-yoga';

/**
 * Stands for the response's nonce in the rendered page (random per process, so no text of the
 * page or of its options can contain it by accident); `withNonce` puts the real one in.
 */
const NONCE_SLOT = `billing-csp-nonce-${randomBytes(12).toString('hex')}`;

const STORAGE_KEY = 'billing.graphiql.authorization';

const SIGN_IN = /* HTML */ `
<style>
  #billing-signin { position: fixed; inset: 0; z-index: 1000; display: flex; align-items: center; justify-content: center;
    background: #f6f7f9; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; }
  #billing-signin[hidden], #billing-signin [hidden] { display: none; }
  #billing-signin form { background: #fff; padding: 28px 32px; border-radius: 10px; box-shadow: 0 4px 24px rgba(0,0,0,.08); width: min(420px, 92vw); }
  #billing-signin h1 { font-size: 20px; margin: 0 0 4px; }
  #billing-signin p { margin: 0 0 16px; color: #57606a; font-size: 14px; }
  #billing-signin label { display: block; font-weight: 600; font-size: 13px; margin: 12px 0 4px; }
  #billing-signin input { width: 100%; box-sizing: border-box; padding: 8px 10px; border: 1px solid #d0d7de; border-radius: 6px; font: inherit; }
  #billing-signin button { margin-top: 18px; width: 100%; padding: 9px; border: 0; border-radius: 6px; background: #1f6feb; color: #fff; font: inherit; font-weight: 600; cursor: pointer; }
  #billing-signin .error { color: #cf222e; margin: 12px 0 0; font-size: 14px; }
  #billing-signout { position: fixed; right: 12px; bottom: 10px; z-index: 999; font: 12px system-ui, sans-serif; background: #fff;
    border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 10px; cursor: pointer; }
</style>
<div id="billing-signin" hidden>
  <form id="billing-signin-form" autocomplete="off">
    <h1>Billing API · GraphiQL</h1>
    <p>Sign in with an API key. It is kept in this tab only and sent as an Authorization header.</p>
    <label for="billing-client-id">Client id</label>
    <input id="billing-client-id" name="client_id" placeholder="ck_…" required spellcheck="false">
    <label for="billing-client-secret">Client secret</label>
    <input id="billing-client-secret" name="client_secret" type="password" placeholder="sk_…" required spellcheck="false">
    <button type="submit">Sign in</button>
    <p class="error" id="billing-signin-error" role="alert" hidden></p>
  </form>
</div>
<script nonce="${NONCE_SLOT}">
  function billingStartGraphiQL(root, options) {
    var KEY = ${JSON.stringify(STORAGE_KEY)};
    var endpoint = options.endpoint || '/graphql';
    function start(authorization) {
      document.getElementById('billing-signin').hidden = true;
      var out = document.createElement('button');
      out.id = 'billing-signout';
      out.textContent = 'Sign out';
      out.onclick = function () { sessionStorage.removeItem(KEY); location.reload(); };
      document.body.appendChild(out);
      options.additionalHeaders = Object.assign({}, options.additionalHeaders, { Authorization: authorization });
      options.credentials = 'omit';
      YogaGraphiQL.renderYogaGraphiQL(root, options);
    }
    var saved = sessionStorage.getItem(KEY);
    if (saved) return start(saved);
    var box = document.getElementById('billing-signin');
    var error = document.getElementById('billing-signin-error');
    box.hidden = false;
    document.getElementById('billing-client-id').focus();
    document.getElementById('billing-signin-form').addEventListener('submit', function (e) {
      e.preventDefault();
      var id = document.getElementById('billing-client-id').value.trim();
      var secret = document.getElementById('billing-client-secret').value.trim();
      var authorization = 'Basic ' + btoa(id + ':' + secret);
      error.hidden = true;
      fetch(endpoint, {
        method: 'POST',
        credentials: 'omit',
        headers: { 'Content-Type': 'application/json', Authorization: authorization },
        body: JSON.stringify({ query: '{ __typename }' }),
      }).then(function (res) {
        if (res.ok) { sessionStorage.setItem(KEY, authorization); start(authorization); return; }
        error.textContent = res.status === 401 ? 'Unknown client id or wrong secret.' : res.status === 429 ? 'Too many attempts; wait a minute.' : 'Sign-in failed (HTTP ' + res.status + ').';
        error.hidden = false;
      }, function () { error.textContent = 'The server cannot be reached.'; error.hidden = false; });
    });
  }
</script>`;

const CALL = 'YogaGraphiQL.renderYogaGraphiQL(';
const ROOT = '<div id="root"></div>';

/**
 * The GraphiQL page: Yoga's bundle, started by the sign-in script instead of at once. Its inline
 * scripts carry a nonce placeholder: serve it through `withNonce`, with `graphiqlSecurityHeaders`.
 */
export function renderGraphiQLPage(opts: GraphiQLOptions): string {
  const page = renderGraphiQL(opts);
  const changed = () => new Error('GraphiQL page: the layout of @graphql-yoga/render-graphiql was not recognised (package changed?)');
  const at = page.lastIndexOf(CALL);
  const root = page.indexOf(ROOT);
  // The bundle is the one <script> element, right after the root element (the bundle's own code
  // contains the text "<script>" too: only that element's tag is given the nonce).
  const bundle = page.indexOf('<script>', root);
  if (at < 0 || root < 0 || bundle < 0 || page.slice(root + ROOT.length, bundle).trim() !== '' || at < bundle) throw changed();
  return (
    page.slice(0, root) +
    ROOT +
    SIGN_IN +
    page.slice(root + ROOT.length, bundle) +
    `<script nonce="${NONCE_SLOT}">` +
    page.slice(bundle + '<script>'.length, at) +
    'billingStartGraphiQL(' +
    page.slice(at + CALL.length)
  );
}

const SLOT_BYTES = Buffer.from(NONCE_SLOT);

/**
 * The rendered page (its UTF-8 bytes: the page is 9 MB, so it is not decoded and encoded again)
 * with this response's nonce on its scripts (`nonce`: 16+ base64url characters).
 */
export function withNonce(page: Uint8Array, nonce: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]{16,}$/.test(nonce)) throw new Error('a CSP nonce must be 16+ URL-safe characters');
  const bytes = Buffer.from(page.buffer, page.byteOffset, page.byteLength);
  const value = Buffer.from(nonce);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (let at = bytes.indexOf(SLOT_BYTES); at >= 0; at = bytes.indexOf(SLOT_BYTES, from)) {
    parts.push(bytes.subarray(from, at), value);
    from = at + SLOT_BYTES.length;
  }
  parts.push(bytes.subarray(from));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

/**
 * The page's headers. It asks for an API secret: its own scripts only (by the response's nonce),
 * no plugins, no <base>, data to and from this origin only, never framed, cached or leaking its
 * URL, and the sign-in form never submitted as a navigation (a secret in a URL).
 */
export function graphiqlSecurityHeaders(nonce: string): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      `script-src 'self' 'nonce-${nonce}'`,
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      "font-src 'self' data:",
      "connect-src 'self'",
      'worker-src blob:',
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}
