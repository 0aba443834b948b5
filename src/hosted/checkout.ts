// The hosted checkout: /hosted/checkout/<token>. Opened by the end customer without
// credentials; the 40-character token is the capability. Shows the merchant, the amount and a
// form to pay by test card or mobile money; redirects to the merchant's redirect_url with
// payment_id and status. Forms carry a double-submit CSRF token (cookie + field, SameSite=Strict);
// a second submission charges nothing (the payment row is locked and must still be `created`).
import { timingSafeEqual } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { bodyLimit } from 'hono/body-limit';
import {
  cancelAtCheckout,
  expireIfDue,
  findCheckout,
  offeredMethods,
  payAtCheckout,
  type CheckoutAttempt,
  type CheckoutOptions,
  type PaymentWithCustomer,
} from '../domain/payments/index.ts';
import { luhnValid } from '../domain/payments/processor.ts';
import type { Ctx } from '../platform/context.ts';
import { forMerchant } from '../platform/db/tenant.ts';
import { randomToken } from '../platform/ids.ts';
import { formatMoney } from '../platform/money.ts';
import type { AppEnv, Services } from '../server/env.ts';
import { html, page, type Html } from './layout.ts';
import { strings, type Strings } from './strings.ts';

const CSRF_COOKIE = 'billing_csrf';

