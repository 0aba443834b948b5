// The CLI's commands as one table of functions over a database, used two ways with the same code:
// by `src/cli.ts` in its own process (PostgreSQL, or an embedded DATA_DIR no server holds), and by
// a running server for a CLI that found DATA_DIR locked by it (the request comes over the Unix
// socket in DATA_DIR: src/server/control-socket.ts). A command returns what it prints and its exit
// code; it never writes to the process's own streams or exits.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createApiKey, createMerchant, getMerchantById, listMerchants, revokeApiKey } from '../domain/merchants/index.ts';
import { accountToJSON } from '../domain/merchants/account.ts';
import { updateAccount } from '../services/account.ts';
import { forMerchant } from '../platform/db/tenant.ts';
import { createDashboardUser } from '../domain/merchants/dashboard.ts';
import { openDatabase, type Database } from '../platform/db/index.ts';
import { describeTarget, exportDatabase, ExportRefused } from '../platform/db/export.ts';
import { migrate } from '../platform/db/migrate.ts';
import { AppError } from '../platform/errors.ts';

export const USAGE = `usage:
  cli merchant create --name NAME [--live] [--json]
  cli merchant list [--json]
  cli merchant update --merchant-id MERCHANT_ID [--name NAME] [--accent-color #RRGGBB] [--logo FILE.png|FILE.jpg|none] [--json]
  cli key create --merchant MERCHANT_ID [--json]
  cli key revoke CLIENT_ID
  cli user create --merchant-id MERCHANT_ID --email EMAIL --password PASSWORD [--json]
  cli db migrate
  cli db export --to postgresql://USER@HOST:PORT/DATABASE [--json]`;

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandEnv {
  db: Database;
  /** 'server': run by the running server for a CLI (over its socket); 'local': in the CLI's own process */
  where: 'local' | 'server';
  /** the server forgets a revoked key at once (its verified-key cache) */
  onKeyRevoked?: (clientId: string) => void;
}

class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const fail = (msg: string, code = 2): never => {
  throw new Exit(code, msg);
};

