// The Pothos schema builder: Prisma-backed object types, Relay nodes and connections whose ids
// and cursors are the same strings REST uses, typed error unions, and depth/complexity limits.
import SchemaBuilder, { brandWithType } from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import { GraphQLError, Kind } from 'graphql';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type { PrismaClient } from '../platform/db/index.ts';
import type { Ctx } from '../platform/context.ts';
import { kindOfId, type IdKind } from '../platform/ids.ts';
import { MAX_AMOUNT } from '../platform/money.ts';
import { parseTimestamp, TIMESTAMP_FORMAT } from '../platform/validation.ts';
import type { Services } from '../platform/env.ts';

export interface GraphQLContext {
  ctx: Ctx;
  services: Services;
  /** per-request DataLoaders (nested connections), by name and arguments */
  loaders: Map<string, unknown>;
}

/** GraphQL type name for each id prefix (global ids are the plain API ids), filled by nodeKind() in each area's file. */
const TYPENAME_BY_KIND: Partial<Record<IdKind, string>> = {};

/** Makes node(id:) find the type of `ref` by ids of `kind` (call it next to the type's definition). */
export function nodeKind(kind: IdKind, ref: { name: string }): void {
  TYPENAME_BY_KIND[kind] = ref.name;
}

/** The registered kinds and their types (a test checks every Node type has one). */
export const nodeKinds = (): Readonly<Partial<Record<IdKind, string>>> => TYPENAME_BY_KIND;

type NodeLoader = (ctx: Ctx, id: string) => Promise<object | null>;
const nodeLoaders = new Map<string, NodeLoader>();

/**
 * node(id:) of `typename` loads through the domain's own getter (one raw statement) instead of a
 * Prisma query the plugin builds: the getter keeps the domain's rules (deleted customers are not
 * found) and null is a record that does not exist for this merchant. Relations the selection
 * asks for are loaded by the Prisma plugin's fallback, as for any object a resolver returns.
 */
export function loadNodeWith(typename: string, load: NodeLoader): void {
  nodeLoaders.set(typename, load);
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    Money: { Input: number; Output: number | bigint };
  };
}>({
  plugins: [ErrorsPlugin, PrismaPlugin, RelayPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  prisma: {
    // Every query goes through the request's merchant-scoped client.
    client: (gctx) => gctx.ctx.db as unknown as PrismaClient,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (globalID) => {
      const kind = kindOfId(globalID);
      return { typename: (kind && TYPENAME_BY_KIND[kind]) || 'Unknown', id: globalID };
    },
    nodeQueryOptions: {
      nullable: true,
      // A well-formed id of no record (or another merchant's) is null, like thing(id:) queries.
      resolve: async (_root, { id }, gctx, _info, resolveNode) => {
        if (id.typename === 'Unknown') return null;
        const load = nodeLoaders.get(id.typename);
        if (load) {
          const row = await load(gctx.ctx, String(id.id));
          if (row) brandWithType(row, id.typename as never);
          return row;
        }
        try {
          return await resolveNode(id);
        } catch (err) {
          if ((err as { code?: unknown })?.code === 'P2025') return null;
          throw err;
        }
      },
    },
    nodesQueryOptions: false,
  },
  errors: { defaultTypes: [] },
  complexity: {
    // Connections carry their cost through `first` (see connectionComplexity), so plain lists
    // inside them are not multiplied again.
    defaultComplexity: 1,
    defaultListMultiplier: 1,
    complexityError: (kind, r) => {
      const [code, message] =
        String(kind) === 'Depth'
          ? ['query_too_deep', `Query depth limit of ${r.maxDepth} exceeded, found ${r.depth}.`]
          : String(kind) === 'Breadth'
            ? ['query_too_broad', `Query breadth limit of ${r.maxBreadth} fields exceeded, found ${r.breadth}.`]
            : ['query_too_complex', `Query cost limit of ${r.maxComplexity} exceeded, found ${r.complexity} (connections cost their \`first\`).`];
      return new GraphQLError(message, { extensions: { code } });
    },
    limit: (gctx) => ({
      depth: gctx.services.config.GRAPHQL_MAX_DEPTH,
      complexity: gctx.services.config.GRAPHQL_MAX_COMPLEXITY,
      breadth: 500,
    }),
  },
});

builder.queryType({});
builder.mutationType({});

function toDateTime(v: unknown): Date {
  const r = typeof v === 'string' ? parseTimestamp(v) : { error: TIMESTAMP_FORMAT };
  if (r instanceof Date) return r;
  throw new GraphQLError(`DateTime ${r.error}.`, { extensions: { code: 'parameter_invalid' } });
}

builder.scalarType('DateTime', {
  description: 'An ISO 8601 timestamp, e.g. 2026-01-31T12:00:00.000Z (UTC when no offset is given; 1970 to 9999).',
  serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(v).toISOString()),
  parseValue: toDateTime,
  parseLiteral: (ast) => toDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('JSON', {
  description: 'Arbitrary JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
});

function toSafeMoney(v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  throw new GraphQLError(`Money must be an integer between -${MAX_AMOUNT} and ${MAX_AMOUNT} in the smallest currency unit.`);
}

builder.scalarType('Money', {
  description:
    'An integer amount in the smallest currency unit (cents, yen …). A JSON number that is always a safe integer (GraphQL Int is 32-bit and too small).',
  serialize: (v) => {
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (!Number.isSafeInteger(n)) throw new GraphQLError('Money value out of safe-integer range.');
    return n;
  },
  parseValue: toSafeMoney,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) throw new GraphQLError('Money must be an integer literal.');
    return toSafeMoney(Number(ast.value));
  },
});

/** Cost of a connection field: its selection counted once per requested row. */
// `first` outside 1..100 costs as 100: the resolver refuses it with parameter_invalid, as REST
// refuses the same limit, instead of the cost check answering first with another code.
export const connectionComplexity = (args: { first?: number | null }) => ({ field: 1, multiplier: Math.min(Math.max(args.first ?? 20, 1), 100) });
