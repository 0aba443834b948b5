// The CLI as an operator runs it (`npm run --silent cli -- …`), on a fresh embedded database.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../src/platform/auth.ts';
import { openDatabase } from '../src/platform/db/index.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'billing-cli-'));
const dataDir = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('cli', () => {
  it('creates merchants and keys, lists them without secrets, revokes keys; the keys authenticate', async () => {
    const created = cli('merchant', 'create', '--name', 'Acme Ltd', '--json');
    expect(created.code).toBe(0);
    const lines = created.out.trim().split('\n');
    expect(lines).toHaveLength(1);
    const acme = JSON.parse(lines[0]!);
    expect(Object.keys(acme).sort()).toEqual(['client_id', 'client_secret', 'merchant_id', 'mode']);
    expect(acme).toMatchObject({ merchant_id: expect.stringMatching(/^mer_/), client_id: expect.stringMatching(/^ck_/), client_secret: expect.stringMatching(/^sk_test_/), mode: 'test' });

    const live = JSON.parse(cli('merchant', 'create', '--name', 'Live Co', '--live', '--json').out);
    expect(live.mode).toBe('live');
    expect(live.client_secret).toMatch(/^sk_live_/);

    const key2 = JSON.parse(cli('key', 'create', '--merchant', acme.merchant_id, '--json').out);
    expect(key2.merchant_id).toBe(acme.merchant_id);
    expect(key2.client_id).not.toBe(acme.client_id);

    const list = cli('merchant', 'list', '--json');
    expect(list.code).toBe(0);
    expect(list.out).not.toContain(acme.client_secret);
    const merchants = JSON.parse(list.out);
    expect(merchants.map((m: any) => [m.name, m.mode, m.keys.length])).toEqual([
      ['Acme Ltd', 'test', 2],
      ['Live Co', 'live', 1],
    ]);

    expect(cli('key', 'revoke', key2.client_id).code).toBe(0);
    const again = cli('key', 'revoke', key2.client_id);
    expect(again.code).toBe(1);
    expect(again.err).toContain('no active key');
    expect(cli('db', 'migrate').code).toBe(0);
    const bad = cli('merchant', 'explode');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('usage');
    expect(cli('merchant', 'create').err).toContain('--name');

    // The issued credentials work against the same database; the revoked one does not.
    const db = await openDatabase({ dataDir });
    try {
      const auth = new Authenticator(db.prisma, 0);
      const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
      expect((await auth.authenticate(basic(acme.client_id, acme.client_secret))).id).toBe(acme.merchant_id);
      expect((await auth.authenticate(basic(live.client_id, live.client_secret))).mode).toBe('live');
      await expect(auth.authenticate(basic(key2.client_id, key2.client_secret))).rejects.toThrow(/credentials/);
      await expect(auth.authenticate(basic(acme.client_id, live.client_secret))).rejects.toThrow(/credentials/);
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('cli merchant update (issue 24)', () => {
  it('changes the name, accent colour and logo, refuses bad input, records account.updated', async () => {
    const m = JSON.parse(cli('merchant', 'create', '--name', 'Brand Co', '--json').out);
    const png = join(dir, 'logo.png');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'));
    const r = cli('merchant', 'update', '--merchant-id', m.merchant_id, '--name', 'Brand Company', '--accent-color', '#0a7c66', '--logo', png, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ id: m.merchant_id, name: 'Brand Company', branding: { accent_color: '#0A7C66', logo: expect.stringMatching(/^data:image\/png;base64,/) } });
    const svg = join(dir, 'logo.svg');
    writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const refused = cli('merchant', 'update', '--merchant-id', m.merchant_id, '--logo', svg);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^Invalid branding\[logo\]: .*SVG/);
    expect(cli('merchant', 'update', '--merchant-id', m.merchant_id, '--accent-color', 'red').err).toMatch(/branding\[accent_color\]/);
    expect(cli('merchant', 'update', '--merchant-id', 'mer_00000000000000000000', '--name', 'X').code).toBe(1);
    const cleared = JSON.parse(cli('merchant', 'update', '--merchant-id', m.merchant_id, '--logo', 'none', '--json').out);
    expect(cleared.branding).toEqual({ accent_color: '#0A7C66', logo: null });
    const db = await openDatabase({ dataDir });
    try {
      const rows = await db.query<{ type: string }>(`SELECT type FROM events WHERE merchant_id = $1 ORDER BY created_at`, [m.merchant_id]);
      expect(rows.map((e) => e.type)).toEqual(['account.updated', 'account.updated']);
    } finally {
      await db.close();
    }
  }, 120_000);
});
