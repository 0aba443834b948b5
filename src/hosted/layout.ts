// Shared shell of the hosted pages: escaped templates (hono/html), one small stylesheet, strict
// security headers. The pages work without JavaScript; a nonce'd script only prevents a second
// click on the pay button.
import type { Context } from 'hono';
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { randomToken } from '../platform/ids.ts';

export { html };
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const CSS = `
:root{color-scheme:light;--fg:#1a1f36;--muted:#5b6478;--line:#d7dbe3;--accent:#3a4fd8;--bad:#b42318;--ok:#067647;--bg:#f6f8fb}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid var(--line);border-radius:12px}
h1{font-size:1.25rem;margin:0 0 .25rem}.merchant{color:var(--muted);margin:0 0 1rem}.amount{font-size:2rem;font-weight:650;margin:.25rem 0 1rem}
fieldset{border:1px solid var(--line);border-radius:8px;margin:0 0 1rem;padding:.75rem 1rem}legend{font-weight:600;padding:0 .25rem}
label{display:block;font-weight:500;margin:.5rem 0 .25rem}input[type=text],input[type=tel]{width:100%;padding:.6rem .7rem;border:1px solid #9aa3b5;border-radius:6px;font:inherit}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.row{display:flex;gap:.75rem}.row>div{flex:1}.choice{display:flex;gap:1rem;margin:.25rem 0 .5rem}.choice label{display:inline-flex;gap:.4rem;align-items:center;margin:0;font-weight:400}
button{width:100%;padding:.8rem;border:0;border-radius:8px;background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer}button[disabled]{opacity:.6}
.link{background:none;color:var(--accent);text-decoration:underline;padding:.5rem;font-weight:400}
.error{color:var(--bad);background:#fef3f2;border:1px solid #fecdca;border-radius:8px;padding:.6rem .8rem;margin:0 0 1rem}
.ok{color:var(--ok)}.bad{color:var(--bad)}.test{background:#fffaeb;border:1px solid #fedf89;border-radius:8px;padding:.5rem .75rem;font-size:.875rem;margin:0 0 1rem}
.hint{color:var(--muted);font-size:.875rem}
form:has(input[name=method][value=card]:checked) #mobile_money,form:has(input[name=method][value=mobile_money]:checked) #card{display:none}`;

export interface PageOptions {
  title: string;
  lang: string;
  body: Html;
  /** origins that forms on this page may end up at (redirect targets) */
  formTargets?: string[];
}

export function page(c: Context, status: number, opts: PageOptions) {
  const nonce = randomToken(22);
  const targets = ["'self'", ...(opts.formTargets ?? [])].join(' ');
  c.header(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; img-src 'self' data:; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Cache-Control', 'no-store');
  c.header('X-Frame-Options', 'DENY');
  return c.html(
    html`<!doctype html>
<html lang="${opts.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${opts.title}</title>
<style>${raw(CSS)}</style>
</head>
<body>
<main>${opts.body}</main>
<script nonce="${nonce}">
for (const f of document.querySelectorAll('form[data-once]')) f.addEventListener('submit', (e) => {
  if (f.dataset.sent) { e.preventDefault(); return; }
  f.dataset.sent = '1';
  for (const b of f.querySelectorAll('button[type=submit]')) b.setAttribute('disabled', '');
});
</script>
</body>
</html>`,
    status as 200,
  );
}
