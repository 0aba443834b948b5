// The hosted customer portal: /hosted/portal/<token>. For one hour, the token lets one customer
// see and edit their name, email and phone; see, add (through the setup page, which returns here),
// remove and choose the default of their payment methods; and see their wallets with recent
// activity. Subscriptions and invoices have their place, filled in when billing ships.
//
// Every request builds a context whose actor is the session's customer (src/domain/portal): the
// customer id never comes from the request, so no form can reach another customer's records. Every
// action calls the same domain functions as the API and records the same events; every form
// carries the CSRF token; an expired or unknown session shows a clear page and changes nothing.
import type { Context, Hono } from 'hono';
import type { PortalSession } from '../generated/prisma/client.ts';
import { clockNow } from '../domain/clock/index.ts';
import {
  detachPortalMethod,
  findPortal,
  portalCustomer,
  portalMethods,
  portalSetupIntent,
  portalUrl,
  portalWalletActivity,
  portalWallets,
  setPortalDefault,
  updatePortalProfile,
} from '../domain/portal/index.ts';
import { setupUrl } from '../domain/payment-methods/index.ts';
import type { SavedDetails } from '../domain/payments/processor.ts';
import type { Ctx } from '../platform/context.ts';
import { AppError, NotFoundError } from '../platform/errors.ts';
import { formatMoney } from '../platform/money.ts';
import type { AppEnv, Services } from '../server/env.ts';
import { csrfToken, csrfValid, errorBox, hostedBodyLimit, localeOf, notFound, openByToken } from './kit.ts';
import { html, page, type Html } from './layout.ts';
import type { Strings } from './strings.ts';

type Session = { session: PortalSession; ctx: Ctx; merchantName: string; t: Strings; base: string };
const NOTICES = ['profile', 'removed', 'default', 'added'] as const;
type Notice = (typeof NOTICES)[number];

interface ProfileState {
  error?: string;
  name?: string;
  email?: string;
  phone?: string;
}

function describeMethod(t: Strings, d: SavedDetails): string {
  if (d.type === 'card') return t.cardEnding(d.card.brand.toUpperCase(), d.card.last4, `${String(d.card.exp_month).padStart(2, '0')}/${String(d.card.exp_year % 100).padStart(2, '0')}`);
  return t.mobileEnding(d.mobile_money.phone_last4);
}

