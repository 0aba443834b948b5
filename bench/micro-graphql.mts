// In-process A/B of the GraphQL execution path (no HTTP, no load generator): CPU µs per
// operation of yoga.execute for node(id:) of one customer, alternating variants chosen by
// environment toggles read per request: DIRECT=1 is graphql-js' execute with no plugin at all,
// SQL=1 the domain read alone. A development aid for profiling, not the yardstick.
//   TEST_DATABASE_URL=postgresql://… node --import tsx bench/micro-graphql.mts DIRECT=1 SQL=1
import { startApp } from '../test/helpers/app.ts';
import { createGraphQLServer } from '../src/graphql/yoga.ts';
import { forMerchant } from '../src/platform/db/tenant.ts';

const app = await startApp();
const api = await app.merchant();
const c = (await api.post('/v1/customers', { email: 'micro@example.com', name: 'M' })).body;
const services = app.services;
const merchant = await services.auth.authenticate(api.auth);
const yoga = createGraphQLServer({ maxDepth: 12, maxAliases: 100, log: services.log });
const query = `{ node(id: "${c.id}") { ... on Customer { id email name createdAt } } }`;
import { execute, parse } from 'graphql';
import { schema } from '../src/graphql/schema.ts';
const doc = parse(query);
const mk = () => ({ ctx: { merchant, db: forMerchant(services.db.prisma, merchant.id), requestId: 'req_x', log: services.log, runtime: services.runtime } as never, services, loaders: new Map() });
const direct = async () => JSON.stringify(await execute({ schema, document: doc, contextValue: mk() }));
import { getCustomer } from '../src/domain/customers/index.ts';
const sqlOnly = async () => JSON.stringify(await getCustomer(mk().ctx, c.id));
const one = () => process.env.SQL ? sqlOnly() : process.env.DIRECT ? direct() :
  yoga.execute({ query }, { ctx: { merchant, db: forMerchant(services.db.prisma, merchant.id), requestId: 'req_x', log: services.log, runtime: services.runtime } as never, services, loaders: new Map() }, 'application/json');
console.log(await one());
async function round(n: number) {
  const t = process.cpuUsage();
  let i = 0;
  await Promise.all(Array.from({ length: 32 }, async () => { while (i++ < n) await one(); }));
  const u = process.cpuUsage(t);
  return (u.user + u.system) / n;
}
await round(15000);
// Variants: `base` (the environment as started) and any number of `K=V[,K2=V2]` sets, alternated.
const variants = ['base', ...process.argv.slice(2)];
const keys = new Set(variants.flatMap((v) => (v === 'base' ? [] : v.split(',').map((kv) => kv.split('=')[0]!))));
const saved = Object.fromEntries([...keys].map((k) => [k, process.env[k]]));
const res: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
for (let r = 0; r < 8; r++) {
  for (const v of variants) {
    for (const k of keys) if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
    if (v !== 'base') for (const kv of v.split(',')) { const [k, val] = kv.split('='); process.env[k!] = val; }
    res[v]!.push(await round(3000));
  }
}
for (const [k, xs] of Object.entries(res)) console.log(k, xs.map((x) => x.toFixed(0)).join(' '), 'median', [...xs].sort((a, b) => a - b)[4]!.toFixed(0));
await app.close();
process.exit(0);
