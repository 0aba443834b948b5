// Bounds on the document before graphql-js parses it. graphql-js parses nested lists, objects
// and selection sets recursively: about 2,000 nested `[` overflow the stack (a RangeError, which
// would be a 500), and the token limit alone does not stop that, since 2,000 brackets are fewer
// than 2,000 tokens apart. So the source is scanned first (a linear pass that skips strings,
// block strings and comments) and a document nesting deeper than MAX_DOCUMENT_NESTING is refused
// as `query_too_deep`; the token limit's error gets a code of its own, `query_too_large`,
// instead of graphql-armor's "Syntax Error". A RangeError that still escapes the parser is
// reported the same way, never as an internal error.
import { GraphQLError, type Source } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Brackets, braces and parentheses open at once; real documents (introspection included) stay under 40. */
export const MAX_DOCUMENT_NESTING = 128;

/** The deepest nesting of `{`, `[` and `(` in a GraphQL source, outside strings and comments; stops counting past `limit`. */
export function documentNesting(body: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  const n = body.length;
  for (let i = 0; i < n; i++) {
    const c = body.charCodeAt(i);
    if (c === 0x23 /* # */) {
      while (i < n && body.charCodeAt(i) !== 0x0a && body.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22 /* " */) {
      if (body.startsWith('"""', i)) {
        i += 3;
        while (i < n && !body.startsWith('"""', i)) i += body.startsWith('\\"""', i) ? 4 : 1;
        i += 2;
      } else {
        i++;
        while (i < n) {
          const d = body.charCodeAt(i);
          if (d === 0x5c /* \ */) i += 2;
          else if (d === 0x22 || d === 0x0a || d === 0x0d) break;
          else i++;
        }
      }
    } else if (c === 0x7b || c === 0x5b || c === 0x28) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x7d || c === 0x5d || c === 0x29) {
      if (depth > 0) depth--;
    }
  }
  return max;
}

function tooDeep(): GraphQLError {
  return new GraphQLError(`Document nesting limit of ${MAX_DOCUMENT_NESTING} exceeded.`, {
    extensions: { code: 'query_too_deep', limit: MAX_DOCUMENT_NESTING },
  });
}

/** Must come after the token-limit plugin: it wraps whatever parser that plugin installed. */
export function documentGuardPlugin(): Plugin {
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source: string | Source, options) => {
        const body = typeof source === 'string' ? source : source.body;
        if (documentNesting(body, MAX_DOCUMENT_NESTING) > MAX_DOCUMENT_NESTING) throw tooDeep();
        try {
          return parseFn(source, options);
        } catch (err) {
          if (err instanceof RangeError) throw tooDeep();
          const m = err instanceof GraphQLError ? /^Syntax Error: (Token limit of (\d+) exceeded\.)$/.exec(err.message) : null;
          if (m) throw new GraphQLError(m[1]!, { extensions: { code: 'query_too_large', limit: Number(m[2]) } });
          throw err;
        }
      });
    },
  };
}
