// The GraphQL side of the one input rule (src/platform/validation.ts checkInputText): before an
// operation runs, its variables and the string literals of its document are checked for text
// PostgreSQL cannot store (NUL, lone surrogates) and for nesting deeper than MAX_INPUT_DEPTH.
// A violation is a request error: HTTP 400 with code parameter_invalid and the offending `param`
// (`input.name` for the variable $input's field), never a 500 from the database.
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { BREAK, visit, type DocumentNode, type ValueNode } from 'graphql';
import { ValidationError } from '../platform/errors.ts';
import { checkInputText, hasUnstorableText, unstorableTextError } from '../platform/validation.ts';

// Documents already found clean (the parse cache hands out the same object for the same text).
const clean = new WeakSet<DocumentNode>();

/** Whether a value literal holds a string PostgreSQL cannot store. */
function hasUnstorableLiteral(value: ValueNode): boolean {
  let found = false;
  visit(value, {
    StringValue(s) {
      if (hasUnstorableText(s.value)) {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

function checkDocument(document: DocumentNode): void {
  if (clean.has(document)) return;
  let bad: string | null = null;
  // Argument values (of fields and directives) and variables' default values.
  visit(document, {
    Argument: {
      enter(node) {
        if (!hasUnstorableLiteral(node.value)) return undefined;
        bad = node.name.value;
        return BREAK;
      },
    },
    VariableDefinition: {
      enter(node) {
        if (!node.defaultValue || !hasUnstorableLiteral(node.defaultValue)) return undefined;
        bad = node.variable.name.value;
        return BREAK;
      },
    },
  });
  if (bad !== null) throw unstorableTextError(bad);
  clean.add(document);
}

/** Throws the request error (400, parameter_invalid) for an operation's unstorable input. */
export function checkOperationInput(document: DocumentNode, variables: unknown): void {
  try {
    checkInputText(variables ?? {});
    checkDocument(document);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw createGraphQLError(err.message, {
      extensions: { code: err.code, type: err.type, param: err.param, http: { status: 400 } },
    });
  }
}

export function inputGuardPlugin(): Plugin {
  return {
    onExecute({ args }) {
      checkOperationInput(args.document, args.variableValues);
    },
  };
}
