// The money rules of an invoice's discount and taxes (docs/billing.md, "Discounts and taxes").
// Pure: ONE function, priceInvoice, prices the lines of every invoice — the real one when it is
// finalised and its preview (the upcoming invoice) — so a preview equals the invoice cent for cent.
//
// - Discount: computed once per invoice on its discountable subtotal (the lines that are not
//   credits carried over from an earlier invoice): percent_off → subtotal × percent rounded half
//   away from zero, on a negative subtotal too when the coupon is ongoing (forever, repeating: a
//   negative discount — time paid at the discounted price is credited at that price, not the list
//   price); amount_off at most the subtotal; nothing when the subtotal is zero, nor on a negative
//   one for amount_off and `once` coupons.
// - Sharing: a positive discount is shared across the discountable lines with a positive amount,
//   a negative one across those with a negative amount, in proportion to their amounts: each line
//   first gets floor(|discount| × |amount| / Σ |amounts|); the cents left over go one each to the
//   lines with the largest remainders (ties: the earlier line first). A line's share never
//   exceeds its amount, and has its sign.
// - Tax: per line and per rate, on the line's amount after its share of the discount (negative
//   for a credit: the tax is credited too), rounded half away from zero per line. With inclusive
//   rates R (their sum) the base contains them: each tax (inclusive or exclusive) is
//   base × rate / (1 + R), so an inclusive tax is extracted from the line and an exclusive one is
//   computed on the net amount. Rates are integers of 1/1,000,000 (a percentage with up to 4
//   decimals × 10,000).
// - Totals: subtotal = Σ line amounts; total = subtotal − discount + Σ exclusive taxes;
//   tax_amount = Σ every tax (inclusive ones are already inside the subtotal).

/** A rate is a fraction in millionths: 19.6 % = 196,000. */
export const RATE_SCALE = 1_000_000n;

export interface PricingCoupon {
  id: string;
  /** hundredths of a percent: 1–10,000 */
  percentOffBp: number | null;
  amountOff: bigint | null;
  /** a `once` coupon: one invoice's discount, which a credit (a negative subtotal) does not take */
  once?: boolean;
}

export interface PricingTaxRate {
  id: string;
  /** percentage × 10,000 (millionths of the amount) */
  percentage: number;
  inclusive: boolean;
}

export interface PricingLine {
  amount: bigint;
  /** false: a credit carried over from an earlier invoice (no discount, no tax) */
  taxable?: boolean;
}

export interface LineTax {
  tax_rate: string;
  amount: number;
  inclusive: boolean;
}

export interface PricedLine {
  discountAmount: bigint;
  taxAmounts: LineTax[];
}

export interface PricedInvoice {
  lines: PricedLine[];
  subtotal: bigint;
  discountAmount: bigint;
  /** every tax, inclusive and exclusive */
  taxAmount: bigint;
  exclusiveTax: bigint;
  total: bigint;
}

/** a / b rounded half away from zero (b > 0). */
export function divRound(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new RangeError('divisor must be positive');
  const neg = a < 0n;
  const abs = neg ? -a : a;
  const q = (abs * 2n + b) / (b * 2n);
  return neg ? -q : q;
}

/**
 * The discount of a coupon on a subtotal: percent rounded half away from zero, negative on a
 * negative subtotal for an ongoing coupon (credits keep the discount the charges they undo had);
 * amount_off capped at the subtotal; 0 on a subtotal of 0, and on a negative one for amount_off
 * and `once` coupons.
 */
export function discountOf(coupon: PricingCoupon | null, subtotal: bigint): bigint {
  if (!coupon || subtotal === 0n || (subtotal < 0n && (coupon.percentOffBp === null || coupon.once))) return 0n;
  if (coupon.percentOffBp !== null) return divRound(subtotal * BigInt(coupon.percentOffBp), 10_000n);
  const off = coupon.amountOff ?? 0n;
  return off < subtotal ? off : subtotal;
}

/**
 * Shares `discount` across `amounts` (largest remainder): a positive discount across the eligible
 * lines > 0, a negative one across the eligible lines < 0 (negative shares), in proportion to
 * their amounts; the others get nothing. Σ shares = discount when |discount| ≤ |Σ those amounts|.
 */
export function shareDiscount(amounts: bigint[], discount: bigint, eligible: boolean[] = amounts.map(() => true)): bigint[] {
  if (discount < 0n) return shareDiscount(amounts.map((a) => -a), -discount, eligible).map((x) => -x);
  const shares = amounts.map(() => 0n);
  if (discount === 0n) return shares;
  const weights = amounts.map((a, i) => (eligible[i] && a > 0n ? a : 0n));
  const total = weights.reduce((s, w) => s + w, 0n);
  if (total === 0n) return shares;
  const remainders: { i: number; r: bigint }[] = [];
  let given = 0n;
  weights.forEach((w, i) => {
    if (w === 0n) return;
    const exact = discount * w;
    shares[i] = exact / total;
    given += shares[i]!;
    remainders.push({ i, r: exact % total });
  });
  remainders.sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  for (let k = 0; given < discount && k < remainders.length; k++, given++) shares[remainders[k]!.i]! += 1n;
  return shares;
}

/** The taxes of one line's base (its amount after its discount share), each rounded half away from zero. */
export function taxesOf(base: bigint, rates: readonly PricingTaxRate[]): LineTax[] {
  const inclusive = rates.filter((r) => r.inclusive).reduce((s, r) => s + BigInt(r.percentage), 0n);
  return rates.map((r) => ({ tax_rate: r.id, amount: Number(divRound(base * BigInt(r.percentage), RATE_SCALE + inclusive)), inclusive: r.inclusive }));
}

/** Prices an invoice's lines: each line's discount share and taxes, and the invoice's totals (the rules above). */
export function priceInvoice(lines: readonly PricingLine[], coupon: PricingCoupon | null, rates: readonly PricingTaxRate[]): PricedInvoice {
  const amounts = lines.map((l) => l.amount);
  const taxable = lines.map((l) => l.taxable !== false);
  const subtotal = amounts.reduce((s, a) => s + a, 0n);
  const discountable = amounts.reduce((s, a, i) => (taxable[i] ? s + a : s), 0n);
  const discountAmount = discountOf(coupon, discountable);
  const shares = shareDiscount(amounts, discountAmount, taxable);
  let taxAmount = 0n;
  let exclusiveTax = 0n;
  const priced = lines.map((l, i) => {
    const taxAmounts = taxable[i] && rates.length > 0 ? taxesOf(l.amount - shares[i]!, rates) : [];
    for (const t of taxAmounts) {
      taxAmount += BigInt(t.amount);
      if (!t.inclusive) exclusiveTax += BigInt(t.amount);
    }
    return { discountAmount: shares[i]!, taxAmounts };
  });
  return { lines: priced, subtotal, discountAmount, taxAmount, exclusiveTax, total: subtotal - discountAmount + exclusiveTax };
}
