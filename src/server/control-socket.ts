// The CLI while a server holds the embedded database. PGlite is single-process: the server locks
// DATA_DIR (src/platform/db/data-dir-lock.ts), and a second process must not open it. So the
// server listens on a Unix socket in DATA_DIR, `billing.sock`, and a CLI that finds the directory
// locked by a live server sends its command there; the server runs it with the same command
// function the CLI runs locally (src/server/commands.ts) and sends back the output and exit code.
//
// Who may use it: the socket is mode 0600 in a 0700 directory, so only the owner of DATA_DIR — who
// can read and write the database files directly anyway — can connect. Nothing is gained by
// reaching it that was not already there.
//
// Protocol: one JSON line each way. Request {"argv": [...]}; answer {"code", "stdout", "stderr"}.
import { chmodSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { CommandResult } from './commands.ts';

export const SOCKET_NAME = 'billing.sock';
const MAX_REQUEST_BYTES = 64 * 1024;

export const socketPath = (dataDir: string) => join(dataDir, SOCKET_NAME);

/**
 * Listens on DATA_DIR/billing.sock and answers each request with `run(argv)`. Call only while
 * holding the DATA_DIR lock (a socket file left by a dead server is replaced). Returns the stop
 * function (closes the socket and removes the file).
 */
export async function listenForCli(dataDir: string, run: (argv: string[]) => Promise<CommandResult>, onError?: (err: unknown) => void): Promise<() => Promise<void>> {
  const path = socketPath(dataDir);
  rmSync(path, { force: true });
  const server: Server = createServer((conn) => {
    let buf = '';
    let handled = false;
    conn.setEncoding('utf8');
    conn.on('error', () => {}); // a CLI that went away is nobody's error
    conn.on('data', (chunk: string) => {
      if (handled) return;
      buf += chunk;
      if (buf.length > MAX_REQUEST_BYTES) {
        handled = true;
        conn.end(`${JSON.stringify({ code: 2, stdout: '', stderr: 'request too large\n' })}\n`);
        return;
      }
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      handled = true;
      let argv: unknown;
      try {
        argv = (JSON.parse(buf.slice(0, nl)) as { argv?: unknown }).argv;
      } catch {
        argv = undefined;
      }
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
        conn.end(`${JSON.stringify({ code: 2, stdout: '', stderr: 'bad request\n' })}\n`);
        return;
      }
      run(argv as string[]).then(
        (r) => conn.end(`${JSON.stringify(r)}\n`),
        (err) => {
          onError?.(err);
          conn.end(`${JSON.stringify({ code: 1, stdout: '', stderr: `cli (in the server): ${err instanceof Error ? err.message : String(err)}\n` })}\n`);
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  server.unref();
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      rmSync(path, { force: true });
    });
}

/** Sends a command to the server holding DATA_DIR and returns its result. */
export function sendToServer(dataDir: string, argv: string[], timeoutMs = 120_000): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socketPath(dataDir));
    let buf = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`the server did not answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${JSON.stringify({ argv })}\n`));
    conn.on('data', (chunk: string) => {
      buf += chunk;
    });
    conn.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    conn.on('end', () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(buf.trim()) as CommandResult);
      } catch {
        reject(new Error('the server sent an unreadable answer'));
      }
    });
  });
}
