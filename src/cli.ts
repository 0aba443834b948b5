// npm run --silent cli -- <command>
//   merchant create --name NAME [--live] [--json]   create a merchant and its first API key
//   merchant list [--json]                          merchants and their keys (no secrets)
//   key create --merchant mer_… [--json]            another API key for a merchant
//   key revoke ck_…                                 revoke a key (stops working within seconds)
//   db migrate                                      apply migrations and exit
// Uses the same DATABASE_URL / DATA_DIR as the server. With the embedded database, stop the
// server first (PGlite is single-process).
import { parseArgs } from 'node:util';
import { createApiKey, createMerchant, listMerchants, revokeApiKey } from './domain/merchants/index.ts';
import { ConfigError, loadConfig } from './platform/config.ts';
import { openDatabase } from './platform/db/index.ts';
import { lockDataDir } from './platform/db/data-dir-lock.ts';
import { migrate } from './platform/db/migrate.ts';

const USAGE = `usage:
  cli merchant create --name NAME [--live] [--json]
  cli merchant list [--json]
  cli key create --merchant MERCHANT_ID [--json]
  cli key revoke CLIENT_ID
  cli db migrate`;

function fail(msg: string, code = 2): never {
  process.stderr.write(`${msg}\n`);
  process.exit(code);
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      live: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      merchant: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [area, action, arg] = positionals;
  if (values.help || !area) fail(USAGE, values.help ? 0 : 2);

  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
  const unlock = config.DATABASE_URL ? () => {} : lockDataDir(config.DATA_DIR);
  const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: 2 });
  try {
    const { applied } = await migrate(db);
    const out = (obj: unknown, text: string) => process.stdout.write(values.json ? `${JSON.stringify(obj)}\n` : `${text}\n`);

    if (area === 'db' && action === 'migrate') {
      out({ applied }, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    } else if (area === 'merchant' && action === 'create') {
      if (!values.name) fail('merchant create needs --name NAME');
      const c = await createMerchant(db.prisma, { name: values.name, mode: values.live ? 'live' : 'test' });
      out(c, `merchant_id    ${c.merchant_id}\nclient_id      ${c.client_id}\nclient_secret  ${c.client_secret}   (shown once)\nmode           ${c.mode}`);
    } else if (area === 'merchant' && action === 'list') {
      const list = await listMerchants(db.prisma);
      out(list, list.map((m) => `${m.merchant_id}  ${m.mode}  ${m.name}  keys: ${m.keys.map((k) => `${k.client_id}${k.revoked_at ? ' (revoked)' : ''}`).join(', ')}`).join('\n') || 'no merchants');
    } else if (area === 'key' && action === 'create') {
      if (!values.merchant) fail('key create needs --merchant MERCHANT_ID');
      const c = await createApiKey(db.prisma, values.merchant);
      out(c, `client_id      ${c.client_id}\nclient_secret  ${c.client_secret}   (shown once)`);
    } else if (area === 'key' && action === 'revoke') {
      if (!arg) fail('key revoke needs CLIENT_ID');
      const ok = await revokeApiKey(db.prisma, arg);
      if (!ok) fail(`no active key ${arg}`, 1);
      out({ revoked: arg }, `revoked ${arg}`);
    } else {
      fail(USAGE);
    }
  } finally {
    await db.close();
    unlock();
  }
}

main().catch((err) => fail(`cli: ${err instanceof Error ? err.message : String(err)}`, 1));
