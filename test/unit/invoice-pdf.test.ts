import { createHmac } from 'node:crypto';
import { extractText, extractTextItems, getMeta } from 'unpdf';
import { describe, expect, it } from 'vitest';
import {
  PDF_LINK_TTL_MS,
  pdfSignature,
  renderInvoicePdf,
  signedPdfPath,
  verifyPdfSignature,
  type InvoicePdfData,
  type InvoicePdfLine,
} from '../../src/domain/billing/pdf.ts';

const d = (s: string) => new Date(s);

function invoice(over: Partial<InvoicePdfData> = {}): InvoicePdfData {
  return {
    merchantName: 'Acme Cloud Ltd.',
    number: 'INV-000123',
    status: 'open',
    customer: { name: 'Ada Lovelace', email: 'ada@example.com', id: 'cus_4f2a9c' },
    currency: 'USD',
    lines: [
      { description: 'Pro plan (monthly)', periodStart: d('2027-01-01T00:00:00Z'), periodEnd: d('2027-02-01T00:00:00Z'), amount: 2000n, proration: false },
      { description: 'Unused time on Starter plan', periodStart: d('2027-01-15T00:00:00Z'), periodEnd: d('2027-02-01T00:00:00Z'), amount: -766n, proration: true },
    ],
    subtotal: 1234n,
    total: 1234n,
    creditApplied: 0n,
    amountFromWallet: 0n,
    amountPaid: 0n,
    amountDue: 1234n,
    periodStart: d('2027-01-01T00:00:00Z'),
    periodEnd: d('2027-02-01T00:00:00Z'),
    createdAt: d('2027-02-01T00:00:00Z'),
    dueDate: d('2027-02-15T00:00:00Z'),
    paidAt: null,
    ...over,
  };
}

function manyLines(n: number, longEvery = 0): InvoicePdfLine[] {
  return Array.from({ length: n }, (_, i) => ({
    description:
      longEvery > 0 && i % longEvery === 0
        ? `Line ${i + 1}: usage of the analytics add-on across every workspace in the organisation, billed per seat per month including overage for additional storage and API requests`
        : `Line ${i + 1}: seat`,
    periodStart: d('2027-01-01T00:00:00Z'),
    periodEnd: d('2027-02-01T00:00:00Z'),
    amount: i % 5 === 4 ? -150n : 1000n,
    proration: i % 5 === 4,
  }));
}

async function pdfText(pdf: Buffer): Promise<string> {
  const { text } = await extractText(new Uint8Array(pdf), { mergePages: true });
  return text;
}

async function pagesText(pdf: Buffer): Promise<string[]> {
  const { text } = await extractText(new Uint8Array(pdf), { mergePages: false });
  return text;
}

/** Every pair of visible text items on a page whose boxes intersect (a layout collision). */
async function overlaps(pdf: Buffer): Promise<string[]> {
  const { items } = await extractTextItems(new Uint8Array(pdf));
  const found: string[] = [];
  items.forEach((page, p) => {
    // y is the baseline (bottom-up); a glyph box reaches ~0.2 em below and ~0.75 em above it.
    const boxes = page
      .filter((t) => t.str.trim().length > 0)
      .map((t) => ({ s: t.str, x0: t.x, x1: t.x + t.width, y0: t.y - 0.2 * t.height, y1: t.y + 0.75 * t.height }));
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i]!;
        const b = boxes[j]!;
        if (Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > 0.5 && Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > 0.5) found.push(`page ${p + 1}: "${a.s}" × "${b.s}"`);
      }
    // Nothing in the page margins except the footer line (drawn at ~40 pt from the bottom).
    for (const b of boxes) if (b.y0 < 30 || b.y1 > 842 - 40 || b.x0 < 45 || b.x1 > 595 - 45) found.push(`page ${p + 1}: "${b.s}" outside the margins`);
  });
  return found;
}

