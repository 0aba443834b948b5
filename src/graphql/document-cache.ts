// Parsed and validated documents, kept by their text, in place of Yoga's own cache: the schema and
// the validation rules of this server are the same for every request (the limits are plugins
// fixed at start), so a document's validation result is kept with the document itself, with no
// per-request key built from the rules' names and no TTL clock read as Yoga's LRU does. A document
// that failed to parse is kept as its error. Every request still goes through every plugin's
// onParse and onValidate hooks (limits add their rules, the HTTP status of validation errors is
// set); only graphql-js' parse and validate are skipped for a text seen before.
import type { DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Texts kept; the oldest goes first when full. */
const MAX_DOCUMENTS = 1000;
/** Longer texts (real operations are a few KiB; a 1 MB comment is not) are parsed every time. */
const MAX_DOCUMENT_LENGTH = 16 * 1024;

export function documentCachePlugin(): Plugin {
  const parsed = new Map<string, DocumentNode | Error>();
  const validated = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  return {
    onParse({ params, setParsedDocument }) {
      const text = params.source.toString();
      const hit = parsed.get(text);
      if (hit instanceof Error) throw hit;
      if (hit) {
        setParsedDocument(hit);
        return;
      }
      if (text.length > MAX_DOCUMENT_LENGTH) return;
      return ({ result }) => {
        if (result == null) return;
        if (parsed.size >= MAX_DOCUMENTS) parsed.delete(parsed.keys().next().value!);
        parsed.set(text, result as DocumentNode | Error);
      };
    },
    onValidate({ params, setResult }) {
      const hit = validated.get(params.documentAST);
      if (hit) {
        setResult(hit);
        return;
      }
      return ({ result }) => {
        validated.set(params.documentAST, result as readonly GraphQLError[]);
      };
    },
  };
}
