// Mounts the route table on Hono: parses and validates path params, query and JSON body (unknown
// fields rejected), applies Idempotency-Key to POST/PATCH/DELETE, calls the handler and writes
// JSON. Unknown paths answer 404 and known paths with another method 405, both with the error body.
import type { IncomingMessage } from 'node:http';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { errorBody, HttpError, ValidationError } from '../platform/errors.ts';
import { runIdempotent, validateKey } from '../platform/idempotency.ts';
import { inSpan } from '../platform/tracing.ts';
import { checkInputText, parse } from '../platform/validation.ts';
import type { AppEnv } from '../platform/env.ts';
import { MAX_BODY_BYTES } from '../platform/limits.ts';
import { WithStatus, type RouteDef } from './route.ts';

const EMPTY = z.strictObject({});

function honoPath(path: string) {
  return path.replace(/\{([a-zA-Z_]+)\}/g, ':$1');
}

function pathRegex(path: string) {
  return new RegExp(`^${path.replace(/\{[a-zA-Z_]+\}/g, '[^/]+')}/?$`);
}

function readQuery(c: Context): Record<string, string> {
  const all = c.req.queries();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(all)) {
    if (v.length > 1) throw new ValidationError('parameter_invalid', `Invalid ${k}: the parameter was given more than once.`, k);
    out[k] = v[0]!;
  }
  return out;
}

/** The media type of a Content-Type header, lower-cased, without parameters ('' when absent). */
export function mediaType(header: string | undefined | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * A body past the limit is answered 413 at once, while the rest of it is still read and thrown
 * away: a client that is still sending then reads the answer instead of a reset connection
 * (EPIPE), and the connection stays usable. Past DRAIN_MAX_BYTES in all, the connection is cut.
 */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;

const tooLarge = () => new HttpError(413, 'body_too_large', 'The request body is larger than 1 MiB.');

/** Reads and discards what remains of the request's body (counting from `seen` bytes), cutting the connection past DRAIN_MAX_BYTES. */
function discardRest(incoming: IncomingMessage, seen: number): void {
  let size = seen;
  incoming.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > DRAIN_MAX_BYTES) incoming.socket?.destroy();
  });
  incoming.on('error', () => {}); // a client that goes away meanwhile is nobody's error
  incoming.resume();
}

