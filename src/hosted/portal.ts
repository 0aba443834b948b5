// The hosted customer portal. The session's url, /hosted/portal/<token>, opens once: the first
// open marks the session opened, gives the browser a session cookie (HttpOnly, SameSite=Lax, path
// /hosted/portal, at most until the session ends) and redirects to the token-less /hosted/portal;
// opening the url again gives nothing ("this link was already used"), except in the browser that
// holds its cookie. The bearer token therefore never sits in the address bar, a return_url, a setup
// intent's events or webhooks. For one hour, the session lets one customer
// see and edit their name, email and phone; see, add (through the setup page, which returns here;
// the added method becomes the default, retrying at once what a past_due/unpaid subscription owes),
// remove and choose the default of their payment methods; see their wallets with recent activity;
// see their subscriptions (cancel at period end, or keep one that is cancelling) and their latest
// invoices with a signed PDF link (fresh at every render, valid 5 minutes). Two actions ask first,
// on a page of their own that needs no JavaScript (the same POST again with confirm=1): Cancel
// (saying when it ends) and removing the only method a subscription still needs (saying what
// follows).
//
// Every request builds a context whose actor is the session's customer (src/domain/portal): the
// customer id never comes from the request, so no form can reach another customer's records. Every
// action calls the same domain functions as the API and records the same events; every form
// carries the CSRF token; an expired or unknown session shows a clear page and changes nothing.
import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { PortalSession } from '../generated/prisma/client.ts';
import { clockNow } from '../platform/clock.ts';
import { setPortalDefault } from '../services/customers.ts';
import { detachPortalMethod } from '../services/payment-methods.ts';
import {
  cancelPortalSubscription,
  findPortal,
  findPortalByBrowserKey,
  holdsPortalKey,
  openPortalLink,
  payPortalInvoice,
  PORTAL_TTL_MS,
  portalCustomer,
  portalInvoices,
  portalMethodAdded,
  portalMethods,
  portalSetupIntent,
  portalSubscriptions,
  portalWalletActivity,
  portalWallets,
  reactivatePortalSubscription,
  updatePortalProfile,
} from '../domain/portal/index.ts';
import { nextBillingDate } from '../domain/billing/subscriptions.ts';
import { isLiveCustomer } from '../domain/customers/index.ts';
import { creditBalanceOf } from '../domain/customers/balance.ts';
import { setupUrl } from '../domain/payment-methods/index.ts';
import type { SavedDetails } from '../platform/processor.ts';
import type { Subscription } from '../generated/prisma/client.ts';
import type { Ctx } from '../platform/context.ts';
import { AppError, NotFoundError, PaymentFailedError, StateError, ValidationError } from '../platform/errors.ts';
import { formatMoney } from '../platform/money.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import { csrfToken, csrfValid, errorBox, hostedBodyLimit, localeOf, notFound, openByToken, readForm, storableFields, type HostedForm } from './kit.ts';
import { html, page, type Html } from './layout.ts';
import { strings, type Strings } from './strings.ts';

/** Invoices the customer can pay from the portal ("Pay now"): those that still wait for money. */
const PAYABLE = new Set(['open', 'uncollectible']);

/** The portal's token-less home; its forms post under it. */
const HOME = '/hosted/portal';
/** The browser's portal session: the key its url was exchanged for (only its hash is stored). */
const PORTAL_COOKIE = 'billing_portal';

type Session = { session: PortalSession; ctx: Ctx; merchantName: string; t: Strings; base: string };
/** Notices after an action's redirect (?done=…); "added" is shown only for a setup intent that really succeeded. */
const NOTICES = ['profile', 'removed', 'default', 'cancelling', 'kept', 'paid'] as const;
type Notice = (typeof NOTICES)[number] | 'added';
/** The portal's forms: an error shows in the section of the form that was sent. */
type Section = 'profile' | 'methods' | 'subscriptions' | 'invoices';

/** What the profile form shows again after an error. */
interface ProfileState {
  name?: string;
  email?: string;
  phone?: string;
}

function describeMethod(t: Strings, d: SavedDetails): string {
  if (d.type === 'card') return t.cardEnding(d.card.brand.toUpperCase(), d.card.last4, `${String(d.card.exp_month).padStart(2, '0')}/${String(d.card.exp_year % 100).padStart(2, '0')}`);
  return t.mobileEnding(d.mobile_money.phone_last4);
}

