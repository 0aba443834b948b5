// PGlite is a single-process database: two processes opening the same DATA_DIR would corrupt
// it. A pid file guards the directory; a lock left by a dead process is taken over.
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** DATA_DIR is held by another live process (a running server): the CLI then asks that server. */
export class DataDirInUse extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`DATA_DIR ${dir} is in use by process ${pid}. Stop it first, or set DATABASE_URL to use a PostgreSQL server.`);
  }
}

export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // owner-only, like every file in it (see restrictDataDir)
  const file = join(dir, 'billing.pid');
  for (let i = 0; i < 2; i++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new DataDirInUse(dir, pid);
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock DATA_DIR ${dir}`);
}
