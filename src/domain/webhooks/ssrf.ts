// SSRF guard. Endpoint URLs must be https:// (http:// to loopback only when the service is
// configured for local development). At delivery time the host is resolved and every address is
// checked; the request then connects to the checked address (so DNS cannot change it between
// check and use) and never follows redirects.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
// IPv4: "this" network, private, CGNAT, loopback, link-local (incl. cloud metadata 169.254.169.254),
// IETF protocol assignments, TEST-NETs, benchmarking, multicast, reserved, broadcast.
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4], ['255.255.255.255', 32],
] as const) blocked.addSubnet(net, bits, 'ipv4');
// IPv6: unspecified, loopback, IPv4-mapped (checked via the embedded v4 too), discard, ULA,
// link-local, site-local, multicast, documentation, NAT64 well-known.
for (const [net, bits] of [
  ['::', 128], ['::1', 128], ['100::', 64], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96],
] as const) blocked.addSubnet(net, bits, 'ipv6');

export function isLoopback(address: string): boolean {
  const v4 = mappedV4(address) ?? address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}

function mappedV4(address: string): string | null {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : null;
}

/** True when the address is one deliveries must never go to (loopback allowed only if asked). */
export function isForbiddenAddress(address: string, allowLoopback = false): boolean {
  const v4 = mappedV4(address);
  if (allowLoopback && isLoopback(address)) return false;
  if (v4) return blocked.check(v4, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export type UrlProblem = string | null;

/** Static check of an endpoint URL (at create/update). */
export function checkEndpointUrl(raw: string, allowHttpLoopback: boolean): UrlProblem {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.username || u.password) return 'must not contain credentials';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const loopbackHost = host === 'localhost' || (isIP(host) !== 0 && isLoopback(host));
  if (u.protocol === 'http:') {
    if (!allowHttpLoopback) return 'must use https://';
    if (!loopbackHost) return 'http:// is only allowed to loopback addresses (BILLING_ALLOW_HTTP_WEBHOOKS)';
    return null;
  }
  if (u.protocol !== 'https:') return 'must use https://';
  if (isIP(host) !== 0 && isForbiddenAddress(host, allowHttpLoopback)) return 'must not point to a private, loopback or link-local address';
  return null;
}

/** Resolves the host and returns one permitted address, or throws with the reason. */
export async function resolveSafe(host: string, allowLoopback: boolean): Promise<{ address: string; family: 4 | 6 }> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addrs = isIP(bare) ? [{ address: bare, family: isIP(bare) as 4 | 6 }] : await lookup(bare, { all: true, verbatim: true });
  if (addrs.length === 0) throw new Error(`could not resolve ${host}`);
  for (const a of addrs) {
    if (isForbiddenAddress(a.address, allowLoopback)) throw new Error(`refused: ${host} resolves to a forbidden address (${a.address})`);
  }
  return { address: addrs[0]!.address, family: addrs[0]!.family as 4 | 6 };
}