async function portalPage(c: Context<AppEnv>, s: Session, csrf: string, opts: { notice?: Notice; profile?: ProfileState; status?: number }) {
  const { ctx, t, merchantName, session } = s;
  const customer = await portalCustomer(ctx);
  const methods = await portalMethods(ctx);
  const wallets = await portalWallets(ctx);
  const activity = await portalWalletActivity(ctx, wallets.map((w) => w.id));
  const currencyOf = new Map(wallets.map((w) => [w.id, w.currency]));
  const action = (path: string) => `${s.base}${path}`;
  const notices: Record<Notice, string> = { profile: t.profileSaved, removed: t.removed, default: t.defaultSet, added: t.methodAdded };
  const p = opts.profile ?? {};
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}">`;
  const body: Html = html`
<h1>${t.portalTitle(merchantName)}</h1>
<p class="merchant">${t.portalIntro(merchantName)}</p>
${opts.notice ? html`<p class="notice" role="status">${notices[opts.notice]}</p>` : ''}

<section aria-labelledby="profile-h">
  <h2 id="profile-h">${t.profile}</h2>
  ${errorBox(p.error)}
  <form method="post" action="${action('/profile')}" data-once novalidate>
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
  ${methods.length === 0
    ? html`<p class="hint">${t.noMethods}</p>`
    : html`<ul class="items">${methods.map((m) => {
        const isDefault = customer.defaultPaymentMethodId === m.id;
        return html`<li data-payment-method="${m.id}"><span>${describeMethod(t, m.details as SavedDetails)}${isDefault ? html`<span class="badge">${t.defaultBadge}</span>` : ''}</span>
          <span class="actions">
            ${isDefault ? '' : html`<form method="post" action="${action(`/methods/${m.id}/default`)}" data-once>${hidden}<button type="submit" class="small secondary">${t.makeDefault}</button></form>`}
            <form method="post" action="${action(`/methods/${m.id}/remove`)}" data-once>${hidden}<button type="submit" class="small secondary">${t.remove}</button></form>
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
  <p class="hint">${t.noSubscriptions}</p>
</section>

<section aria-labelledby="invoices-h">
  <h2 id="invoices-h">${t.invoices}</h2>
  <p class="hint">${t.noInvoices}</p>
</section>

<p><a class="back" href="${session.returnUrl}">${t.backTo(merchantName)}</a></p>
<p class="hint">${t.sessionEnds(session.expiresAt.toISOString().slice(0, 16).replace('T', ' '))}</p>`;
  return page(c, opts.status ?? 200, { title: t.portalTitle(merchantName), lang: t.lang, formTargets: [new URL(setupUrl(s.base, '')).origin], body });
}

export function mountPortal(app: Hono<AppEnv>, services: Services) {
  const secure = services.config.publicBaseUrl.startsWith('https:');
  const limit = hostedBodyLimit();

  /** The session behind the URL's token, as a portal actor; or the page to answer (unknown, expired, deleted customer). */
  async function open(c: Context<AppEnv>): Promise<Session | Response> {
    const o = await openByToken(c, services, {
      what: 'portal',
      find: findPortal,
      locale: (s) => localeOf(s.locale),
      actor: (s) => ({ kind: 'portal', sessionId: s.id, customerId: s.customerId }),
      refresh: async (ctx, { merchant: _m, ...session }) => {
        const expired = (await clockNow(ctx)).getTime() >= session.expiresAt.getTime();
        const customer = await ctx.db.customer.findFirst({ where: { id: session.customerId, deletedAt: null }, select: { id: true } });
        return { record: session, gone: expired, missing: !customer };
      },
    });
    if (o instanceof Response) return o;
    return { session: o.record, ctx: o.ctx, merchantName: o.merchantName, t: o.t, base: portalUrl(services.config.publicBaseUrl, o.record.token) };
  }

  const after = (c: Context<AppEnv>, s: Session, notice: Notice) => c.redirect(`${s.base}?done=${notice}`, 303);

  /** A POST: the session, the CSRF check, then the action; a refused action shows the portal with its message. */
  function action(run: (c: Context<AppEnv>, s: Session, form: Record<string, unknown>) => Promise<Response>) {
    return async (c: Context<AppEnv>) => {
      const s = await open(c);
      if (s instanceof Response) return s;
      const form = await c.req.parseBody();
      if (!csrfValid(c, form.csrf)) return portalPage(c, s, csrfToken(c, secure), { profile: { error: s.t.errSession }, status: 403 });
      try {
        return await run(c, s, form);
      } catch (err) {
        if (err instanceof NotFoundError) return notFound(c, s.t, 'missing', 'portal');
        if (err instanceof AppError && err.status < 500) return portalPage(c, s, csrfToken(c, secure), { profile: { error: err.message }, status: err.status });
        throw err;
      }
    };
  }

  app.get('/hosted/portal/:token', async (c) => {
    const s = await open(c);
    if (s instanceof Response) return s;
    const done = c.req.query('done');
    return portalPage(c, s, csrfToken(c, secure), { notice: NOTICES.includes(done as Notice) ? (done as Notice) : undefined });
  });

  app.post(
    '/hosted/portal/:token/profile',
    limit,
    action(async (c, s, form) => {
      const text = (k: string) => (typeof form[k] === 'string' ? (form[k] as string).trim() : '');
      const input = { name: text('name') || null, email: text('email'), phone: text('phone').replace(/[\s().-]/g, '') || null };
      try {
        await updatePortalProfile(s.ctx, input);
      } catch (err) {
        if (err instanceof AppError && err.status === 400) {
          const state = { error: err.message, name: text('name').slice(0, 256), email: text('email').slice(0, 254), phone: text('phone').slice(0, 32) };
          return portalPage(c, s, csrfToken(c, secure), { profile: state, status: 422 });
        }
        throw err;
      }
      return after(c, s, 'profile');
    }),
  );

  app.post(
    '/hosted/portal/:token/methods/add',
    limit,
    action(async (c, s) => {
      const si = await portalSetupIntent(s.ctx, `${s.base}?done=added`);
      return c.redirect(setupUrl(services.config.publicBaseUrl, si.token), 303);
    }),
  );

  app.post(
    '/hosted/portal/:token/methods/:pm/default',
    limit,
    action(async (c, s) => {
      await setPortalDefault(s.ctx, c.req.param('pm') ?? '');
      return after(c, s, 'default');
    }),
  );

  app.post(
    '/hosted/portal/:token/methods/:pm/remove',
    limit,
    action(async (c, s) => {
      await detachPortalMethod(s.ctx, c.req.param('pm') ?? '');
      return after(c, s, 'removed');
    }),
  );
}
