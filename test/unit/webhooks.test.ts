import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSecret, sign, signatureHeader } from '../../src/domain/webhooks/signing.ts';
import { checkEndpointUrl, isForbiddenAddress, resolveSafe } from '../../src/domain/webhooks/ssrf.ts';

describe('SSRF guard', () => {
  it('refuses private, loopback, link-local, metadata and other special addresses', () => {
    for (const a of [
      '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '127.0.0.1', '127.9.9.9', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1', 'ff02::1', 'not-an-ip',
    ]) expect(isForbiddenAddress(a), a).toBe(true);
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isForbiddenAddress(a), a).toBe(false);
    expect(isForbiddenAddress('127.0.0.1', true)).toBe(false);
    expect(isForbiddenAddress('::1', true)).toBe(false);
    expect(isForbiddenAddress('10.0.0.1', true)).toBe(true);
  });

  it('checks endpoint URLs statically', () => {
    expect(checkEndpointUrl('https://hooks.example.com/x', false)).toBeNull();
    expect(checkEndpointUrl('http://hooks.example.com/x', false)).toMatch(/https/);
    expect(checkEndpointUrl('http://127.0.0.1:8080/x', false)).toMatch(/https/);
    expect(checkEndpointUrl('http://127.0.0.1:8080/x', true)).toBeNull();
    expect(checkEndpointUrl('http://localhost:8080/x', true)).toBeNull();
    expect(checkEndpointUrl('http://example.com/x', true)).toMatch(/loopback/);
    expect(checkEndpointUrl('https://192.168.0.10/x', true)).toMatch(/private/);
    expect(checkEndpointUrl('https://user:pw@example.com/x', false)).toMatch(/credentials/);
    expect(checkEndpointUrl('javascript:alert(1)', false)).toMatch(/https/);
  });

  it('resolves names and refuses those that lead to forbidden addresses', async () => {
    await expect(resolveSafe('localhost', false)).rejects.toThrow(/forbidden/);
    const all = await resolveSafe('localhost', true);
    expect(all.length).toBeGreaterThan(0);
    for (const a of all) expect(a.address).toMatch(/^(127\.|::1$)/);
    await expect(resolveSafe('10.0.0.1', true)).rejects.toThrow(/forbidden/);
  });
});

describe('Standard Webhooks signatures', () => {
  it('verify with the reference implementation, and rotation signs with both secrets', () => {
    const secret = newSecret();
    const old = newSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'customer.created' });
    const ts = Math.floor(Date.now() / 1000);
    const header = signatureHeader({ secret, previousSecret: old, previousSecretExpiresAt: new Date(Date.now() + 1000) }, 'evt_1', ts, body);
    expect(header.split(' ')).toEqual([sign(secret, 'evt_1', ts, body), sign(old, 'evt_1', ts, body)]);
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': header };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(old).verify(body, headers)).toEqual(JSON.parse(body));
    const expired = signatureHeader({ secret, previousSecret: old, previousSecretExpiresAt: new Date(Date.now() - 1) }, 'evt_1', ts, body);
    expect(() => new Webhook(old).verify(body, { ...headers, 'webhook-signature': expired })).toThrow();
    expect(() => new Webhook(secret).verify(body + ' ', headers)).toThrow();
  });
});
