// Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed by
// the bytes behind `whsec_<base64>`. Several signatures are space-separated (secret rotation).
import { createHmac, randomBytes } from 'node:crypto';

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The webhook-signature header: the current secret, plus the previous one while it is still valid. */
export function signatureHeader(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  id: string,
  timestamp: number,
  body: string,
  now = new Date(),
): string {
  const sigs = [sign(endpoint.secret, id, timestamp, body)];
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    sigs.push(sign(endpoint.previousSecret, id, timestamp, body));
  }
  return sigs.join(' ');
}
