// The hosted checkout: /hosted/checkout/<token>. Opened by the end customer without
// credentials; the 40-character token is the capability. Shows the merchant, the amount and a
// form to pay by test card or mobile money; redirects to the merchant's redirect_url with
// payment_id and status. Forms carry a double-submit CSRF token (cookie + field, SameSite=Strict);
// a second submission charges nothing (the payment row is locked and must still await payment). A declined
// attempt shows the page again with the reason (in the page's language, from the failure code), to
// try another card or method until it expires. Opened again after a failed attempt (an invoice's
// automatic charge, a reload), the page shows the reason as a neutral notice, not as an error.
//
// Card testing: a payment takes CHECKOUT_MAX_ATTEMPTS attempts (its `attempts` column, counted when
// an attempt starts, whatever started it); then the page says so and takes no more (the customer
// may still cancel). Failed attempts from one source address are limited across every hosted page
// (kit: takePaymentAttempt, 429 + Retry-After). Top-up checkouts are this page too.
import type { Context, Hono } from 'hono';
import {
  cancelAtCheckout,
  expireIfDue,
  findCheckout,
  offeredMethods,
  payAtCheckout,
  paymentAttempts,
  type CheckoutOptions,
  type PaymentWithCustomer,
} from '../domain/payments/index.ts';
import { customerLocale } from '../domain/customers/index.ts';
import { StateError } from '../platform/errors.ts';
import { formatMoney } from '../platform/money.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import {
  csrfToken,
  csrfValid,
  declineAdvice,
  declineMessage,
  errorBox,
  hostedBodyLimit,
  keptFields,
  openByToken,
  methodFields,
  noticeBox,
  notFound,
  originOf,
  parseMethod,
  readForm,
  takePaymentAttempt,
  withParams,
  type MethodFormState,
} from './kit.ts';
import { html, page, type Html } from './layout.ts';
import type { Strings } from './strings.ts';

/**
 * Attempts a payment takes at its checkout (card testing: one link must not check dozens of cards).
 * The check runs here, before payAtCheckout, on the payment's `attempts`.
 */
export const CHECKOUT_MAX_ATTEMPTS = 5;

/** Still awaiting payment, but its attempts are spent: the page takes no more. */
function attemptsSpent(p: Pick<PaymentWithCustomer, 'status' | 'attempts'>): boolean {
  return (p.status === 'created' || p.status === 'failed') && p.attempts >= CHECKOUT_MAX_ATTEMPTS;
}

function origins(p: PaymentWithCustomer): string[] {
  return [...originOf(p.redirectUrl), ...originOf(p.cancelUrl)];
}

/** Where the customer goes after the checkout: the merchant's redirect_url with the outcome, if any. */
function backUrl(p: PaymentWithCustomer): string | null {
  return p.redirectUrl ? withParams(p.redirectUrl, { payment_id: p.id, status: p.status }) : null;
}

/**
 * The page's language: the checkout's `locale` when the payment was created with one, else its
 * customer's `locale` (an invoice's payment, a payment of a known customer), else English — the
 * rule of the customer e-mails (docs/emails.md, "Language").
 */
function localeOf(p: Pick<PaymentWithCustomer, 'checkout' | 'customer'>): 'en' | 'fr' {
  return (p.checkout as CheckoutOptions).locale ?? customerLocale(p.customer);
}

/** A decline just answered, in the page's language: the reason and what to do next. */
function declined(t: Strings, code: string | null): string {
  return `${declineMessage(t, code)} ${declineAdvice(t, code)}`;
}

