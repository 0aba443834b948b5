// Every domain module can be the first one loaded. The areas import each other (payments →
// customers → subscriptions → invoices → payments is a cycle), so a value used while a module is
// being evaluated (a hook table, a constant) can be read before it exists, depending on which
// module a process loads first: a job runner, a test or a script each enter the graph elsewhere.
// Each module is loaded first in a fresh node process.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const modules = readdirSync(join(root, 'src/domain'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => readdirSync(join(root, 'src/domain', d.name)).filter((f) => f.endsWith('.ts')).map((f) => `src/domain/${d.name}/${f}`));

describe('the domain import graph', () => {
  it('loads from any module first', { timeout: 180_000 }, async () => {
    expect(modules.length).toBeGreaterThan(20);
    const failures: string[] = [];
    const queue = [...modules];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let m = queue.shift(); m; m = queue.shift()) {
          try {
            await run(process.execPath, ['--import', 'tsx', '-e', `await import(${JSON.stringify('./' + m)})`], { cwd: root, env: { ...process.env, LOG_LEVEL: 'silent' } });
          } catch (err) {
            failures.push(`${m}: ${String((err as { stderr?: string }).stderr ?? err).split('\n').slice(0, 4).join(' | ')}`);
          }
        }
      }),
    );
    expect(failures).toEqual([]);
  });
});
