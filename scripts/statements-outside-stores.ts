// `npx tsx scripts/statements-outside-stores.ts [dir]`: database statements outside the store
// modules (see scripts/lib/statements-outside-stores.ts), one line each; exits 1 when there are any.
import { join } from 'node:path';
import { statementsOutsideStores } from './lib/statements-outside-stores.ts';

const found = statementsOutsideStores(join(import.meta.dirname, '..'), process.argv[2] ?? 'src');
for (const f of found) console.log(`${f.file}:${f.line}  ${f.kind}  ${f.text}`);
console.log(`${found.length} statement(s) outside stores`);
process.exitCode = found.length ? 1 : 0;
