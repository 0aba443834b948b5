// Traces of GraphQL operations (src/platform/tracing.ts): each execution is a span, named after
// its operation type and name, inside the request's span; the resolvers' SQL statements, processor
// calls and so on are its children. An envelop plugin on the one execution path, so it sees every
// operation whichever way it came in; added only when tracing is on (nothing otherwise).
import { getOperationAST, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { endSpan, startSpan, withSpan } from '../platform/tracing.ts';

export const tracingPlugin: Plugin = {
  onExecute({ args, executeFn, setExecuteFn }) {
    const op = getOperationAST(args.document, args.operationName ?? undefined);
    const type = op?.operation ?? 'query';
    const name = op?.name?.value;
    const span = startSpan(`graphql.${type}${name ? ` ${name}` : ''}`, {
      'graphql.operation.type': type,
      ...(name ? { 'graphql.operation.name': name } : {}),
    });
    if (!span) return;
    // The rest of the execution runs with this span active, so its statements are its children.
    setExecuteFn(((a: ExecutionArgs) => withSpan(span, () => executeFn(a))) as typeof executeFn);
    return {
      onExecuteDone({ result }) {
        const errors = 'errors' in result ? (result.errors?.length ?? 0) : 0;
        if (errors > 0) span.setAttribute('graphql.errors', errors);
        endSpan(span);
      },
    };
  },
};
