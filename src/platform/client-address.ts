// The address a request comes from, for the authentication failure limits: the TCP peer. With
// TRUST_PROXY the last X-Forwarded-For entry instead — the one the (single) proxy in front of
// us appended; earlier entries are whatever the client sent and are never trusted.
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

export function clientAddress(c: Context, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const forwarded = c.req.header('x-forwarded-for');
    const last = forwarded?.split(',').map((s) => s.trim()).filter(Boolean).pop();
    if (last) return last;
  }
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined; // not served by @hono/node-server (app.fetch in-process)
  }
}
