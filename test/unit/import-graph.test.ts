// Imports only go down (issue 22): `npm test` runs dependency-cruiser with .dependency-cruiser.cjs
// before the suite (`npm run lint:imports`). This test proves the rules bite — a small tree with a
// cycle, an upward import between layers, an area importing one above it and an unknown area is
// refused, rule by rule — and that src/ itself has no violation.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');

async function violations(cwd: string): Promise<{ rule: string; from: string; to: string }[]> {
  const { stdout } = await run(depcruise, ['--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json', 'src'], { cwd, maxBuffer: 64 << 20 }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }), // it exits non-zero when it finds violations
  );
  const out = JSON.parse(stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
  return out.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
}

const fixture = mkdtempSync(join(tmpdir(), 'import-graph-'));
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

function file(path: string, text: string) {
  mkdirSync(dirname(join(fixture, path)), { recursive: true });
  writeFileSync(join(fixture, path), text);
}

describe('the import rule', () => {
  it('refuses cycles, upward imports between layers and between domain areas, unknown areas, and surfaces reaching a store', { timeout: 60_000 }, async () => {
    file('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }));
    // a cycle inside one area
    file('src/domain/payments/a.ts', `import { b } from './b.ts';\nexport const a = () => b;\n`);
    file('src/domain/payments/b.ts', `import { a } from './a.ts';\nexport const b = () => a;\n`);
    // customers is below billing: it must not import it
    file('src/domain/customers/index.ts', `import { cancel } from '../billing/subscriptions.ts';\nexport const del = cancel;\n`);
    file('src/domain/billing/subscriptions.ts', `export const cancel = 1;\n`);
    // the domain must not reach the jobs layer, nor platform the domain (types included)
    file('src/domain/wallets/index.ts', `import { enqueue } from '../../jobs/queue.ts';\nexport const w = enqueue;\n`);
    file('src/jobs/queue.ts', `export const enqueue = 1;\n`);
    file('src/platform/context.ts', `import type { Thing } from '../domain/billing/types.ts';\nexport type Ctx = Thing;\n`);
    file('src/domain/billing/types.ts', `export type Thing = number;\n`);
    // an area that has no place in the order
    file('src/domain/loyalty/index.ts', `import { money } from '../../platform/money.ts';\nexport const points = money;\n`);
    file('src/platform/money.ts', `export const money = 1;\n`);
    // a surface reading through a store instead of a domain function
    file('src/graphql/wallets.ts', `import { findWallet } from '../domain/wallets/store.ts';\nexport const w = findWallet;\n`);
    file('src/domain/wallets/store.ts', `export const findWallet = 1;\n`);
    const found = await violations(fixture);
    const rules = (rule: string) => found.filter((v) => v.rule === rule).map((v) => `${v.from} → ${v.to}`);
    // (a cycle is reported once, at one of its edges)
    expect(rules('no-circular')).toHaveLength(1);
    expect(rules('no-circular')[0]).toMatch(/^src\/domain\/payments\/(a|b)\.ts → src\/domain\/payments\/(a|b)\.ts$/);
    expect(rules('area-customers')).toEqual(['src/domain/customers/index.ts → src/domain/billing/subscriptions.ts']);
    expect(rules('layer-domain')).toEqual(['src/domain/wallets/index.ts → src/jobs/queue.ts']);
    expect(rules('layer-platform')).toEqual(['src/platform/context.ts → src/domain/billing/types.ts']);
    expect(rules('areas-known')).toEqual(['src/domain/loyalty/index.ts → src/platform/money.ts']);
    expect(rules('stores-below-surfaces')).toEqual(['src/graphql/wallets.ts → src/domain/wallets/store.ts']);
  });

  it('src/ has no violation', { timeout: 120_000 }, async () => {
    expect(await violations(root)).toEqual([]);
  });
});
