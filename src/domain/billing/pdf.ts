// Invoice PDFs and the signed, expiring links that serve them.
//
// Rendering uses pdfkit with its built-in standard fonts (Helvetica): no font files, no network,
// extractable text. The standard fonts only cover Windows-1252 (WinAnsi), so every string drawn is
// first reduced to that character set (accents are kept where WinAnsi has them or can be
// approximated by stripping the diacritic; anything else — CJK, emoji — becomes '?').
//
// Links: `/hosted/invoices/:id/pdf?expires=<unix s>&signature=<base64url HMAC-SHA256>`; the
// signature covers `${invoiceId}.${expires}`, so neither the id nor the expiry can be changed.
import { createHmac, timingSafeEqual } from 'node:crypto';
import PDFDocument from 'pdfkit';
import { formatMoney } from '../../platform/money.ts';

export interface InvoicePdfLine {
  description: string;
  periodStart: Date;
  periodEnd: Date;
  amount: bigint;
  proration: boolean;
}

export interface InvoicePdfData {
  merchantName: string;
  /** the merchant's accent colour (#RRGGBB: the name and the rule under the header), null: ink */
  accentColor?: string | null;
  /** the merchant's logo (PNG or JPEG bytes), drawn above its name */
  logo?: Buffer | null;
  number: string; // e.g. 'INV-000123'
  status: string; // draft | open | paid | void | uncollectible
  customer: { name: string | null; email: string | null; id: string };
  currency: string; // ISO 4217 upper-case, e.g. 'USD', 'JPY', 'KWD'
  lines: InvoicePdfLine[];
  subtotal: bigint;
  /** the coupon's discount (shown when not 0), with its label, e.g. "Discount (SUMMER25)" */
  discountAmount?: bigint;
  discountLabel?: string;
  /** one row per tax rate, summed over the lines; an inclusive one is shown as contained in the total */
  taxes?: { label: string; amount: bigint; inclusive: boolean }[];
  total: bigint;
  /** drawn from the customer's credit balance (shown when not 0) */
  creditApplied: bigint;
  /** drawn from the customer's wallet (shown when not 0) */
  amountFromWallet: bigint;
  /** a total below zero, credited to the customer's credit balance (shown when not 0) */
  creditedToBalance?: bigint;
  amountPaid: bigint;
  amountDue: bigint;
  periodStart: Date;
  periodEnd: Date;
  createdAt: Date;
  dueDate: Date | null;
  paidAt: Date | null;
  /** A credit note's PDF (credit-notes.ts): its title, number label, extra facts and totals instead of the invoice's. */
  document?: { title: string; numberLabel: string; facts: [string, string][]; totals: [string, bigint, boolean][]; periodLabel?: string };
}

// ---------------------------------------------------------------------------------------------
// Text helpers

// Code points above Latin-1 that WinAnsi (Windows-1252) encodes in 0x80–0x9F.
const WIN_ANSI_EXTRA = new Set([
  0x0152, 0x0153, 0x0160, 0x0161, 0x0178, 0x017d, 0x017e, 0x0192, 0x02c6, 0x02dc, 0x2013, 0x2014, 0x2018, 0x2019,
  0x201a, 0x201c, 0x201d, 0x201e, 0x2020, 0x2021, 0x2022, 0x2026, 0x2030, 0x2039, 0x203a, 0x20ac, 0x2122,
]);

function isWinAnsi(cp: number): boolean {
  return (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) || WIN_ANSI_EXTRA.has(cp);
}

/**
 * `s` reduced to what the standard PDF fonts can draw: control characters (incl. newlines) become
 * spaces, characters outside WinAnsi lose their diacritics when that makes them drawable (ő → o)
 * and become '?' otherwise (one '?' per code point, so an emoji is one '?'). Capped at `max`
 * characters (an ellipsis marks the cut) so a single field can never outgrow a page.
 */