describe('renderInvoicePdf', () => {
  it('renders a real PDF with the invoice details, lines and totals as extractable text', async () => {
    const pdf = await renderInvoicePdf(invoice());
    expect(Buffer.isBuffer(pdf)).toBe(true);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.subarray(-8).toString('latin1')).toContain('%%EOF');

    const text = await pdfText(pdf);
    for (const s of ['Acme Cloud Ltd.', 'Invoice', 'INV-000123', 'Open', 'Ada Lovelace', 'ada@example.com', 'cus_4f2a9c', 'Bill to'.toUpperCase(), 'Pro plan (monthly)', 'Unused time on Starter plan (proration)'])
      expect(text).toContain(s);
    // Dates in UTC, periods as ranges.
    expect(text).toContain('Issue date Feb 1, 2027');
    expect(text).toContain('Due date Feb 15, 2027');
    expect(text).toContain('Jan 1, 2027 – Feb 1, 2027');
    expect(text).toContain('Jan 15, 2027 – Feb 1, 2027');
    // Amounts in the currency's format; the proration credit with a minus sign.
    expect(text).toContain('$20.00');
    expect(text).toContain('-$7.66');
    expect(text).toMatch(/Subtotal \$12\.34/);
    expect(text).toMatch(/Total \$12\.34/);
    expect(text).toMatch(/Amount paid \$0\.00/);
    expect(text).toMatch(/Amount due \$12\.34/);
    expect(text).toContain('Page 1 of 1');
    // Reading order: header, lines, then totals.
    expect(text.indexOf('Pro plan')).toBeLessThan(text.indexOf('Subtotal'));
    expect(text.indexOf('-$7.66')).toBeLessThan(text.indexOf('Amount due'));

    const { info } = await getMeta(new Uint8Array(pdf));
    expect(info.Title).toBe('Invoice INV-000123');
    expect(info.Author).toBe('Acme Cloud Ltd.');
    expect(await overlaps(pdf)).toEqual([]);
  });

  it('shows what the credit balance and the wallet paid, between the total and the amount paid (only when not 0)', async () => {
    const text = await pdfText(await renderInvoicePdf(invoice({ total: 3000n, subtotal: 3000n, creditApplied: 1000n, amountFromWallet: 500n, amountPaid: 1500n, amountDue: 0n })));
    expect(text).toMatch(/Total \$30\.00\s+Credit applied -\$10\.00\s+Paid from wallet -\$5\.00\s+Amount paid \$15\.00\s+Amount due \$0\.00/);
    const plain = await pdfText(await renderInvoicePdf(invoice()));
    expect(plain).not.toContain('Credit applied');
    expect(plain).not.toContain('Paid from wallet');
  });

  it('shows the paid date, and no due date row when there is none (a draft, a credit note)', async () => {
    const text = await pdfText(await renderInvoicePdf(invoice({ status: 'paid', dueDate: null, paidAt: d('2027-02-01T23:59:59Z'), amountPaid: 1234n, amountDue: 0n })));
    expect(text).toContain('Status Paid');
    expect(text).not.toContain('Due date');
    expect(text).toContain('Paid on Feb 1, 2027');
    expect(text).toMatch(/Amount due \$0\.00/);
  });

  it('formats zero-decimal and three-decimal currencies (JPY, KWD)', async () => {
    const jpy = await pdfText(
      await renderInvoicePdf(
        invoice({
          currency: 'JPY',
          lines: [{ ...invoice().lines[0]!, amount: 1200n }, { ...invoice().lines[1]!, amount: -300n }],
          subtotal: 900n,
          total: 900n,
          amountPaid: 0n,
          amountDue: 900n,
        }),
      ),
    );
    expect(jpy).toContain('¥1,200');
    expect(jpy).toContain('-¥300');
    expect(jpy).toMatch(/Total ¥900/);
    expect(jpy).not.toMatch(/¥[\d,]+\.\d/); // no decimals anywhere

    const kwd = await pdfText(await renderInvoicePdf(invoice({ currency: 'KWD', subtotal: 1250n, total: 1250n, amountDue: 1250n })));
    expect(kwd).toMatch(/Total KWD 1\.250/);
    expect(kwd).toContain('-KWD 0.766');
  });

  it('writes the ISO code where the standard fonts have no symbol (₹, ₩)', async () => {
    const inr = await pdfText(await renderInvoicePdf(invoice({ currency: 'INR' })));
    expect(inr).toMatch(/Total INR 12\.34/);
    expect(inr).toContain('-INR 7.66');
    expect(inr).not.toContain('₹');
    const krw = await pdfText(await renderInvoicePdf(invoice({ currency: 'KRW' })));
    expect(krw).toMatch(/Total KRW 1,234/);
  });

  it('flows 60 lines onto further pages, repeating the table header, with the totals intact', async () => {
    const lines = manyLines(60, 7);
    const pdf = await renderInvoicePdf(invoice({ lines, subtotal: 48_600n, total: 48_600n, amountDue: 48_600n }));
    const pages = await pagesText(pdf);
    expect(pages.length).toBeGreaterThan(1);
    const all = pages.join('\n');
    for (let i = 1; i <= 60; i++) expect(all).toContain(`Line ${i}:`);
    expect(all).toContain('-$1.50');
    const last = pages.at(-1)!;
    expect(last).toMatch(/Subtotal \$486\.00/);
    expect(last).toMatch(/Total \$486\.00/);
    expect(last).toMatch(/Amount due \$486\.00/);
    expect(last.indexOf('Line 60:')).toBeLessThan(last.indexOf('Subtotal'));
    expect(pages[1]).toContain('DESCRIPTION (CONTINUED)');
    pages.forEach((p, i) => expect(p).toContain(`Page ${i + 1} of ${pages.length}`));
    expect(await overlaps(pdf)).toEqual([]);
  });

  it('never lets lines, wrapped descriptions or totals collide, whatever the page break', async () => {
    // Line counts around the first page break, so the totals land on the same page, squeeze in,
    // or move to a page of their own.
    const outcomes = new Set<string>();
    for (const n of [14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]) {
      const pdf = await renderInvoicePdf(invoice({ lines: manyLines(n, 3) }));
      expect(await overlaps(pdf), `${n} lines`).toEqual([]);
      const pages = await pagesText(pdf);
      const last = pages.at(-1)!;
      expect(last, `${n} lines`).toMatch(/Subtotal \$[\d.,]+\s+Total \$[\d.,]+\s+Amount paid \$0\.00\s+Amount due \$[\d.,]+/);
      outcomes.add(`${pages.length} pages, totals ${/Line \d+:/.test(last) ? 'after lines' : 'alone'}`);
    }
    expect(outcomes).toEqual(new Set(['1 pages, totals after lines', '2 pages, totals alone', '2 pages, totals after lines']));
  });

  it('renders names and descriptions outside WinAnsi (CJK, emoji) without throwing', async () => {
    const pdf = await renderInvoicePdf(
      invoice({
        merchantName: 'Café Zürich 東京',
        customer: { name: '山田 太郎 🎉', email: 'taro@例え.jp', id: 'cus_1' },
        lines: [{ ...invoice().lines[0]!, description: 'Plan 👨‍👩‍👧 プロ — Łódź ő' }],
      }),
    );
    expect(pdf.subarray(0, 4).toString('latin1')).toBe('%PDF');
    const text = await pdfText(pdf);
    expect(text).toContain('Café Zürich ??'); // Latin-1 accents kept, CJK replaced
    expect(text).toContain('?? ?? ?');
    expect(text).toContain('taro@??.jp');
    expect(text).toContain('Plan ??? ?? — ?ódz o'); // Latin-1 kept; ź, ő lose the accent; Ł has no WinAnsi form
    const { info } = await getMeta(new Uint8Array(pdf));
    expect(info.Author).toBe('Café Zürich 東京'); // document info is Unicode
  });

  it('handles a missing customer name/email, no lines, and control characters', async () => {
    const text = await pdfText(await renderInvoicePdf(invoice({ customer: { name: null, email: null, id: 'cus_x' }, lines: [], merchantName: 'Tab\tNew\nLine' })));
    expect(text).toContain('cus_x');
    expect(text).toContain('No line items.');
    expect(text).toContain('Tab New Line');
  });

  it('rejects an unknown currency', async () => {
    await expect(renderInvoicePdf(invoice({ currency: 'XXX' }))).rejects.toThrow(RangeError);
  });
});

