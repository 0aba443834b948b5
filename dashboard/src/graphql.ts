// Operations are typed from schema.graphql by gql.tada: graphql-env.d.ts is its introspection
// output (`npm run dashboard:typecheck` regenerates it, then type-checks every page against it).
import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.d.ts';

export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTime: string; JSON: unknown; Money: number; ID: string };
}>();

export type { FragmentOf, ResultOf, VariablesOf } from 'gql.tada';
export { readFragment } from 'gql.tada';
