// SSRF guard. Endpoint URLs must be https:// (http:// to loopback only when the service is
// configured for local development). At delivery time the host is resolved and every address is
// checked; the request then connects only to the checked addresses (so DNS cannot change them
// between check and use) and never follows redirects.
//
// Addresses are parsed into bytes here (no string matching): IPv6 in any spelling (compressed,
// upper case, dotted tail, zone id) and every IPv6 form that carries an IPv4 address (mapped,
// translated, compatible, NAT64, 6to4, Teredo) is judged by the IPv4 address it embeds too.
import { lookup } from 'node:dns/promises';

type Bytes = Uint8Array;
export interface ParsedIp {
  family: 4 | 6;
  bytes: Bytes;
}

// ------------------------------------------------------------------------------------ parsing

function parseV4Bytes(s: string): Bytes | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    // strict dotted decimal: 1-3 digits, no leading zero (ambiguous octal), at most 255
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseV6Bytes(input: string): Bytes | null {
  let s = input;
  const pct = s.indexOf('%');
  if (pct !== -1) {
    // zone id (fe80::1%eth0): only meaningful on an address, must not be empty
    if (pct === s.length - 1) return null;
    s = s.slice(0, pct);
  }
  s = s.toLowerCase();
  if (!s.includes(':')) return null;
  let tail: Bytes | null = null;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tail = parseV4Bytes(s.slice(lastColon + 1));
    if (!tail) return null;
    // keep the colon before the v4 part ("::1.2.3.4" -> "::", "::ffff:1.2.3.4" -> "::ffff:")
    s = s.slice(0, lastColon + 1);
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const want = tail ? 6 : 8;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  if (!head) return null;
  let all: number[];
  if (halves.length === 2) {
    const rest = groups(halves[1]!);
    if (!rest) return null;
    const fill = want - head.length - rest.length;
    if (fill < 1) return null; // "::" stands for at least one group
    all = [...head, ...new Array<number>(fill).fill(0), ...rest];
  } else {
    if (head.length !== want) return null;
    all = head;
  }
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

/** Parses an IP address (IPv6 optionally in brackets or with a zone id); null if it is not one. */
export function parseIp(address: string): ParsedIp | null {
  const s = address.trim().replace(/^\[(.*)\]$/, '$1');
  const v4 = parseV4Bytes(s);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = parseV6Bytes(s);
  if (v6) return { family: 6, bytes: v6 };
  return null;
}

// ------------------------------------------------------------------------------------ ranges

type Net = { bytes: Bytes; bits: number };
function net(cidr: string): Net {
  const [addr, bits] = cidr.split('/');
  const ip = parseIp(addr!);
  if (!ip) throw new Error(`bad range ${cidr}`);
  return { bytes: ip.bytes, bits: Number(bits) };
}
function inNet(bytes: Bytes, n: Net): boolean {
  if (bytes.length !== n.bytes.length) return false;
  const full = n.bits >> 3;
  for (let i = 0; i < full; i++) if (bytes[i] !== n.bytes[i]) return false;
  const rem = n.bits & 7;
  if (rem === 0) return true;
  const mask = (0xff << (8 - rem)) & 0xff;
  return (bytes[full]! & mask) === (n.bytes[full]! & mask);
}
const inAny = (bytes: Bytes, nets: Net[]) => nets.some((n) => inNet(bytes, n));

// IPv4: "this" network, private, CGNAT, loopback, link-local (incl. cloud metadata 169.254.169.254),
// IETF protocol assignments, TEST-NETs, 6to4 relay anycast, benchmarking, multicast, reserved, broadcast.
const V4_FORBIDDEN = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24',
  '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4', '255.255.255.255/32',
].map(net);
// IPv6: unspecified, loopback, discard, local-use NAT64 (RFC 8215, whole prefix), benchmarking,
// ORCHID, documentation (2001:db8::/32, 3fff::/20), ULA, link-local, site-local, multicast.
const V6_FORBIDDEN = [
  '::/128', '::1/128', '100::/64', '64:ff9b:1::/48', '2001:2::/48', '2001:10::/28', '2001:20::/28', '2001:db8::/32', '3fff::/20',
  'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8',
].map(net);
const V4_LOOPBACK = net('127.0.0.0/8');

// IPv6 forms that carry an IPv4 address, and where it sits.
const MAPPED = net('::ffff:0:0/96'); // ::ffff:a.b.c.d
const TRANSLATED = net('::ffff:0:0:0/96'); // ::ffff:0:a.b.c.d (SIIT)
const COMPATIBLE = net('::/96'); // ::a.b.c.d (deprecated)
const NAT64 = net('64:ff9b::/96'); // 64:ff9b::a.b.c.d
const SIX_TO_FOUR = net('2002::/16'); // 2002:AABB:CCDD::/48
const TEREDO = net('2001::/32'); // 2001:0:server:flags:port:~client

