import { describe, expect, it } from 'vitest';
import { cardBrand, luhnValid } from '../../src/platform/processor.ts';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { ValidationError } from '../../src/platform/errors.ts';
import { ID_PREFIXES, kindOfId, newId, type IdKind } from '../../src/platform/ids.ts';
import { currencyExponent, formatMoney, isValidAmount, normalizeCurrency } from '../../src/platform/money.ts';
import { checkLimit, decodeCursor, encodeCursor } from '../../src/platform/pagination.ts';

describe('money', () => {
  it('formats with the currency symbol and ISO decimals, exactly', () => {
    expect(formatMoney(1234, 'USD')).toBe('$12.34');
    expect(formatMoney(50, 'eur')).toBe('€0.50');
    expect(formatMoney(1200, 'JPY')).toBe('¥1,200');
    expect(formatMoney(1000, 'XAF')).toBe('FCFA 1,000');
    expect(formatMoney(1250, 'KWD')).toBe('KWD 1.250');
    expect(formatMoney(99_999_999_999, 'USD')).toBe('$999,999,999.99');
    expect(formatMoney(999_999_999_999_999n, 'USD')).toBe('$9,999,999,999,999.99');
    expect(formatMoney(-5, 'USD')).toBe('-$0.05');
    expect(formatMoney(0, 'UGX')).toBe('UGX 0');
    expect(formatMoney(12345, 'CLF')).toBe('CLF 1.2345');
    expect(() => formatMoney(1, 'XYZ')).toThrow(RangeError);
  });

  it('knows ISO 4217 codes and exponents', () => {
    expect([currencyExponent('JPY'), currencyExponent('USD'), currencyExponent('KWD'), currencyExponent('CLF')]).toEqual([0, 2, 3, 4]);
    expect(normalizeCurrency(' usd ')).toBe('USD');
    for (const bad of ['XYZ', 'XAU', 'XTS', '', 'US', 'USDD']) expect(normalizeCurrency(bad)).toBeNull();
  });

  it('validates amounts', () => {
    expect([0, 1, 99_999_999_999, 100_000_000_000, 1.5, Number.NaN, '5'].map((v) => isValidAmount(v))).toEqual([false, true, true, false, false, false, false]);
    expect(isValidAmount(0, 0)).toBe(true);
  });
});

describe('ids', () => {
  it('are prefixed, 22 base62 characters, and name their kind', () => {
    for (const kind of Object.keys(ID_PREFIXES) as IdKind[]) {
      const id = newId(kind);
      expect(id).toMatch(new RegExp(`^${ID_PREFIXES[kind]}_[0-9A-Za-z]{22}$`));
      expect(kindOfId(id)).toBe(kind);
    }
    const many = new Set(Array.from({ length: 10_000 }, () => newId('customer')));
    expect(many.size).toBe(10_000);
    for (const bad of ['cus_', 'xyz_0123456789abcdefghijkl', 'cus-0123456789abcdefghijkl', 'cus_01234', '']) expect(kindOfId(bad)).toBeNull();
  });
});

describe('cursors and limits', () => {
  it('round-trip (created_at in ms, id) and reject anything else', () => {
    const row = { createdAt: new Date('2026-11-23T03:20:03.464Z'), id: 'cus_BXCXKmIhLU2Vbk322BJhIy' };
    const c = encodeCursor(row);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c)).toEqual(row);
    // A coupon's id may be the merchant's code: its cursor round-trips too.
    const coupon = { createdAt: new Date('2026-11-23T03:20:03.464Z'), id: 'SUMMER-25' };
    expect(decodeCursor(encodeCursor(coupon))).toEqual(coupon);
    const tampered = Buffer.from('nope:cus_x').toString('base64url');
    for (const bad of ['garbage!', tampered, 'a'.repeat(201), Buffer.from('123:not an id').toString('base64url'), Buffer.from(`123:${'x'.repeat(65)}`).toString('base64url')]) {
      try {
        decodeCursor(bad);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError);
        expect(e).toMatchObject({ code: 'parameter_invalid', param: 'after' });
      }
    }
  });

  it('limit defaults to 20 and must be 1..100', () => {
    expect(checkLimit(undefined)).toBe(20);
    expect(checkLimit(1)).toBe(1);
    expect(checkLimit(100)).toBe(100);
    for (const bad of [0, 101, 1.5]) expect(() => checkLimit(bad, 'first')).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'first' }));
  });
});

