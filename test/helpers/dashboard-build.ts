// Vitest global setup: build the dashboard (dashboard/dist) once before any test file runs, as
// `npm start` does; a no-op when the build matches its sources (scripts/build-dashboard.mjs).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup() {
  execFileSync(process.execPath, [fileURLToPath(new URL('../../scripts/build-dashboard.mjs', import.meta.url))], { stdio: 'inherit' });
}
