// GraphQL over HTTP with graphql-yoga. GraphiQL is served from the local bundle (no CDN), so it
// works offline. Expected errors thrown by queries keep their code; anything else is masked
// and logged with the request id.
import { GraphQLError } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { AppError, toAppError } from '../platform/errors.ts';
import { requestScope } from '../platform/request-context.ts';
import type { GraphQLContext } from './builder.ts';
import { camelParam } from './errors.ts';
import { renderGraphiQLPage } from './graphiql.ts';
import { schema } from './schema.ts';

const DEFAULT_QUERY = `# The newest customers. Ctrl-Enter runs the query; the Docs panel lists every type.
query Customers {
  customers(first: 5) {
    edges { cursor node { id email name createdAt } }
    pageInfo { hasNextPage endCursor }
  }
}
`;

export interface GraphQLLimits {
  /** maximum selection depth, introspection included */
  maxDepth: number;
  /** maximum aliases per operation */
  maxAliases: number;
}

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
      maxDepthPlugin({ n: limits.maxDepth, ignoreIntrospection: false, flattenFragments: true, exposeLimits: true }),
      maxAliasesPlugin({ n: limits.maxAliases, exposeLimits: true }),
    ],
    context: ({ gctx }) => gctx!,
    maskedErrors: {
      maskError(error) {
        const original = error instanceof GraphQLError ? error.originalError : error;
        if (!original || original instanceof GraphQLError) return error as Error; // syntax/validation errors
        const app = toAppError(original);
        if (original instanceof AppError || app.status === 503) {
          return new GraphQLError(app.message, {
            nodes: (error as GraphQLError).nodes,
            path: (error as GraphQLError).path,
            extensions: { code: app.code, type: app.type, param: camelParam(app.param) },
          });
        }
        const scope = requestScope.getStore();
        scope?.log.error({ err: original }, 'unexpected GraphQL resolver error');
        return new GraphQLError('Unexpected error.', {
          path: (error as GraphQLError).path,
          extensions: { code: 'internal_error', request_id: scope?.requestId ?? null },
        });
      },
    },
  });
}