describe('config', () => {
  it('has sensible defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 4000, HOST: '127.0.0.1', DATA_DIR: './.data', LOG_LEVEL: 'info', BILLING_ALLOW_HTTP_WEBHOOKS: false });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.publicBaseUrl).toBe('http://localhost:4000');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.com/' }).publicBaseUrl).toBe('https://pay.example.com');
    expect(loadConfig({ BILLING_ALLOW_HTTP_WEBHOOKS: '1' }).BILLING_ALLOW_HTTP_WEBHOOKS).toBe(true);
    expect(c.WEB_CONCURRENCY).toBe(1);
    expect(loadConfig({ WEB_CONCURRENCY: '4', DATABASE_URL: 'postgresql://db/billing' }).WEB_CONCURRENCY).toBe(4);
    // The clock-advance lease: 30 s unless set (the crash tests set a few seconds).
    expect(c.CLOCK_ADVANCE_LEASE_MS).toBe(30_000);
    expect(loadConfig({ CLOCK_ADVANCE_LEASE_MS: '5000' }).CLOCK_ADVANCE_LEASE_MS).toBe(5000);
  });

  it('names the variable that is wrong', () => {
    for (const [env, name] of [
      [{ PORT: 'eighty' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [{ PUBLIC_BASE_URL: 'ftp://x' }, 'PUBLIC_BASE_URL'],
      [{ BILLING_BOOTSTRAP_CLIENT_ID: 'ck_abcdefghij' }, 'BILLING_BOOTSTRAP_CLIENT_SECRET'],
      [{ WEB_CONCURRENCY: '2' }, 'WEB_CONCURRENCY: more than one process needs DATABASE_URL'],
      [{ WEB_CONCURRENCY: '0', DATABASE_URL: 'postgresql://x' }, 'WEB_CONCURRENCY'],
      [{ PAYMENT_RECOVERY_MS: '10000' }, 'PROCESSOR_TIMEOUT_MS must be below PAYMENT_RECOVERY_MS'],
      [{ PROCESSOR_TIMEOUT_MS: '60000' }, 'PROCESSOR_TIMEOUT_MS must be below PAYMENT_RECOVERY_MS'],
      [{ CLOCK_ADVANCE_LEASE_MS: '500' }, 'CLOCK_ADVANCE_LEASE_MS'],
    ] as const) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(new RegExp(name));
    }
  });
});

describe('card checks', () => {
  it('applies the Luhn check and names the brand', () => {
    expect(['4242424242424242', '4000000000000002', '4000000000009995', '5555555555554444'].every(luhnValid)).toBe(true);
    expect(['4242424242424241', '1234', 'abcd', ''].some(luhnValid)).toBe(false);
    expect([cardBrand('4242424242424242'), cardBrand('5555555555554444'), cardBrand('378282246310005')]).toEqual(['visa', 'mastercard', 'amex']);
  });
});

describe('idempotency fingerprints', () => {
  it('tell dates apart by their instant (GraphQL DateTime inputs), and ignore key order', async () => {
    const { fingerprint } = await import('../../src/platform/idempotency.ts');
    expect(fingerprint('x', { a: new Date('2030-01-01T00:00:00Z') })).not.toBe(fingerprint('x', { a: new Date('2031-01-01T00:00:00Z') }));
    expect(fingerprint('x', { a: new Date('2030-01-01T00:00:00Z') })).toBe(fingerprint('x', { a: new Date('2030-01-01T00:00:00.000Z') }));
    expect(fingerprint('x', { a: 1, b: [1, 2] })).toBe(fingerprint('x', { b: [1, 2], a: 1 }));
    expect(fingerprint('x', { a: 1n })).not.toBe(fingerprint('x', { a: 1 }));
  });
});

describe('urlWithoutSecrets (the OTLP endpoint in the "tracing on" line, the export target)', () => {
  it('keeps scheme, host, port and path; drops user name, password and query string', async () => {
    const { urlWithoutSecrets } = await import('../../src/platform/logger.ts');
    const logged = urlWithoutSecrets('http://tenant:OtlpPw5ecret@127.0.0.1:4318/otlp?api_key=QueryKey123');
    expect(logged).toBe('http://127.0.0.1:4318/otlp');
    expect(logged).not.toMatch(/tenant|OtlpPw5ecret|QueryKey123/);
    expect(urlWithoutSecrets('https://collector.example.com')).toBe('https://collector.example.com/');
    expect(urlWithoutSecrets('postgresql://u:pw@db.example.com:5433/billing', { scheme: false })).toBe('db.example.com:5433/billing');
    expect(urlWithoutSecrets('not a url with secret')).toBeNull();
  });
});