/** A short name of a method for the accessible names of its row's buttons. */
function shortMethod(t: Strings, d: SavedDetails): string {
  return d.type === 'card' ? `${d.card.brand.toUpperCase()} •••• ${d.card.last4}` : `${t.mobileMoney} •••• ${d.mobile_money.phone_last4}`;
}

/** The customer-facing message for a refused profile field (the API's text is for developers). */
function fieldError(t: Strings, param: string | null): string {
  return param === 'name' ? t.errName : param === 'email' ? t.errEmail : param === 'phone' ? t.errPhone : t.errText;
}

/**
 * A subscription that will still charge the customer's method: active or trialing and not set to
 * end at its period's end, or past_due (its invoice is retried). Removing the customer's only
 * method asks to confirm while one of these remains.
 */
function needsMethod(sub: Subscription): boolean {
  if (sub.status === 'past_due') return true;
  return (sub.status === 'active' || sub.status === 'trialing') && !sub.cancelAtPeriodEnd;
}

/** The dates that matter for a subscription in its state. */
function subscriptionDates(t: Strings, sub: Subscription, day: (d: Date) => string): string {
  if (sub.status === 'cancelled') return t.endedOn(day(sub.cancelledAt ?? sub.cancelAt ?? sub.currentPeriodEnd));
  if (sub.cancelAtPeriodEnd) return t.cancelsOn(day(sub.cancelAt ?? sub.currentPeriodEnd));
  if (sub.status === 'trialing') return t.trialEnds(day(sub.trialEnd ?? sub.currentPeriodEnd));
  if (sub.status === 'paused') return sub.resumesAt ? t.resumesOn(day(sub.resumesAt)) : '';
  const next = sub.status === 'active' ? nextBillingDate(sub) : null;
  return next ? t.nextBilling(day(next)) : '';
}

