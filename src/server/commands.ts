// The CLI's commands as one table of functions over a database, used two ways with the same code:
// by `src/cli.ts` in its own process (PostgreSQL, or an embedded DATA_DIR no server holds), and by
// a running server for a CLI that found DATA_DIR locked by it (the request comes over the Unix
// socket in DATA_DIR: src/server/control-socket.ts). A command returns what it prints and its exit
// code; it never writes to the process's own streams or exits.
import { parseArgs } from 'node:util';
import { createApiKey, createMerchant, listMerchants, revokeApiKey } from '../domain/merchants/index.ts';
import { createDashboardUser } from '../domain/merchants/dashboard.ts';
import type { Database } from '../platform/db/index.ts';
import { migrate } from '../platform/db/migrate.ts';
import { AppError } from '../platform/errors.ts';

export const USAGE = `usage:
  cli merchant create --name NAME [--live] [--json]
  cli merchant list [--json]
  cli key create --merchant MERCHANT_ID [--json]
  cli key revoke CLIENT_ID
  cli user create --merchant-id MERCHANT_ID --email EMAIL --password PASSWORD [--json]
  cli db migrate`;

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
    if (err instanceof AppError && err.status < 500) return { code: 1, stdout, stderr: `${err.message}\n` };
    return { code: 1, stdout, stderr: `cli: ${err instanceof Error ? err.message : String(err)}\n` };
  }
}
