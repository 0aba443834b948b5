// The dashboard's build: React 19 without a plugin (esbuild's automatic JSX runtime is all a
// production build needs), served by the billing service under /dashboard/ (src/server/dashboard.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline module-preload polyfill or data: URLs: the page's CSP allows only 'self'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
  },
});