async function portalPage(
  c: Context<AppEnv>,
  s: Session,
  csrf: string,
  opts: {
    notice?: Notice;
    /** back from the setup page with a method really saved: which, and when */
    added?: { paymentMethodId: string; savedAt: Date };
    errors?: Partial<Record<Section, string>>;
    profile?: ProfileState;
    status?: number;
  },
) {
  const { ctx, t, merchantName, session } = s;
  const customer = await portalCustomer(ctx);
  const methods = await portalMethods(ctx);
  const wallets = await portalWallets(ctx);
  const activity = await portalWalletActivity(ctx, wallets.map((w) => w.id));
  const subscriptions = await portalSubscriptions(ctx);
  const invoices = await portalInvoices(ctx);
  const credit = Object.entries(await creditBalanceOf(ctx, customer.id)).filter(([, amount]) => amount > 0);
  const currencyOf = new Map(wallets.map((w) => [w.id, w.currency]));
  const dates = new Intl.DateTimeFormat(t.lang, { dateStyle: 'medium', timeZone: 'UTC' });
  const day = (d: Date) => dates.format(d);
  const action = (path: string) => `${s.base}${path}`;
  const notices: Record<Notice, string> = {
    profile: t.profileSaved,
    removed: t.removed,
    default: t.defaultSet,
    added: t.methodAdded,
    cancelling: t.subscriptionCancelling,
    kept: t.subscriptionKept,
    paid: t.invoicePaid,
  };
  if (opts.notice === 'added' && opts.added && customer.defaultPaymentMethodId === opts.added.paymentMethodId) {
    // The portal made it the default, which retried at once what past_due/unpaid subscriptions owed
    // (services/customers.ts): say so, and what became of it, from the records (not the query string).
    const since = opts.added.savedAt.getTime();
    const paid = invoices.some(({ invoice: i }) => i.status === 'paid' && i.paidAt !== null && i.paidAt.getTime() >= since);
    const owed = invoices.some(({ invoice: i }) => PAYABLE.has(i.status) && i.lastPaymentErrorCode !== null);
    notices.added = [t.methodAddedDefault, paid ? t.addedPaidOwed : '', owed ? t.addedStillOwed : ''].filter(Boolean).join(' ');
  }
  const p = opts.profile ?? {};
  const errors = opts.errors ?? {};
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}">`;
  /** A row's button: a one-button POST form whose accessible name says what it acts on. */
  const rowButton = (path: string, label: string, what: string) =>
    html`<form method="post" action="${action(path)}" data-once>${hidden}<button type="submit" class="small secondary" aria-label="${label} – ${what}">${label}</button></form>`;
  const body: Html = html`
<h1>${t.portalTitle(merchantName)}</h1>
<p class="merchant">${t.portalIntro(merchantName)}</p>
${opts.notice ? html`<p class="notice" role="status">${notices[opts.notice]}</p>` : ''}

<section aria-labelledby="profile-h">
  <h2 id="profile-h">${t.profile}</h2>
  ${errorBox(errors.profile, 'profile-error')}
  <form method="post" action="${action('/profile')}" data-once novalidate ${errors.profile ? html`aria-describedby="profile-error"` : ''}>
    ${hidden}
    <label for="name">${t.name}</label>
    <input type="text" id="name" name="name" autocomplete="name" maxlength="256" value="${p.name ?? customer.name ?? ''}">
    <label for="email">${t.email}</label>
    <input type="email" id="email" name="email" autocomplete="email" required maxlength="254" value="${p.email ?? customer.email}">
    <label for="phone">${t.profilePhone}</label>
    <input type="tel" id="phone" name="phone" autocomplete="tel" maxlength="32" value="${p.phone ?? customer.phone ?? ''}" aria-describedby="phone-hint">
    <p class="hint" id="phone-hint">${t.phoneHint}</p>
    <button type="submit" class="secondary" data-pending="${t.submitting}">${t.saveProfile}</button>
  </form>
</section>

<section aria-labelledby="methods-h">
  <h2 id="methods-h">${t.methods}</h2>
  ${errorBox(errors.methods, 'methods-error')}
  ${methods.length === 0
    ? html`<p class="hint">${t.noMethods}</p>`
    : html`<ul class="items">${methods.map((m) => {
        const isDefault = customer.defaultPaymentMethodId === m.id;
        const d = m.details as SavedDetails;
        return html`<li data-payment-method="${m.id}"><span>${describeMethod(t, d)}${isDefault ? html`<span class="badge">${t.defaultBadge}</span>` : ''}</span>
          <span class="actions">
            ${isDefault ? '' : rowButton(`/methods/${m.id}/default`, t.makeDefault, shortMethod(t, d))}
            ${rowButton(`/methods/${m.id}/remove`, t.remove, shortMethod(t, d))}
          </span></li>`;
      })}</ul>`}
  <form method="post" action="${action('/methods/add')}" data-once>${hidden}<button type="submit" data-pending="${t.submitting}">${t.addMethod}</button></form>
</section>

<section aria-labelledby="wallets-h">
  <h2 id="wallets-h">${t.wallets}</h2>
  ${wallets.length === 0
    ? html`<p class="hint">${t.noWallets}</p>`
    : html`<ul class="items">${wallets.map((w) => html`<li data-wallet="${w.id}"><span>${w.currency}</span><strong>${t.balance}: ${formatMoney(w.balance, w.currency, t.lang)}</strong></li>`)}</ul>
      <h3 class="hint">${t.recentActivity}</h3>
      ${activity.length === 0
        ? html`<p class="hint">${t.noActivity}</p>`
        : html`<table><tbody>${activity.map((a) => {
            const cur = currencyOf.get(a.walletId) ?? '';
            const sign = ['debit', 'expiry', 'refund'].includes(a.type) ? '−' : '+';
            return html`<tr><td>${a.createdAt.toISOString().slice(0, 10)}</td><td>${t.txType[a.type] ?? a.type}${a.description ? html` · ${a.description}` : ''}</td><td class="num">${sign}${formatMoney(a.amount, cur, t.lang)}</td></tr>`;
          })}</tbody></table>`}`}
</section>

<section aria-labelledby="subs-h">
  <h2 id="subs-h">${t.subscriptions}</h2>
  ${errorBox(errors.subscriptions, 'subscriptions-error')}
  ${subscriptions.length === 0
    ? html`<p class="hint">${t.noSubscriptions}</p>`
    : html`<ul class="items">${subscriptions.map(({ sub, plan }) => {
        const live = sub.status !== 'cancelled';
        const when = subscriptionDates(t, sub, day);
        return html`<li data-subscription="${sub.id}"><span><strong>${plan.name}</strong><span class="badge">${t.subStatus[sub.status] ?? sub.status}</span><br>
          ${t.planPrice(formatMoney(plan.amount, plan.currency, t.lang), plan.interval, plan.intervalCount)}${when ? html`<br><span class="hint">${when}</span>` : ''}</span>
          <span class="actions">
            ${live && !sub.cancelAtPeriodEnd ? rowButton(`/subscriptions/${sub.id}/cancel`, t.cancelAtPeriodEnd, plan.name) : ''}
            ${live && sub.cancelAtPeriodEnd ? rowButton(`/subscriptions/${sub.id}/reactivate`, t.keepSubscription, plan.name) : ''}
          </span></li>`;
      })}</ul>`}
</section>

<section aria-labelledby="invoices-h">
  <h2 id="invoices-h">${t.invoices}</h2>
  ${errorBox(errors.invoices, 'invoices-error')}
  ${credit.length > 0 ? html`<p class="credit" data-credit-balance>${t.creditBalance(credit.map(([currency, amount]) => formatMoney(amount, currency, t.lang)).join(', '))}</p>` : ''}
  ${invoices.length === 0
    ? html`<p class="hint">${t.noInvoices}</p>`
    : html`<table><thead><tr><th scope="col">${t.invoiceNumber}</th><th scope="col">${t.invoiceDate}</th><th scope="col" class="num">${t.invoiceTotal}</th><th scope="col">${t.invoiceStatusLabel}</th><th scope="col">${t.pdf}</th></tr></thead>
        <tbody>${invoices.map(({ invoice: inv, pdfUrl }) => html`<tr data-invoice="${inv.id}"><td>${inv.number ?? '—'}</td><td>${day(inv.finalizedAt ?? inv.createdAt)}</td><td class="num">${formatMoney(inv.total, inv.currency, t.lang)}</td><td>${t.invoiceStatus[inv.status] ?? inv.status}${PAYABLE.has(inv.status) ? html` ${rowButton(`/invoices/${inv.id}/pay`, t.payNow, inv.number ?? inv.id)}` : ''}</td><td><a href="${pdfUrl}" aria-label="${t.pdfOf(inv.number ?? inv.id)}">${t.pdf}</a></td></tr>`)}</tbody></table>
      <p class="hint">${t.pdfHint}</p>`}
</section>

<p><a class="back" href="${session.returnUrl}">${t.backTo(merchantName)}</a></p>
<p class="hint">${t.sessionEnds(session.expiresAt.toISOString().slice(0, 16).replace('T', ' '))}</p>`;
  // "Add a payment method" ends at the setup page, on the public address.
  return page(c, opts.status ?? 200, { title: t.portalTitle(merchantName), lang: t.lang, formTargets: [new URL(ctx.runtime.config.publicBaseUrl).origin], body });
}