function pdfSafe(value: string | null | undefined, max = 500): string {
  const out: string[] = [];
  for (const ch of String(value ?? '').normalize('NFC')) {
    const cp = ch.codePointAt(0)!;
    if (isWinAnsi(cp)) out.push(ch);
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp === 0x2028 || cp === 0x2029) out.push(' ');
    else if (cp >= 0xfe00 && cp <= 0xfe0f) continue; // variation selectors (emoji presentation)
    else if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0xfeff) continue; // zero-width
    else {
      const base = ch.normalize('NFKD').replace(/\p{M}/gu, '');
      out.push(base.length > 0 && [...base].every((c) => isWinAnsi(c.codePointAt(0)!)) ? base : '?');
    }
  }
  const s = out.join('').replace(/ {2,}/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1).trimEnd()}…` : s;
}

/** formatMoney, with a currency symbol the standard fonts cannot draw (₹, ₩, ₪ …) replaced by the ISO code. */
function money(amount: bigint, currency: string): string {
  const s = formatMoney(amount, currency);
  if ([...s].every((c) => isWinAnsi(c.codePointAt(0)!))) return s;
  const neg = s.startsWith('-');
  const digits = [...(neg ? s.slice(1) : s)].filter((c) => isWinAnsi(c.codePointAt(0)!)).join('').trim();
  return `${neg ? '-' : ''}${currency.trim().toUpperCase()} ${digits}`;
}

const DATE_FMT = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' });

function fmtDate(d: Date | null | undefined): string {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) return '—';
  return DATE_FMT.format(d);
}

function fmtPeriod(start: Date, end: Date): string {
  return `${fmtDate(start)} – ${fmtDate(end)}`;
}

function capitalize(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1);
}

// ---------------------------------------------------------------------------------------------
// Rendering

// A4 in points, 50 pt margins.
const PAGE = { width: 595.28, height: 841.89 };
const M = 50;
const CONTENT_W = PAGE.width - 2 * M;
const FOOTER_H = 30; // reserved at the bottom of each page for the page footer
const BOTTOM = PAGE.height - M - FOOTER_H; // content must end above this line

// Line-table columns.
const COL = {
  desc: { x: M, w: 240 },
  period: { x: M + 250, w: 130 },
  amount: { x: M + 390, w: CONTENT_W - 390 },
};
const TABLE_FONT = 9;
const ROW_PAD = 5;

const INK = '#1a1a1a';
const MUTED = '#6b6b6b';
const RULE = '#d0d0d0';

type Doc = PDFKit.PDFDocument;

/** A finished PDF document (Buffer starting with %PDF). */
export async function renderInvoicePdf(d: InvoicePdfData): Promise<Buffer> {
  // Format everything up front: an unknown currency or bad amount rejects before any drawing.
  const currency = d.currency;
  const number = pdfSafe(d.number, 100);
  const merchant = pdfSafe(d.merchantName, 200) || 'Invoice';
  const rows = d.lines.map((l) => ({
    description: pdfSafe(l.description, 1500) + (l.proration ? ' (proration)' : ''),
    period: fmtPeriod(l.periodStart, l.periodEnd),
    amount: money(l.amount, currency),
  }));
  const totals: [string, string, boolean][] = d.document ? d.document.totals.map(([label, amount, bold]) => [label, money(amount, currency), bold]) : [
    ['Subtotal', money(d.subtotal, currency), false],
    ...(d.discountAmount && d.discountAmount !== 0n
      ? [[pdfSafe(d.discountLabel ?? 'Discount', 200), money(-d.discountAmount, currency), false] as [string, string, boolean]]
      : []),
    ...(d.taxes ?? []).map(
      (t) => [pdfSafe(t.inclusive ? `${t.label} (included)` : t.label, 200), money(t.amount, currency), false] as [string, string, boolean],
    ),
    ['Total', money(d.total, currency), true],
    ...(d.creditApplied > 0n ? [['Credit applied', money(-d.creditApplied, currency), false] as [string, string, boolean]] : []),
    ...(d.amountFromWallet > 0n ? [['Paid from wallet', money(-d.amountFromWallet, currency), false] as [string, string, boolean]] : []),
    ...(d.creditedToBalance && d.creditedToBalance > 0n ? [['Credited to your balance', money(d.creditedToBalance, currency), false] as [string, string, boolean]] : []),
    ['Amount paid', money(d.amountPaid, currency), false],
    ['Amount due', money(d.amountDue, currency), true],
  ];

  const doc = new PDFDocument({
    size: 'A4',
    margin: M,
    bufferPages: true, // page footers ("Page 1 of 3") are drawn once the page count is known
    displayTitle: true,
    lang: 'en-US',
    info: { Title: `${d.document?.title ?? 'Invoice'} ${d.number}`, Author: d.merchantName, Subject: `${d.document?.title ?? 'Invoice'} ${d.number}`, Creator: d.merchantName },
  });

  const done = new Promise<Buffer>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    doc.on('data', (c: Uint8Array) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  try {
    let y = drawHeader(doc, d, merchant, number);
    y = drawLineTable(doc, rows, y);
    drawTotals(doc, totals, y);
    drawFooters(doc, d.document?.title ?? 'Invoice', number);
  } catch (err) {
    doc.end();
    await done.catch(() => undefined);
    throw err;
  }
  doc.end();
  return done;
}

function text(doc: Doc, s: string, x: number, y: number, opts: PDFKit.Mixins.TextOptions & { font?: string; size?: number; color?: string } = {}): number {
  const { font = 'Helvetica', size = 10, color = INK, ...rest } = opts;
  doc.font(font).fontSize(size).fillColor(color).text(s, x, y, { lineBreak: true, ...rest });
  return doc.y;
}

function height(doc: Doc, s: string, width: number, font: string, size: number): number {
  return doc.font(font).fontSize(size).heightOfString(s, { width });
}

function rule(doc: Doc, y: number, color = RULE, width = 0.75): void {
  doc.save().moveTo(M, y).lineTo(PAGE.width - M, y).lineWidth(width).strokeColor(color).stroke().restore();
}

/** Merchant, title, invoice facts and "Bill to". Returns the y below it. */
function drawHeader(doc: Doc, d: InvoicePdfData, merchant: string, number: string): number {
  const titleW = 150;
  const leftW = CONTENT_W - titleW - 20;
  const accent = d.accentColor && /^#[0-9A-Fa-f]{6}$/.test(d.accentColor) ? d.accentColor : INK;
  let top = M;
  if (d.logo) {
    try {
      doc.image(d.logo, M, M, { fit: [160, 48] });
      top = M + 56;
    } catch {
      // an image pdfkit cannot read: the name alone
    }
  }
  const merchantEnd = text(doc, merchant, M, top, { font: 'Helvetica-Bold', size: 18, width: leftW, color: accent });
  const titleEnd = text(doc, d.document?.title ?? 'Invoice', M + CONTENT_W - titleW, M, { font: 'Helvetica-Bold', size: 22, width: titleW, align: 'right' });
  let y = Math.max(merchantEnd, titleEnd) + 10;
  rule(doc, y, accent, 1);
  y += 16;

  // Left: bill to. Right: invoice facts as label / value pairs.
  const billW = 230;
  let by = text(doc, 'BILL TO', M, y, { font: 'Helvetica-Bold', size: 8, color: MUTED, characterSpacing: 0.5 }) + 3;
  const name = pdfSafe(d.customer.name, 200);
  const email = pdfSafe(d.customer.email, 200);
  if (name) by = text(doc, name, M, by, { font: 'Helvetica-Bold', size: 10, width: billW }) + 1;
  if (email) by = text(doc, email, M, by, { size: 10, width: billW }) + 1;
  by = text(doc, `Customer ID: ${pdfSafe(d.customer.id, 200)}`, M, by, { size: 8, color: MUTED, width: billW });

  const facts: [string, string][] = [
    [d.document?.numberLabel ?? 'Invoice number', number],
    ['Status', capitalize(pdfSafe(d.status, 40))],
    ...(d.document?.facts ?? []).map(([label, value]): [string, string] => [label, pdfSafe(value, 200)]),
    ['Issue date', fmtDate(d.createdAt)],
  ];
  // Rows that do not apply are left out (a credit note is due nothing; a draft has no due date yet).
  if (d.dueDate) facts.push(['Due date', fmtDate(d.dueDate)]);
  if (d.paidAt) facts.push(['Paid on', fmtDate(d.paidAt)]);
  facts.push([d.document?.periodLabel ?? 'Period', fmtPeriod(d.periodStart, d.periodEnd)]);
  const labelX = M + billW + 20;
  const labelW = 85;
  const valueX = labelX + labelW + 5;
  const valueW = PAGE.width - M - valueX;
  let fy = y;
  for (const [label, value] of facts) {
    text(doc, label, labelX, fy, { size: 9, color: MUTED, width: labelW });
    fy = text(doc, value, valueX, fy, { font: label === (d.document?.numberLabel ?? 'Invoice number') ? 'Helvetica-Bold' : 'Helvetica', size: 9, width: valueW, align: 'right' }) + 3;
  }
  return Math.max(by, fy) + 24;
}

function drawTableHeader(doc: Doc, y: number, continued: boolean): number {
  const o = { font: 'Helvetica-Bold', size: 8, color: MUTED, characterSpacing: 0.5 };
  text(doc, continued ? 'DESCRIPTION (CONTINUED)' : 'DESCRIPTION', COL.desc.x, y, { ...o, width: COL.desc.w });
  text(doc, 'PERIOD', COL.period.x, y, { ...o, width: COL.period.w });
  const end = text(doc, 'AMOUNT', COL.amount.x, y, { ...o, width: COL.amount.w, align: 'right' });
  rule(doc, end + 4, INK, 0.75);
  return end + 4 + ROW_PAD;
}

/** The line items, breaking onto new pages (with the column header repeated) as needed. */
function drawLineTable(doc: Doc, rows: { description: string; period: string; amount: string }[], y0: number): number {
  const rowHeight = (r: { description: string; period: string; amount: string }) =>
    Math.max(
      height(doc, r.description, COL.desc.w, 'Helvetica', TABLE_FONT),
      height(doc, r.period, COL.period.w, 'Helvetica', TABLE_FONT),
      height(doc, r.amount, COL.amount.w, 'Helvetica', TABLE_FONT),
    );
  // Never leave the column header alone at the bottom of a page.
  const headerH = height(doc, 'DESCRIPTION', COL.desc.w, 'Helvetica-Bold', 8) + 4 + ROW_PAD;
  if (rows.length > 0 && y0 + headerH + rowHeight(rows[0]!) + ROW_PAD > BOTTOM) {
    doc.addPage();
    y0 = M;
  }
  let y = drawTableHeader(doc, y0, false);
  if (rows.length === 0) {
    y = text(doc, 'No line items.', COL.desc.x, y, { size: TABLE_FONT, color: MUTED, width: COL.desc.w }) + ROW_PAD;
    rule(doc, y);
    return y + ROW_PAD;
  }
  for (const r of rows) {
    const h = rowHeight(r);
    if (y + h + ROW_PAD > BOTTOM) {
      doc.addPage();
      y = drawTableHeader(doc, M, true);
    }
    text(doc, r.description, COL.desc.x, y, { size: TABLE_FONT, width: COL.desc.w });
    text(doc, r.period, COL.period.x, y, { size: TABLE_FONT, color: MUTED, width: COL.period.w });
    text(doc, r.amount, COL.amount.x, y, { size: TABLE_FONT, width: COL.amount.w, align: 'right' });
    y += h + ROW_PAD;
    rule(doc, y);
    y += ROW_PAD;
  }
  return y;
}

/** Subtotal / Total / Amount paid / Amount due, right-aligned under the amounts; kept together on one page. */
function drawTotals(doc: Doc, totals: [string, string, boolean][], y0: number): void {
  const valueX = COL.amount.x - 30;
  const valueW = PAGE.width - M - valueX;
  const labelX = M + 200;
  const labelW = valueX - 10 - labelX;
  const style = (bold: boolean) => ({ font: bold ? 'Helvetica-Bold' : 'Helvetica', size: bold ? 11 : 10 });
  const rowH = (label: string, value: string, bold: boolean) => {
    const { font, size } = style(bold);
    return Math.max(height(doc, label, labelW, font, size), height(doc, value, valueW, font, size)) + 6;
  };
  const blockH = 6 + 6 + totals.reduce((sum, [l, v, b]) => sum + rowH(l, v, b), 0);
  let y = y0 + 6;
  if (y + blockH > BOTTOM) {
    doc.addPage();
    y = M;
  }
  for (const [label, value, bold] of totals) {
    const { font, size } = style(bold);
    if (label === 'Amount due') {
      doc.save().moveTo(labelX, y).lineTo(PAGE.width - M, y).lineWidth(1).strokeColor(INK).stroke().restore();
      y += 6;
    }
    const h = rowH(label, value, bold);
    text(doc, label, labelX, y, { font, size, width: labelW, align: 'right', color: bold ? INK : MUTED });
    text(doc, value, valueX, y, { font, size, width: valueW, align: 'right' });
    y += h;
  }
}

/** "Invoice INV-000042" (or "Credit note CN-000001") and "Page 1 of 2" at the bottom of every page. */
function drawFooters(doc: Doc, title: string, number: string): void {
  const range = doc.bufferedPageRange();
  for (let i = 0; i < range.count; i++) {
    doc.switchToPage(range.start + i);
    // Drawing inside the bottom margin would make pdfkit start a new page; lift the margin first.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const y = PAGE.height - M - 10;
    const label = number.length > 50 ? `${number.slice(0, 49)}…` : number;
    text(doc, `${title} ${label}`, M, y, { size: 8, color: MUTED, width: CONTENT_W * 0.75, lineBreak: false });
    text(doc, `Page ${i + 1} of ${range.count}`, M + CONTENT_W * 0.75, y, { size: 8, color: MUTED, width: CONTENT_W * 0.25, align: 'right', lineBreak: false });
    doc.page.margins.bottom = bottom;
  }
}

// ---------------------------------------------------------------------------------------------
// Signed links

/** How long a signed PDF link is valid. */
export const PDF_LINK_TTL_MS = 5 * 60 * 1000;

/** HMAC-SHA256 over `${invoiceId}.${expiresUnixSeconds}` with `secret`, base64url. */
export function pdfSignature(secret: Buffer, invoiceId: string, expiresUnix: number): string {
  if (!Buffer.isBuffer(secret) || secret.length === 0) throw new TypeError('pdfSignature: secret must be a non-empty Buffer');
  if (!Number.isSafeInteger(expiresUnix) || expiresUnix < 0) throw new RangeError('pdfSignature: expiresUnix must be a non-negative integer');
  return createHmac('sha256', secret).update(`${invoiceId}.${expiresUnix}`).digest('base64url');
}

/** The path (no origin) of the signed link: `/hosted/invoices/${invoiceId}/pdf?expires=${unix}&signature=${sig}` */
export function signedPdfPath(secret: Buffer, invoiceId: string, now: Date, ttlMs: number = PDF_LINK_TTL_MS): string {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError('signedPdfPath: ttlMs must be positive');
  const t = now.getTime();
  if (Number.isNaN(t)) throw new RangeError('signedPdfPath: invalid date');
  const expires = Math.floor((t + ttlMs) / 1000);
  const sig = pdfSignature(secret, invoiceId, expires);
  return `/hosted/invoices/${encodeURIComponent(invoiceId)}/pdf?expires=${expires}&signature=${sig}`;
}

const EXPIRES_RE = /^[0-9]{1,15}$/;
const SIGNATURE_RE = /^[A-Za-z0-9_-]{43}$/; // 32 bytes, base64url without padding

/**
 * true only when the signature matches (constant-time compare; malformed input → false, never
 * throws) and `now` is before expiry. `expires` and `signature` are the raw query strings (may be
 * undefined).
 */
export function verifyPdfSignature(secret: Buffer, invoiceId: string, expires: string | undefined, signature: string | undefined, now: Date): boolean {
  try {
    if (!Buffer.isBuffer(secret) || secret.length === 0) return false;
    if (typeof invoiceId !== 'string' || invoiceId.length === 0) return false;
    if (typeof expires !== 'string' || !EXPIRES_RE.test(expires)) return false;
    if (typeof signature !== 'string' || !SIGNATURE_RE.test(signature)) return false;
    const exp = Number(expires);
    if (!Number.isSafeInteger(exp)) return false;
    // Sign the parsed number, so `expires=0123` never matches the signature of `123`.
    if (String(exp) !== expires) return false;
    const expected = Buffer.from(pdfSignature(secret, invoiceId, exp), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    const valid = expected.length === given.length && timingSafeEqual(expected, given);
    const t = now instanceof Date ? now.getTime() : Number.NaN;
    return valid && Number.isFinite(t) && t < exp * 1000;
  } catch {
    return false;
  }
}
