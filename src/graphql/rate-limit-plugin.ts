// Counts a GraphQL mutation operation against the per-key request rate limit by its root fields:
// one HTTP request may carry up to 100 aliased mutations, and each is a write. The HTTP layer has
// already counted the request (1 point); this plugin consumes one more point for every further
// root field — aliases, fragment spreads and inline fragments at the root included. Over the
// limit nothing is executed: HTTP 429 with Retry-After and a GraphQL error whose
// extensions.code is `rate_limited`. Queries are not counted here (their cost is limited by the
// complexity plugin).
import { getOperationAST, GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { AuthenticatedMerchant } from '../platform/auth.ts';
import { RateLimitError } from '../platform/errors.ts';
import type { RateLimiter } from '../platform/rate-limit.ts';
import type { GraphQLContext } from './builder.ts';

/**
 * The number of root fields a mutation operation executes: distinct response keys (alias or
 * field name) at the root, fragments expanded; 0 for queries, subscriptions and unknown
 * operations. Fields sharing a response key are merged by GraphQL and run once.
 */
export function mutationRootFieldCount(document: DocumentNode, operationName?: string | null): number {
  const op = getOperationAST(document, operationName ?? undefined);
  if (!op || op.operation !== 'mutation') return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const keys = new Set<string>();
  const visited = new Set<string>();
  const collect = (set: SelectionSetNode) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) keys.add(sel.alias?.value ?? sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) collect(sel.selectionSet);
      else if (!visited.has(sel.name.value)) {
        visited.add(sel.name.value);
        const frag = fragments.get(sel.name.value);
        if (frag) collect(frag.selectionSet);
      }
    }
  };
  collect(op.selectionSet);
  return keys.size;
}

export function mutationRateLimitPlugin(limiter: RateLimiter | undefined): Plugin {
  return {
    // Synchronous unless there is something to count: an async hook would put every query on a
    // promise chain for nothing.
    onExecute({ args, setResultAndStopExecution }) {
      if (!limiter) return;
      const extra = mutationRootFieldCount(args.document, args.operationName) - 1;
      const ctx = (args.contextValue as Partial<GraphQLContext> | undefined)?.ctx;
      // The HTTP layer limits by client id: ctx.merchant is the AuthenticatedMerchant it built.
      const clientId = (ctx?.merchant as Partial<AuthenticatedMerchant> | undefined)?.clientId;
      if (extra <= 0 || !ctx || !clientId) return;
      return limiter.consume(clientId, extra).then(
        () => undefined,
        (err: unknown) => {
          if (!(err instanceof RateLimitError)) throw err;
          setResultAndStopExecution({
            errors: [
              new GraphQLError(err.message, {
                extensions: { code: err.code, type: err.type, request_id: ctx.requestId, http: { status: err.status, headers: err.headers } },
              }),
            ],
          });
        },
      );
    },
  };
}