/** Every IPv4 address embedded in an IPv6 address (empty for ordinary IPv6). */
export function embeddedIPv4(bytes: Bytes): Bytes[] {
  if (bytes.length !== 16) return [];
  const at = (i: number) => bytes.slice(i, i + 4);
  if (inNet(bytes, MAPPED) || inNet(bytes, TRANSLATED) || inNet(bytes, COMPATIBLE) || inNet(bytes, NAT64)) return [at(12)];
  if (inNet(bytes, SIX_TO_FOUR)) return [at(2)];
  if (inNet(bytes, TEREDO)) return [at(4), at(12).map((b) => b ^ 0xff)];
  return [];
}

function loopbackBytes(ip: ParsedIp): boolean {
  if (ip.family === 4) return inNet(ip.bytes, V4_LOOPBACK);
  if (inNet(ip.bytes, V6_FORBIDDEN[1]!)) return true; // ::1
  // IPv4-mapped loopback is the same socket as 127.x on a dual-stack host; no other embedding is local.
  return inNet(ip.bytes, MAPPED) && inNet(ip.bytes.slice(12), V4_LOOPBACK);
}

/** True for 127.0.0.0/8, ::1 and ::ffff:127.x.x.x (any spelling). */
export function isLoopback(address: string): boolean {
  const ip = parseIp(address);
  return ip !== null && loopbackBytes(ip);
}

/**
 * True when the address is one deliveries must never go to. allowLoopback permits real loopback
 * only (see isLoopback); tunnelled forms embedding 127.x (6to4, NAT64, Teredo, IPv4-compatible)
 * stay forbidden. Anything that is not an IP address is forbidden.
 */
export function isForbiddenAddress(address: string, allowLoopback = false): boolean {
  const ip = parseIp(address);
  if (!ip) return true;
  if (allowLoopback && loopbackBytes(ip)) return false;
  if (ip.family === 4) return inAny(ip.bytes, V4_FORBIDDEN);
  if (inAny(ip.bytes, V6_FORBIDDEN)) return true;
  return embeddedIPv4(ip.bytes).some((v4) => inAny(v4, V4_FORBIDDEN));
}

// ------------------------------------------------------------------------------------ checks

export type UrlProblem = string | null;

/**
 * The refusal of an http:// URL says how a developer allows one for a receiver on their own machine
 * (the setting is the operator's: docs/webhooks.md "Local development").
 */
export const HTTP_REFUSED =
  'must use https://. For local development, start the service with BILLING_ALLOW_HTTP_WEBHOOKS=1 to allow http:// to a loopback address (localhost, 127.0.0.1, [::1])';
export const HTTP_NOT_LOOPBACK =
  'http:// is only allowed to a loopback address (localhost, 127.0.0.1, [::1]), for local development with BILLING_ALLOW_HTTP_WEBHOOKS=1; use https:// for any other host';

/** Static check of an endpoint URL (at create/update): literal IP hosts are judged like resolved ones. */
export function checkEndpointUrl(raw: string, allowHttpLoopback: boolean): UrlProblem {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.username || u.password) return 'must not contain credentials';
  // WHATWG URL parsing already normalised IPv4 spellings (0x7f.1, 2130706433) and IPv6 (brackets kept).
  const literal = parseIp(u.hostname);
  const loopbackHost = u.hostname === 'localhost' || (literal !== null && loopbackBytes(literal));
  if (u.protocol === 'http:') {
    if (!allowHttpLoopback) return HTTP_REFUSED;
    if (!loopbackHost) return HTTP_NOT_LOOPBACK;
    return null;
  }
  if (u.protocol !== 'https:') return 'must use https://';
  if (literal && isForbiddenAddress(u.hostname, allowHttpLoopback)) return 'must not point to a private, loopback, link-local or otherwise reserved address';
  return null;
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export const FORBIDDEN_MESSAGE = 'refused: the host resolves to a forbidden address';

/**
 * Resolves the host and returns every address it resolves to, all checked, in resolver order; throws
 * when it does not resolve or when any address is forbidden. The message never names the addresses
 * DNS answered (it is stored on the delivery attempt and shown to the merchant).
 */
export async function resolveSafe(host: string, allowLoopback: boolean): Promise<CheckedAddress[]> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const literal = parseIp(bare);
  let addrs: CheckedAddress[];
  if (literal) {
    addrs = [{ address: bare, family: literal.family }];
  } else {
    try {
      addrs = (await lookup(bare, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
    } catch {
      throw new Error('could not resolve the host');
    }
  }
  if (addrs.length === 0) throw new Error('could not resolve the host');
  if (addrs.some((a) => isForbiddenAddress(a.address, allowLoopback))) throw new Error(FORBIDDEN_MESSAGE);
  return addrs;
}
