// The import rule (issue 22): no cycles, and imports only go down the layers below — in value
// and in type. `npm test` runs it (`npm run lint:imports`); docs/architecture.md draws the same layers.
//
// Layers, lowest first. A module may import its own layer and the layers below it, never above.
const LAYERS = [
  ['platform', '^src/(platform|generated)/'],
  ['domain', '^src/domain/'],
  ['services', '^src/services/'],
  ['jobs', '^src/jobs/'],
  ['surfaces', '^src/(graphql|rest|hosted)/'],
  ['server', '^src/(server|main\\.ts|cli\\.ts)'],
];
// Inside the domain, the areas, lowest first: an area imports only the areas before it.
const AREAS = ['clock', 'merchants', 'processor', 'events', 'webhooks', 'customers', 'payment-methods', 'payments', 'refunds', 'wallets', 'pricing', 'billing', 'portal', 'emails'];

const forbidden = [
  {
    name: 'no-circular',
    comment: 'A cycle of imports (type-only imports aside): move the shared piece down, or the action that spans areas up into src/services.',
    severity: 'error',
    from: {},
    to: { circular: true, dependencyTypesNot: ['type-only'] },
  },
];
LAYERS.forEach(([name, path], i) => {
  const above = LAYERS.slice(i + 1).map(([, p]) => p);
  if (above.length === 0) return;
  forbidden.push({
    name: `layer-${name}`,
    comment: `${name} imports only ${LAYERS.slice(0, i + 1).map(([n]) => n).join(', ')}: imports go down (docs/architecture.md).`,
    severity: 'error',
    from: { path },
    to: { path: above },
  });
});
AREAS.forEach((area, i) => {
  const above = AREAS.slice(i + 1);
  if (above.length === 0) return;
  forbidden.push({
    name: `area-${area}`,
    comment: `domain/${area} imports only the areas below it (${AREAS.slice(0, i).join(', ') || 'none'}): a rule that spans areas goes in src/services.`,
    severity: 'error',
    from: { path: `^src/domain/${area}/` },
    to: { path: `^src/domain/(${above.join('|')})/` },
  });
});
forbidden.push({
  name: 'areas-known',
  comment: 'Every domain area has its place in the order above (.dependency-cruiser.cjs AREAS).',
  severity: 'error',
  from: { path: `^src/domain/`, pathNot: `^src/domain/(${AREAS.join('|')})/` },
  to: {},
});

// Stores (issue 22): the surfaces and the server reach the database only through domain and
// service functions, never a store (a store is the data access of its area; test/unit/stores.test.ts
// keeps every statement in one).
forbidden.push({
  name: 'stores-below-surfaces',
  comment: 'graphql, rest, hosted and server call domain or service functions, never a store (*.store.ts / store.ts).',
  severity: 'error',
  from: { path: '^src/(graphql|rest|hosted|server|main\\.ts|cli\\.ts)' },
  to: { path: '(^|/|\\.)store\\.ts$' },
});

module.exports = {
  forbidden,
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
  },
};
