// GraphiQL at GET /graphql, from the local bundle of @graphql-yoga/render-graphiql (no CDN).
//
// It never relies on the browser's Basic-auth prompt: a browser that has answered that prompt
// re-sends the credentials to this origin on its own, which is what cross-site request forgery
// feeds on. Instead a small sign-in form asks for the client id and secret, keeps the resulting
// `Authorization` value in sessionStorage (gone when the tab closes) and GraphiQL sends it as an
// explicit header with `credentials: 'omit'`, so no cookie or cached credential ever rides along.
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions } from 'graphql-yoga';

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
<script>
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

/** The GraphiQL page: Yoga's bundle, started by the sign-in script instead of at once. */
export function renderGraphiQLPage(opts: GraphiQLOptions): string {
  const page = renderGraphiQL(opts);
  const at = page.lastIndexOf(CALL);
  if (at < 0) throw new Error('GraphiQL page: the render call of @graphql-yoga/render-graphiql was not found (package changed?)');
  const started = `${page.slice(0, at)}billingStartGraphiQL(${page.slice(at + CALL.length)}`;
  return started.replace('<div id="root"></div>', `<div id="root"></div>${SIGN_IN}`);
}
