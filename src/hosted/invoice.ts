// The hosted invoice page (Stripe's hosted_invoice_url): /hosted/invoice/<token>, the address a
// send_invoice invoice carries once finalised and that its e-mail links to. No credentials: the
// 40-character token names the invoice. It shows the invoice in the merchant's branding (lines,
// totals, due date, the PDF) and, while something is left to pay, a "Pay" button: a POST (CSRF
// checked) that opens a checkout for what is left (src/domain/billing/one-off.ts hostedCheckout)
// where the customer pays by card; the checkout sends them back here, where the invoice shows paid.
import type { Context, Hono } from 'hono';
import { getInvoice, signedPdfUrl, type InvoiceWithLines } from '../domain/billing/invoices.ts';
import { hostedCheckout, hostedInvoiceByToken } from '../domain/billing/one-off.ts';
import { getCustomer } from '../domain/customers/index.ts';
import { formatMoney } from '../platform/money.ts';
import type { Ctx } from '../platform/context.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import { brandPage, html, page } from './layout.ts';
import { csrfToken, csrfValid, hostedBodyLimit, hostedCtx, notFound, readForm } from './kit.ts';
import { strings, type Locale } from './strings.ts';

const TOKEN = /^[0-9A-Za-z]{40}$/;

const WORDS = {
  en: {
    title: (n: string, m: string) => `Invoice ${n} from ${m}`,
    status: { open: 'Open', paid: 'Paid', void: 'Void', uncollectible: 'Unpaid', draft: 'Draft' } as Record<string, string>,
    due: 'Due date',
    issued: 'Issued',
    paidOn: 'Paid on',
    subtotal: 'Subtotal',
    total: 'Total',
    credited: 'Credit notes',
    creditApplied: 'Credit applied',
    amountPaid: 'Amount paid',
    amountDue: 'Amount due',
    pay: (a: string) => `Pay ${a}`,
    pdf: 'Download the invoice (PDF)',
    paidText: 'This invoice is paid. Thank you.',
    voidText: 'This invoice was cancelled: there is nothing to pay.',
    overdue: 'This invoice is past its due date.',
    session: 'Your session expired. Please try again.',
  },
  fr: {
    title: (n: string, m: string) => `Facture ${n} de ${m}`,
    status: { open: 'À payer', paid: 'Payée', void: 'Annulée', uncollectible: 'Impayée', draft: 'Brouillon' } as Record<string, string>,
    due: 'Échéance',
    issued: 'Émise le',
    paidOn: 'Payée le',
    subtotal: 'Sous-total',
    total: 'Total',
    credited: 'Avoirs',
    creditApplied: 'Crédit appliqué',
    amountPaid: 'Montant payé',
    amountDue: 'Montant dû',
    pay: (a: string) => `Payer ${a}`,
    pdf: 'Télécharger la facture (PDF)',
    paidText: 'Cette facture est payée. Merci.',
    voidText: 'Cette facture a été annulée : il n’y a rien à payer.',
    overdue: 'Cette facture a dépassé son échéance.',
    session: 'Votre session a expiré. Veuillez réessayer.',
  },
} as const;

interface Opened {
  ctx: Ctx;
  inv: InvoiceWithLines;
  merchantName: string;
  locale: Locale;
}

