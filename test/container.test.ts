// The container image (issue 26, "Container"). No container engine runs in CI, so the Dockerfile is
// linted (dockerfile-utils) and checked for what would break its build or weaken it: every file or directory it COPYs from the
// context exists and is not excluded by .dockerignore; what it copies from the build stage is what
// that stage produces; the base images are pinned to an exact Node release that satisfies
// package.json "engines"; the runtime installs production dependencies only and those include
// what the command needs (tsx); it runs as a non-root user, has a HEALTHCHECK on /readyz and the
// same command as `npm start`. compose.yaml runs it on PostgreSQL 15.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The Dockerfile's instructions (continuation lines joined, comments dropped), per stage. */
function instructions(text: string): { stage: string; op: string; args: string }[] {
  const joined = text.replace(/\\\n/g, ' ');
  const out: { stage: string; op: string; args: string }[] = [];
  let stage = '';
  for (const line of joined.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const m = /^(\w+)\s+(.*)$/.exec(t);
    if (!m) continue;
    const op = m[1]!.toUpperCase();
    if (op === 'FROM') stage = /\bAS\s+(\S+)/i.exec(m[2]!)?.[1] ?? String(out.length);
    out.push({ stage, op, args: m[2]!.trim() });
  }
  return out;
}
const ins = instructions(dockerfile);

