// What every hosted page shares: the context a token opens (merchant-scoped, optionally with a
// portal actor), reading a posted form (a malformed body is a 400 page; the one input rule of
// src/platform/validation.ts applies to every field and path parameter), the double-submit CSRF
// token, redirects with query parameters, the payment method fields (card / mobile money) with
// their server-side checks, the not-found page, the token-free path for the access log, and the
// per-address limit on failed payment-method attempts (card testing) with its 429 page.
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { bodyLimit } from 'hono/body-limit';
import { cardBrand, cardNumberValid, type CardInput, type PaymentMethodType } from '../platform/processor.ts';
import type { Ctx, PortalActor } from '../platform/context.ts';
import { forMerchant } from '../platform/db/tenant.ts';
import { Clock } from '../platform/clock.ts';
import { RateLimitError, ValidationError } from '../platform/errors.ts';
import { randomToken } from '../platform/ids.ts';
import { limitsFor } from '../platform/rate-limit.ts';
import { clientAddress } from '../platform/client-address.ts';
import { checkInputText, hasUnstorableText } from '../platform/validation.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import { brandPage, html, page, type Html } from './layout.ts';
import { strings, type Locale, type Strings } from './strings.ts';

const CSRF_COOKIE = 'billing_csrf';

/** The request's CSRF token (cookie + hidden field, SameSite=Strict), set when missing. */
export function csrfToken(c: Context<AppEnv>, secure: boolean): string {
  let token = getCookie(c, CSRF_COOKIE);
  if (!token || !/^[0-9A-Za-z]{32}$/.test(token)) {
    token = randomToken(32);
    setCookie(c, CSRF_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/hosted', secure, maxAge: 60 * 60 * 24 });
  }
  return token;
}

export function csrfValid(c: Context<AppEnv>, field: unknown): boolean {
  const cookie = getCookie(c, CSRF_COOKIE);
  if (typeof field !== 'string' || !cookie || field.length !== cookie.length) return false;
  return timingSafeEqual(Buffer.from(field), Buffer.from(cookie));
}

export interface HostedForm {
  /** the posted text fields (file parts are dropped) */
  fields: Record<string, string>;
  /**
   * The field whose text cannot be stored (NUL, a lone surrogate: the one input rule of the API,
   * checkInputText), '' when it is a field's name; null when every field is fine. The page answers
   * it as an invalid field (422) and must not act on the form.
   */
  invalid: string | null;
}

/**
 * The one way a hosted page reads its POST body: a body that is not a form (a broken multipart
 * body, say) is the 400 page, never an unhandled error.
 */
export async function readForm(c: Context<AppEnv>, t: Strings): Promise<HostedForm | Response> {
  let body: Record<string, unknown>;
  try {
    body = await c.req.parseBody();
  } catch {
    return page(c, 400, { title: t.badForm, lang: t.lang, body: html`<h1>${t.badForm}</h1><p>${t.badFormText}</p>` });
  }
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') fields[k] = v;
  try {
    checkInputText(fields);
    return { fields, invalid: null };
  } catch (err) {
    if (err instanceof ValidationError) return { fields, invalid: err.param ?? '' };
    throw err;
  }
}

/** The fields a re-rendered form may show again: not those that broke the input rule. */
export function storableFields(form: HostedForm): Record<string, string> {
  return Object.fromEntries(Object.entries(form.fields).filter(([k, v]) => !hasUnstorableText(k) && !hasUnstorableText(v)));
}

/**
 * The request path as the access log (and a trace's url.path) records it: the bearer token of a
 * hosted page (/hosted/checkout|setup|invoice|email-links|portal/<token>/…) replaced, so logs never
 * hold a usable link. The
 * portal's token-less pages (/hosted/portal/profile, /methods/…, /subscriptions/…) stay as they are.
 */
export function loggedPath(path: string): string {
  const masked = path.replace(/^(\/hosted\/(?:checkout|setup|invoice|email-links|portal(?!\/(?:profile|methods|subscriptions)(?:\/|$)))\/)[^/]+/, '$1[token]');
  // What a client sent, shown as it came on the wire: control characters (a decoded %0A) stay
  // percent-encoded, so a log viewer that prints the field raw shows no forged line; and a path no
  // longer than LOGGED_PATH_MAX (a 16 KB path must not make every log line of a scan 16 KB).
  const visible = masked.replace(/[\u0000-\u001f\u007f]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return visible.length > LOGGED_PATH_MAX ? `${visible.slice(0, LOGGED_PATH_MAX)}…` : visible;
}

/** The longest path a log line or span carries (longer ones end in "…"). */
export const LOGGED_PATH_MAX = 512;

export const hostedBodyLimit = () => bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.text('Request too large', 413) });

