// Query depth limits as a validation rule. Ordinary root fields may nest GRAPHQL_MAX_DEPTH levels;
// introspection root fields (__schema, __type) get their own, fixed allowance, enough for the
// standard introspection query every tool sends (graphql's getIntrospectionQuery with all its
// options nests 15 levels through the TypeRef fragment) and no more. Their breadth is bounded by
// graphql's own MaxIntrospectionDepthRule (part of its specified rules: fields/interfaces/
// possibleTypes/inputFields nested at most 3 deep) and by the token limit.
// Fragments do not add depth: only fields count, wherever they are spread.
import { GraphQLError, Kind, type FieldNode, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export const INTROSPECTION_MAX_DEPTH = 16;
/**
 * Introspection root fields per operation, counted by response key: one `__schema` (the whole
 * schema, ~700 KB with descriptions) and a handful of `__type`. Without this, aliases multiply the
 * schema: 99 aliased `__schema` selections answer 3 MB for a 5 KB request.
 */
export const INTROSPECTION_MAX_FIELDS = { __schema: 1, __type: 10 } as const;

export function depthLimitRule(maxDepth: number, introspectionMaxDepth = INTROSPECTION_MAX_DEPTH): ValidationRule {
  return (context: ValidationContext) => {
    const fragmentDepth = new Map<string, number>();

    const depthOf = (set: SelectionSetNode | undefined, visiting: Set<string>): number => {
      let depth = 0;
      for (const s of set?.selections ?? []) {
        if (s.kind === Kind.FIELD) depth = Math.max(depth, 1 + depthOf(s.selectionSet, visiting));
        else if (s.kind === Kind.INLINE_FRAGMENT) depth = Math.max(depth, depthOf(s.selectionSet, visiting));
        else {
          const name = s.name.value;
          if (visiting.has(name)) continue; // a cycle: NoFragmentCyclesRule reports it
          let d = fragmentDepth.get(name);
          if (d === undefined) {
            const fragment = context.getFragment(name);
            if (!fragment) continue; // KnownFragmentNamesRule reports it
            visiting.add(name);
            d = depthOf(fragment.selectionSet, visiting);
            visiting.delete(name);
            fragmentDepth.set(name, d);
          }
          depth = Math.max(depth, d);
        }
      }
      return depth;
    };

    /** The operation's root fields, through fragments spread at the root. */
    const rootFields = (set: SelectionSetNode, seen: Set<string>, out: FieldNode[]) => {
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) out.push(s);
        else if (s.kind === Kind.INLINE_FRAGMENT) rootFields(s.selectionSet, seen, out);
        else if (!seen.has(s.name.value)) {
          seen.add(s.name.value);
          const fragment = context.getFragment(s.name.value);
          if (fragment) rootFields(fragment.selectionSet, seen, out);
        }
      }
      return out;
    };

    return {
      OperationDefinition(operation) {
        const fields = rootFields(operation.selectionSet, new Set(), []);
        for (const name of ['__schema', '__type'] as const) {
          const keys = new Set(fields.filter((f) => f.name.value === name).map((f) => f.alias?.value ?? f.name.value));
          const limit = INTROSPECTION_MAX_FIELDS[name];
          if (keys.size > limit) {
            context.reportError(
              new GraphQLError(`At most ${limit} \`${name}\` field${limit === 1 ? '' : 's'} per operation, found ${keys.size}.`, {
                extensions: { code: 'too_much_introspection', limit, found: keys.size },
              }),
            );
          }
        }
        let worst: { depth: number; limit: number; field: FieldNode } | null = null;
        for (const field of fields) {
          const introspection = field.name.value === '__schema' || field.name.value === '__type';
          const limit = introspection ? introspectionMaxDepth : maxDepth;
          const depth = 1 + depthOf(field.selectionSet, new Set());
          if (depth > limit && (!worst || depth - limit > worst.depth - worst.limit)) worst = { depth, limit, field };
        }
        if (worst) {
          context.reportError(
            new GraphQLError(`Query depth limit of ${worst.limit} exceeded, found ${worst.depth}.`, {
              nodes: [worst.field],
              extensions: { code: 'query_too_deep', limit: worst.limit, depth: worst.depth },
            }),
          );
        }
      },
    };
  };
}

export function depthLimitPlugin(maxDepth: number): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(depthLimitRule(maxDepth));
      // graphql's MaxIntrospectionDepthRule reports without a code; give it ours.
      return ({ result, setResult }) => {
        if (!result.some((e) => e.message === 'Maximum introspection depth exceeded')) return;
        setResult(
          result.map((e) =>
            e.message === 'Maximum introspection depth exceeded' && !e.extensions.code
              ? new GraphQLError(e.message, { nodes: e.nodes, extensions: { ...e.extensions, code: 'query_too_deep' } })
              : e,
          ),
        );
      };
    },
  };
}