/** A .dockerignore pattern as a RegExp on a context path (enough for the patterns used here). */
const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .map((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\//g, '(?:.*/)?').replace(/\*/g, '[^/]*')}(?:/|$)`));

describe('Dockerfile', () => {
  // The lint: dockerfile-utils, the Dockerfile linter of the VS Code Docker extension (hadolint, which
  // the issue names, is a Haskell binary that neither npm nor Debian's apt ships here; its npm wrapper
  // downloads it from GitHub). Every diagnostic — error, warning or deprecation — fails the test.
  it('lints clean (dockerfile-utils), and the lint finds what it should', () => {
    const diagnostics = validate(dockerfile).map((d) => `${d.range.start.line + 1}: ${d.message}`);
    expect(diagnostics).toEqual([]);
    const broken = `${dockerfile}\nEXPOSE port\nMAINTAINER someone\nHEALTHCHECK --interval=soon CMD true\n`;
    expect(validate(broken).length).toBeGreaterThanOrEqual(3);
  });

  it('copies only files and directories that exist in the build context and are not ignored', () => {
    const copies = ins.filter((i) => (i.op === 'COPY' || i.op === 'ADD') && !/--from=/.test(i.args));
    expect(copies.length).toBeGreaterThan(5);
    for (const c of copies) {
      const parts = c.args.split(/\s+/).filter((a) => !a.startsWith('--'));
      for (const src of parts.slice(0, -1)) {
        expect(existsSync(join(root, src)), `COPY ${src}`).toBe(true);
        expect(ignored.some((re) => re.test(src)), `${src} is excluded by .dockerignore`).toBe(false);
      }
    }
  });

  it("copies from the build stage what that stage produces: the Prisma client and the dashboard's build", () => {
    const fromBuild = ins.filter((i) => i.op === 'COPY' && /--from=build/.test(i.args)).map((i) => i.args.split(/\s+/)[1]);
    expect(fromBuild).toEqual(['/app/src/generated', '/app/dashboard/dist']);
    // the generators write under src/generated; Vite's outDir is dashboard/dist; the build stage runs both
    const schema = readFileSync(join(root, 'prisma', 'schema.prisma'), 'utf8');
    expect([...schema.matchAll(/output\s*=\s*"([^"]+)"/g)].map((m) => m[1]!.startsWith('../src/generated/'))).toEqual([true, true]);
    expect(readFileSync(join(root, 'dashboard', 'vite.config.ts'), 'utf8')).toMatch(/outDir: 'dist'/);
    const build = ins.filter((i) => i.stage === 'build' && i.op === 'RUN').map((i) => i.args);
    expect(build).toContain('npm ci --ignore-scripts --no-audit --no-fund && npm run --silent generate');
    expect(build).toContain('node scripts/build-dashboard.mjs --force');
    expect(pkg.scripts.generate).toBe('node scripts/prisma-generate.mjs');
  });

  it('pins the base images to one exact Node release that satisfies "engines"', () => {
    const froms = ins.filter((i) => i.op === 'FROM').map((i) => i.args.split(/\s+/)[0]!);
    expect(froms).toHaveLength(2);
    for (const f of froms) expect(f).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
    expect(new Set(froms).size).toBe(1);
    const [major, minor] = /^node:(\d+)\.(\d+)/.exec(froms[0]!)!.slice(1).map(Number) as [number, number];
    const engine = /^>=(\d+)\.(\d+)$/.exec(pkg.engines.node)!.slice(1).map(Number) as [number, number];
    expect(major).toBe(20);
    expect(major > engine[0] || (major === engine[0] && minor >= engine[1])).toBe(true);
  });

  it('runs production dependencies only, as a non-root user, with a HEALTHCHECK on /readyz and the command of npm start', () => {
    const runtime = ins.filter((i) => i.stage === 'runtime');
    expect(runtime.some((i) => i.op === 'RUN' && /npm ci --omit=dev/.test(i.args))).toBe(true);
    // the command's own needs are production dependencies
    expect(pkg.dependencies.tsx).toBeDefined();
    expect(pkg.dependencies.prisma).toBeDefined(); // the postinstall generates the client with it
    const users = runtime.filter((i) => i.op === 'USER').map((i) => i.args);
    expect(users).toHaveLength(1);
    expect(users[0]).not.toMatch(/^(root|0)(:|$)/);
    const lastUser = runtime.findLastIndex((i) => i.op === 'USER');
    expect(runtime.slice(lastUser).some((i) => i.op === 'RUN')).toBe(false); // nothing runs as root after it
    const health = runtime.filter((i) => i.op === 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]!.args).toMatch(/\/readyz/);
    const cmd = runtime.filter((i) => i.op === 'CMD').map((i) => JSON.parse(i.args) as string[]);
    expect(cmd).toHaveLength(1);
    expect(cmd[0]!.join(' ')).toBe(pkg.scripts.start);
    expect(existsSync(join(root, cmd[0]!.at(-1)!))).toBe(true);
    const env = runtime.filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
    expect(env).toMatch(/HOST=0\.0\.0\.0/); // reachable from outside the container
  });
});

describe('compose.yaml', () => {
  it('runs the image on PostgreSQL 15, ready before the service starts', () => {
    const compose = readFileSync(join(root, 'compose.yaml'), 'utf8');
    expect(compose).toMatch(/^\s+image: postgres:15\.\d+/m);
    expect(compose).toMatch(/^\s+build: \.$/m);
    expect(compose).toMatch(/DATABASE_URL: postgresql:\/\/billing:[^@]+@postgres:5432\/billing/);
    expect(compose).toMatch(/condition: service_healthy/);
    expect(compose).toMatch(/pg_isready/);
  });
});

// Where a container engine answers (`docker info` exits 0), the image is built and started for real:
// the container must answer /readyz on the embedded database. On machines with only the client or no
// docker at all (this project's CI), it is skipped and the checks above stand in for it.
const engine = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
describe.runIf(engine)('the image, built by the container engine', () => {
  it('builds, starts and answers /readyz', async () => {
    const tag = `open-billing-test:${process.pid}`;
    const build = spawnSync('docker', ['build', '-t', tag, root], { encoding: 'utf8', timeout: 900_000 });
    expect(build.status, build.stderr.slice(-4000)).toBe(0);
    const run = spawnSync('docker', ['run', '-d', '--rm', '-p', '127.0.0.1::4000', tag], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const id = run.stdout.trim();
    try {
      const port = spawnSync('docker', ['port', id, '4000'], { encoding: 'utf8' }).stdout.trim().split(':').pop();
      let ready = 0;
      for (let i = 0; i < 120 && ready !== 200; i++) {
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0);
        if (ready !== 200) await new Promise((r) => setTimeout(r, 1000));
      }
      expect(ready).toBe(200);
    } finally {
      spawnSync('docker', ['rm', '-f', id]);
      spawnSync('docker', ['rmi', '-f', tag]);
    }
  }, 1_200_000);
});