export function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

export function originOf(url: string | null | undefined): string[] {
  return url ? [new URL(url).origin] : [];
}

interface MerchantRow {
  id: string;
  mode: string;
  name: string;
  accentColor?: string | null;
  logoType?: string | null;
  logo?: Uint8Array | null;
}

/** The merchant-scoped context a hosted page's token opens (with a portal actor for the portal). */
export function hostedCtx(c: Context<AppEnv>, services: Services, m: MerchantRow, log: Record<string, string>, actor?: PortalActor): Ctx {
  const merchant = { id: m.id, mode: m.mode === 'live' ? ('live' as const) : ('test' as const), name: m.name };
  return {
    merchant,
    db: forMerchant(services.db.prisma, merchant.id),
    requestId: c.get('requestId'),
    log: c.get('log')().child({ merchant_id: merchant.id, ...log }),
    runtime: services.runtime,
    actor,
    clock: new Clock(merchant),
  };
}

/** Hosted-page tokens: 40 base62 characters (~238 bits). Anything else is not looked up. */
const TOKEN = /^[0-9A-Za-z]{40}$/;

export interface Opened<R> {
  record: R;
  ctx: Ctx;
  merchantName: string;
  t: Strings;
}

/**
 * The one way a hosted page opens its record: the URL's token → the record and its merchant (an
 * unknown or malformed token is the not-found page), a merchant-scoped context (with the portal's
 * actor), then `refresh` brings the record up to date on the merchant's clock (expiring it when its
 * time has come) and says whether it is gone (the expired page, which changes nothing).
 */
export async function openByToken<R extends { id: string; merchant: MerchantRow }, S>(
  c: Context<AppEnv>,
  services: Services,
  spec: {
    what: 'checkout' | 'setup' | 'portal';
    /** what to look up (default: the URL's token; the portal's pages: the session cookie's key) */
    key?: string;
    /** the page for an unknown key (default: the not-found page) */
    unknown?: () => Response | Promise<Response>;
    find: (prisma: Services['db']['prisma'], token: string) => Promise<R | null>;
    locale: (r: R, ctx: Ctx) => Locale | Promise<Locale>;
    actor?: (r: R) => PortalActor;
    /** the record as of now; `gone` answers the expired page, `missing` the not-found page */
    refresh: (ctx: Ctx, r: R) => Promise<{ record: S; gone?: boolean; missing?: boolean }>;
  },
): Promise<Opened<S> | Response> {
  const token = spec.key ?? c.req.param('token') ?? '';
  const found = TOKEN.test(token) ? await spec.find(services.db.prisma, token) : null;
  if (!found) return spec.unknown ? spec.unknown() : notFound(c, strings.en, 'missing', spec.what);
  const ctx = hostedCtx(c, services, found.merchant, { [`${spec.what}_id`]: found.id }, spec.actor?.(found));
  brandPage(c, { name: found.merchant.name, accentColor: found.merchant.accentColor ?? null, logoType: found.merchant.logoType ?? null, logo: found.merchant.logo ?? null });
  const t = strings[await spec.locale(found, ctx)];
  // The input rule for path parameters (a method id, say): what cannot be stored names nothing.
  if (Object.values(c.req.param() as Record<string, string>).some(hasUnstorableText)) return notFound(c, t, 'missing', spec.what);
  const now = await spec.refresh(ctx, found);
  if (now.missing) return notFound(c, t, 'missing', spec.what);
  if (now.gone) return notFound(c, t, 'expired', spec.what);
  return { record: now.record, ctx, merchantName: found.merchant.name, t };
}

