// The dashboard's first load: what a browser fetches to show the first page (index.html, the
// entry script, the stylesheets and the chunks index.html preloads), raw and gzipped (node:zlib,
// level 9, as a server or proxy would send it). Run after a build:
//
//   npm run dashboard:build && npm run --silent dashboard:size
//
// test/dashboard.size.test.ts fails above BUDGET_GZIP_BYTES, so the bundle cannot grow unnoticed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

export const DIST = fileURLToPath(new URL('../dashboard/dist', import.meta.url));
/** The budget for the first load, gzipped: generous (today ~100 KiB), so only a real regression fails. */
export const BUDGET_GZIP_BYTES = 400 * 1024;

export interface FirstLoadFile {
  path: string;
  kind: 'html' | 'js' | 'css';
  bytes: number;
  gzip: number;
}

/** The files of the first load, read from dist/index.html: scripts, stylesheets, module preloads. */
export function firstLoad(dist = DIST): FirstLoadFile[] {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const refs = new Set<string>();
  for (const m of html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)) refs.add(m[1]!);
  for (const m of html.matchAll(/<link\b[^>]*>/g)) {
    const tag = m[0];
    const rel = /\brel="([^"]+)"/.exec(tag)?.[1];
    const href = /\bhref="([^"]+)"/.exec(tag)?.[1];
    if (href && (rel === 'stylesheet' || rel === 'modulepreload')) refs.add(href);
  }
  const file = (path: string, kind: FirstLoadFile['kind'], content: Buffer): FirstLoadFile => ({ path, kind, bytes: content.length, gzip: gzipSync(content, { level: 9 }).length });
  const out = [file('index.html', 'html', Buffer.from(html))];
  for (const ref of refs) {
    if (/^(https?:)?\/\//.test(ref) || ref.startsWith('data:')) continue; // nothing from elsewhere (the CSP forbids it anyway)
    const rel = ref.replace(/^\/dashboard\//, '');
    out.push(file(rel, rel.endsWith('.css') ? 'css' : 'js', readFileSync(join(dist, rel))));
  }
  return out;
}

export function totals(files: FirstLoadFile[]) {
  const sum = (kind?: FirstLoadFile['kind']) => files.filter((f) => !kind || f.kind === kind).reduce((a, f) => ({ bytes: a.bytes + f.bytes, gzip: a.gzip + f.gzip }), { bytes: 0, gzip: 0 });
  return { js: sum('js'), css: sum('css'), html: sum('html'), all: sum() };
}

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const files = firstLoad();
  const t = totals(files);
  const rows = files.map((f) => `| ${f.path} | ${kib(f.bytes)} | ${kib(f.gzip)} |`);
  console.log(['| first load | raw | gzip |', '|---|---:|---:|', ...rows, `| **JS + CSS** | ${kib(t.js.bytes + t.css.bytes)} | **${kib(t.js.gzip + t.css.gzip)}** |`, `| all (with index.html) | ${kib(t.all.bytes)} | ${kib(t.all.gzip)} |`].join('\n'));
  console.log(`\nbudget: ${kib(BUDGET_GZIP_BYTES)} gzip (test/dashboard.size.test.ts)`);
  if (t.all.gzip > BUDGET_GZIP_BYTES) process.exitCode = 1;
}
