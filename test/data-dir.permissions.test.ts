// The embedded database's DATA_DIR holds every merchant's data: directories 0700, files 0600,
// for a fresh directory, for one created before this rule (world-readable/writable), and for the
// pid lock file.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { lockDataDir } from '../src/platform/db/data-dir-lock.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { groupOrOtherAccessible } from './helpers/fs-mode.ts';

const root = mkdtempSync(join(tmpdir(), 'billing-perm-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Makes every directory 0777 and every file 0666, as installs made before the rule were. */
function loosen(path: string) {
  if (statSync(path).isDirectory()) {
    chmodSync(path, 0o777);
    for (const name of readdirSync(path)) loosen(join(path, name));
  } else chmodSync(path, 0o666);
}

describe('DATA_DIR permissions', () => {
  it('creates the directory and every file of a new embedded database owner-only, while open and after close', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const unlock = lockDataDir(dataDir);
    const db = await openDatabase({ dataDir });
    try {
      await migrate(db);
      await createMerchant(db.prisma, { name: 'Acme' });
      await db.exec('CHECKPOINT');
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, 'billing.pid')).mode & 0o777).toBe(0o600);
      expect(groupOrOtherAccessible(dataDir)).toEqual([]);
    } finally {
      await db.close();
      unlock();
    }
    expect(groupOrOtherAccessible(dataDir)).toEqual([]);
  });

  it('tightens an existing world-accessible DATA_DIR on open, and keeps the data', async () => {
    const dataDir = join(root, 'old', 'data');
    const first = await openDatabase({ dataDir });
    await migrate(first);
    const acme = await createMerchant(first.prisma, { name: 'Acme' });
    await first.close();
    loosen(dataDir);
    writeFileSync(join(dataDir, 'left-over.txt'), 'x', { mode: 0o666 });
    chmodSync(join(dataDir, 'left-over.txt'), 0o666);
    expect(groupOrOtherAccessible(dataDir).length).toBeGreaterThan(100);

    const db = await openDatabase({ dataDir });
    try {
      expect(groupOrOtherAccessible(dataDir)).toEqual([]);
      await migrate(db);
      expect((await db.prisma.merchant.findUniqueOrThrow({ where: { id: acme.merchant_id } })).name).toBe('Acme');
      await createMerchant(db.prisma, { name: 'Beta' });
      expect(groupOrOtherAccessible(dataDir)).toEqual([]);
    } finally {
      await db.close();
    }
    expect(groupOrOtherAccessible(dataDir)).toEqual([]);
  });
});
