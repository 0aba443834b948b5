// GraphQL over HTTP with graphql-yoga. GraphiQL is served from the local bundle (no CDN), so it
// works offline. Expected errors thrown by queries keep their code; anything else is masked
// and logged with the request id.
import { GraphQLError } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { toAppError } from '../platform/errors.ts';
import type { RateLimiter } from '../platform/rate-limit.ts';
import { requestScope } from '../platform/request-context.ts';
import type { GraphQLContext } from './builder.ts';
import { depthLimitPlugin } from './depth-limit.ts';
import { documentGuardPlugin } from './document-guard.ts';
import { camelParam } from './errors.ts';
import { inputGuardPlugin } from './input-guard.ts';
import { renderGraphiQLPage } from './graphiql.ts';
import { mutationRateLimitPlugin } from './rate-limit-plugin.ts';
import { schema } from './schema.ts';

const DEFAULT_QUERY = `# Billing API. Ctrl-Enter runs the query; the Docs panel (book icon) lists every type.
# Ids are the REST ids; node(id:) fetches any record; mutations return typed errors as data.
query NewestCustomers {
  customers(first: 5) {
    totalCount
    edges {
      node {
        id
        email
        name
        payments(first: 3) {
          totalCount
          edges { node { id amount currency status } }
        }
        wallets { id currency balanceFormatted status }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`;

/** Tokens per document (GraphiQL's full introspection query has 183). */
const MAX_TOKENS = 2000;

export interface GraphQLLimits {
  /** maximum selection depth (introspection has its own, see depth-limit.ts) */
  maxDepth: number;
  /** maximum aliases per operation */
  maxAliases: number;
  /** the HTTP layer's per-key limiter: mutation root fields beyond the first count against it */
  rateLimiter?: RateLimiter;
}

/**
 * A request-level GraphQL error (syntax, validation, variable coercion) that carries no code, or
 * only one of Yoga's upper-case ones, gets ours, as every documented error does: a variable that does not fit its type is parameter_invalid
 * with the variable as param; anything else about the document is invalid_query.
 */
const YOGA_CODES = new Set(['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST']);

function withCode(error: GraphQLError): GraphQLError {
  if (!(error instanceof GraphQLError) || (error.extensions?.code && !YOGA_CODES.has(String(error.extensions.code)))) return error;
  const variable = /^Variable "\$([A-Za-z_][A-Za-z0-9_]*)"/.exec(error.message);
  return new GraphQLError(error.message.replace(/^Syntax Error: /, ''), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code: variable ? 'parameter_invalid' : 'invalid_query', type: 'invalid_request_error', ...(variable ? { param: variable[1] } : {}) },
  });
}

/** Rewrites the codes of document-level errors in every result Yoga sends (see withCode). */
const documentErrorCodes: Plugin = {
  onResultProcess({ result, setResult }) {
    const fix = (r: unknown) => {
      const errors = (r as { errors?: readonly unknown[] } | null)?.errors;
      if (!errors?.some((e) => e instanceof GraphQLError && YOGA_CODES.has(String(e.extensions?.code)))) return r;
      return { ...(r as object), errors: errors.map((e) => (e instanceof GraphQLError ? withCode(e) : e)) };
    };
    if (Array.isArray(result)) setResult(result.map(fix) as typeof result);
    else if (result && typeof result === 'object' && 'errors' in result) setResult(fix(result) as typeof result);
  },
};

export function createGraphQLServer(limits: GraphQLLimits) {
  return createYoga<{ gctx?: GraphQLContext }, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    graphiql: { title: 'Billing API · GraphiQL', defaultQuery: DEFAULT_QUERY, credentials: 'omit' },
    renderGraphiQL: renderGraphiQLPage,
    // CORS is answered by the HTTP layer from an allow-list (src/server/app.ts); Yoga's default
    // reflects any origin with credentials.
    cors: false,
    // Validation-time limits on the document (cost is checked by Pothos' complexity plugin).
    plugins: [
      documentErrorCodes,
      depthLimitPlugin(limits.maxDepth),
      maxAliasesPlugin({
        n: limits.maxAliases,
        exposeLimits: true,
        // Reported as a validation error with a code (the package's own error says "Syntax Error").
        propagateOnRejection: false,
        onReject: [
          (context, err) =>
            context?.reportError(new GraphQLError(err.message.replace(/^Syntax Error: /, ''), { extensions: { code: 'too_many_aliases' } })),
        ],
      }),
      // Bounds the parser's work (and its recursion on nested literals) for any document.
      maxTokensPlugin({ n: MAX_TOKENS, exposeLimits: true }),
      // Refuses documents nested deeper than the parser's stack allows (see document-guard.ts).
      documentGuardPlugin(),
      inputGuardPlugin(),
      mutationRateLimitPlugin(limits.rateLimiter),
    ],
    context: ({ gctx }) => gctx!,
    maskedErrors: {
      maskError(error) {
        const original = error instanceof GraphQLError ? error.originalError : error;
        if (!original || original instanceof GraphQLError) return withCode(error as GraphQLError); // syntax/validation errors
        const scope = requestScope.getStore();
        const app = toAppError(original, (e) => scope?.log.warn({ err: e }, 'database refused a value that validation let through'));
        if (app.status !== 500) {
          return new GraphQLError(app.message, {
            nodes: (error as GraphQLError).nodes,
            path: (error as GraphQLError).path,
            extensions: { code: app.code, type: app.type, param: camelParam(app.param) },
          });
        }
        scope?.log.error({ err: original }, 'unexpected GraphQL resolver error');
        return new GraphQLError('Unexpected error.', {
          path: (error as GraphQLError).path,
          extensions: { code: 'internal_error', request_id: scope?.requestId ?? null },
        });
      },
    },
  });
}