function csrfToken(c: Context<AppEnv>, secure: boolean): string {
  let token = getCookie(c, CSRF_COOKIE);
  if (!token || !/^[0-9A-Za-z]{32}$/.test(token)) {
    token = randomToken(32);
    setCookie(c, CSRF_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/hosted', secure, maxAge: 60 * 60 * 24 });
  }
  return token;
}

function csrfValid(c: Context<AppEnv>, field: unknown): boolean {
  const cookie = getCookie(c, CSRF_COOKIE);
  if (typeof field !== 'string' || !cookie || field.length !== cookie.length) return false;
  return timingSafeEqual(Buffer.from(field), Buffer.from(cookie));
}

function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

function origins(p: PaymentWithCustomer): string[] {
  return [p.redirectUrl, p.cancelUrl].filter((u): u is string => !!u).map((u) => new URL(u).origin);
}

function localeOf(p: PaymentWithCustomer): 'en' | 'fr' {
  return (p.checkout as CheckoutOptions).locale ?? 'en';
}

interface FormState {
  error?: string;
  method?: string;
  phone?: string;
}

function checkoutForm(p: PaymentWithCustomer, merchantName: string, csrf: string, testMode: boolean, t: Strings, locale: string, state: FormState = {}): Html {
  const opts = p.checkout as CheckoutOptions;
  const methods = offeredMethods(p);
  const amount = formatMoney(p.amount, p.currency, locale);
  const selected = state.method && methods.includes(state.method as never) ? state.method : methods[0];
  const action = `/hosted/checkout/${p.checkoutToken}`;
  return html`
<h1>${opts.title ?? merchantName}</h1>
<p class="merchant">${t.payTo(merchantName)}</p>
<p class="amount" aria-label="${t.amountLabel}">${amount}</p>
${opts.description ? html`<p>${opts.description}</p>` : ''}
${testMode ? html`<p class="test" role="note">${t.testMode}</p>` : ''}
<div role="alert" aria-live="assertive">${state.error ? html`<p class="error" id="form-error">${state.error}</p>` : ''}</div>
<form method="post" action="${action}" data-once novalidate ${state.error ? html`aria-describedby="form-error"` : ''}>
  <input type="hidden" name="csrf" value="${csrf}">
  ${methods.length > 1
    ? html`<fieldset><legend>${t.method}</legend><div class="choice">
        ${methods.map((m) => html`<label><input type="radio" name="method" value="${m}" ${m === selected ? 'checked' : ''}> ${m === 'card' ? t.card : t.mobileMoney}</label>`)}
      </div></fieldset>`
    : html`<input type="hidden" name="method" value="${methods[0]}">`}
  ${methods.includes('card')
    ? html`<fieldset id="card"><legend>${t.cardDetails}</legend>
        <label for="card_number">${t.cardNumber}</label>
        <input type="text" id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" placeholder="4242 4242 4242 4242" maxlength="23">
        <div class="row">
          <div><label for="card_expiry">${t.expiry}</label>
          <input type="text" id="card_expiry" name="card_expiry" inputmode="numeric" autocomplete="cc-exp" placeholder="MM/YY" maxlength="7"></div>
          <div><label for="card_cvc">${t.cvc}</label>
          <input type="text" id="card_cvc" name="card_cvc" inputmode="numeric" autocomplete="cc-csc" placeholder="123" maxlength="4"></div>
        </div></fieldset>`
    : ''}
  ${methods.includes('mobile_money')
    ? html`<fieldset id="mobile_money"><legend>${t.mobileMoney}</legend>
        <label for="phone">${t.phone}</label>
        <input type="tel" id="phone" name="phone" autocomplete="tel" placeholder="+256700000001" value="${state.phone ?? p.customer.phone ?? ''}" aria-describedby="phone-hint">
        <p class="hint" id="phone-hint">${t.phoneHint}</p></fieldset>`
    : ''}
  <button type="submit">${t.pay(amount)}</button>
</form>
<form method="post" action="${action}/cancel">
  <input type="hidden" name="csrf" value="${csrf}">
  <button type="submit" class="link">${t.cancel}</button>
</form>`;
}

function outcome(p: PaymentWithCustomer, merchantName: string, t: Strings, locale: string): Html {
  const amount = formatMoney(p.amount, p.currency, locale);
  const back = withParams(p.redirectUrl, { payment_id: p.id, status: p.status });
  const messages: Record<string, Html> = {
    succeeded: html`<h1 class="ok">${t.paid}</h1><p>${t.paidText(amount, merchantName)}</p>`,
    processing: html`<h1>${t.processing}</h1><p>${t.processingText}</p>`,
    failed: html`<h1 class="bad">${t.failed}</h1><p>${p.failureMessage ?? ''}</p>`,
    cancelled: html`<h1>${t.cancelled}</h1><p>${t.cancelledText}</p>`,
  };
  return html`${messages[p.status] ?? html`<h1>${p.status}</h1>`}<p><a href="${back}">${t.backTo(merchantName)}</a></p>`;
}

export function notFound(c: Context<AppEnv>, t: Strings = strings.en, expired = false) {
  return page(c, 404, {
    title: expired ? t.expired : t.notFound,
    lang: 'en',
    body: html`<h1>${expired ? t.expired : t.notFound}</h1><p>${expired ? t.expiredText : t.notFoundText}</p>`,
  });
}

type Loaded = { payment: PaymentWithCustomer; ctx: Ctx; merchantName: string };

async function load(c: Context<AppEnv>, services: Services, token: string): Promise<Loaded | null> {
  const found = await findCheckout(services.db.prisma, token);
  if (!found) return null;
  const merchant = { id: found.merchant.id, mode: found.merchant.mode === 'live' ? ('live' as const) : ('test' as const), name: found.merchant.name };
  const ctx: Ctx = {
    merchant,
    db: forMerchant(services.db.prisma, merchant.id),
    requestId: c.get('requestId'),
    log: c.get('log').child({ merchant_id: merchant.id, payment_id: found.id }),
    runtime: services.runtime,
  };
  const { merchant: _m, ...payment } = found;
  // A checkout whose time has come is expired now rather than by the next job run.
  const current = payment.status === 'created' ? await expireIfDue(ctx, payment.id) : payment;
  return { payment: current, ctx, merchantName: merchant.name };
}

function parseCard(form: Record<string, unknown>, t: Strings, now: Date): CheckoutAttempt['card'] | string {
  const number = String(form.card_number ?? '').replace(/[\s-]/g, '');
  if (!number) return t.errCardMissing;
  if (!luhnValid(number)) return t.errCardNumber;
  const m = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(String(form.card_expiry ?? ''));
  if (!m) return t.errExpiry;
  const month = Number(m[1]);
  const year = m[2]!.length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  if (month < 1 || month > 12) return t.errExpiry;
  if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) return t.errExpired;
  const cvc = String(form.card_cvc ?? '').trim();
  if (!/^[0-9]{3,4}$/.test(cvc)) return t.errCvc;
  return { number, expMonth: month, expYear: year, cvc };
}

