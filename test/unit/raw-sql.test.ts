// The raw SQL layer of the hot paths (src/platform/db/raw.ts): rows must come back in the shape of
// Prisma's models, and a statement without the merchant filter must never run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { camelRow, jsonRows, merchantSql, type RawQuery } from '../../src/platform/db/raw.ts';

// Prisma's own mapping of fields to columns, from the generated client.
const generated = readFileSync(join(import.meta.dirname, '../../src/generated/prisma/internal/class.ts'), 'utf8');
const runtime = JSON.parse(JSON.parse(/config\.runtimeDataModel = JSON\.parse\(("(?:[^"\\]|\\.)*")\)/.exec(generated)![1]!)) as {
  models: Record<string, { fields: { name: string; kind: string; dbName?: string }[] }>;
};

describe('raw rows', () => {
  it('maps every column of every model to its Prisma field name', () => {
    const wrong: string[] = [];
    for (const [model, m] of Object.entries(runtime.models)) {
      for (const f of m.fields.filter((f) => f.kind === 'scalar')) {
        const column = f.dbName ?? f.name;
        const mapped = Object.keys(camelRow({ [column]: 1 }))[0];
        if (mapped !== f.name) wrong.push(`${model}.${f.name} ← ${column} (mapped to ${mapped})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('turns JSON-embedded rows into model rows with dates, and refuses bigints inside JSON', () => {
    const [pm] = jsonRows<{ createdAt: Date; customerId: string; detachedAt: Date | null }>('PaymentMethod', [
      { id: 'pm_1', customer_id: 'cus_1', created_at: '2026-11-25T01:00:55.469+00:00', detached_at: null },
    ]);
    expect(pm!.createdAt).toEqual(new Date('2026-11-25T01:00:55.469Z'));
    expect(pm!.customerId).toBe('cus_1');
    expect(pm!.detachedAt).toBeNull();
    expect(() => jsonRows('Payment', [{ amount: 5 }])).toThrow(/bigint/);
    expect(jsonRows('Subscription', null)).toEqual([]);
  });
});

describe('merchantSql', () => {
  const seen: unknown[][] = [];
  const q: RawQuery = async (_text, params = []) => {
    seen.push([...params]);
    return [];
  };
  it('binds the merchant as $1 before the statement’s own parameters', async () => {
    await merchantSql(q, 'mer_1')('SELECT * FROM customers WHERE merchant_id = $1 AND id = $2', ['cus_1']);
    expect(seen.at(-1)).toEqual(['mer_1', 'cus_1']);
    await merchantSql(q, 'mer_1')('INSERT INTO events (id, merchant_id) VALUES ($2, $1)', ['evt_1']);
    expect(seen.at(-1)).toEqual(['mer_1', 'evt_1']);
  });
  // Isolation of a statement that forgets the filter is row-level security's: test/tenancy.rls.test.ts.
});