export function mountPortal(app: Hono<AppEnv>, services: Services) {
  const secure = services.config.publicBaseUrl.startsWith('https:');
  const limit = hostedBodyLimit();

  /** How a session (found by its url's token or by the browser's cookie) is opened: a portal actor, the merchant's clock, a live customer. */
  const sessionSpec = {
    what: 'portal' as const,
    locale: (s: PortalSession) => localeOf(s.locale),
    actor: (s: PortalSession) => ({ kind: 'portal' as const, sessionId: s.id, customerId: s.customerId }),
    refresh: async (ctx: Ctx, { merchant: _m, ...session }: PortalSession & { merchant: unknown }) => {
      const expired = (await clockNow(ctx)).getTime() >= session.expiresAt.getTime();
      const live = await isLiveCustomer(ctx, session.customerId);
      return { record: session, gone: expired, missing: !live };
    },
  };

  /**
   * The session of the browser's cookie, as a portal actor; or the page to answer (no cookie or an
   * unknown one: the session has ended; expired; deleted customer).
   */
  async function open(c: Context<AppEnv>): Promise<Session | Response> {
    const o = await openByToken(c, services, {
      ...sessionSpec,
      key: getCookie(c, PORTAL_COOKIE) ?? '',
      unknown: () => notFound(c, strings.en, 'expired', 'portal'),
      find: findPortalByBrowserKey,
    });
    if (o instanceof Response) return o;
    return { session: o.record, ctx: o.ctx, merchantName: o.merchantName, t: o.t, base: HOME };
  }

  const after = (c: Context<AppEnv>, s: Session, notice: Notice) => c.redirect(`${s.base}?done=${notice}`, 303);

  /** The url was opened before, elsewhere: nothing is granted. */
  const linkUsed = (c: Context<AppEnv>, t: Strings, merchantName: string, session: PortalSession) =>
    page(c, 410, {
      title: t.portalLinkUsed,
      lang: t.lang,
      body: html`<h1>${t.portalLinkUsed}</h1><p>${t.portalLinkUsedText(merchantName)}</p><p><a class="back" href="${session.returnUrl}">${t.backTo(merchantName)}</a></p>`,
    });

  /** What the profile form keeps after an error (not a value that broke the input rule). */
  const keptProfile = (form: HostedForm): ProfileState => {
    const kept = storableFields(form);
    return { name: (kept.name ?? '').trim().slice(0, 256), email: (kept.email ?? '').trim().slice(0, 254), phone: (kept.phone ?? '').trim().slice(0, 32) };
  };

  /**
   * A POST: the session, the form (the kit's input rule), the CSRF check, then the action. A refused
   * action shows the portal with a customer-facing message in the section of its form; an id that is
   * not this customer's is the not-found page.
   */
  function action(section: Section, run: (c: Context<AppEnv>, s: Session, form: Record<string, string>) => Promise<Response>) {
    return async (c: Context<AppEnv>) => {
      const s = await open(c);
      if (s instanceof Response) return s;
      const form = await readForm(c, s.t);
      if (form instanceof Response) return form;
      const refuse = (status: number, error: string, profile?: ProfileState) =>
        portalPage(c, s, csrfToken(c, secure), { errors: { [section]: error }, profile, status });
      if (!csrfValid(c, form.fields.csrf)) return refuse(403, s.t.errSession);
      if (form.invalid !== null) return refuse(422, fieldError(s.t, form.invalid), section === 'profile' ? keptProfile(form) : undefined);
      try {
        return await run(c, s, form.fields);
      } catch (err) {
        if (err instanceof NotFoundError) return notFound(c, s.t, 'missing', 'portal');
        if (err instanceof ValidationError && section === 'profile') return refuse(422, fieldError(s.t, err.param), keptProfile(form));
        if (err instanceof StateError && err.code === 'portal_setup_links_exceeded') return refuse(429, s.t.errSetupLinksSpent(s.merchantName));
        // "Pay now" declined: the reason, in the page's language.
        if (err instanceof PaymentFailedError) return refuse(402, s.t.payFailed(s.t.declineReason[err.code] ?? s.t.declineOther));
        // A state the action no longer applies to (409: cancelled meanwhile, clicked twice in two tabs…).
        if (err instanceof AppError && err.status < 500) return refuse(err.status, s.t.errConflict);
        throw err;
      }
    };
  }

  // The session's url: opens once, exchanged for the session cookie, then the token-less home.
  app.get('/hosted/portal/:token', async (c) => {
    const o = await openByToken(c, services, { ...sessionSpec, find: findPortal });
    if (o instanceof Response) return o;
    const session = o.record;
    c.header('Cache-Control', 'no-store');
    c.header('Referrer-Policy', 'no-referrer');
    // Opened before: only the browser holding its cookie goes on (a second click on the same link).
    if (session.openedAt !== null) {
      return holdsPortalKey(session, getCookie(c, PORTAL_COOKIE)) ? c.redirect(HOME, 303) : linkUsed(c, o.t, o.merchantName, session);
    }
    const key = await openPortalLink(o.ctx, session.id);
    if (key === null) return linkUsed(c, o.t, o.merchantName, session); // opened meanwhile, elsewhere
    // The cookie lives at most as long as the session (the merchant's clock decides; at most an hour).
    const left = Math.ceil((session.expiresAt.getTime() - (await clockNow(o.ctx)).getTime()) / 1000);
    setCookie(c, PORTAL_COOKIE, key, { httpOnly: true, secure, sameSite: 'Lax', path: HOME, maxAge: Math.max(1, Math.min(left, PORTAL_TTL_MS / 1000)) });
    return c.redirect(HOME, 303);
  });

  app.get(HOME, async (c) => {
    const s = await open(c);
    if (s instanceof Response) return s;
    const done = c.req.query('done');
    // Back from the setup page: "saved" only when that intent really saved a method for this customer.
    const setupIntentId = c.req.query('setup_intent_id');
    const added = c.req.query('status') === 'succeeded' && setupIntentId !== undefined ? await portalMethodAdded(s.ctx, setupIntentId) : null;
    const notice = added ? 'added' : NOTICES.includes(done as (typeof NOTICES)[number]) ? (done as Notice) : undefined;
    return portalPage(c, s, csrfToken(c, secure), { notice, added: added ?? undefined });
  });

  app.post(
    '/hosted/portal/profile',
    limit,
    action('profile', async (c, s, form) => {
      const text = (k: string) => (form[k] ?? '').trim();
      await updatePortalProfile(s.ctx, { name: text('name') || null, email: text('email'), phone: text('phone').replace(/[\s().-]/g, '') || null });
      return after(c, s, 'profile');
    }),
  );

  app.post(
    '/hosted/portal/methods/add',
    limit,
    action('methods', async (c, s) => {
      // The setup page returns here with setup_intent_id and status; its "back" link claims nothing.
      const si = await portalSetupIntent(s.ctx);
      return c.redirect(setupUrl(services.config.publicBaseUrl, si.token), 303);
    }),
  );

  app.post(
    '/hosted/portal/methods/:pm/default',
    limit,
    action('methods', async (c, s) => {
      await setPortalDefault(s.ctx, c.req.param('pm') ?? '');
      return after(c, s, 'default');
    }),
  );

  /**
   * A confirmation step (no JavaScript needed): the consequence, a button that sends the same
   * action again with confirm=1, and the way back that changes nothing.
   */
  const confirmStep = (c: Context<AppEnv>, s: Session, o: { title: string; text: string; path: string; confirm: string; back: string }) =>
    page(c, 200, {
      title: o.title,
      lang: s.t.lang,
      body: html`<h1>${o.title}</h1>
<p id="consequence">${o.text}</p>
<form method="post" action="${s.base}${o.path}" data-once aria-describedby="consequence">
  <input type="hidden" name="csrf" value="${csrfToken(c, secure)}">
  <input type="hidden" name="confirm" value="1">
  <button type="submit" data-pending="${s.t.submitting}">${o.confirm}</button>
</form>
<p><a class="back" href="${s.base}">${o.back}</a></p>`,
    });

  app.post(
    '/hosted/portal/methods/:pm/remove',
    limit,
    action('methods', async (c, s, form) => {
      const id = c.req.param('pm') ?? '';
      if (form.confirm !== '1') {
        // The only method while a subscription still needs one: say what removing it means first.
        const methods = await portalMethods(s.ctx);
        const method = methods.find((m) => m.id === id);
        const needing = method && methods.length === 1 ? (await portalSubscriptions(s.ctx)).filter(({ sub }) => needsMethod(sub)) : [];
        if (method && needing.length > 0) {
          const names = needing.map(({ plan }) => plan.name).join(', ');
          return confirmStep(c, s, {
            title: s.t.removeConfirmTitle,
            text: s.t.removeConfirmText(describeMethod(s.t, method.details as SavedDetails), names),
            path: `/methods/${id}/remove`,
            confirm: s.t.removeAnyway,
            back: s.t.keepMethod,
          });
        }
      }
      await detachPortalMethod(s.ctx, id);
      return after(c, s, 'removed');
    }),
  );

  app.post(
    '/hosted/portal/subscriptions/:sub/cancel',
    limit,
    action('subscriptions', async (c, s, form) => {
      const id = c.req.param('sub') ?? '';
      if (form.confirm !== '1') {
        // Say when it ends (the portal cancels at the period's end, as cancelPortalSubscription does).
        const found = (await portalSubscriptions(s.ctx)).find(({ sub }) => sub.id === id);
        if (found && found.sub.status !== 'cancelled' && !found.sub.cancelAtPeriodEnd) {
          const { sub, plan } = found;
          const day = new Intl.DateTimeFormat(s.t.lang, { dateStyle: 'medium', timeZone: 'UTC' }).format(sub.currentPeriodEnd);
          return confirmStep(c, s, {
            title: s.t.cancelConfirmTitle,
            text: sub.status === 'trialing' ? s.t.cancelTrialConfirmText(plan.name, day) : s.t.cancelConfirmText(plan.name, day),
            path: `/subscriptions/${id}/cancel`,
            confirm: s.t.confirmCancel,
            back: s.t.goBack,
          });
        }
      }
      await cancelPortalSubscription(s.ctx, id);
      return after(c, s, 'cancelling');
    }),
  );

  app.post(
    '/hosted/portal/invoices/:invoice/pay',
    limit,
    action('invoices', async (c, s) => {
      const inv = await payPortalInvoice(s.ctx, c.req.param('invoice') ?? '');
      // Paid, or still at the processor (its outcome shows at the next visit).
      return inv.status === 'paid' ? after(c, s, 'paid') : c.redirect(s.base, 303);
    }),
  );

  app.post(
    '/hosted/portal/subscriptions/:sub/reactivate',
    limit,
    action('subscriptions', async (c, s) => {
      await reactivatePortalSubscription(s.ctx, c.req.param('sub') ?? '');
      return after(c, s, 'kept');
    }),
  );
}
