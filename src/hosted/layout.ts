// Shared shell of the hosted pages (checkout, top-up, setup, portal): escaped templates
// (hono/html), one small stylesheet that holds from 320 px up, strict security headers. The pages
// work without JavaScript; a nonce'd script adds card-brand detection, MM/YY formatting, a
// visible pending state that also prevents a second submission, and moves the focus to a form's
// error after a refused submission.
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
.row{display:flex;gap:.75rem;align-items:flex-end}.row>div{flex:1}.choice{display:flex;gap:1rem;margin:.25rem 0 .5rem}.choice label{display:inline-flex;gap:.4rem;align-items:center;margin:0;font-weight:400}
button{width:100%;padding:.8rem;border:0;border-radius:8px;background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer}button[disabled]{opacity:.6}
.link{background:none;color:var(--accent);text-decoration:underline;padding:.5rem;font-weight:400}
.error{color:var(--bad);background:#fef3f2;border:1px solid #fecdca;border-radius:8px;padding:.6rem .8rem;margin:0 0 1rem}
.ok{color:var(--ok)}.bad{color:var(--bad)}.test{background:#fffaeb;border:1px solid #fedf89;border-radius:8px;padding:.5rem .75rem;font-size:.875rem;margin:0 0 1rem}
.hint{color:var(--muted);font-size:.875rem}.notice{color:var(--ok);background:#ecfdf3;border:1px solid #abefc6;border-radius:8px;padding:.6rem .8rem;margin:0 0 1rem}
.cardnum{position:relative}.cardnum input{padding-right:5.5rem}.brand{position:absolute;right:.6rem;top:50%;transform:translateY(-50%);font-size:.75rem;font-weight:700;letter-spacing:.05em;color:var(--muted)}
input[type=email]{width:100%;padding:.6rem .7rem;border:1px solid #9aa3b5;border-radius:6px;font:inherit}
section{border-top:1px solid var(--line);padding-top:1rem;margin-top:1.25rem}h2{font-size:1.05rem;margin:0 0 .75rem}
ul.items{list-style:none;margin:0 0 1rem;padding:0}ul.items li{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;justify-content:space-between;border:1px solid var(--line);border-radius:8px;padding:.6rem .75rem;margin:0 0 .5rem}
ul.items li form{display:inline}ul.items li .actions{display:flex;gap:.5rem}.small{width:auto;padding:.4rem .7rem;font-size:.875rem}.secondary{background:#fff;color:var(--accent);border:1px solid var(--accent)}
.badge{font-size:.75rem;font-weight:600;background:#eef0fb;color:var(--accent);border-radius:999px;padding:.1rem .5rem;margin-left:.4rem}
table{width:100%;border-collapse:collapse;font-size:.875rem}td,th{text-align:left;padding:.35rem .25rem;border-bottom:1px solid var(--line)}td.num,th.num{text-align:right;white-space:nowrap}
.back{display:inline-block;margin-top:1rem}
@media (max-width:480px){main{margin:0;border-radius:0;border-left:0;border-right:0;padding:1rem}.amount{font-size:1.6rem}.row{gap:.5rem}}
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
<link rel="icon" href="data:,">
<title>${opts.title}</title>
<style>${raw(CSS)}</style>
</head>
<body>
<main>${opts.body}</main>
<script nonce="${nonce}">
for (const f of document.querySelectorAll('form[data-once]')) f.addEventListener('submit', (e) => {
  if (f.dataset.sent) { e.preventDefault(); return; }
  f.dataset.sent = '1';
  f.setAttribute('aria-busy', 'true');
  for (const b of f.querySelectorAll('button[type=submit]')) {
    b.setAttribute('disabled', '');
    if (b.dataset.pending) b.textContent = b.dataset.pending;
  }
});
const alertBox = document.querySelector('[role=alert][data-error]');
if (alertBox) alertBox.focus();
const num = document.getElementById('card_number'), brand = document.getElementById('card_brand');
if (num && brand) num.addEventListener('input', () => {
  const d = num.value.replace(/\\D/g, '').slice(0, 19);
  const b = /^4/.test(d) ? 'visa' : /^(5[1-5]|2[2-7])/.test(d) ? 'mastercard' : /^3[47]/.test(d) ? 'amex' : '';
  brand.dataset.brand = b || 'unknown';
  brand.textContent = b.toUpperCase();
  const grouped = d.replace(/(\\d{4})(?=\\d)/g, '$1 ');
  if (grouped !== num.value) num.value = grouped;
});
const exp = document.getElementById('card_expiry');
if (exp) exp.addEventListener('input', (e) => {
  let d = exp.value.replace(/\\D/g, '').slice(0, 4);
  if (d.length === 1 && d > '1') d = '0' + d;
  const v = d.length > 2 || (d.length === 2 && e.inputType !== 'deleteContentBackward') ? d.slice(0, 2) + '/' + d.slice(2) : d;
  if (v !== exp.value) exp.value = v;
});
</script>
</body>
</html>`,
    status as 200,
  );
}