function checkoutForm(
  p: PaymentWithCustomer,
  merchantName: string,
  csrf: string,
  testMode: boolean,
  t: Strings,
  locale: string,
  state: MethodFormState & { declineCode?: string | null } = {},
): Html {
  const opts = p.checkout as CheckoutOptions;
  const methods = offeredMethods(p);
  const amount = formatMoney(p.amount, p.currency, locale);
  const action = `/hosted/checkout/${p.checkoutToken}`;
  const error = state.error ?? (state.fieldErrors ? t.errSummary : undefined);
  // Opened after an earlier attempt failed (an invoice's automatic charge, a decline before a
  // reload): a neutral notice with the reason, not an error as if the customer had just submitted.
  const notice = !error && p.status === 'failed' ? t.lastAttemptFailed(t.declineReason[p.failureCode ?? ''] ?? t.declineOther) : undefined;
  return html`
<h1>${opts.title ?? merchantName}</h1>
<p class="merchant">${t.payTo(merchantName)}</p>
<p class="amount" aria-label="${t.amountLabel}">${amount}</p>
${opts.description ? html`<p>${opts.description}</p>` : ''}
${testMode ? html`<p class="test" role="note">${t.testMode}</p>` : ''}
${noticeBox(notice)}
${errorBox(error, 'form-error', state.fieldErrors, state.declineCode)}
<form method="post" action="${action}" data-once novalidate ${error ? html`aria-describedby="form-error"` : notice ? html`aria-describedby="form-notice"` : ''}>
  <input type="hidden" name="csrf" value="${csrf}">
  ${methodFields(methods, t, state, p.customer.phone, testMode)}
  <button type="submit" data-pending="${t.submitting}">${t.pay(amount)}</button>
</form>
<form method="post" action="${action}/cancel">
  <input type="hidden" name="csrf" value="${csrf}">
  <button type="submit" class="link">${t.cancel}</button>
</form>`;
}

/** The attempts are spent: no payment form, the way to cancel and go back stays. */
function spent(p: PaymentWithCustomer, merchantName: string, csrf: string, t: Strings, declined?: string): Html {
  return html`
<h1 class="bad">${t.tooManyAttempts}</h1>
<p role="alert">${declined ? `${declined} ` : ''}${t.checkoutAttemptsSpent(merchantName)}</p>
<form method="post" action="/hosted/checkout/${p.checkoutToken}/cancel">
  <input type="hidden" name="csrf" value="${csrf}">
  <button type="submit" class="link">${t.cancel}</button>
</form>`;
}

function outcome(p: PaymentWithCustomer, merchantName: string, t: Strings, locale: string): Html {
  const amount = formatMoney(p.amount, p.currency, locale);
  const back = backUrl(p);
  const messages: Record<string, Html> = {
    succeeded: html`<h1 class="ok">${t.paid}</h1><p>${t.paidText(amount, merchantName)}</p>`,
    processing: html`<h1>${t.processing}</h1><p>${t.processingText}</p>`,
    failed: html`<h1 class="bad">${t.failed}</h1><p>${declineMessage(t, p.failureCode)}</p>`,
    cancelled: html`<h1>${t.cancelled}</h1><p>${t.cancelledText}</p>`,
  };
  return html`${messages[p.status] ?? html`<h1>${p.status}</h1>`}${back ? html`<p><a href="${back}">${t.backTo(merchantName)}</a></p>` : ''}`;
}