export function notFound(c: Context<AppEnv>, t: Strings = strings.en, kind: 'missing' | 'expired' = 'missing', what: 'checkout' | 'setup' | 'portal' = 'checkout') {
  const title = kind === 'expired' ? t.expired[what] : t.notFound[what];
  return page(c, 404, { title, lang: t.lang, body: html`<h1>${title}</h1><p>${kind === 'expired' ? t.expiredText : t.notFoundText}</p>` });
}

/** The method form's fields that can be refused, each with its message next to it. */
export type MethodField = 'method' | 'card_number' | 'card_expiry' | 'card_cvc' | 'phone';
export type FieldErrors = Partial<Record<MethodField, string>>;

export interface MethodFormState {
  /** the form's error (a decline, the session…), in the alert box above the form */
  error?: string;
  /** each refused field's message, shown next to it (and listed in the alert box) */
  fieldErrors?: FieldErrors;
  method?: string;
  phone?: string;
  cardNumber?: string;
  cardExpiry?: string;
}

/** The order fields are checked, listed and focused in: the order they appear in. */
const FIELD_ORDER: MethodField[] = ['method', 'card_number', 'card_expiry', 'card_cvc', 'phone'];

/** A field's message slot (always there, empty when the field is fine: the script fills it). */
function fieldError(id: MethodField, message: string | undefined): Html {
  return html`<p class="field-error" id="${id}-error">${message ?? ''}</p>`;
}

/** A field's aria attributes: described by its hint and, when refused, its message; marked invalid. */
function fieldAria(id: MethodField, message: string | undefined, hint?: string): Html {
  const describedBy = [hint, message ? `${id}-error` : undefined].filter(Boolean).join(' ');
  return html`${describedBy ? html`aria-describedby="${describedBy}"` : ''} ${message ? html`aria-invalid="true"` : ''}`;
}

/**
 * The card / mobile-money fields. Each field has its message slot next to it; the layout's script
 * adds brand detection, grouping that keeps the caret where it was, MM/YY formatting and the same
 * checks as the server before a submission (with the messages it finds in the fieldset's data-msg-*).
 * Live mode shows no test card as the card number's placeholder.
 */
