// The dashboard's rule for an invoice's total (dashboard/src/invoice-money.ts): shown only when
// the API computed it, "—" otherwise — never $0.00 for a draft whose lines add up to more (a draft
// read from an API that leaves its totals at 0 or null, as before draft totals were computed).
import { describe, expect, it } from 'vitest';
import { invoiceTotal, totalsKnown } from '../../dashboard/src/invoice-money.ts';

const lines = (...amounts: number[]) => amounts.map((amount) => ({ amount }));

describe('the dashboard’s invoice total', () => {
  it('a finalized invoice: its total, $0.00 included', () => {
    expect(invoiceTotal({ status: 'paid', currency: 'USD', subtotal: 6000, total: 7200, lines: lines(6000) })).toBe('$72.00');
    expect(invoiceTotal({ status: 'open', currency: 'USD', subtotal: 0, total: 0, lines: [] })).toBe('$0.00');
    expect(invoiceTotal({ status: 'void', currency: 'JPY', subtotal: 1200, total: 1200, lines: lines(1200) })).toBe('¥1,200');
  });

  it('a draft with computed totals (subtotal = its lines): its total; with 0 or null for lines that add up to more: —', () => {
    expect(invoiceTotal({ status: 'draft', currency: 'USD', subtotal: 6000, total: 7200, lines: lines(4500, 1500) })).toBe('$72.00');
    expect(invoiceTotal({ status: 'draft', currency: 'USD', subtotal: 0, total: 0, lines: lines(4500, 1500) })).toBe('—');
    expect(invoiceTotal({ status: 'draft', currency: 'USD', subtotal: null, total: null, lines: lines(4500) })).toBe('—');
    expect(invoiceTotal({ status: 'paid', currency: 'USD', subtotal: 100, total: null, lines: lines(100) })).toBe('—');
    // A 100 % discount: computed, and truly $0.00.
    expect(invoiceTotal({ status: 'draft', currency: 'USD', subtotal: 6000, total: 0, lines: lines(6000) })).toBe('$0.00');
    // No lines, or lines that net to nothing: $0.00 is the truth.
    expect(invoiceTotal({ status: 'draft', currency: 'USD', subtotal: 0, total: 0, lines: [] })).toBe('$0.00');
    expect(invoiceTotal({ status: 'draft', currency: 'USD', subtotal: 0, total: 0, lines: lines(500, -500) })).toBe('$0.00');
    expect(totalsKnown({ status: 'draft', currency: 'USD', subtotal: 0, total: 0, lines: lines(1) })).toBe(false);
  });
});
