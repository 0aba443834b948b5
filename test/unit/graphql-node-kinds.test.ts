// node(id:) finds a record by its id's prefix: every type that implements Node must be registered
// with its id kind (nodeKind() next to its definition), and every registration must name a Node type.
import { isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { nodeKinds } from '../../src/graphql/builder.ts';
import { schema } from '../../src/graphql/schema.ts';
import { ID_PREFIXES } from '../../src/platform/ids.ts';

describe('node kinds', () => {
  it('every Node type has an id kind, and every kind names a Node type', () => {
    const nodeTypes = Object.values(schema.getTypeMap())
      .filter((t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'))
      .map((t) => t.name)
      .sort();
    const registered = Object.entries(nodeKinds());
    expect(registered.map(([, typename]) => typename).sort()).toEqual(nodeTypes);
    for (const [kind] of registered) expect(Object.keys(ID_PREFIXES)).toContain(kind);
  });
});
