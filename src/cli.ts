// npm run --silent cli -- <command>
//   merchant create --name NAME [--live] [--json]   create a merchant and its first API key
//   merchant list [--json]                          merchants and their keys (no secrets)
//   merchant update --merchant-id mer_… [--name N] [--accent-color #RRGGBB] [--logo FILE] [--json]
//                                                   name and branding (records account.updated)
//   key create --merchant mer_… [--json]            another API key for a merchant
//   key revoke ck_…                                 revoke a key (stops working within seconds)
//   db migrate                                      apply migrations and exit
// Uses the same DATABASE_URL / DATA_DIR as the server. With the embedded database, stop the
// server first (PGlite is single-process).
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { createApiKey, createMerchant, getMerchantById as findMerchantRow, listMerchants, revokeApiKey } from './domain/merchants/index.ts';
import { accountToJSON } from './domain/merchants/account.ts';

import { updateAccount } from './services/account.ts';
import { forMerchant } from './platform/db/tenant.ts';
import { AppError } from './platform/errors.ts';
import { ConfigError, loadConfig } from './platform/config.ts';
import { openDatabase } from './platform/db/index.ts';
import { lockDataDir } from './platform/db/data-dir-lock.ts';
import { migrate } from './platform/db/migrate.ts';

const USAGE = `usage:
  cli merchant create --name NAME [--live] [--json]
  cli merchant list [--json]
  cli merchant update --merchant-id MERCHANT_ID [--name NAME] [--accent-color #RRGGBB] [--logo FILE.png|FILE.jpg|none] [--json]
  cli key create --merchant MERCHANT_ID [--json]
  cli key revoke CLIENT_ID
  cli db migrate`;

/** A logo file as the data: URL the API takes (its type from the name; the content is checked by the domain). */
function logoFileToDataUrl(path: string): string {
  const type = /\.png$/i.test(path) ? 'image/png' : /\.jpe?g$/i.test(path) ? 'image/jpeg' : /\.svg$/i.test(path) ? 'image/svg+xml' : 'application/octet-stream';
  return `data:${type};base64,${readFileSync(path).toString('base64')}`;
}

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
      'merchant-id': { type: 'string' },
      'accent-color': { type: 'string' },
      logo: { type: 'string' },
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
    } else if (area === 'merchant' && action === 'update') {
      const id = values['merchant-id'];
      if (!id) fail('merchant update needs --merchant-id MERCHANT_ID');
      const branding: { accent_color?: string; logo?: string | null } = {};
      if (values['accent-color'] !== undefined) branding.accent_color = values['accent-color'];
      if (values.logo !== undefined) branding.logo = values.logo === 'none' ? null : logoFileToDataUrl(values.logo);
      const m = await findMerchantRow(db.prisma, id);
      if (!m) fail(`no such merchant: ${id}`, 1);
      try {
        const after = await updateAccount(
          { merchant: { id: m.id, mode: m.mode === 'live' ? 'live' : 'test' }, db: forMerchant(db.prisma, m.id) },
          { ...(values.name !== undefined ? { name: values.name } : {}), ...(Object.keys(branding).length ? { branding } : {}) },
        );
        const json = accountToJSON(after);
        out(json, `merchant_id    ${json.id}\nname           ${json.name}\naccent_color   ${json.branding.accent_color ?? '(default)'}\nlogo           ${json.branding.logo ? 'set' : 'none'}`);
      } catch (e) {
        if (e instanceof AppError) fail(`${e.param ? `${e.param}: ` : ''}${e.message}`, 1);
        throw e;
      }
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
