// GraphQL over HTTP with graphql-yoga. GraphiQL is served from the local bundle (no CDN), so it
// works offline. Expected errors thrown by queries keep their code; anything else is masked
// and logged with the request id.
import { execute, getOperationAST, GraphQLError, isEnumType, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { createYoga, isPromise, processRegularResult, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { toAppError } from '../platform/errors.ts';
import { issueMessage, paramPath } from '../platform/validation.ts';
import type { RateLimiter } from '../platform/rate-limit.ts';
import type { Logger } from '../platform/logger.ts';
import type { GraphQLContext } from './builder.ts';
import { depthLimitPlugin } from './depth-limit.ts';
import { documentCachePlugin } from './document-cache.ts';
import { documentGuardPlugin } from './document-guard.ts';
import { graphqlMessage, graphqlParam } from './errors.ts';
import { inputGuardPlugin } from './input-guard.ts';
import { renderGraphiQLPage } from './graphiql.ts';
import { mutationRateLimitPlugin } from './rate-limit-plugin.ts';
import { schema } from './schema.ts';
import { tracingPlugin } from './tracing-plugin.ts';
import { tracingEnabled } from '../platform/tracing.ts';

type PromiseOrValue<T> = T | Promise<T>;

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
  /** where errors outside an operation's execution are logged (those inside go to the request's log) */
  log: Logger;
  /** more envelop plugins (tracing, metrics …): every operation goes through them, as through ours */
  plugins?: Plugin[];
}

/**
 * A request-level GraphQL error (syntax, validation, variable coercion) that carries no code, or
 * only one of Yoga's upper-case ones, gets ours, as every documented error does: a variable that does not fit its type is parameter_invalid
 * with the variable as param; anything else about the document is invalid_query.
 */
const YOGA_CODES = new Set(['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE']);

/**
 * A variable's value outside its enum, in the words REST uses for the same value (issueMessage's
 * "must be one of …"), naming the variable and, inside an input object, the field (GraphQL's
 * names): `Variable "$input" got invalid value "fortnight" at "input.interval"; Value "fortnight"
 * does not exist in "PlanInterval" enum.` → `Invalid input[interval]: must be one of 'day', 'week',
 * 'month', 'year'.`, param `input[interval]`. Null for any other error.
 */
function enumVariableError(error: GraphQLError): { message: string; param: string } | null {
  const m = /^Variable "\$([A-Za-z_][A-Za-z0-9_]*)" got invalid value .*?(?: at "([^"]{1,500})")?; Value .* does not exist in "([A-Za-z_][A-Za-z0-9_]*)" enum\./s.exec(error.message);
  if (!m) return null;
  const type = schema.getType(m[3]!);
  if (!isEnumType(type)) return null;
  const path = m[2] ? m[2].replace(/\[(\d+)\]/g, '.$1').split('.') : [m[1]!];
  const param = paramPath(path)!;
  return { param, message: `Invalid ${param}: ${issueMessage({ code: 'invalid_value', values: type.getValues().map((v) => v.name), input: undefined, path: [] } as never)}.` };
}

function withCode(error: GraphQLError): GraphQLError {
  if (!(error instanceof GraphQLError) || (error.extensions?.code && !YOGA_CODES.has(String(error.extensions.code)))) return error;
  const outsideEnum = enumVariableError(error);
  if (outsideEnum) {
    return new GraphQLError(outsideEnum.message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      extensions: { ...error.extensions, code: 'parameter_invalid', type: 'invalid_request_error', param: outsideEnum.param },
    });
  }
  // A variable that does not fit its type, or a request parameter of the wrong shape, names it.
  const param =
    /^Variable "\$([A-Za-z_][A-Za-z0-9_]*)"/.exec(error.message)?.[1] ??
    (error.extensions?.code === 'BAD_REQUEST' ? /"([A-Za-z_]+)" param\b|parameter "([^"]{1,100})"/.exec(error.message)?.slice(1).find(Boolean) : undefined);
  return new GraphQLError(error.message.replace(/^Syntax Error: /, ''), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code: param ? 'parameter_invalid' : 'invalid_query', type: 'invalid_request_error', ...(param ? { param } : {}) },
  });
}

/**
 * What a client sees of an error: document errors with our code; an expected error (not found,
 * validation, conflict …) with its code and param; anything else as internal_error with the
 * request id, logged with its stack.
 */
