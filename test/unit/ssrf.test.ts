// SSRF guard: address parsing, the forbidden-address table (every IPv6 form that embeds an IPv4
// address), the static URL check and the refusal message.
import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, embeddedIPv4, FORBIDDEN_MESSAGE, isForbiddenAddress, isLoopback, parseIp, resolveSafe } from '../../src/domain/webhooks/ssrf.ts';

const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : null);
const v4 = (b: Uint8Array) => [...b].join('.');

describe('parseIp', () => {
  it('parses every spelling of the same address to the same bytes', () => {
    const mappedLoopback = '00000000000000000000ffff7f000001';
    for (const s of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::FFFF:7F00:0001', '0:0:0:0:0:ffff:7f00:1', '0000:0000:0000:0000:0000:ffff:127.0.0.1', '[::ffff:7f00:1]', ' ::ffff:7f00:1 '])
      expect(hex(parseIp(s)?.bytes), s).toBe(mappedLoopback);
    expect(parseIp('fe80::1%eth0')).toEqual({ family: 6, bytes: parseIp('fe80::1')!.bytes });
    expect(hex(parseIp('FE80::1%25lo')?.bytes)).toBe('fe800000000000000000000000000001');
    expect(hex(parseIp('1:2:3:4:5:6:7::')?.bytes)).toBe('00010002000300040005000600070000');
    expect(hex(parseIp('::1:2:3:4:5:6:7')?.bytes)).toBe('00000001000200030004000500060007');
    expect(hex(parseIp('1:2:3:4:5:6:1.2.3.4')?.bytes)).toBe('00010002000300040005000601020304');
    expect(hex(parseIp('::')?.bytes)).toBe('0'.repeat(32));
    expect(parseIp('8.8.8.8')).toEqual({ family: 4, bytes: new Uint8Array([8, 8, 8, 8]) });
  });

  it('rejects what is not an address', () => {
    for (const s of [
      '', 'not-an-ip', 'localhost', '1.2.3', '1.2.3.4.5', '1.2.3.256', '01.2.3.4', '0x7f.0.0.1', '1.2.3.4%eth0', '1::2::3', ':::', ':1::', '1:2:3:4:5:6:7:8:9',
      '1::2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8::', '12345::', 'g::1', 'fe80::1%', '::ffff:1.2.3', '::1.2.3.4:5', '[::1',
    ]) expect(parseIp(s), s).toBeNull();
  });

  it('agrees with the WHATWG URL parser on random addresses in full and compressed form', () => {
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed);
    for (let n = 0; n < 500; n++) {
      // sparse groups so that "::" compression happens often
      const groups = Array.from({ length: 8 }, () => (rnd() % 3 === 0 ? rnd() & 0xffff : 0));
      const full = groups.map((g) => g.toString(16)).join(':');
      const canonical = new URL(`http://[${full}]/`).hostname; // compressed, lower case, in brackets
      const want = groups.map((g) => g.toString(16).padStart(4, '0')).join('');
      expect(hex(parseIp(full)?.bytes), full).toBe(want);
      expect(hex(parseIp(canonical)?.bytes), canonical).toBe(want);
      expect(hex(parseIp(canonical.toUpperCase())?.bytes), canonical).toBe(want);
    }
  });
});