const incomingOf = (c: Context) => (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;

/**
 * The body as text, at most MAX_BODY_BYTES (413 past that, whatever Content-Length said). Read
 * straight from node's IncomingMessage when the server is @hono/node-server and nothing has read
 * it yet: building the web Request and its stream costs more than the rest of a small request.
 */
export async function bodyText(c: Context): Promise<string> {
  const incoming = incomingOf(c);
  if (!incoming || incoming.readableDidRead || incoming.readableEnded) {
    const text = await c.req.text();
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw tooLarge();
    return text;
  }
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      done();
      discardRest(incoming, size);
      reject(tooLarge());
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    // The client went away before the end (no 'end' will come).
    const onClose = () => {
      if (incoming.complete) return;
      done();
      reject(new Error('the client closed the connection before the end of the body'));
    };
    const done = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/** Refuses a declared Content-Length over the limit before anything is read (bodyText checks the rest). */
export function declaredBodyLimit(c: Context): void {
  const len = c.req.header('content-length');
  if (len !== undefined && Number(len) > MAX_BODY_BYTES) {
    const incoming = incomingOf(c);
    if (incoming && !incoming.readableEnded) discardRest(incoming, 0);
    throw tooLarge();
  }
}

/** Whether a Content-Type's charset, if it names one, is UTF-8 (the only one JSON bodies are read as). */
export function isUtf8(header: string | undefined | null): boolean {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(header ?? '');
  return !m || /^utf-?8$/i.test(m[1]!);
}

async function readBody(c: Context): Promise<unknown> {
  // Checked before the body is read: a form or text/plain POST is refused even when empty (a
  // bodiless POST without any Content-Type, as clients send for freeze or close, is fine).
  const header = c.req.header('content-type');
  const type = mediaType(header);
  if (header !== undefined && ((type !== 'application/json' && !type.endsWith('+json')) || !isUtf8(header))) {
    throw new HttpError(415, 'unsupported_media_type', 'Request bodies must be JSON (UTF-8), sent with Content-Type: application/json.');
  }
  const text = await bodyText(c);
  if (text.trim() === '') return undefined;
  if (header === undefined) {
    throw new HttpError(415, 'unsupported_media_type', 'Request bodies must be JSON, sent with Content-Type: application/json.');
  }
  return parseJson(text);
}

/** JSON.parse, with the documented 400 invalid_json for text that is not JSON (REST and GraphQL). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError('invalid_json', 'The request body is not valid JSON.');
  }
}

export function mountRoutes(app: Hono<AppEnv>, routes: RouteDef[]) {
  for (const r of routes) {
    app.on(r.method.toUpperCase(), honoPath(r.path), (c) => inSpan(r.operationId, { 'billing.operation': r.operationId }, () => handle(c)));
    const handle = async (c: Context<AppEnv>) => {
      const base = c.get('ctx');
      if (!base) throw new Error('route reached without authentication');
      const rawParams = c.req.param();
      const rawQuery = readQuery(c);
      // Text PostgreSQL cannot store (NUL …) and absurd nesting are refused before anything else.
      for (const [k, v] of Object.entries(rawParams)) checkInputText(v, k);
      for (const [k, v] of Object.entries(rawQuery)) checkInputText(v, k);
      const params = parse(r.params ?? EMPTY, rawParams);
      const query = parse(r.query ?? EMPTY, rawQuery);
      let rawBody: unknown = undefined;
      if (r.method !== 'get') rawBody = await readBody(c);
      checkInputText(rawBody);
      if (rawBody !== undefined && (rawBody === null || typeof rawBody !== 'object' || Array.isArray(rawBody))) {
        throw new ValidationError('invalid_json', 'The request body must be a JSON object.');
      }
      parse(r.body ?? EMPTY, rawBody ?? {});
      const input = { params, query, body: rawBody ?? {} };
      const status = r.response.status;

      const key = c.req.header('idempotency-key');
      if (key !== undefined && r.method !== 'get') {
        validateKey(key);
        const outcome = await runIdempotent(
          c.get('services').db.prisma,
          { merchantId: base.merchant.id, key, scope: `${r.method.toUpperCase()} ${c.req.path}`, payload: rawBody ?? {}, operation: r.operationId },
          async (db, run) => {
            const result = await r.handler({ ...base, db, idempotency: run }, input);
            return result instanceof WithStatus ? { status: result.status, body: result.body } : { status, body: result };
          },
          (err) => ({ status: err.status, body: errorBody(err, base.requestId) }),
          { mode: r.phased ? 'phased' : 'atomic', leaseMs: base.runtime.idempotencyLeaseMs, log: base.log },
        );
        if (outcome.replayed) c.header('Idempotent-Replayed', 'true');
        return c.json(outcome.response.body as object, outcome.response.status as 200);
      }
      const result = await r.handler(base, input);
      if (r.raw) return result as Response;
      // A 302 route's handler returns { location } (e.g. the signed address of an invoice PDF).
      if (status === 302) return c.redirect((result as { location: string }).location, 302);
      if (result instanceof WithStatus) return c.json(result.body as object, result.status as 200);
      return c.json(result as object, status);
    };
  }
}

/** For a path no route matched: 405 with Allow when the path exists under another method. */
export function unmatched(routes: RouteDef[], method: string, path: string): HttpError {
  const allowed = [...new Set(routes.filter((r) => pathRegex(r.path).test(path)).map((r) => r.method.toUpperCase()))];
  if (allowed.length > 0) {
    const e = new HttpError(405, 'method_not_allowed', `${method} is not allowed on ${path}. Allowed: ${allowed.join(', ')}.`);
    e.headers = { Allow: allowed.join(', ') };
    return e;
  }
  return new HttpError(404, 'resource_missing', `Unrecognized request URL (${method}: ${path}).`);
}

