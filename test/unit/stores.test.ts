// No SQL outside stores and migrations (issue 22): every statement — SQL text, a Prisma model
// call, a Prisma raw call — lives in an area's `store.ts` (or a platform `*.store.ts`), or in the
// data-access layer (src/platform/db/). scripts/lib/statements-outside-stores.ts finds the rest;
// this test shows it biting, then requires src/ to have none.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isExempt, prismaModels, scanText, statementsOutsideStores } from '../../scripts/lib/statements-outside-stores.ts';

const root = join(import.meta.dirname, '..', '..');
const models = prismaModels(root);

describe('statements outside stores', () => {
  it('finds SQL text, Prisma model calls and Prisma raw calls, not prose', () => {
    const text = [
      "const a = 'SELECT * FROM customers WHERE id = $1';",
      'const b = `UPDATE wallets SET balance = $2 WHERE id = ${x}`;',
      'await ctx.db.customer.findMany({ where: {} });',
      'await tx.paymentMethod.update({ where: { id }, data: {} });',
      'await prisma.$executeRawUnsafe(q);',
      'await prisma.$queryRaw`SELECT 1`;',
      "const prose = 'select a plan, then update the customer';",
      'const notModel = list.findMany();',
      'const c = other.widget.create();',
      "await db['customer'].findMany({});",
      "await tx['$executeRawUnsafe'](q);",
      'await prisma.$transaction(async (tx) => tx);',
      "const d = 'SELECT ' + columns + ' FROM wallets';",
      "const e = 'UPDATE customers c SET name = $2';",
    ].join('\n');
    const found = scanText('src/domain/x/index.ts', text, models);
    expect(found.map((f) => [f.line, f.kind])).toEqual([
      [1, 'sql'],
      [2, 'sql'],
      [3, 'prisma'],
      [4, 'prisma'],
      [5, 'prisma'],
      [6, 'prisma'],
      [6, 'sql'],
      [10, 'prisma'],
      [11, 'prisma'],
      [12, 'prisma'],
      [13, 'sql'],
      [14, 'sql'],
    ]);
  });

  it('exempts stores, the data-access layer and generated code only', () => {
    expect(isExempt('src/domain/customers/store.ts')).toBe(true);
    expect(isExempt('src/platform/jobs.store.ts')).toBe(true);
    expect(isExempt('src/platform/db/raw.ts')).toBe(true);
    expect(isExempt('src/generated/prisma/client.ts')).toBe(true);
    expect(isExempt('src/domain/customers/index.ts')).toBe(false);
    expect(isExempt('src/graphql/billing.ts')).toBe(false);
    expect(isExempt('src/domain/customers/restore.ts')).toBe(false);
    expect(isExempt('src/services/store.ts')).toBe(true);
    expect(isExempt('src/jobs/store.ts')).toBe(false);
    expect(isExempt('src/graphql/store.ts')).toBe(false);
    expect(isExempt('src/domain/billing/plans.store.ts')).toBe(false);
  });

  it('src/ has no statement outside a store', () => {
    const found = statementsOutsideStores(root).map((f) => `${f.file}:${f.line} ${f.kind} ${f.text}`);
    expect(found).toEqual([]);
  });
});
