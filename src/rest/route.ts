// A REST route is one declarative record: method, path, the zod schemas of its params, query
// and body, the success response, and a thin handler that calls the domain. The same records
// drive request handling (src/rest/router.ts) and the OpenAPI document (src/rest/openapi.ts).
import type { z } from 'zod';
import type { Ctx } from '../platform/context.ts';

export type Method = 'get' | 'post' | 'patch' | 'delete';

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

export interface RouteDef<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** OpenAPI-style path: /v1/customers/{id} */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The request body the reference shows and "Try it out" sends: a real one that works for a
   * test-mode merchant as it is (ids in it have the real shape). Without it, the body's required
   * fields with their schema examples.
   */
  example?: z.input<B>;
  /** The 409 this operation answers when the record's state does not allow it (besides an idempotency conflict). */
  conflict?: { code: string; message: string; param?: string };
  /**
   * The success response. Its schema is the OpenAPI response schema, and the handler's result
   * must type-check against it (so the *ToJSON functions and the document cannot drift apart;
   * the test suite also validates every response it receives against the document).
   */
  response: { status: 200 | 201 | 302; description: string; schema: R; also?: { status: 200 | 201; description: string } };
  /** error statuses this route can answer besides 400/401/404/413/415/500/503 */
  errors?: number[];
  /** the raw response instead of JSON (files) */
  raw?: boolean;
  /**
   * The operation commits several steps around a processor call (or runs due work), so an
   * Idempotency-Key runs it phased, with recovery points (src/platform/idempotency.ts); otherwise
   * the key's claim, the work and the stored response are one transaction.
   */
  phased?: boolean;
  /**
   * Params and query arrive parsed (z.output). The body arrives validated but as sent (z.input):
   * the domain function parses it again with the same schema, which is how GraphQL input gets
   * the same validation.
   */
  handler: (ctx: Ctx, input: RouteInput<z.output<P>, z.output<Q>, z.input<B>>) => Promise<z.input<R> | WithStatus<z.input<R>>>;
}

/** Declares a route with its input types inferred from its schemas. */
export function route<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType>(
  def: RouteDef<P, Q, B, R>,
): RouteDef {
  return def as unknown as RouteDef;
}

/** The list envelope of the conventions. */
export function listEnvelope<T, R>(page: { data: T[]; hasMore: boolean; nextCursor: string | null }, toJSON: (t: T) => R) {
  return { object: 'list' as const, data: page.data.map(toJSON), has_more: page.hasMore, next_cursor: page.nextCursor };
}

/** A handler result with a status other than the route's usual one (e.g. 200 for a replayed credit). */
export class WithStatus<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
  ) {}
}