/** Runs one CLI command (argv as after `cli`), returning its output and exit code. */
export async function runCommand(argv: string[], env: CommandEnv): Promise<CommandResult> {
  let stdout = '';
  try {
    const { values, positionals } = (() => {
      try {
        return parseArgs({
          args: argv,
          allowPositionals: true,
          options: {
            name: { type: 'string' },
            live: { type: 'boolean', default: false },
            json: { type: 'boolean', default: false },
            merchant: { type: 'string' },
            'merchant-id': { type: 'string' },
            email: { type: 'string' },
            password: { type: 'string' },
            'accent-color': { type: 'string' },
            logo: { type: 'string' },
            to: { type: 'string' },
            help: { type: 'boolean', short: 'h', default: false },
          },
        });
      } catch (e) {
        return fail(`${(e as Error).message}\n${USAGE}`);
      }
    })();
    const [area, action, arg] = positionals;
    if (values.help) return { code: 0, stdout: `${USAGE}\n`, stderr: '' };
    if (!area) fail(USAGE);
    const out = (obj: unknown, text: string) => {
      stdout += values.json ? `${JSON.stringify(obj)}\n` : `${text}\n`;
    };
    const prisma = env.db.prisma;
    const merchantId = values['merchant-id'] ?? values.merchant;

    if (area === 'db' && action === 'migrate') {
      if (env.where === 'server') {
        out({ applied: [], migrated_by: 'server' }, 'already migrated by the running server');
      } else {
        const { applied } = await migrate(env.db);
        out({ applied }, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      }
    } else if (area === 'db' && action === 'export') {
      if (env.where === 'server') {
        fail('db export needs the embedded database to itself, and the running server holds DATA_DIR: stop the server, then run the export again', 1);
      }
      if (env.db.kind !== 'pglite') fail('db export copies the embedded database (DATA_DIR) into PostgreSQL; DATABASE_URL is set, so there is nothing embedded to export (unset it)');
      if (!values.to || !/^postgres(ql)?:\/\//.test(values.to)) fail('db export needs --to postgresql://USER@HOST:PORT/DATABASE (an empty database)');
      const target = await openDatabase({ url: values.to!, poolSize: 2 });
      try {
        const r = await exportDatabase(env.db, target);
        const total = r.tables.reduce((n, t) => n + t.rows, 0);
        const width = Math.max(...r.tables.map((t) => t.table.length));
        out(
          { target: describeTarget(values.to!), tables: r.tables, sequences: r.sequences, total_rows: total },
          [`exported to ${describeTarget(values.to!)}:`, ...r.tables.map((t) => `  ${t.table.padEnd(width)}  ${t.rows}`), `  ${'total'.padEnd(width)}  ${total}`].join('\n'),
        );
      } catch (e) {
        if (e instanceof ExportRefused) fail(`db export: ${e.message}`, 1);
        throw e;
      } finally {
        await target.close();
      }
    } else if (area === 'merchant' && action === 'create') {
      if (!values.name) fail('merchant create needs --name NAME');
      const c = await createMerchant(prisma, { name: values.name!, mode: values.live ? 'live' : 'test' });
      out(c, `merchant_id    ${c.merchant_id}\nclient_id      ${c.client_id}\nclient_secret  ${c.client_secret}   (shown once)\nmode           ${c.mode}`);
    } else if (area === 'merchant' && action === 'list') {
      const list = (await listMerchants(prisma)).map((m) => ({
        id: m.merchant_id,
        ...m,
        client_ids: m.keys.filter((k) => !k.revoked_at).map((k) => k.client_id),
      }));
      out(list, list.map((m) => `${m.merchant_id}  ${m.mode}  ${m.name}  keys: ${m.keys.map((k) => `${k.client_id}${k.revoked_at ? ' (revoked)' : ''}`).join(', ')}`).join('\n') || 'no merchants');
    } else if (area === 'merchant' && action === 'update') {
      if (!merchantId) fail('merchant update needs --merchant-id MERCHANT_ID');
      const branding: { accent_color?: string; logo?: string | null } = {};
      if (values['accent-color'] !== undefined) branding.accent_color = values['accent-color'];
      if (values.logo !== undefined) branding.logo = values.logo === 'none' ? null : logoDataUrl(values.logo);
      const m = await getMerchantById(prisma, merchantId!);
      if (!m) fail(`no such merchant: ${merchantId}`, 1);
      const after = await updateAccount(
        { merchant: { id: m!.id, mode: m!.mode === 'live' ? 'live' : 'test' }, db: forMerchant(prisma, m!.id) },
        { ...(values.name !== undefined ? { name: values.name } : {}), ...(Object.keys(branding).length ? { branding } : {}) },
      );
      const json = accountToJSON(after);
      out(json, `merchant_id    ${json.id}\nname           ${json.name}\naccent_color   ${json.branding.accent_color ?? '(default)'}\nlogo           ${json.branding.logo ? 'set' : 'none'}`);
    } else if (area === 'key' && action === 'create') {
      if (!merchantId) fail('key create needs --merchant MERCHANT_ID');
      const c = await createApiKey(prisma, merchantId!);
      out(c, `client_id      ${c.client_id}\nclient_secret  ${c.client_secret}   (shown once)`);
    } else if (area === 'key' && action === 'revoke') {
      if (!arg) fail('key revoke needs CLIENT_ID');
      const ok = await revokeApiKey(prisma, arg!);
      if (!ok) fail(`no active key ${arg}`, 1);
      env.onKeyRevoked?.(arg!);
      out({ revoked: arg }, `revoked ${arg}`);
    } else if (area === 'user' && action === 'create') {
      if (!merchantId) fail('user create needs --merchant-id MERCHANT_ID');
      if (values.email === undefined) fail('user create needs --email EMAIL');
      if (values.password === undefined) fail('user create needs --password PASSWORD');
      const u = await createDashboardUser(prisma, { merchantId: merchantId!, email: values.email!, password: values.password! });
      out(u, `user_id  ${u.user_id}\nemail    ${u.email}`);
    } else {
      fail(USAGE);
    }
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    if (err instanceof Exit) return { code: err.code, stdout, stderr: `${err.message}\n` };
    // Refused input (a bad email, a short password, an unknown merchant): its message, exit 1.
    if (err instanceof AppError && err.status < 500) return { code: 1, stdout, stderr: `${err.param && !err.message.includes(err.param) ? `${err.param}: ` : ''}${err.message}\n` };
    return { code: 1, stdout, stderr: `cli: ${err instanceof Error ? err.message : String(err)}\n` };
  }
}

/**
 * `--logo`: a data: URL as the API takes it, or a file read into one (its type from the name; the
 * content is checked by the domain). The CLI turns a file into a data: URL before it sends a command
 * to a running server (a path means nothing in the server's directory).
 */
export function logoDataUrl(value: string): string {
  if (value.startsWith('data:')) return value;
  const type = /\.png$/i.test(value) ? 'image/png' : /\.jpe?g$/i.test(value) ? 'image/jpeg' : /\.svg$/i.test(value) ? 'image/svg+xml' : 'application/octet-stream';
  return `data:${type};base64,${readFileSync(value).toString('base64')}`;
}
