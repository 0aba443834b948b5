// The hosted setup page: /hosted/setup/<token>. The customer saves a card or mobile-money number
// for later charges; nothing is charged. A refused card saves nothing and the page asks for
// another; an expired intent shows a clear page and saves nothing. After saving, the customer goes
// to the intent's return_url (with setup_intent_id and status), e.g. back to the portal.
//
// Card testing: an intent takes SETUP_MAX_ATTEMPTS attempts (counted in the database); once they
// are spent the page says so and takes no more (a new link is needed). Failed attempts from one
// source address are limited across every hosted page (kit: takePaymentAttempt, 429 + Retry-After).
import type { Context, Hono } from 'hono';
import type { SetupIntent } from '../generated/prisma/client.ts';
import { expireSetupIntentIfDue, findSetup, offeredSetupMethods, savedMethodOf, setupAttemptsSpent } from '../domain/payment-methods/index.ts';
import { portalSessionLocale } from '../domain/portal/index.ts';
import { customerLocale } from '../domain/customers/index.ts';
import { completeHostedSetup } from '../services/customers.ts';
import type { Ctx } from '../platform/context.ts';
import { StateError } from '../platform/errors.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import {
  csrfToken,
  csrfValid,
  declineAdvice,
  declineMessage,
  errorBox,
  hostedBodyLimit,
  keptFields,
  localeOf,
  methodFields,
  notFound,
  openByToken,
  originOf,
  parseMethod,
  readForm,
  takePaymentAttempt,
  withParams,
  type MethodFormState,
} from './kit.ts';
import { html, page, type Html } from './layout.ts';
import type { Strings } from './strings.ts';

type Loaded = { intent: SetupIntent; ctx: Ctx; merchantName: string; customerPhone: string | null; t: Strings };

function backUrl(si: SetupIntent): string | null {
  return si.returnUrl ? withParams(si.returnUrl, { setup_intent_id: si.id, status: si.status }) : null;
}

function setupForm(l: Loaded, csrf: string, state: MethodFormState & { declineCode?: string | null }): Html {
  const { intent: si, merchantName, t } = l;
  const error = state.error ?? (state.fieldErrors ? t.errSummary : undefined);
  return html`
<h1>${t.setupTitle(merchantName)}</h1>
<p class="merchant">${t.setupIntro(merchantName)}</p>
${l.ctx.merchant.mode === 'test' ? html`<p class="test" role="note">${t.setupTestMode}</p>` : ''}
${errorBox(error, 'form-error', state.fieldErrors, state.declineCode)}
<form method="post" action="/hosted/setup/${si.token}" data-once novalidate ${error ? html`aria-describedby="form-error"` : ''}>
  <input type="hidden" name="csrf" value="${csrf}">
  ${methodFields(offeredSetupMethods(si), t, state, l.customerPhone, l.ctx.merchant.mode === 'test')}
  <button type="submit" data-pending="${l.t.submitting}">${t.saveMethod}</button>
</form>
${si.returnUrl ? html`<p><a class="back" href="${si.returnUrl}">${t.backTo(merchantName)}</a></p>` : ''}`;
}

function savedPage(c: Context<AppEnv>, l: Loaded, what: string) {
  const back = backUrl(l.intent);
  return page(c, 200, {
    title: l.t.saved,
    lang: l.t.lang,
    body: html`<h1 class="ok">${l.t.saved}</h1><p>${l.t.savedText(what)}</p>${back ? html`<p><a href="${back}">${l.t.continue}</a></p>` : ''}`,
  });
}

/** The intent's attempts are spent: no form, a new link is needed (the way back claims nothing). */
function spentPage(c: Context<AppEnv>, l: Loaded, status: number, declined?: string) {
  const { t, merchantName, intent: si } = l;
  return page(c, status, {
    title: t.tooManyAttempts,
    lang: t.lang,
    body: html`<h1 class="bad">${t.tooManyAttempts}</h1><p role="alert">${declined ? `${declined} ` : ''}${t.setupAttemptsSpent(merchantName)}</p>${si.returnUrl ? html`<p><a class="back" href="${si.returnUrl}">${t.backTo(merchantName)}</a></p>` : ''}`,
  });
}

