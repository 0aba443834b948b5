// npm run --silent cli -- <command>
//   merchant create --name NAME [--live] [--json]   create a merchant and its first API key
//   merchant list [--json]                          merchants and their keys (no secrets)
//   merchant update --merchant-id mer_… [--name N] [--accent-color #RRGGBB] [--logo FILE|none] [--json]
//                                                   name and branding (records account.updated)
//   key create --merchant mer_… [--json]            another API key for a merchant
//   key revoke ck_…                                 revoke a key (stops working within seconds)
//   user create --merchant-id mer_… --email E --password P [--json]   a merchant dashboard user
//   db migrate                                      apply migrations and exit
//   db export --to postgresql://… [--json]          copy the embedded DATA_DIR into an empty PostgreSQL database
// Uses the same DATABASE_URL / DATA_DIR as the server, and works while the server runs: on
// PostgreSQL it opens the database itself; on the embedded database, when a running server holds
// DATA_DIR, it sends the command to that server over DATA_DIR/billing.sock and the server runs it
// (src/server/control-socket.ts). Every command is the same function either way
// (src/server/commands.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './platform/config.ts';
import { openDatabase } from './platform/db/index.ts';
import { DataDirInUse, lockDataDir } from './platform/db/data-dir-lock.ts';
import { migrate } from './platform/db/migrate.ts';
import { logoDataUrl, runCommand, USAGE, type CommandResult } from './server/commands.ts';
import { sendToServer } from './server/control-socket.ts';

function finish(r: CommandResult): never {
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  process.exit(r.code);
}

async function main() {
  const argv = process.argv.slice(2);
  // A logo file is read here, where its path means something (not by a server running the command).
  const logo = argv.indexOf('--logo');
  if (logo >= 0 && argv[logo + 1] && argv[logo + 1] !== 'none') {
    try {
      argv[logo + 1] = logoDataUrl(argv[logo + 1]!);
    } catch (e) {
      finish({ code: 1, stdout: '', stderr: `cannot read the logo file: ${(e as Error).message}\n` });
    }
  }
  if (argv.length === 0) finish({ code: 2, stdout: '', stderr: `${USAGE}\n` });
  if (argv.includes('--help') || argv.includes('-h')) finish({ code: 0, stdout: `${USAGE}\n`, stderr: '' });
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) finish({ code: 2, stdout: '', stderr: `${e.message}\n` });
    throw e;
  }
  // An export reads an existing embedded database: a DATA_DIR that holds none (a typo, the wrong
  // directory) would otherwise be created empty here and "exported" as zero rows into the target.
  if (!config.DATABASE_URL && argv[0] === 'db' && argv[1] === 'export' && !existsSync(join(config.DATA_DIR, 'PG_VERSION'))) {
    finish({
      code: 1,
      stdout: '',
      stderr: `db export: DATA_DIR ${config.DATA_DIR} holds no embedded database (no PG_VERSION in it): nothing to export. Set DATA_DIR to the directory the server ran on.\n`,
    });
  }
  let unlock = () => {};
  if (!config.DATABASE_URL) {
    try {
      unlock = lockDataDir(config.DATA_DIR);
    } catch (e) {
      if (!(e instanceof DataDirInUse)) throw e;
      // A running server holds the embedded database: it runs the command for us.
      try {
        finish(await sendToServer(config.DATA_DIR, argv));
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        finish({ code: 1, stdout: '', stderr: `DATA_DIR ${config.DATA_DIR} is in use by process ${e.pid}, and its command socket did not answer (${why}). Is it a server of this version, still starting? Retry, or stop it first.\n` });
      }
    }
  }
  const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: 2 });
  let result: CommandResult;
  try {
    // `db migrate` reports what it applies; every other command first brings the database up to date.
    if (!(argv[0] === 'db' && argv[1] === 'migrate')) await migrate(db);
    result = await runCommand(argv, { db, where: 'local' });
  } finally {
    await db.close();
    unlock();
  }
  finish(result);
}

main().catch((err) => finish({ code: 1, stdout: '', stderr: `cli: ${err instanceof Error ? err.message : String(err)}\n` }));
