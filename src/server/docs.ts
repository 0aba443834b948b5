// The rendered API reference at /docs: Swagger UI served from the swagger-ui-dist package (no
// CDN), reading /openapi.json.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const distDir = join(require.resolve('swagger-ui-dist/package.json'), '..');
const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

/** The reference page's headers: its own scripts only (by nonce), data from this origin only, never framed. */
export function docsSecurityHeaders(nonce: string): Record<string, string> {
  return {
    'Content-Security-Policy': `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
}

export const docsHtml = (nonce: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Billing API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script nonce="${nonce}">
    window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout',
      persistAuthorization: false, tryItOutEnabled: false,
      // "Try it out" goes to the server that served this page: the document's server is the
      // configured origin (PUBLIC_BASE_URL), which the browser may know by another name
      // (127.0.0.1 for localhost), and the page's policy only lets it talk to its own origin.
      requestInterceptor: (req) => {
        const u = new URL(req.url, location.href);
        if (u.origin !== location.origin) req.url = location.origin + u.pathname + u.search;
        return req;
      } });
  </script>
</body>
</html>`;

export async function docsAsset(name: string): Promise<{ body: Buffer; type: string } | null> {
  const type = ASSETS.get(name);
  if (!type) return null;
  return { body: await readFile(join(distDir, name)), type };
}
