// The payment processor boundary. Routes and domain code only see this interface; the built-in
// test processor implements it for test-mode merchants. A real card-network or mobile-money
// adapter implements the same two calls and is returned by `processorFor` for live merchants.

import type { Ctx } from './context.ts';
import { isTransaction } from './db/tenant.ts';
import { inSpan, SpanKind, tracingEnabled } from './tracing.ts';

/** The kinds of payment method the processor takes. */
export const PAYMENT_METHODS = ['card', 'mobile_money'] as const;
export type PaymentMethodType = (typeof PAYMENT_METHODS)[number];

export interface CardInput {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

export interface ChargeRequest {
  /** our payment id (plus the attempt number): processors use it as their idempotency key, so a retried charge is not doubled */
  reference: string;
  amount: bigint;
  currency: string;
  method: PaymentMethodType;
  card?: CardInput;
  phone?: string;
  /** a saved method's processor token: charged off-session, without the customer */
  token?: string;
  /** the saved method's details (what the payment shows), with `token` */
  savedDetails?: MethodDetails;
}

/** Saving a method (a setup intent): the processor checks it and returns a reusable token. */
export interface SaveRequest {
  /** our setup intent id: the processor's idempotency key */
  reference: string;
  method: PaymentMethodType;
  card?: CardInput;
  phone?: string;
}

/** What a saved method shows: never a full card number, CVC or phone number. */
export type SavedDetails =
  | { type: 'card'; card: { brand: string; last4: string; exp_month: number; exp_year: number } }
  | { type: 'mobile_money'; mobile_money: { phone_last4: string; provider: string } };

export type SaveResult =
  | { status: 'succeeded'; token: string; details: SavedDetails }
  | { status: 'failed'; code: string; message: string };

/** Stored on the payment: never a full card number or CVC. */
export type MethodDetails =
  | { type: 'card'; card: { brand: string; last4: string; exp_month: number; exp_year: number } }
  | { type: 'mobile_money'; mobile_money: { phone: string } };

export type ChargeResult =
  | { status: 'succeeded'; processorRef: string; details: MethodDetails }
  | { status: 'failed'; code: string; message: string; details: MethodDetails | null };

export interface RefundRequest {
  reference: string;
  chargeRef: string | null;
  amount: bigint;
  currency: string;
}

export type RefundResult = { status: 'succeeded'; processorRef: string } | { status: 'failed'; code: string };

export interface Processor {
  readonly name: string;
  charge(req: ChargeRequest): Promise<ChargeResult>;
  /**
   * What became of the charge made under `reference` (its idempotency key), without charging: the
   * outcome, or null when the processor has no such charge (it never reached it: no money moved).
   * Recovers a checkout attempt whose process died during the charge (the card data is not kept,
   * so it cannot be charged again).
   */
  retrieve(reference: string): Promise<ChargeResult | null>;
  refund(req: RefundRequest): Promise<RefundResult>;
  /** Checks a method and returns a token that later charges name (setup intents). */
  save(req: SaveRequest): Promise<SaveResult>;
}

export const TEST_CARDS = {
  success: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
} as const;

/** Luhn check of a digits-only card number (all zeros passes Luhn but is no card). */
export function luhnValid(digits: string): boolean {
  if (!/^[0-9]{12,19}$/.test(digits) || /^0+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * The card brands the service recognises, by the number's leading digits (first match wins), with
 * how the number is grouped for display (`gaps`: the digit positions a space goes before), its
 * valid lengths and the length of its security code. One table for the server's checks and the
 * hosted pages' script (src/hosted/layout.ts serialises it), so both agree on every number.
 */
export const CARD_BRANDS: readonly { brand: string; prefix: RegExp; gaps: number[]; lengths: number[]; cvc: number }[] = [
  { brand: 'amex', prefix: /^3[47]/, gaps: [4, 10], lengths: [15], cvc: 4 },
  { brand: 'diners', prefix: /^3(?:0[0-5]|[689])/, gaps: [4, 10], lengths: [14, 16, 19], cvc: 3 },
  { brand: 'jcb', prefix: /^35(?:2[89]|[3-8])/, gaps: [4, 8, 12], lengths: [16, 17, 18, 19], cvc: 3 },
  { brand: 'discover', prefix: /^(?:6011|64[4-9]|65)/, gaps: [4, 8, 12], lengths: [16, 17, 18, 19], cvc: 3 },
  { brand: 'unionpay', prefix: /^62/, gaps: [4, 8, 12], lengths: [16, 17, 18, 19], cvc: 3 },
  { brand: 'visa', prefix: /^4/, gaps: [4, 8, 12], lengths: [13, 16, 19], cvc: 3 },
  { brand: 'mastercard', prefix: /^(?:5[1-5]|2[2-7])/, gaps: [4, 8, 12], lengths: [16], cvc: 3 },
];

export function cardBrand(digits: string): string {
  return CARD_BRANDS.find((b) => b.prefix.test(digits))?.brand ?? 'unknown';
}

/** A digits-only number the service takes: Luhn-valid, and of a length its brand has (any 12–19 for an unknown brand). */
export function cardNumberValid(digits: string): boolean {
  if (!luhnValid(digits)) return false;
  const brand = CARD_BRANDS.find((b) => b.prefix.test(digits));
  return !brand || brand.lengths.includes(digits.length);
}

export function cardDetails(card: CardInput): MethodDetails {
  return { type: 'card', card: { brand: cardBrand(card.number), last4: card.number.slice(-4), exp_month: card.expMonth, exp_year: card.expYear } };
}

/**
 * The built-in test processor. Cards: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is
 * declined, 4000 0000 0000 9995 fails with insufficient funds, any other valid card succeeds.
 * Mobile money: phone numbers ending in 0000 fail, others succeed. Refunds always succeed.
 * Everything settles at once.
 */
/** The part of a phone number a saved method shows. */
export function phoneLast4(phone: string): string {
  return phone.replace(/[^0-9]/g, '').slice(-4);
}

// Test tokens carry the outcome their method's later charges get (a real processor's tokens are
// opaque references to what it stored): ok, or insufficient funds (card …9995), or a mobile-money
// decline (numbers ending in 0000).
const TEST_TOKEN = /^test_(ok|nsf|mmfail)_[0-9A-Za-z]+$/;

// The test processor's memory of its charges (by reference), as a real processor keeps them: it
// lives in this process, so after a crash it knows nothing, which is the truth for it — a charge it
// did not finish moved no money. Bounded: the oldest are forgotten first.
const testCharges = new Map<string, ChargeResult>();
const TEST_CHARGES_KEPT = 100_000;
function remember(reference: string, result: ChargeResult): ChargeResult {
  if (testCharges.size >= TEST_CHARGES_KEPT) testCharges.delete(testCharges.keys().next().value!);
  testCharges.set(reference, result);
  return result;
}

/** Simulated processor latency for test-mode merchants (TEST_PROCESSOR_LATENCY_MS; crash tests use it). */
let testLatencyMs = 0;
export function setTestProcessorLatency(ms: number): void {
  testLatencyMs = ms;
}
const latency = () => (testLatencyMs > 0 ? new Promise((r) => setTimeout(r, testLatencyMs)) : undefined);

export const testProcessor: Processor = {
  name: 'test',
  async retrieve(reference) {
    return testCharges.get(reference) ?? null;
  },
  async save(req) {
    const suffix = req.reference.replace(/[^0-9A-Za-z]/g, '');
    if (req.method === 'card') {
      if (!req.card) return { status: 'failed', code: 'processing_error', message: 'No card was given.' };
      if (req.card.number === TEST_CARDS.declined) return { status: 'failed', code: 'card_declined', message: 'The card was declined.' };
      const outcome = req.card.number === TEST_CARDS.insufficientFunds ? 'nsf' : 'ok';
      const { card } = cardDetails(req.card) as Extract<MethodDetails, { type: 'card' }>;
      return { status: 'succeeded', token: `test_${outcome}_${suffix}`, details: { type: 'card', card } };
    }
    const phone = req.phone ?? '';
    if (!phone) return { status: 'failed', code: 'processing_error', message: 'Mobile money needs a phone number.' };
    return {
      status: 'succeeded',
      token: `test_${phone.endsWith('0000') ? 'mmfail' : 'ok'}_${suffix}`,
      details: { type: 'mobile_money', mobile_money: { phone_last4: phoneLast4(phone), provider: 'test' } },
    };
  },
  async charge(req) {
    await latency();
    return remember(req.reference, await testCharge(req));
  },
  async refund(req) {
    await latency();
    return { status: 'succeeded', processorRef: `test_re_${req.reference}` };
  },
};

async function testCharge(req: ChargeRequest): Promise<ChargeResult> {
  if (req.token !== undefined) {
    const details = req.savedDetails ?? null;
    const m = TEST_TOKEN.exec(req.token);
    if (!m) return { status: 'failed', code: 'processing_error', message: 'Unknown payment method token.', details };
    if (m[1] === 'nsf') return { status: 'failed', code: 'insufficient_funds', message: 'The card has insufficient funds.', details };
    if (m[1] === 'mmfail') return { status: 'failed', code: 'mobile_money_declined', message: 'The mobile money payment was declined.', details };
    return { status: 'succeeded', processorRef: `test_ch_${req.reference}`, details: details ?? { type: 'card', card: { brand: 'unknown', last4: '', exp_month: 1, exp_year: 2000 } } };
  }
  if (req.method === 'card') {
    if (!req.card) return { status: 'failed', code: 'processing_error', message: 'No card was given.', details: null };
    const details = cardDetails(req.card);
    if (req.card.number === TEST_CARDS.declined) return { status: 'failed', code: 'card_declined', message: 'The card was declined.', details };
    if (req.card.number === TEST_CARDS.insufficientFunds) {
      return { status: 'failed', code: 'insufficient_funds', message: 'The card has insufficient funds.', details };
    }
    return { status: 'succeeded', processorRef: `test_ch_${req.reference}`, details };
  }
  const phone = req.phone ?? '';
  const details: MethodDetails = { type: 'mobile_money', mobile_money: { phone } };
  if (!phone) return { status: 'failed', code: 'processing_error', message: 'Mobile money needs a phone number.', details };
  if (phone.endsWith('0000')) return { status: 'failed', code: 'mobile_money_declined', message: 'The mobile money payment was declined.', details };
  return { status: 'succeeded', processorRef: `test_mm_${req.reference}`, details };
}

/** Live mode has no bundled processor: charges fail clearly instead of pretending. */
const unconfiguredProcessor: Processor = {
  name: 'none',
  async save() {
    return { status: 'failed', code: 'processor_unavailable', message: 'No live payment processor is configured for this merchant.' };
  },
  async charge() {
    return { status: 'failed', code: 'processor_unavailable', message: 'No live payment processor is configured for this merchant.', details: null };
  },
  async retrieve() {
    return null;
  },
  async refund() {
    return { status: 'failed', code: 'processor_unavailable' };
  },
};

export function processorFor(merchant: { mode: 'test' | 'live' }): Processor {
  return merchant.mode === 'test' ? testProcessor : unconfiguredProcessor;
}

/**
 * The merchant's processor, from the runtime (where tests inject fakes). A processor call must
 * never run inside a database transaction (it would hold row locks for as long as the processor
 * takes, and a rollback would forget money that moved): this asserts it.
 */
/** A charge the processor did not answer within PROCESSOR_TIMEOUT_MS: its outcome is unknown. */
export class ProcessorTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the processor did not answer within ${ms} ms`);
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProcessorTimeout(ms)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The merchant's processor. Charges are bounded by PROCESSOR_TIMEOUT_MS, which the configuration
 * keeps below PAYMENT_RECOVERY_MS: the recovery job never asks about an attempt whose own process
 * may still be waiting for its answer.
 */
export function processorOf(ctx: Ctx): Processor {
  if (isTransaction(ctx.db)) throw new Error('a payment processor call must not run inside a database transaction');
  const processor = ctx.runtime.processorFor(ctx.merchant);
  const ms = ctx.runtime.processorTimeoutMs;
  const bounded = ms ? Object.assign(Object.create(processor) as Processor, { charge: (req: ChargeRequest) => withTimeout(processor.charge(req), ms) }) : processor;
  return tracingEnabled() ? traced(bounded) : bounded;
}

/** Each call a CLIENT span (src/platform/tracing.ts): which processor, which call, its outcome; never card data. */
function traced(p: Processor): Processor {
  const call = <R,>(name: string, fn: () => Promise<R>) =>
    inSpan(`processor.${name}`, { 'billing.processor': p.name }, async (span) => {
      const r = await fn();
      const status = (r as { status?: unknown } | null)?.status;
      if (typeof status === 'string') span?.setAttribute('billing.processor.outcome', status);
      return r;
    }, { kind: SpanKind.CLIENT });
  return Object.assign(Object.create(p) as Processor, {
    charge: (req: ChargeRequest) => call('charge', () => p.charge(req)),
    retrieve: (reference: string) => call('retrieve', () => p.retrieve(reference)),
    refund: (req: RefundRequest) => call('refund', () => p.refund(req)),
    save: (req: SaveRequest) => call('save', () => p.save(req)),
  });
}
