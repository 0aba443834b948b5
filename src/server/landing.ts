// The landing page at GET / and the links printed at every start (src/main.ts): where a developer
// goes first. One list of links serves both, so the page and the terminal never disagree.
// The page is server-rendered, has no script at all and loads nothing (its one stylesheet is
// inline, allowed by a nonce), so it works offline and under a policy stricter than the hosted
// pages'.
import { html, raw } from 'hono/html';

export interface ServiceLink {
  path: string;
  label: string;
  /** one line on the landing page */
  about: string;
}

/** What a developer needs in the first hour, in the order they need it. */
export const SERVICE_LINKS: readonly ServiceLink[] = [
  { path: '/dashboard', label: 'Dashboard', about: 'Customers, payments, subscriptions, invoices, wallets, webhooks and events of your merchant.' },
  { path: '/graphql', label: 'GraphiQL', about: 'Explore and run the GraphQL API in the browser (sign in with a client id and secret).' },
  { path: '/docs', label: 'API reference', about: 'Every REST operation with working examples; “Try it out” runs them against this server.' },
  { path: '/openapi.json', label: 'OpenAPI document', about: 'OpenAPI 3.1, webhooks included: generate a typed client or typed webhook handlers.' },
  { path: '/healthz', label: 'Liveness', about: 'The process is up.' },
  { path: '/readyz', label: 'Readiness', about: 'The database is reachable and migrated (503 otherwise).' },
];

/** The links as banner lines (`  Dashboard       http://localhost:4000/dashboard`), every start. */
export function linkLines(baseUrl: string): string[] {
  const width = Math.max(...SERVICE_LINKS.map((l) => l.label.length)) + 2;
  return [`    ${'Start here'.padEnd(width)}${baseUrl}/`, ...SERVICE_LINKS.map((l) => `    ${l.label.padEnd(width)}${baseUrl}${l.path}`)];
}

/** No script, no request anywhere: only the inline stylesheet (by nonce) and this origin's links. */
export function landingSecurityHeaders(nonce: string): Record<string, string> {
  return {
    'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
}

const CSS = `
:root{color-scheme:light;--fg:#1a1f36;--muted:#5b6478;--line:#d7dbe3;--accent:#3a4fd8;--bg:#f6f8fb}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:44rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid var(--line);border-radius:12px}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.05rem;margin:1.5rem 0 .5rem}p{margin:.25rem 0 .75rem}.muted{color:var(--muted)}
ul.links{list-style:none;margin:0;padding:0}ul.links li{border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem;margin:0 0 .5rem}
ul.links a{font-weight:600;color:var(--accent)}ul.links span{display:block;color:var(--muted);font-size:.9rem}
a:focus-visible,pre:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
pre{background:#f1f3f8;border:1px solid var(--line);border-radius:8px;padding:.75rem;overflow-x:auto;font-size:.85rem}code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
@media (max-width:480px){main{margin:0;border-radius:0;border-left:0;border-right:0;padding:1rem}}`;

/**
 * The page. Links are relative (they follow however the browser reached the server); the curl
 * lines use the configured origin (PUBLIC_BASE_URL), as every other absolute address does.
 */
export function landingHtml(opts: { nonce: string; baseUrl: string; version: string }) {
  const { nonce, baseUrl } = opts;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>open-billing</title>
<style nonce="${nonce}">${raw(CSS)}</style>
</head>
<body>
<main>
<h1>open-billing</h1>
<p class="muted">Payments and billing over GraphQL and REST · version ${opts.version}</p>
<nav aria-label="Start here">
<ul class="links">
${SERVICE_LINKS.map((l) => html`<li><a href="${l.path}">${l.label}</a> <code>${l.path}</code><span>${l.about}</span></li>
`)}</ul>
</nav>
<h2>Your first request</h2>
<p>The first start printed a test-mode merchant’s client id and secret in the terminal (never in the logs). Use them as HTTP Basic credentials:</p>
<pre tabindex="0" aria-label="Example request"><code>curl -u ck_…:sk_… ${baseUrl}/v1/customers \\
  -H 'Content-Type: application/json' -d '{"email":"jane@example.com"}'</code></pre>
<p>Lost the secret? Create another key for the merchant: <code>npm run --silent cli -- key create --merchant mer_…</code> (<code>merchant list</code> shows the ids).</p>
</main>
</body>
</html>`;
}