export function mountCheckout(app: Hono<AppEnv>, services: Services) {
  const secure = services.config.publicBaseUrl.startsWith('https:');
  const limit = bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.text('Request too large', 413) });

  /** The checkout behind the URL's token with its language, or the 404 page to answer (unknown token, expired). */
  async function open(c: Context<AppEnv>): Promise<(Loaded & { locale: 'en' | 'fr'; t: Strings }) | Response> {
    const loaded = await load(c, services, c.req.param('token') ?? '');
    if (!loaded) return notFound(c);
    const locale = localeOf(loaded.payment);
    const t = strings[locale];
    if (loaded.payment.status === 'expired') return notFound(c, t, true);
    return { ...loaded, locale, t };
  }

  app.get('/hosted/checkout/:token', async (c) => {
    const o = await open(c);
    if (o instanceof Response) return o;
    const { payment: p, merchantName, locale, t } = o;
    if (p.status !== 'created') return page(c, 200, { title: merchantName, lang: locale, body: outcome(p, merchantName, t, locale) });
    return page(c, 200, {
      title: t.title(merchantName),
      lang: locale,
      formTargets: origins(p),
      body: checkoutForm(p, merchantName, csrfToken(c, secure), o.ctx.merchant.mode === 'test', t, locale),
    });
  });

  app.post('/hosted/checkout/:token', limit, async (c) => {
    const o = await open(c);
    if (o instanceof Response) return o;
    const { payment: p, ctx, merchantName, locale, t } = o;
    const form = await c.req.parseBody();
    const rerender = (error: string, status = 422) =>
      page(c, status, {
        title: t.title(merchantName),
        lang: locale,
        formTargets: origins(p),
        body: checkoutForm(p, merchantName, csrfToken(c, secure), ctx.merchant.mode === 'test', t, locale, {
          error,
          method: String(form.method ?? ''),
          phone: typeof form.phone === 'string' ? form.phone.slice(0, 20) : undefined,
        }),
      });
    if (!csrfValid(c, form.csrf)) return rerender(t.errSession, 403);
    if (p.status !== 'created') return c.redirect(withParams(p.redirectUrl, { payment_id: p.id, status: p.status }), 303);

    const method = String(form.method ?? '');
    let attempt: CheckoutAttempt;
    if (method === 'card' && offeredMethods(p).includes('card')) {
      const card = parseCard(form, t, new Date());
      if (typeof card === 'string') return rerender(card);
      attempt = { method: 'card', card };
    } else if (method === 'mobile_money' && offeredMethods(p).includes('mobile_money')) {
      const phone = String(form.phone ?? '').replace(/[\s().-]/g, '');
      if (!/^\+[1-9][0-9]{6,14}$/.test(phone)) return rerender(t.errPhone);
      attempt = { method: 'mobile_money', phone };
    } else {
      return rerender(t.errMethod);
    }
    const after = await payAtCheckout(ctx, p.id, attempt);
    if (after.status === 'expired') return notFound(c, t, true);
    return c.redirect(withParams(after.redirectUrl, { payment_id: after.id, status: after.status }), 303);
  });

  app.post('/hosted/checkout/:token/cancel', limit, async (c) => {
    const o = await open(c);
    if (o instanceof Response) return o;
    const { payment: p, ctx, merchantName, locale, t } = o;
    const form = await c.req.parseBody();
    if (!csrfValid(c, form.csrf)) {
      return page(c, 403, { title: merchantName, lang: locale, body: html`<h1>${t.errSession}</h1><p><a href="/hosted/checkout/${p.checkoutToken}">${t.reload}</a></p>` });
    }
    const after = await cancelAtCheckout(ctx, p.id);
    if (after.status === 'cancelled' && after.cancelUrl) {
      return c.redirect(withParams(after.cancelUrl, { payment_id: after.id, status: after.status }), 303);
    }
    if (after.status !== 'cancelled') return c.redirect(withParams(after.redirectUrl, { payment_id: after.id, status: after.status }), 303);
    return page(c, 200, { title: merchantName, lang: locale, body: outcome(after, merchantName, t, locale) });
  });
}