export function mountSetup(app: Hono<AppEnv>, services: Services) {
  const secure = services.config.publicBaseUrl.startsWith('https:');

  /** The intent behind the URL's token, or the page to answer (unknown, expired, customer deleted). */
  async function open(c: Context<AppEnv>): Promise<Loaded | Response> {
    const o = await openByToken(c, services, {
      what: 'setup',
      find: findSetup,
      // Started from the portal: the portal's language; otherwise the customer's (else en).
      locale: async (si, ctx) => (si.portalSessionId ? localeOf(await portalSessionLocale(ctx, si.portalSessionId)) : customerLocale(si.customer)),
      refresh: async (ctx, { merchant: _m, customer, ...si }) => {
        const intent = si.status === 'requires_payment_method' ? await expireSetupIntentIfDue(ctx, si.id) : si;
        return { record: { intent, customerPhone: customer.phone }, gone: intent.status === 'expired', missing: customer.deletedAt !== null };
      },
    });
    if (o instanceof Response) return o;
    return { intent: o.record.intent, customerPhone: o.record.customerPhone, ctx: o.ctx, merchantName: o.merchantName, t: o.t };
  }

  const describe = async (l: Loaded) => {
    const pm = await savedMethodOf(l.ctx, l.intent);
    const d = pm?.details as { card?: { brand: string; last4: string; exp_month: number; exp_year: number }; mobile_money?: { phone_last4: string } } | undefined;
    if (d?.card) return l.t.cardEnding(d.card.brand.toUpperCase(), d.card.last4, `${String(d.card.exp_month).padStart(2, '0')}/${d.card.exp_year % 100}`);
    if (d?.mobile_money) return l.t.mobileEnding(d.mobile_money.phone_last4);
    return l.t.methods;
  };

  app.get('/hosted/setup/:token', async (c) => {
    const l = await open(c);
    if (l instanceof Response) return l;
    if (l.intent.status === 'succeeded') return savedPage(c, l, await describe(l));
    if (setupAttemptsSpent(l.intent)) return spentPage(c, l, 200);
    return page(c, 200, { title: l.t.setupTitle(l.merchantName), lang: l.t.lang, formTargets: originOf(l.intent.returnUrl), body: setupForm(l, csrfToken(c, secure), {}) });
  });

  app.post('/hosted/setup/:token', hostedBodyLimit(), async (c) => {
    const l = await open(c);
    if (l instanceof Response) return l;
    const form = await readForm(c, l.t);
    if (form instanceof Response) return form;
    const rerender = (error: string | undefined, status: number, state: MethodFormState & { declineCode?: string | null }) =>
      page(c, status, { title: l.t.setupTitle(l.merchantName), lang: l.t.lang, formTargets: originOf(l.intent.returnUrl), body: setupForm(l, csrfToken(c, secure), { ...state, error }) });
    if (!csrfValid(c, form.fields.csrf)) return rerender(l.t.errSession, 403, keptFields(form, true));
    if (l.intent.status === 'succeeded') return savedPage(c, l, await describe(l));
    if (form.invalid !== null) return rerender(l.t.errText, 422, keptFields(form, true));

    const attempt = parseMethod(form.fields, offeredSetupMethods(l.intent), l.t);
    if ('errors' in attempt) return rerender(undefined, 422, { ...keptFields(form, true), fieldErrors: attempt.errors });
    if (setupAttemptsSpent(l.intent)) return spentPage(c, l, 429);
    const taken = await takePaymentAttempt(c, services, (message) => rerender(message, 429, keptFields(form, true)), l.t);
    if (taken instanceof Response) return taken;
    let out;
    try {
      // Started from the portal: the method becomes the default, retrying what is owed (services/customers.ts).
      out = await completeHostedSetup(l.ctx, l.intent.id, attempt);
    } catch (err) {
      taken();
      if (err instanceof StateError && err.code === 'customer_deleted') return notFound(c, l.t, 'missing', 'setup');
      // Spent by concurrent submissions since the page was opened.
      if (err instanceof StateError && err.code === 'setup_intent_attempts_exceeded') return spentPage(c, l, 429);
      throw err;
    }
    // Only a refused method counts against the address.
    if (!out.declined) taken();
    // The last attempt was refused: no form any more.
    if (out.declined && setupAttemptsSpent(out.intent)) return spentPage(c, { ...l, intent: out.intent }, 402, declineMessage(l.t, out.declined.code));
    // Refused: the reason in the page's language (the code stays in the page), to try another.
    if (out.declined) {
      const code = out.declined.code;
      return rerender(`${declineMessage(l.t, code)} ${declineAdvice(l.t, code)}`, 402, { ...keptFields(form, false), declineCode: code });
    }
    if (out.intent.status === 'expired') return notFound(c, l.t, 'expired', 'setup');
    const done = { ...l, intent: out.intent };
    const back = backUrl(done.intent);
    return back ? c.redirect(back, 303) : savedPage(c, done, await describe(done));
  });
}