function maskError(error: unknown, scope: { requestId: string | null; log: Logger }): GraphQLError {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (!original || original instanceof GraphQLError) return withCode(error as GraphQLError); // syntax/validation errors
  const app = toAppError(original, (e) => scope.log.warn({ err: e }, 'database refused a value that validation let through'));
  if (app.status !== 500) {
    return new GraphQLError(graphqlMessage(app.message, app.param, schema), {
      nodes: (error as GraphQLError).nodes,
      path: (error as GraphQLError).path,
      extensions: { code: app.code, type: app.type, param: graphqlParam(app.param, schema) },
    });
  }
  scope.log.error({ err: original }, 'unexpected GraphQL resolver error');
  return new GraphQLError('Unexpected error.', {
    path: (error as GraphQLError).path,
    extensions: { code: 'internal_error', request_id: scope.requestId },
  });
}

/**
 * Operations run on graphql-js' own execute: the schema has no @defer/@stream (what Yoga's default
 * executor from graphql-tools adds), and graphql-js does the same work with less per field.
 */
const graphqlJsExecute: Plugin = {
  onExecute({ setExecuteFn }) {
    setExecuteFn(executeOperation as typeof execute);
  },
};

/**
 * graphql-js' execute, with Yoga's status for an operation that cannot start (variables that do not
 * fit their types, an unknown operationName): 400, as graphql-tools' executor marks those errors.
 */
function executeOperation(args: ExecutionArgs): PromiseOrValue<ExecutionResult> {
  const result = execute(args);
  return isPromise(result) ? result.then(withStartStatus) : withStartStatus(result);
}

function withStartStatus(result: ExecutionResult): ExecutionResult {
  if ('data' in result || !result.errors?.length) return result;
  return {
    ...result,
    errors: result.errors.map(
      (e) =>
        new GraphQLError(e.message, {
          nodes: e.nodes,
          source: e.source,
          positions: e.positions,
          path: e.path,
          originalError: e.originalError ?? undefined,
          extensions: { ...e.extensions, http: { status: 400 } },
        }),
    ),
  };
}

/** Masks the errors of an operation's result with the request's id and log (see maskError). */
const maskResolverErrors: Plugin = {
  onExecute({ args }) {
    const { ctx } = args.contextValue as unknown as GraphQLContext;
    return {
      onExecuteDone({ result, setResult }) {
        if (!('errors' in result) || !result.errors?.length) return;
        setResult({ ...result, errors: result.errors.map((e) => maskError(e, ctx)) });
      },
    };
  },
};

/** A result whose document-level errors carry our codes (see withCode). */
function withCodes(r: unknown): unknown {
  const errors = (r as { errors?: readonly unknown[] } | null)?.errors;
  if (!errors?.some((e) => e instanceof GraphQLError && YOGA_CODES.has(String(e.extensions?.code)))) return r;
  return { ...(r as object), errors: errors.map((e) => (e instanceof GraphQLError ? withCode(e) : e)) };
}

/** Rewrites the codes of document-level errors in every result Yoga sends (see withCode). */
const documentErrorCodes: Plugin = {
  onResultProcess({ result, setResult }) {
    if (Array.isArray(result)) setResult(result.map(withCodes) as typeof result);
    else if (result && typeof result === 'object' && 'errors' in result) setResult(withCodes(result) as typeof result);
  },
};

/** What /graphql answers to a POST that execute() ran. */
export interface GraphQLAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * What a request's Accept header asks of /graphql, in the header's order (as Yoga picks):
 * 'stream' for server-sent events or multipart (Yoga's own HTTP handling answers those),
 * application/graphql-response+json, or application/json — also for no Accept, any type, or
 * only types /graphql does not make (REST ignores Accept the same way).
 */
export function graphqlAnswerType(accept: string | undefined): 'stream' | 'application/json' | 'application/graphql-response+json' {
  for (const part of (accept ?? '').split(',')) {
    const [type, ...rest] = part.split(';');
    const t = type!.trim().toLowerCase();
    if (rest.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(p))) continue; // q=0: not acceptable
    if (t === 'application/json' || t === '*/*' || t === 'application/*') return 'application/json';
    if (t === 'application/graphql-response+json') return t;
    if (t === 'text/event-stream' || t === 'multipart/mixed') return 'stream';
  }
  return 'application/json';
}

// What the Yoga plugins see as the request of an operation run by execute(): they read its
// method (a mutation over GET is refused).
const REQUESTS = {
  POST: { method: 'POST', url: 'http://localhost/graphql', headers: new Headers() } as unknown as Request,
  GET: { method: 'GET', url: 'http://localhost/graphql', headers: new Headers() } as unknown as Request,
};

