// An invoice's total as the dashboard shows it (no React: the rule is unit-tested, test/unit/dashboard-invoice-total.test.ts).
import { formatMoney } from './format.ts';

/** An invoice's money as the lists and pages read it. */
export interface InvoiceMoney {
  status: string;
  currency: string;
  subtotal?: number | null;
  total?: number | null;
  lines: { amount: number }[];
}

/**
 * Whether the API computed the invoice's totals. A finalized invoice has them; a draft has them
 * when its subtotal is what its lines add up to (the API's definition of subtotal). A draft whose
 * totals are not computed yet carries 0 (or null): shown as such, $0.00 would be a lie when it has
 * lines.
 */
export function totalsKnown(i: InvoiceMoney): boolean {
  if (i.total === null || i.total === undefined || i.subtotal === null || i.subtotal === undefined) return false;
  if (i.status !== 'draft') return true;
  return i.subtotal === i.lines.reduce((n, l) => n + l.amount, 0);
}

/** Its total, or "—" while a draft's is not computed (null, or 0 with lines that add up to more). */
export const invoiceTotal = (i: InvoiceMoney) => (totalsKnown(i) ? formatMoney(i.total!, i.currency) : '—');