describe('forbidden addresses', () => {
  // [address, forbidden without loopback allowance, forbidden with it]
  const table: [string, boolean, boolean][] = [
    // public IPv4 / IPv6
    ['8.8.8.8', false, false],
    ['1.1.1.1', false, false],
    ['172.32.0.1', false, false],
    ['100.128.0.1', false, false],
    ['2606:4700::1111', false, false],
    ['2606:4700:4700::1111', false, false],
    ['2001:4860:4860::8888', false, false],
    ['2A00:1450:4001:81D::200E', false, false],
    // IPv4 blocklist
    ['127.0.0.1', true, false],
    ['127.9.9.9', true, false],
    ['10.1.2.3', true, true],
    ['172.16.0.1', true, true],
    ['192.168.1.1', true, true],
    ['169.254.169.254', true, true],
    ['100.64.0.1', true, true],
    ['0.0.0.0', true, true],
    ['192.0.2.1', true, true],
    ['198.18.0.1', true, true],
    ['224.0.0.1', true, true],
    ['240.0.0.1', true, true],
    ['255.255.255.255', true, true],
    // IPv6 blocklist
    ['::1', true, false],
    ['0:0:0:0:0:0:0:1', true, false],
    ['::', true, true],
    ['fe80::1', true, true],
    ['FE80::1%eth0', true, true],
    ['fc00::1', true, true],
    ['fd12:3456::1', true, true],
    ['fec0::1', true, true],
    ['ff02::1', true, true],
    ['100::1', true, true],
    ['2001:db8::1', true, true],
    ['3fff::1', true, true],
    ['2001:2::1', true, true],
    ['2001:10::1', true, true],
    ['2001:20::1', true, true],
    // IPv4-mapped ::ffff:0:0/96, dotted and hex (real loopback: allowed when loopback is)
    ['::ffff:127.0.0.1', true, false],
    ['::ffff:7f00:1', true, false],
    ['::FFFF:7F00:0001', true, false],
    ['::ffff:169.254.169.254', true, true],
    ['::ffff:a9fe:a9fe', true, true],
    ['::ffff:a00:1', true, true],
    ['::ffff:c0a8:101', true, true],
    ['::ffff:8.8.8.8', false, false],
    ['::ffff:808:808', false, false],
    // IPv4-translated ::ffff:0:0:0/96
    ['::ffff:0:7f00:1', true, true],
    ['::ffff:0:127.0.0.1', true, true],
    ['::ffff:0:a9fe:a9fe', true, true],
    ['::ffff:0:10.0.0.1', true, true],
    ['::ffff:0:808:808', false, false],
    // IPv4-compatible ::/96 (never loopback: not routed to 127.x)
    ['::7f00:1', true, true],
    ['::127.0.0.1', true, true],
    ['::a9fe:a9fe', true, true],
    ['::169.254.169.254', true, true],
    ['::a01:203', true, true],
    ['::808:808', false, false],
    // NAT64 64:ff9b::/96: judged by the embedded IPv4
    ['64:ff9b::7f00:1', true, true],
    ['64:ff9b::127.0.0.1', true, true],
    ['64:ff9b::a9fe:a9fe', true, true],
    ['64:ff9b::192.168.1.1', true, true],
    ['64:ff9b::808:808', false, false],
    ['64:FF9B::8.8.8.8', false, false],
    // local-use NAT64 64:ff9b:1::/48: the whole prefix
    ['64:ff9b:1::808:808', true, true],
    ['64:ff9b:1:ffff::1', true, true],
    ['64:ff9b:2::808:808', false, false],
    // 6to4 2002::/16: IPv4 in bytes 2..5
    ['2002:7f00:1::1', true, true],
    ['2002:a9fe:a9fe::', true, true],
    ['2002:c0a8:101::1', true, true],
    ['2002:a00:1:1::1', true, true],
    ['2002:808:808::1', false, false],
    // Teredo 2001::/32: server IPv4 in bytes 4..7, client IPv4 = bytes 12..15 XOR 0xff
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true, true], // RFC 4380 example: client 192.0.2.45 (TEST-NET-1)
    ['2001:0:a9fe:a9fe::f7f7:f7f7', true, true], // server 169.254.169.254, client 8.8.8.8
    ['2001:0:808:808::80ff:fffe', true, true], // server 8.8.8.8, client 127.0.0.1
    ['2001:0:808:808::f5ff:fffe', true, true], // client 10.0.0.1
    ['2001:0:808:808::f7f7:f7f7', false, false], // server and client 8.8.8.8
    ['2001:0:4136:e378:8000:63bf:bebe:fefe', false, false], // client 65.65.1.1
    // not an address
    ['not-an-ip', true, true],
    ['', true, true],
    ['01.2.3.4', true, true],
  ];

  it.each(table)('%s: forbidden %s, with loopback allowed %s', (address, forbidden, forbiddenWithLoopback) => {
    expect(isForbiddenAddress(address)).toBe(forbidden);
    expect(isForbiddenAddress(address, false)).toBe(forbidden);
    expect(isForbiddenAddress(address, true)).toBe(forbiddenWithLoopback);
  });

  it('finds the IPv4 address embedded in each IPv6 form', () => {
    const emb = (a: string) => embeddedIPv4(parseIp(a)!.bytes).map(v4);
    expect(emb('::ffff:7f00:1')).toEqual(['127.0.0.1']);
    expect(emb('::ffff:0:a9fe:a9fe')).toEqual(['169.254.169.254']);
    expect(emb('::a9fe:a9fe')).toEqual(['169.254.169.254']);
    expect(emb('64:ff9b::c0a8:101')).toEqual(['192.168.1.1']);
    expect(emb('2002:a9fe:a9fe:1::1')).toEqual(['169.254.169.254']);
    expect(emb('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['65.54.227.120', '192.0.2.45']);
    expect(emb('2606:4700::1111')).toEqual([]);
    expect(embeddedIPv4(parseIp('8.8.8.8')!.bytes)).toEqual([]);
  });

  it('counts only real loopback as loopback', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '[::1]']) expect(isLoopback(a), a).toBe(true);
    for (const a of ['::7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::', '::ffff:0:7f00:1', '10.0.0.1', 'localhost', '::2']) expect(isLoopback(a), a).toBe(false);
  });
});

