// The bare baseline of `npm run bench`: node:http + pg.Pool answering the same JSON with the least
// SQL each operation needs, on its own tables (schema `bare`: no triggers, no Prisma, no auth, no
// validation beyond parsing). What the service achieves is reported as a ratio of this.
//
//   BARE_DATABASE_URL=postgresql://… BARE_PORT=0 BARE_POOL=10 tsx bench/bare-server.ts
// Prints `bare listening <port>` when ready.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.BARE_DATABASE_URL, max: Number(process.env.BARE_POOL ?? 10) });
const id = (p: string) => `${p}_${randomBytes(16).toString('base64url').slice(0, 22)}`;

export const BARE_SCHEMA = `
CREATE SCHEMA IF NOT EXISTS bare;
CREATE TABLE IF NOT EXISTS bare.customers (id text PRIMARY KEY, merchant_id text NOT NULL, email text NOT NULL, name text, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS bare.events (id text PRIMARY KEY, merchant_id text NOT NULL, type text NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS bare.wallets (id text PRIMARY KEY, merchant_id text NOT NULL, balance bigint NOT NULL);
CREATE TABLE IF NOT EXISTS bare.wallet_transactions (id text PRIMARY KEY, wallet_id text NOT NULL, amount bigint NOT NULL, balance_after bigint NOT NULL, reference text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (wallet_id, reference));
`;

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function body(req: IncomingMessage): Promise<any> {
  let s = '';
  for await (const chunk of req) s += chunk;
  return s ? JSON.parse(s) : {};
}

const MERCHANT = 'mer_bare';

async function handle(req: IncomingMessage, res: ServerResponse) {
  const url = req.url ?? '/';
  let m: RegExpExecArray | null;
  if (req.method === 'GET' && (m = /^\/customers\/([^/?]+)$/.exec(url))) {
    const r = await pool.query('SELECT id, email, name, created_at FROM bare.customers WHERE id = $1 AND merchant_id = $2', [m[1], MERCHANT]);
    const c = r.rows[0];
    if (!c) return send(res, 404, { error: { code: 'resource_missing' } });
    return send(res, 200, { id: c.id, object: 'customer', email: c.email, name: c.name, created_at: c.created_at.toISOString() });
  }
  if (req.method === 'POST' && url === '/customers') {
    const b = await body(req);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const c = (await client.query('INSERT INTO bare.customers (id, merchant_id, email, name) VALUES ($1, $2, $3, $4) RETURNING id, email, name, created_at', [id('cus'), MERCHANT, b.email, b.name ?? null])).rows[0];
      const json = { id: c.id, object: 'customer', email: c.email, name: c.name, created_at: c.created_at.toISOString() };
      await client.query('INSERT INTO bare.events (id, merchant_id, type, data) VALUES ($1, $2, $3, $4)', [id('evt'), MERCHANT, 'customer.created', { object: json }]);
      await client.query('COMMIT');
      return send(res, 201, json);
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    } finally {
      client.release();
    }
  }
  if (req.method === 'POST' && (m = /^\/wallets\/([^/]+)\/debit$/.exec(url))) {
    const b = await body(req);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const w = (await client.query('UPDATE bare.wallets SET balance = balance - $1 WHERE id = $2 AND merchant_id = $3 AND balance >= $1 RETURNING balance', [b.amount, m[1], MERCHANT])).rows[0];
      if (!w) {
        await client.query('ROLLBACK');
        return send(res, 402, { error: { code: 'insufficient_balance' } });
      }
      const tx = { id: id('wtx'), object: 'wallet_transaction', wallet_id: m[1], type: 'debit', amount: b.amount, balance_after: Number(w.balance), reference: b.reference };
      await client.query('INSERT INTO bare.wallet_transactions (id, wallet_id, amount, balance_after, reference) VALUES ($1, $2, $3, $4, $5)', [tx.id, m[1], -b.amount, w.balance, b.reference]);
      await client.query('INSERT INTO bare.events (id, merchant_id, type, data) VALUES ($1, $2, $3, $4)', [id('evt'), MERCHANT, 'wallet.debited', { object: tx }]);
      await client.query('COMMIT');
      return send(res, 201, tx);
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    } finally {
      client.release();
    }
  }
  send(res, 404, { error: { code: 'not_found' } });
}

const server = createServer((req, res) => {
  handle(req, res).catch((e) => send(res, 500, { error: { message: String(e) } }));
});
await pool.query(BARE_SCHEMA);
server.listen(Number(process.env.BARE_PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`bare listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
