// Each GraphQL mutation takes the same fields as the REST route of the same operation (its
// operationId is the mutation's name): same names (camelCase ↔ snake_case), same required-ness.
// A field added to one surface and not the other, or required on one only, fails here.
import { getNamedType, getNullableType, isInputObjectType, isNonNullType, type GraphQLInputObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schema } from '../../src/graphql/schema.ts';
import { routes } from '../../src/rest/index.ts';

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The fields of an object schema (unwrapping pipes, effects and the like) with whether each is required. */
function zodFields(s: z.ZodType): Record<string, 'required' | 'optional'> | null {
  let t: any = s;
  for (let i = 0; i < 10 && t && !t.shape; i++) t = t.def?.in ?? t.def?.innerType ?? t.def?.schema ?? null;
  if (!t?.shape) return null;
  const out: Record<string, 'required' | 'optional'> = {};
  for (const [k, v] of Object.entries(t.shape as Record<string, z.ZodType>)) out[k] = v.safeParse(undefined).success ? 'optional' : 'required';
  return out;
}

function graphqlFields(input: GraphQLInputObjectType, skip: Set<string>): Record<string, 'required' | 'optional'> {
  const out: Record<string, 'required' | 'optional'> = {};
  for (const f of Object.values(input.getFields())) {
    if (skip.has(f.name)) continue;
    out[snake(f.name)] = isNonNullType(f.type) && f.defaultValue === undefined ? 'required' : 'optional';
  }
  return out;
}

const mutations = schema.getMutationType()!.getFields();
/** Path parameters the GraphQL input names after what they identify. */
const PATH_NAMES: Record<string, Record<string, string>> = { createWalletTopup: { id: 'walletId' } };
const paired = routes.filter((r) => r.body && mutations[r.operationId]);

describe('GraphQL inputs and REST bodies', () => {
  it('pairs most mutations with a REST route', () => {
    expect(paired.length).toBeGreaterThanOrEqual(20);
  });

  for (const route of paired) {
    it(`${route.operationId}: the same fields, equally required (${route.method.toUpperCase()} ${route.path})`, () => {
      const arg = mutations[route.operationId]!.args.find((a) => a.name === 'input');
      expect(arg, 'an input argument').toBeDefined();
      const input = getNamedType(getNullableType(arg!.type));
      expect(isInputObjectType(input)).toBe(true);
      // The path's parameters ({id}, {customer_id} …) are fields of the GraphQL input.
      const pathParams = new Set(
        [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => PATH_NAMES[route.operationId]?.[m[1]!] ?? m[1]!.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())),
      );
      const gql = graphqlFields(input as GraphQLInputObjectType, new Set(['idempotencyKey', ...pathParams]));
      const rest = zodFields(route.body as z.ZodType);
      expect(rest, 'an object body').not.toBeNull();
      expect(gql).toEqual(rest);
    });
  }
});
