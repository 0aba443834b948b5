// The durable links of customer e-mails: /hosted/email-links/<token> (src/domain/emails/links.ts).
// No credentials: the token's signature (the merchant's link key) is the permission, for 30 days.
// Each open mints what the link stands for and redirects there: a fresh signed PDF address (5
// minutes) or a fresh portal session (an hour) — so a mail scanner that opens the link first
// uses up nothing the customer needs. A malformed, tampered or expired token is 403 and reveals
// nothing; a deleted customer or invoice is the not-found page.
import type { Hono } from 'hono';
import { signedPdfUrl } from '../domain/billing/invoices.ts';
import { verifyEmailLink } from '../domain/emails/index.ts';
import { createPortalSession, portalUrl } from '../domain/portal/index.ts';
import { HttpError } from '../platform/errors.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import { hostedCtx } from './kit.ts';

const forbidden = () => new HttpError(403, 'signature_invalid', 'This link is invalid or has expired. Ask for a new one.');

export function mountEmailLinks(app: Hono<AppEnv>, services: Services) {
  app.get('/hosted/email-links/:token', async (c) => {
    const link = await verifyEmailLink(services.db.prisma, c.req.param('token'));
    if (!link) throw forbidden();
    const { target } = link;
    const ctx = hostedCtx(c, services, link.merchant, target.kind === 'pdf' ? { invoice_id: target.invoiceId } : { customer_id: target.customerId });
    c.header('Cache-Control', 'no-store');
    c.header('Referrer-Policy', 'no-referrer');
    if (target.kind === 'pdf') return c.redirect(await signedPdfUrl(ctx, target.invoiceId), 303);
    const base = services.config.publicBaseUrl;
    const session = await createPortalSession(ctx, { customer_id: target.customerId, return_url: base, locale: link.locale });
    return c.redirect(portalUrl(base, session.token), 303);
  });
}