export function mountCheckout(app: Hono<AppEnv>, services: Services) {
  const secure = services.config.publicBaseUrl.startsWith('https:');
  const limit = hostedBodyLimit();

  /** The checkout behind the URL's token with its language, or the 404 page to answer (unknown token, expired). */
  async function open(c: Context<AppEnv>) {
    const o = await openByToken(c, services, {
      what: 'checkout',
      find: findCheckout,
      locale: (p) => localeOf(p),
      // A checkout whose time has come is expired now rather than by the next job run.
      refresh: async (ctx, { merchant: _m, ...p }) => {
        const payment = p.status === 'created' || p.status === 'failed' ? await expireIfDue(ctx, p.id) : p;
        return { record: payment, gone: payment.status === 'expired' };
      },
    });
    if (o instanceof Response) return o;
    return { payment: o.record, ctx: o.ctx, merchantName: o.merchantName, t: o.t, locale: o.t.lang };
  }

  app.get('/hosted/checkout/:token', async (c) => {
    const o = await open(c);
    if (o instanceof Response) return o;
    const { payment: p, merchantName, locale, t } = o;
    if (p.status !== 'created' && p.status !== 'failed') return page(c, 200, { title: merchantName, lang: locale, body: outcome(p, merchantName, t, locale) });
    if (attemptsSpent(p)) return page(c, 200, { title: t.tooManyAttempts, lang: locale, formTargets: origins(p), body: spent(p, merchantName, csrfToken(c, secure), t) });
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
    const form = await readForm(c, t);
    if (form instanceof Response) return form;
    const rerender = (error: string | undefined, status: number, state: MethodFormState & { declineCode?: string | null }, payment = p) =>
      page(c, status, {
        title: t.title(merchantName),
        lang: locale,
        formTargets: origins(payment),
        body: checkoutForm(payment, merchantName, csrfToken(c, secure), ctx.merchant.mode === 'test', t, locale, { ...state, error }),
      });
    if (!csrfValid(c, form.fields.csrf)) return rerender(t.errSession, 403, keptFields(form, true));
    const finished = (after: PaymentWithCustomer) => {
      const back = backUrl(after);
      return back ? c.redirect(back, 303) : page(c, 200, { title: merchantName, lang: locale, body: outcome(after, merchantName, t, locale) });
    };
    if (p.status !== 'created' && p.status !== 'failed') return finished(p);

    if (form.invalid !== null) return rerender(t.errText, 422, keptFields(form, true));
    const attempt = parseMethod(form.fields, offeredMethods(p), t);
    if ('errors' in attempt) return rerender(undefined, 422, { ...keptFields(form, true), fieldErrors: attempt.errors });
    const refuseSpent = (status: number, payment: PaymentWithCustomer, declined?: string) =>
      page(c, status, { title: t.tooManyAttempts, lang: locale, formTargets: origins(payment), body: spent(payment, merchantName, csrfToken(c, secure), t, declined) });
    if (attemptsSpent(p)) return refuseSpent(429, p);
    const taken = await takePaymentAttempt(c, services, (message) => rerender(message, 429, keptFields(form, true)), t);
    if (taken instanceof Response) return taken;
    // Read the count again right before the attempt: one that finished meanwhile (another tab,
    // another process) may have spent the last one.
    const now = await paymentAttempts(ctx, p.id);
    if (now && attemptsSpent(now)) {
      taken();
      return refuseSpent(429, p);
    }
    let after: PaymentWithCustomer;
    try {
      after = await payAtCheckout(ctx, p.id, { ...attempt, maxAttempts: CHECKOUT_MAX_ATTEMPTS });
    } catch (err) {
      taken();
      // Another tab or process spent the last attempt between the read above and the payment's lock.
      if (err instanceof StateError && err.code === 'payment_attempts_exceeded') return refuseSpent(429, p);
      throw err;
    }
    // Only a declined attempt counts against the address.
    if (after.status !== 'failed' || after.attempts === p.attempts) taken();
    if (after.status === 'expired') return notFound(c, t, 'expired');
    // The last attempt was declined: no form any more.
    if (after.status === 'failed' && attemptsSpent(after)) return refuseSpent(402, after, declineMessage(t, after.failureCode));
    // Declined: the same page again, with the reason in the page's language, to try another card or method.
    if (after.status === 'failed') return rerender(declined(t, after.failureCode), 402, { ...keptFields(form, false), declineCode: after.failureCode }, after);
    return finished(after);
  });

  app.post('/hosted/checkout/:token/cancel', limit, async (c) => {
    const o = await open(c);
    if (o instanceof Response) return o;
    const { payment: p, ctx, merchantName, locale, t } = o;
    const form = await readForm(c, t);
    if (form instanceof Response) return form;
    if (!csrfValid(c, form.fields.csrf)) {
      return page(c, 403, { title: merchantName, lang: locale, body: html`<h1>${t.errSession}</h1><p><a href="/hosted/checkout/${p.checkoutToken}">${t.reload}</a></p>` });
    }
    const after = await cancelAtCheckout(ctx, p.id);
    if (after.status === 'cancelled' && after.cancelUrl) {
      return c.redirect(withParams(after.cancelUrl, { payment_id: after.id, status: after.status }), 303);
    }
    const back = backUrl(after);
    if (after.status !== 'cancelled' && back) return c.redirect(back, 303);
    return page(c, 200, { title: merchantName, lang: locale, body: outcome(after, merchantName, t, locale) });
  });
}
