// The signed address of an invoice's PDF: /hosted/invoices/<id>/pdf?expires=…&signature=…
// (GET /v1/invoices/:id/pdf redirects here). No credentials: the HMAC over id and expiry, keyed by
// the merchant's signing key, is the permission, for five minutes. A missing, tampered or expired
// signature is 403 and reveals nothing (not even whether the invoice exists).
import type { Hono } from 'hono';
import { invoicePdfData, invoicePdfMerchant } from '../domain/billing/invoices.ts';
import { creditNotePdfData, creditNotePdfMerchant } from '../domain/billing/credit-notes.ts';
import { renderInvoicePdf, verifyPdfSignature } from '../domain/billing/pdf.ts';
import { HttpError } from '../platform/errors.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import { hostedCtx } from './kit.ts';

const forbidden = () => new HttpError(403, 'signature_invalid', 'This invoice link is invalid or has expired. Ask for a new one.');

export function mountInvoicePdf(app: Hono<AppEnv>, services: Services) {
  app.get('/hosted/invoices/:id/pdf', async (c) => {
    const id = c.req.param('id');
    const expires = c.req.query('expires');
    const signature = c.req.query('signature');
    if (!/^in_[0-9A-Za-z]{16,40}$/.test(id) || !expires || !signature) throw forbidden();
    const row = await invoicePdfMerchant(services.db.prisma, id);
    const key = row?.merchant.signingKey;
    if (!row || !key || !verifyPdfSignature(Buffer.from(key), id, expires, signature, new Date())) throw forbidden();
    const ctx = hostedCtx(c, services, row.merchant, { invoice_id: id });
    const data = await invoicePdfData(ctx, id);
    const pdf = await renderInvoicePdf(data);
    return c.body(new Uint8Array(pdf), 200, {
      'Content-Type': 'application/pdf',
      'Content-Disposition': `inline; filename="${(data.number ?? id).replace(/[^A-Za-z0-9_-]/g, '')}.pdf"`,
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    });
  });

  // A credit note's PDF (GET /v1/credit-notes/:id/pdf redirects here): the same signature rule.
  app.get('/hosted/credit-notes/:id/pdf', async (c) => {
    const id = c.req.param('id');
    const expires = c.req.query('expires');
    const signature = c.req.query('signature');
    if (!/^cn_[0-9A-Za-z]{16,40}$/.test(id) || !expires || !signature) throw forbidden();
    const row = await creditNotePdfMerchant(services.db.prisma, id);
    const key = row?.merchant.signingKey;
    if (!row || !key || !verifyPdfSignature(Buffer.from(key), id, expires, signature, new Date())) throw forbidden();
    const ctx = hostedCtx(c, services, row.merchant, { credit_note_id: id });
    const data = await creditNotePdfData(ctx, id);
    const pdf = await renderInvoicePdf(data);
    return c.body(new Uint8Array(pdf), 200, {
      'Content-Type': 'application/pdf',
      'Content-Disposition': `inline; filename="${data.number.replace(/[^A-Za-z0-9_-]/g, '')}.pdf"`,
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    });
  });
}