export function createGraphQLServer(limits: GraphQLLimits) {
  const yoga = createGraphQLYoga(limits);
  return {
    /** Yoga's whole HTTP handling: GraphiQL, and event-stream or multipart answers. */
    fetch: yoga.fetch,
    /**
     * Runs the parameters of a GET or POST already read and checked by the HTTP layer through
     * Yoga's envelop — every plugin's parse, validate, context and execute hooks, the one path
     * every operation takes — without Yoga's web Request and Response: a result without errors
     * is answered as JSON directly; one with errors is answered as Yoga answers it (its status
     * rules, internals removed).
     */
    async execute(params: GraphQLParams, gctx: GraphQLContext, answerType: string, method: 'GET' | 'POST' = 'POST'): Promise<GraphQLAnswer> {
      const result = await run(yoga, params, gctx, REQUESTS[method]);
      if (!result.errors?.length && !result.extensions) {
        return { status: 200, headers: { 'content-type': `${answerType}; charset=utf-8` }, body: JSON.stringify(result) };
      }
      // Yoga's status and headers (Retry-After …) for the errors, as a plain answer.
      const res = processRegularResult(withCodes(result) as ExecutionResult, yoga.fetchAPI, answerType);
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => (headers[k] = v));
      return { status: res.status, headers, body: await res.text() };
    },
  };
}

const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A request error with Yoga's message and status (see withCode for the code it gets). */
function badParams(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
}

/**
 * What Yoga's own parameter check refuses (its onParams hook, which only its HTTP handling runs),
 * with its messages: the HTTP layer has checked `query` and `operationName` already.
 */
function checkParams(params: GraphQLParams): void {
  for (const key in params) {
    if ((params as Record<string, unknown>)[key] != null && key !== 'query' && key !== 'variables' && key !== 'operationName' && key !== 'extensions') {
      throw badParams(`Unexpected parameter "${key}" in the request body.`);
    }
  }
  if (params.variables != null && !isPlainObject(params.variables)) {
    throw badParams(`Expected "variables" param to be empty or an object, but given ${Array.isArray(params.variables) ? 'array' : typeof params.variables}.`);
  }
  if (params.extensions != null && !isPlainObject(params.extensions)) {
    throw badParams(`Expected "extensions" param to be empty or an object, but given ${Array.isArray(params.extensions) ? 'array' : typeof params.extensions}.`);
  }
}

/**
 * One operation through Yoga's envelop, as Yoga's own processRequest runs it: parse and validate
 * (cached, see document-cache.ts), the context, then execute with every plugin's hooks. Errors
 * thrown on the way (a document that does not parse, parameters Yoga refuses) become the result;
 * anything unexpected is masked like a resolver's error.
 */
async function run(yoga: ReturnType<typeof createGraphQLYoga>, params: GraphQLParams, gctx: GraphQLContext, request: Request): Promise<ExecutionResult> {
  try {
    checkParams(params);
    const enveloped = yoga.getEnveloped({ gctx, request, params } as never);
    const document = enveloped.parse(params.query!);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length) return { errors };
    const contextValue = await enveloped.contextFactory();
    const operation = getOperationAST(document, params.operationName ?? undefined);
    const executeFn = operation?.operation === 'subscription' ? enveloped.subscribe : enveloped.execute;
    return (await executeFn({
      schema: enveloped.schema,
      document,
      contextValue,
      variableValues: params.variables as Record<string, unknown> | undefined,
      operationName: params.operationName,
    })) as ExecutionResult;
  } catch (err) {
    return { errors: [err instanceof GraphQLError ? err : maskError(err, gctx.ctx)] };
  }
}

function createGraphQLYoga(limits: GraphQLLimits) {
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
    // Parsed and validated documents are kept by our own cache (see document-cache.ts).
    parserAndValidationCache: false,
    plugins: [
      documentCachePlugin(),
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
      graphqlJsExecute,
      // Traces (after graphqlJsExecute: it wraps the execute function that one sets).
      ...(tracingEnabled() ? [tracingPlugin] : []),
      maskResolverErrors,
      ...(limits.plugins ?? []),
    ],
    context: ({ gctx }) => gctx!,
    // Resolver errors are masked by maskResolverErrors (it knows the request); this catches what
    // fails outside execution.
    maskedErrors: { maskError: (error) => maskError(error, { requestId: null, log: limits.log }) },
  });
}
