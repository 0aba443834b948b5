// Durable links in e-mails: /hosted/email-links/<token>. An e-mail is read days later, but an
// invoice's signed PDF address lasts 5 minutes and a portal session an hour, so an e-mail carries
// a link that names what to open and is signed (HMAC-SHA256 with the merchant's link key, the one
// of signed PDF links, over a text of its own: the two signatures can never be swapped). Opening
// it mints a fresh signed PDF address or portal session and redirects there. Valid 30 days (real
// time, like every signed link), no credentials needed; a tampered or expired token is refused.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { signingKey } from '../billing/invoices.ts';
export { signingKey as emailLinkKey };
import { findLinkMerchant } from './store.ts';
import { EMAIL_LOCALES, type EmailLocale } from './templates.ts';

export const EMAIL_LINK_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** What a link opens: an invoice's PDF, or a portal session of a customer. */
export type EmailLinkTarget = { kind: 'pdf'; invoiceId: string } | { kind: 'portal'; customerId: string };

const TOKEN = /^(mer_[0-9A-Za-z]{16,40})\.(pdf|portal)\.((?:in|cus)_[0-9A-Za-z]{16,40})\.(en|fr)\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

function signature(key: Buffer, merchantId: string, kind: string, id: string, locale: string, expires: number): string {
  return createHmac('sha256', key).update(`email-link|${merchantId}|${kind}|${id}|${locale}|${expires}`).digest('base64url');
}

/** The absolute durable address of `target` for the merchant of ctx (its locale is the portal's language); `key`: the merchant's link key when the caller read it already (signingKey). */
export async function emailLinkUrl(ctx: Ctx, target: EmailLinkTarget, locale: EmailLocale, now: Date = new Date(), key?: Buffer): Promise<string> {
  key ??= await signingKey(ctx);
  const id = target.kind === 'pdf' ? target.invoiceId : target.customerId;
  const expires = Math.floor((now.getTime() + EMAIL_LINK_TTL_MS) / 1000);
  const token = `${ctx.merchant.id}.${target.kind}.${id}.${locale}.${expires}.${signature(key, ctx.merchant.id, target.kind, id, locale, expires)}`;
  return `${ctx.runtime.config.publicBaseUrl}/hosted/email-links/${token}`;
}

export interface OpenedEmailLink {
  merchant: { id: string; mode: string; name: string };
  target: EmailLinkTarget;
  locale: EmailLocale;
}

/** The link behind a token when its signature holds and it has not expired; null otherwise (malformed, tampered, expired, unknown merchant). */
export async function verifyEmailLink(prisma: PrismaClient, token: string, now: Date = new Date()): Promise<OpenedEmailLink | null> {
  const m = TOKEN.exec(token);
  if (!m) return null;
  const [, merchantId, kind, id, locale, exp, sig] = m as unknown as [string, string, 'pdf' | 'portal', string, EmailLocale, string, string];
  const expires = Number(exp);
  if (String(expires) !== exp || expires * 1000 <= now.getTime()) return null;
  if ((kind === 'pdf') !== id.startsWith('in_') || !EMAIL_LOCALES.includes(locale)) return null;
  const merchant = await findLinkMerchant(prisma, merchantId);
  if (!merchant?.signingKey) return null;
  const expected = Buffer.from(signature(Buffer.from(merchant.signingKey), merchantId, kind, id, locale, expires));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  return {
    merchant: { id: merchant.id, mode: merchant.mode, name: merchant.name },
    target: kind === 'pdf' ? { kind, invoiceId: id } : { kind, customerId: id },
    locale,
  };
}
