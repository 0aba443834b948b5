// File-mode checks for the embedded database's directory.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Paths under dir (dir included) whose mode has any group/other permission bit, as "mode path". */
export function groupOrOtherAccessible(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    if (st.mode & 0o077) found.push(`${(st.mode & 0o777).toString(8)} ${path}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return found;
}