describe('signed PDF links', () => {
  const secret = Buffer.from('0123456789abcdef0123456789abcdef');
  const now = d('2027-02-01T12:00:00.000Z');
  const id = 'inv_7Yq2';

  function parts(path: string) {
    const u = new URL(path, 'https://billing.example');
    return { path: u.pathname, expires: u.searchParams.get('expires') ?? undefined, signature: u.searchParams.get('signature') ?? undefined };
  }

  it('signs HMAC-SHA256 over `${id}.${expires}`, base64url', () => {
    const exp = 1_801_483_200;
    expect(pdfSignature(secret, id, exp)).toBe(createHmac('sha256', secret).update(`${id}.${exp}`).digest('base64url'));
    expect(pdfSignature(secret, id, exp)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(() => pdfSignature(Buffer.alloc(0), id, exp)).toThrow();
  });

  it('builds a path that verifies until it expires', () => {
    const link = signedPdfPath(secret, id, now);
    const { path, expires, signature } = parts(link);
    expect(path).toBe(`/hosted/invoices/${id}/pdf`);
    expect(link).toBe(`/hosted/invoices/${id}/pdf?expires=${expires}&signature=${signature}`);
    expect(Number(expires)).toBe(Math.floor((now.getTime() + PDF_LINK_TTL_MS) / 1000));
    expect(PDF_LINK_TTL_MS).toBe(300_000);

    expect(verifyPdfSignature(secret, id, expires, signature, now)).toBe(true);
    expect(verifyPdfSignature(secret, id, expires, signature, new Date(now.getTime() + PDF_LINK_TTL_MS - 1))).toBe(true);
    // Expired: at and after the expiry instant.
    expect(verifyPdfSignature(secret, id, expires, signature, new Date(Number(expires) * 1000))).toBe(false);
    expect(verifyPdfSignature(secret, id, expires, signature, new Date(now.getTime() + PDF_LINK_TTL_MS + 1))).toBe(false);
    expect(verifyPdfSignature(secret, id, expires, signature, new Date(now.getTime() + 86_400_000))).toBe(false);

    const short = parts(signedPdfPath(secret, id, now, 10_000));
    expect(Number(short.expires)).toBe(Math.floor(now.getTime() / 1000) + 10);
    expect(verifyPdfSignature(secret, id, short.expires, short.signature, new Date(now.getTime() + 9_000))).toBe(true);
    expect(verifyPdfSignature(secret, id, short.expires, short.signature, new Date(now.getTime() + 10_000))).toBe(false);
  });

  it('refuses tampered signatures, ids, expiries and secrets', () => {
    const { expires, signature } = parts(signedPdfPath(secret, id, now));
    const sig = signature!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    expect(verifyPdfSignature(secret, id, expires, flip(sig, 0), now)).toBe(false);
    expect(verifyPdfSignature(secret, id, expires, flip(sig, 20), now)).toBe(false);
    expect(verifyPdfSignature(secret, id, expires, flip(sig, 42), now)).toBe(false); // also a non-canonical final char
    expect(verifyPdfSignature(secret, 'inv_7Yq3', expires, sig, now)).toBe(false);
    expect(verifyPdfSignature(secret, `${id}.`, expires, sig, now)).toBe(false);
    expect(verifyPdfSignature(secret, id, String(Number(expires) + 1), sig, now)).toBe(false);
    expect(verifyPdfSignature(secret, id, String(Number(expires) + 86_400), sig, now)).toBe(false);
    expect(verifyPdfSignature(secret, id, `0${expires}`, sig, now)).toBe(false);
    expect(verifyPdfSignature(Buffer.from('another secret of enough length!'), id, expires, sig, now)).toBe(false);
    // A signature for a different invoice does not open this one.
    const other = parts(signedPdfPath(secret, 'inv_other', now));
    expect(verifyPdfSignature(secret, id, other.expires, other.signature, now)).toBe(false);
  });

  it('returns false without throwing for missing or garbage values', () => {
    const { expires, signature } = parts(signedPdfPath(secret, id, now));
    const bad: [string | undefined, string | undefined][] = [
      [undefined, signature],
      [expires, undefined],
      [undefined, undefined],
      ['', signature],
      [expires, ''],
      ['abc', signature],
      ['-1', signature],
      ['1e10', signature],
      [` ${expires}`, signature],
      [`${expires}.0`, signature],
      ['9'.repeat(400), signature],
      [expires, `${signature}=`],
      [expires, signature!.slice(1)],
      [expires, `${signature}A`],
      [expires, 'x'.repeat(10_000)],
      [expires, '%%%%'],
      [expires, Buffer.from(Buffer.from(signature!, 'base64url')).toString('base64')], // same bytes, other alphabet/padding
      [expires, signature!.toUpperCase()],
    ];
    for (const [e, s] of bad) expect(verifyPdfSignature(secret, id, e, s, now), `${e} / ${s}`).toBe(false);
    expect(verifyPdfSignature(secret, '', expires, signature, now)).toBe(false);
    expect(verifyPdfSignature(Buffer.alloc(0), id, expires, signature, now)).toBe(false);
    expect(verifyPdfSignature(secret, id, expires, signature, new Date(Number.NaN))).toBe(false);
    // Wrong runtime types from untyped callers.
    expect(verifyPdfSignature(secret, id, 123 as unknown as string, signature, now)).toBe(false);
    expect(verifyPdfSignature(secret, id, expires, ['a'] as unknown as string, now)).toBe(false);
    expect(verifyPdfSignature(null as unknown as Buffer, id, expires, signature, now)).toBe(false);
    expect(verifyPdfSignature(secret, null as unknown as string, expires, signature, now)).toBe(false);
    expect(verifyPdfSignature(secret, id, expires, signature, null as unknown as Date)).toBe(false);
  });
});
