// What `npm start` prints on stderr for the person at the terminal — never on stdout, which carries
// only the JSON log lines (a log collector must not receive a secret, and a person should not have
// to dig one out of JSON). Each part is a list of lines, so adding to a part is adding a line.
import type { IssuedCredentials } from '../domain/merchants/index.ts';
import { linkLines } from './landing.ts';

/**
 * The first start only: the bootstrap merchant's credentials, shown this once. Anything else a
 * first start must hand over once (say, a sign-in) goes in this list.
 */
export function firstStartLines(creds: IssuedCredentials, baseUrl: string): string[] {
  const auth = `${creds.client_id}:${creds.client_secret}`;
  return [
    '',
    '  A test-mode merchant was created. Its secret is shown only this once:',
    '',
    `    merchant_id    ${creds.merchant_id}`,
    `    client_id      ${creds.client_id}`,
    `    client_secret  ${creds.client_secret}`,
    '',
    '  Try it:',
    `    curl -u ${auth} ${baseUrl}/v1/customers -H 'Content-Type: application/json' -d '{"email":"jane@example.com"}'`,
    '',
  ];
}

/** Every start (restarts included): where the server listens and where everything is. No secret here. */
export function startLines(opts: { listening: string; database: string; baseUrl: string }): string[] {
  return [`  Listening on ${opts.listening} (database: ${opts.database})`, '', ...linkLines(opts.baseUrl), ''];
}

/** Writes lines to stderr (the terminal), one write so processes do not interleave them. */
export function printLines(lines: string[], out: { write(text: string): unknown } = process.stderr): void {
  out.write(lines.join('\n') + '\n');
}