export function methodFields(methods: PaymentMethodType[], t: Strings, state: MethodFormState, defaultPhone: string | null, testMode = true): Html {
  const selected = state.method && methods.includes(state.method as PaymentMethodType) ? state.method : methods[0];
  const brand = state.cardNumber ? cardBrand(state.cardNumber.replace(/\D/g, '')) : 'unknown';
  const e = state.fieldErrors ?? {};
  return html`
  ${methods.length > 1
    ? html`<fieldset ${fieldAria('method', e.method)}><legend>${t.method}</legend><div class="choice">
        ${methods.map((m) => html`<label><input type="radio" name="method" value="${m}" ${m === selected ? 'checked' : ''}> ${m === 'card' ? t.card : t.mobileMoney}</label>`)}
      </div>${fieldError('method', e.method)}</fieldset>`
    : html`<input type="hidden" name="method" value="${methods[0]}">`}
  ${methods.includes('card')
    ? html`<fieldset id="card" data-msg-summary="${t.errSummary}" data-msg-missing="${t.errCardMissing}" data-msg-number="${t.errCardNumber}" data-msg-expiry="${t.errExpiry}" data-msg-month="${t.errExpiryMonth}" data-msg-expired="${t.errExpired}" data-msg-cvc="${t.errCvc}"><legend>${t.cardDetails}</legend>
        <label for="card_number">${t.cardNumber}</label>
        <div class="cardnum"><input type="text" id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" placeholder="${testMode ? '4242 4242 4242 4242' : '1234 1234 1234 1234'}" maxlength="23" value="${state.cardNumber ?? ''}" ${fieldAria('card_number', e.card_number, 'card_brand')}>
        <span id="card_brand" class="brand" data-brand="${brand}" aria-live="polite">${brand === 'unknown' ? '' : brand.toUpperCase()}</span></div>
        ${fieldError('card_number', e.card_number)}
        <div class="row">
          <div><label for="card_expiry">${t.expiry}</label>
          <input type="text" id="card_expiry" name="card_expiry" inputmode="numeric" autocomplete="cc-exp" placeholder="${t.expiryPlaceholder}" maxlength="7" value="${state.cardExpiry ?? ''}" ${fieldAria('card_expiry', e.card_expiry)}>
          ${fieldError('card_expiry', e.card_expiry)}</div>
          <div><label for="card_cvc">${t.cvc}</label>
          <input type="text" id="card_cvc" name="card_cvc" inputmode="numeric" autocomplete="cc-csc" placeholder="123" maxlength="4" ${fieldAria('card_cvc', e.card_cvc)}>
          ${fieldError('card_cvc', e.card_cvc)}</div>
        </div></fieldset>`
    : ''}
  ${methods.includes('mobile_money')
    ? html`<fieldset id="mobile_money"><legend>${t.mobileMoney}</legend>
        <label for="phone">${t.phone}</label>
        <input type="tel" id="phone" name="phone" autocomplete="tel" placeholder="+256700000001" value="${state.phone ?? defaultPhone ?? ''}" ${fieldAria('phone', e.phone, 'phone-hint')}>
        <p class="hint" id="phone-hint">${t.phoneHint}</p>${fieldError('phone', e.phone)}</fieldset>`
    : ''}`;
}

/**
 * The form's alert box: its error, or (refused fields) a summary with each field's message linking
 * to the field. The layout's script moves the focus here when it holds one, and fills it the same
 * way when its own checks refuse a submission.
 */
export function errorBox(error: string | undefined, id = 'form-error', fieldErrors?: FieldErrors, declineCode?: string | null): Html {
  const listed = FIELD_ORDER.filter((f) => fieldErrors?.[f]);
  const has = Boolean(error) || listed.length > 0;
  return html`<div role="alert" aria-live="assertive" tabindex="-1"${has ? html` data-error` : ''}${declineCode ? html` data-decline-code="${declineCode}"` : ''}>${
    listed.length > 0
      ? html`<div class="error" id="${id}"><p>${error ?? ''}</p><ul>${listed.map((f) => html`<li><a href="#${f}">${fieldErrors![f]}</a></li>`)}</ul></div>`
      : error
        ? html`<p class="error" id="${id}">${error}</p>`
        : ''
  }</div>`;
}

/** A neutral notice above a form (not an error: nothing the customer just did was refused). */
export function noticeBox(notice: string | undefined): Html {
  return html`${notice ? html`<p class="info" role="status" id="form-notice">${notice}</p>` : ''}`;
}

export interface MethodAttempt {
  method: PaymentMethodType;
  card?: CardInput;
  phone?: string;
}

/** The card's fields, each checked (every refused one is reported, not only the first). */
function parseCard(form: Record<string, unknown>, t: Strings, now: Date): CardInput | FieldErrors {
  const errors: FieldErrors = {};
  const number = String(form.card_number ?? '').replace(/[\s-]/g, '');
  if (!number) errors.card_number = t.errCardMissing;
  else if (!/^[0-9]+$/.test(number) || !cardNumberValid(number)) errors.card_number = t.errCardNumber;
  const m = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(String(form.card_expiry ?? ''));
  const month = m ? Number(m[1]) : 0;
  const year = m ? (m[2]!.length === 2 ? 2000 + Number(m[2]) : Number(m[2])) : 0;
  if (!m) errors.card_expiry = t.errExpiry;
  else if (month < 1 || month > 12) errors.card_expiry = t.errExpiryMonth;
  else if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) errors.card_expiry = t.errExpired;
  const cvc = String(form.card_cvc ?? '').trim();
  if (!/^[0-9]{3,4}$/.test(cvc)) errors.card_cvc = t.errCvc;
  if (Object.keys(errors).length > 0) return errors;
  return { number, expMonth: month, expYear: year, cvc };
}

