// The dashboard's first load (index.html, its script, its stylesheet, its preloads) stays within a
// gzip budget, so the bundle cannot grow unnoticed (issue 24: "report the first-load bundle size").
// dashboard/dist is built by the suite's global setup (test/helpers/dashboard-build.ts).
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUDGET_GZIP_BYTES, firstLoad, totals } from '../scripts/dashboard-size.ts';

describe('the dashboard’s first load', () => {
  it(`is within ${BUDGET_GZIP_BYTES / 1024} KiB gzipped (JS + CSS + index.html)`, () => {
    const files = firstLoad();
    const t = totals(files);
    console.log(`dashboard first load: JS ${(t.js.gzip / 1024).toFixed(1)} KiB gzip (${(t.js.bytes / 1024).toFixed(1)} raw), CSS ${(t.css.gzip / 1024).toFixed(1)} KiB gzip, all ${(t.all.gzip / 1024).toFixed(1)} KiB gzip`);
    // It found what index.html loads: one entry script and a stylesheet at least.
    expect(files.filter((f) => f.kind === 'js').length).toBeGreaterThanOrEqual(1);
    expect(files.filter((f) => f.kind === 'css').length).toBeGreaterThanOrEqual(1);
    expect(t.js.gzip).toBeGreaterThan(10 * 1024); // React alone is more: a sanity check on what was measured
    expect(t.all.gzip).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
  });

  it('counts every script, stylesheet and module preload of index.html, gzipped', () => {
    const dist = mkdtempSync(join(tmpdir(), 'dash-size-'));
    mkdirSync(join(dist, 'assets'));
    const big = 'x'.repeat(1000) + Array.from({ length: 2000 }, (_, i) => i.toString(36)).join(',');
    writeFileSync(join(dist, 'assets', 'a.js'), big);
    writeFileSync(join(dist, 'assets', 'b.js'), 'export const b = 1;');
    writeFileSync(join(dist, 'assets', 'lazy.js'), 'never on the first load');
    writeFileSync(join(dist, 'assets', 's.css'), 'body{margin:0}');
    writeFileSync(
      join(dist, 'index.html'),
      '<script type="module" src="/dashboard/assets/a.js"></script><link rel="modulepreload" href="/dashboard/assets/b.js"><link rel="stylesheet" href="/dashboard/assets/s.css"><link rel="icon" href="data:,">',
    );
    const files = firstLoad(dist);
    expect(files.map((f) => [f.path, f.kind])).toEqual([
      ['index.html', 'html'],
      ['assets/a.js', 'js'],
      ['assets/b.js', 'js'],
      ['assets/s.css', 'css'],
    ]);
    const a = files[1]!;
    expect(a.bytes).toBe(Buffer.byteLength(big));
    expect(a.gzip).toBeLessThan(a.bytes / 2);
    expect(totals(files).css.bytes).toBe('body{margin:0}'.length);
  });
});