describe('endpoint URL check', () => {
  it('refuses literal IPs of every forbidden form, in any spelling the URL parser accepts', () => {
    for (const allow of [false, true]) {
      for (const url of [
        'https://[::7f00:1]/x', 'https://[::127.0.0.1]/x', 'https://[::a9fe:a9fe]/x', 'https://[::ffff:169.254.169.254]/x', 'https://[::ffff:0:a9fe:a9fe]/x',
        'https://[64:ff9b::a9fe:a9fe]/x', 'https://[64:ff9b:1::808:808]/x', 'https://[2002:a9fe:a9fe::]/x', 'https://[2001:0:a9fe:a9fe::f7f7:f7f7]/x',
        'https://[fe80::1]/x', 'https://[FD00::1]/x', 'https://0xa9.0xfe.0xa9.0xfe/x', 'https://2852039166/x', 'https://10.0.0.5/x',
      ]) expect(checkEndpointUrl(url, allow), `${url} allow=${allow}`).toMatch(/private, loopback, link-local or otherwise reserved/);
    }
    expect(checkEndpointUrl('https://[::ffff:127.0.0.1]/x', false)).toMatch(/reserved/);
    expect(checkEndpointUrl('https://[::ffff:127.0.0.1]/x', true)).toBeNull();
    expect(checkEndpointUrl('https://0x7f.1/x', false)).toMatch(/reserved/);
  });

  it('accepts public literals and host names; http:// only to real loopback', () => {
    for (const url of ['https://[2606:4700::1111]/x', 'https://[64:ff9b::808:808]/x', 'https://8.8.8.8/x', 'https://hooks.example.com/x', 'https://[2002:808:808::1]/x'])
      expect(checkEndpointUrl(url, false), url).toBeNull();
    expect(checkEndpointUrl('http://[::1]:8080/x', true)).toBeNull();
    expect(checkEndpointUrl('http://[::ffff:7f00:1]:8080/x', true)).toBeNull();
    expect(checkEndpointUrl('http://localhost:8080/x', true)).toBeNull();
    expect(checkEndpointUrl('http://[::7f00:1]:8080/x', true)).toMatch(/only allowed to a loopback address/);
    expect(checkEndpointUrl('http://[64:ff9b::7f00:1]/x', true)).toMatch(/only allowed to a loopback address/);
    expect(checkEndpointUrl('http://[::1]:8080/x', false)).toMatch(/^must use https:\/\/\. For local development, start the service with BILLING_ALLOW_HTTP_WEBHOOKS=1 /);
  });
});

describe('resolveSafe', () => {
  it('returns every checked address and never names the addresses in a refusal', async () => {
    await expect(resolveSafe('8.8.8.8', false)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
    await expect(resolveSafe('[2606:4700::1111]', false)).resolves.toEqual([{ address: '2606:4700::1111', family: 6 }]);
    for (const [host, allow] of [['localhost', false], ['[::7f00:1]', true], ['[::ffff:a9fe:a9fe]', true], ['169.254.169.254', true]] as const) {
      const err = await resolveSafe(host, allow).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message, host).toBe(FORBIDDEN_MESSAGE);
    }
    expect(FORBIDDEN_MESSAGE).toBe('refused: the host resolves to a forbidden address');
  });
});