/** The refused fields of a method form (parseMethod's answer when it takes nothing). */
export interface RefusedFields {
  errors: FieldErrors;
}

/**
 * The method the form names, checked; or every refused field with its message. Card expiry is
 * checked against real time, deliberately not the merchant's billing clock: card networks do not
 * know test clocks (docs/billing.md, docs/payment-methods.md).
 */
export function parseMethod(form: Record<string, unknown>, methods: PaymentMethodType[], t: Strings, now = new Date()): MethodAttempt | RefusedFields {
  const method = String(form.method ?? '');
  if (method === 'card' && methods.includes('card')) {
    const card = parseCard(form, t, now);
    return 'number' in card ? { method: 'card', card } : { errors: card };
  }
  if (method === 'mobile_money' && methods.includes('mobile_money')) {
    const phone = String(form.phone ?? '').replace(/[\s().-]/g, '');
    if (!/^\+[1-9][0-9]{6,14}$/.test(phone)) return { errors: { phone: t.errPhone } };
    return { method: 'mobile_money', phone };
  }
  return { errors: { method: t.errMethod } };
}

/**
 * A decline in the page's language, from its code (the processor's own message is for developers
 * and in English; an unknown code gets the general sentence). The code itself stays on the payment
 * and in the page (data-decline-code).
 */
export function declineMessage(t: Strings, code: string | null | undefined): string {
  const reason = (code && t.declineReason[code]) || t.declineOther;
  return reason.charAt(0).toUpperCase() + reason.slice(1);
}

/** What the customer can do after a decline: another card or method, or (service down) later. */
export function declineAdvice(t: Strings, code: string | null | undefined): string {
  return code === 'processor_unavailable' ? t.tryLater : t.declinedRetry;
}

/** What the form keeps after an error: never the CVC; after a decline, not the card either; nothing unstorable. */
export function keptFields(form: HostedForm, keepCard: boolean): MethodFormState {
  const kept = storableFields(form);
  const text = (k: string, max: number) => kept[k]?.slice(0, max);
  return {
    method: text('method', 20),
    phone: text('phone', 20),
    cardNumber: keepCard ? text('card_number', 23) : undefined,
    cardExpiry: text('card_expiry', 7),
  };
}

export function localeOf(v: unknown): Locale {
  return v === 'fr' ? 'fr' : 'en';
}

/**
 * Counts a payment-method attempt from the request's source address before the processor is
 * called (checkout, top-up, setup); returns the function that gives it back when the attempt did
 * not fail. Over the limit (PAYMENT_FAILURES_PER_ADDRESS_PER_MINUTE / _PER_HOUR): the page's own
 * 429 answer, with Retry-After, through `refuse`; nothing reaches the processor.
 */
export async function takePaymentAttempt(
  c: Context<AppEnv>,
  services: Services,
  refuse: (message: string) => Response | Promise<Response>,
  t: Strings,
): Promise<(() => void) | Response> {
  try {
    return await limitsFor(services).payments.take(clientAddress(c, services.config.TRUST_PROXY));
  } catch (err) {
    if (!(err instanceof RateLimitError)) throw err;
    const seconds = Number(err.headers['Retry-After'] ?? '60');
    c.header('Retry-After', String(seconds));
    c.get('log')().warn({ retry_after: seconds }, 'hosted page: too many failed payment attempts from this address');
    return refuse(t.errTooManyFromAddress(Math.max(1, Math.ceil(seconds / 60))));
  }
}