export function mountHostedInvoice(app: Hono<AppEnv>, services: Services) {
  const secure = services.config.publicBaseUrl.startsWith('https:');

  async function open(c: Context<AppEnv>): Promise<Opened | Response> {
    const token = c.req.param('token') ?? '';
    const found = TOKEN.test(token) ? await hostedInvoiceByToken(services.db.prisma, token) : null;
    if (!found) return notFound(c);
    const m = found.merchant;
    const ctx = hostedCtx(c, services, m, { invoice_id: found.id });
    brandPage(c, { name: m.name, accentColor: m.accentColor ?? null, logoType: m.logoType ?? null, logo: m.logo ?? null });
    const inv = await getInvoice(ctx, found.id);
    const customer = await getCustomer(ctx, inv.customerId).catch(() => null);
    const locale: Locale = customer?.locale === 'fr' ? 'fr' : 'en';
    return { ctx, inv, merchantName: m.name, locale };
  }

  async function show(c: Context<AppEnv>, o: Opened, status = 200, error?: string) {
    const w = WORDS[o.locale];
    const { inv } = o;
    const money = (v: bigint) => formatMoney(v, inv.currency, o.locale);
    const day = (d: Date | null) => (d ? new Intl.DateTimeFormat(o.locale, { dateStyle: 'long', timeZone: 'UTC' }).format(d) : '');
    const remaining = inv.amountDue - inv.amountPaid;
    const payable = (inv.status === 'open' || inv.status === 'uncollectible') && remaining > 0n;
    const overdue = payable && inv.overdueAt !== null;
    const title = w.title(inv.number ?? inv.id, o.merchantName);
    const pdf = await signedPdfUrl(o.ctx, inv.id);
    const rows: [string, string][] = [[w.subtotal, money(inv.subtotal)], [w.total, money(inv.total)]];
    if (inv.prePaymentCreditNotesAmount > 0n) rows.push([w.credited, money(-inv.prePaymentCreditNotesAmount)]);
    if (inv.creditApplied > 0n) rows.push([w.creditApplied, money(-inv.creditApplied)]);
    rows.push([w.amountPaid, money(inv.amountPaid)]);
    rows.push([w.amountDue, money(inv.status === 'paid' ? 0n : remaining)]);
    return page(c, status, {
      title,
      lang: o.locale,
      body: html`<h1>${title}</h1>
<p id="invoice-status" data-status="${inv.status}">${w.status[inv.status] ?? inv.status}</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
${overdue ? html`<p class="error" id="overdue">${w.overdue}</p>` : ''}
<table>
<tr><th>${w.issued}</th><td class="num">${day(inv.finalizedAt)}</td></tr>
${inv.dueDate && inv.collectionMethod === 'send_invoice' ? html`<tr><th>${w.due}</th><td class="num" id="due-date">${day(inv.dueDate)}</td></tr>` : ''}
${inv.paidAt ? html`<tr><th>${w.paidOn}</th><td class="num">${day(inv.paidAt)}</td></tr>` : ''}
</table>
<table id="lines">
${inv.lines.map((l) => html`<tr><td>${l.description}</td><td class="num">${money(l.amount)}</td></tr>`)}
</table>
<table id="totals">
${rows.map(([k, v]) => html`<tr><th>${k}</th><td class="num">${v}</td></tr>`)}
</table>
${payable
  ? html`<form method="post" action="/hosted/invoice/${c.req.param('token')}/pay"><input type="hidden" name="csrf" value="${csrfToken(c, secure)}"><button type="submit" id="pay">${w.pay(money(remaining))}</button></form>`
  : html`<p id="outcome">${inv.status === 'paid' ? w.paidText : inv.status === 'void' ? w.voidText : ''}</p>`}
<p><a href="${pdf}" id="pdf">${w.pdf}</a></p>`,
    });
  }

  app.get('/hosted/invoice/:token', async (c) => {
    const o = await open(c);
    if (o instanceof Response) return o;
    return show(c, o);
  });

  app.post('/hosted/invoice/:token/pay', hostedBodyLimit(), async (c) => {
    const o = await open(c);
    if (o instanceof Response) return o;
    const form = await readForm(c, strings[o.locale]);
    if (form instanceof Response) return form;
    if (!csrfValid(c, form.fields.csrf)) return show(c, o, 403, WORDS[o.locale].session);
    const url = await hostedCheckout(o.ctx, o.inv.id);
    // Nothing to pay any more (paid meanwhile, voided, a charge in flight): the page as it stands.
    if (!url) return c.redirect(`/hosted/invoice/${c.req.param('token')}`, 303);
    return c.redirect(url, 303);
  });
}
