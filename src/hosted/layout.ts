// Shared shell of the hosted pages (checkout, top-up, setup, portal): escaped templates
// (hono/html), one small stylesheet that holds from 320 px up, strict security headers. The pages
// work without JavaScript; a nonce'd script adds card-brand detection and grouping (the brands
// table of src/platform/processor.ts; the caret stays after the digit it was after), MM/YY
// formatting, the server's card checks before sending (every refused field at once, next to it),
// a visible pending state that also prevents a second submission, and moves the focus to a form's
// error after a refused submission.
import type { Context } from 'hono';
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { randomToken } from '../platform/ids.ts';
import { CARD_BRANDS } from '../platform/processor.ts';
import { logoDataUrlOf } from '../domain/merchants/account.ts';

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
.hint{color:var(--muted);font-size:.875rem}.field-error{color:var(--bad);font-size:.875rem;margin:.25rem 0 0}.field-error:empty{display:none}
input[aria-invalid=true]{border-color:var(--bad);border-width:2px}div.error p{margin:0}div.error ul{margin:.25rem 0 0;padding-left:1.25rem}div.error a{color:var(--bad)}
.info{color:var(--fg);background:#eff4ff;border:1px solid #c7d7fe;border-radius:8px;padding:.6rem .8rem;margin:0 0 1rem}.notice{color:var(--ok);background:#ecfdf3;border:1px solid #abefc6;border-radius:8px;padding:.6rem .8rem;margin:0 0 1rem}
.cardnum{position:relative}.cardnum input{padding-right:5.5rem}.brand{position:absolute;right:.6rem;top:50%;transform:translateY(-50%);font-size:.75rem;font-weight:700;letter-spacing:.05em;color:var(--muted)}
input[type=email]{width:100%;padding:.6rem .7rem;border:1px solid #9aa3b5;border-radius:6px;font:inherit}
section{border-top:1px solid var(--line);padding-top:1rem;margin-top:1.25rem}h2{font-size:1.05rem;margin:0 0 .75rem}
ul.items{list-style:none;margin:0 0 1rem;padding:0}ul.items li{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;justify-content:space-between;border:1px solid var(--line);border-radius:8px;padding:.6rem .75rem;margin:0 0 .5rem}
ul.items li form{display:inline}ul.items li .actions{display:flex;gap:.5rem}.small{width:auto;padding:.4rem .7rem;font-size:.875rem}.secondary{background:#fff;color:var(--accent);border:1px solid var(--accent)}
.badge{font-size:.75rem;font-weight:600;background:#eef0fb;color:var(--accent);border-radius:999px;padding:.1rem .5rem;margin-left:.4rem}
table{width:100%;border-collapse:collapse;font-size:.875rem}td,th{text-align:left;padding:.35rem .25rem;border-bottom:1px solid var(--line)}td.num,th.num{text-align:right;white-space:nowrap}
.back{display:inline-block;margin-top:1rem}.logo{display:block;max-height:48px;max-width:200px;margin:0 0 1rem}
@media (max-width:480px){main{margin:0;border-radius:0;border-left:0;border-right:0;padding:1rem}.amount{font-size:1.6rem}.row{gap:.5rem}}
form:has(input[name=method][value=card]:checked) #mobile_money,form:has(input[name=method][value=mobile_money]:checked) #card{display:none}`;

/** The card brands table for the script (src/platform/processor.ts: the server checks with the same one). */
const BRANDS_JSON = JSON.stringify(CARD_BRANDS.map((b) => ({ brand: b.brand, prefix: b.prefix.source, gaps: b.gaps, lengths: b.lengths })));

export interface PageOptions {
  title: string;
  lang: string;
  body: Html;
  /** origins that forms on this page may end up at (redirect targets) */
  formTargets?: string[];
}

/** The merchant's branding for the pages of one request (set by openByToken: src/hosted/kit.ts). */
export interface PageBranding {
  name: string;
  accentColor: string | null;
  logoType: string | null;
  logo: Uint8Array | null;
}
const brandings = new WeakMap<object, PageBranding>();

/** Pages answered for this request show the merchant's accent colour and logo (PATCH /v1/account). */
export function brandPage(c: Context, b: PageBranding): void {
  brandings.set(c, b);
}

/** The merchant's accent colour as CSS (validated #RRGGBB when stored; checked again here) and the logo inlined (img-src data:). */
function brandingHtml(b: PageBranding | undefined): { style: string; logo: Html | string } {
  if (!b) return { style: '', logo: '' };
  const style = b.accentColor && /^#[0-9A-Fa-f]{6}$/.test(b.accentColor) ? `:root{--accent:${b.accentColor}}` : '';
  const url = logoDataUrlOf(b);
  return { style, logo: url ? html`<img class="logo" src="${url}" alt="${b.name}">` : '' };
}

export function page(c: Context, status: number, opts: PageOptions) {
  const nonce = randomToken(22);
  const brand = brandingHtml(brandings.get(c));
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
<style>${raw(CSS)}${raw(brand.style)}</style>
</head>
<body>
<main>${brand.logo}${opts.body}</main>
<script nonce="${nonce}">
const alertBox = document.querySelector('[role=alert][data-error]');
if (alertBox) alertBox.focus();
const BRANDS = ${raw(BRANDS_JSON)}.map((b) => ({ ...b, prefix: new RegExp(b.prefix) }));
const brandOf = (d) => BRANDS.find((b) => b.prefix.test(d));
const luhn = (d) => {
  if (!/^[0-9]{12,19}$/.test(d) || /^0+$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < d.length; i++) {
    let x = Number(d[d.length - 1 - i]);
    if (i % 2 === 1) { x *= 2; if (x > 9) x -= 9; }
    sum += x;
  }
  return sum % 10 === 0;
};
const num = document.getElementById('card_number'), brand = document.getElementById('card_brand');
if (num && brand) num.addEventListener('input', () => {
  // Group the digits for the brand (Amex 4-6-5) and put the caret back after the same digit.
  const caret = num.selectionStart ?? num.value.length;
  const before = num.value.slice(0, caret).replace(/\\D/g, '').length;
  const all = num.value.replace(/\\D/g, '');
  const b = brandOf(all);
  const d = all.slice(0, b ? Math.max(...b.lengths) : 19);
  const gaps = b ? b.gaps : [4, 8, 12, 16];
  let grouped = '';
  for (let i = 0; i < d.length; i++) grouped += (gaps.includes(i) ? ' ' : '') + d[i];
  brand.dataset.brand = b ? b.brand : 'unknown';
  brand.textContent = b ? b.brand.toUpperCase() : '';
  if (grouped === num.value) return;
  num.value = grouped;
  let pos = 0;
  for (let seen = 0; pos < grouped.length && seen < before; pos++) if (grouped[pos] !== ' ') seen++;
  if (document.activeElement === num) num.setSelectionRange(pos, pos);
});
const exp = document.getElementById('card_expiry');
if (exp) exp.addEventListener('input', (e) => {
  if (exp.selectionStart !== exp.value.length) return; // editing in the middle: leave the text as typed
  let d = exp.value.replace(/\\D/g, '').slice(0, 4);
  if (d.length === 1 && d > '1') d = '0' + d;
  const v = d.length > 2 || (d.length === 2 && e.inputType !== 'deleteContentBackward') ? d.slice(0, 2) + '/' + d.slice(2) : d;
  if (v !== exp.value) exp.value = v;
});
// The server's checks, before a submission: every refused field at once, each message next to its
// field (aria-invalid, aria-describedby) and listed in the form's alert box, which takes the focus.
const card = document.getElementById('card');
const cardForm = card && card.closest('form');
function cardErrors() {
  const m = card.dataset, errors = {};
  const d = num.value.replace(/[\\s-]/g, '');
  const b = brandOf(d);
  if (!d) errors.card_number = m.msgMissing;
  else if (!/^[0-9]+$/.test(d) || !luhn(d) || (b && !b.lengths.includes(d.length))) errors.card_number = m.msgNumber;
  const x = /^\\s*(\\d{1,2})\\s*\\/\\s*(\\d{2}|\\d{4})\\s*$/.exec(exp.value);
  if (!x) errors.card_expiry = m.msgExpiry;
  else {
    const month = Number(x[1]), year = x[2].length === 2 ? 2000 + Number(x[2]) : Number(x[2]), now = new Date();
    if (month < 1 || month > 12) errors.card_expiry = m.msgMonth;
    else if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) errors.card_expiry = m.msgExpired;
  }
  if (!/^[0-9]{3,4}$/.test(document.getElementById('card_cvc').value.trim())) errors.card_cvc = m.msgCvc;
  return errors;
}
function showFieldErrors(errors) {
  for (const id of ['card_number', 'card_expiry', 'card_cvc']) {
    const input = document.getElementById(id), slot = document.getElementById(id + '-error');
    const ids = (input.getAttribute('aria-describedby') || '').split(' ').filter((x) => x && x !== id + '-error');
    slot.textContent = errors[id] || '';
    if (errors[id]) { ids.push(id + '-error'); input.setAttribute('aria-invalid', 'true'); } else input.removeAttribute('aria-invalid');
    if (ids.length) input.setAttribute('aria-describedby', ids.join(' ')); else input.removeAttribute('aria-describedby');
  }
}
if (cardForm && num && exp) {
  cardForm.addEventListener('submit', (e) => {
    const chosen = cardForm.querySelector('input[name=method]:checked, input[type=hidden][name=method]');
    if (!chosen || chosen.value !== 'card') return;
    const errors = cardErrors();
    showFieldErrors(errors);
    const ids = Object.keys(errors);
    if (ids.length === 0) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const box = cardForm.parentElement.querySelector('[role=alert]');
    if (!box) return;
    const wrap = document.createElement('div'), p = document.createElement('p'), ul = document.createElement('ul');
    wrap.className = 'error';
    wrap.id = 'form-error';
    p.textContent = card.dataset.msgSummary;
    for (const id of ids) {
      const li = document.createElement('li'), a = document.createElement('a');
      a.href = '#' + id;
      a.textContent = errors[id];
      li.append(a);
      ul.append(li);
    }
    wrap.append(p, ul);
    box.replaceChildren(wrap);
    box.dataset.error = '';
    cardForm.setAttribute('aria-describedby', 'form-error');
    box.focus();
  });
  // A field corrected after a refusal loses its message as soon as it is right.
  for (const input of [num, exp]) input.addEventListener('blur', () => {
    if (input.getAttribute('aria-invalid') !== 'true') return;
    const errors = cardErrors();
    if (!errors[input.id]) showFieldErrors(Object.fromEntries(Object.entries(errors).filter(([k]) => document.getElementById(k).getAttribute('aria-invalid') === 'true')));
  });
}
for (const f of document.querySelectorAll('form[data-once]')) f.addEventListener('submit', (e) => {
  if (f.dataset.sent) { e.preventDefault(); return; }
  f.dataset.sent = '1';
  f.setAttribute('aria-busy', 'true');
  for (const b of f.querySelectorAll('button[type=submit]')) {
    b.setAttribute('disabled', '');
    if (b.dataset.pending) b.textContent = b.dataset.pending;
  }
});
</script>
</body>
</html>`,
    status as 200,
  );
}
