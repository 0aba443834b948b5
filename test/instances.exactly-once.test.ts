// Exactly once across instances (issue 26, "Several instances"): three real server processes on
// one PostgreSQL database, started at once on the empty database, each with its own pools and job
// worker. Six weekly subscriptions are renewed by six rounds of clock advances, each round sent to
// all three instances at once with the same target (one takes the merchant's advance lease and
// runs the renewals, the others wait for it and find the work done); webhook deliveries and
// customer e-mails (through a real SMTP server) are jobs that the three workers claim. Afterwards:
//
// - one merchant (the bootstrap ran once), every advance answered 200;
// - one invoice per subscription and period, numbers gap-free, each paid by exactly one payment;
// - every event delivered to the webhook receiver exactly once (no process was killed: at least
//   once becomes exactly once), and every delivery job done;
// - every e-mail (receipts of the paid invoices, upcoming-renewal notices) reached the SMTP server
//   exactly once, and its row says sent;
// - the three instances all served requests (the log lines of each).
//
// PostgreSQL only (the embedded database is one process).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { simpleParser } from 'mailparser';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

const DAY = 86_400_000;
const SUBSCRIPTIONS = 6;
const ROUNDS = 6;

describe.runIf(process.env.TEST_DATABASE_URL)('three instances on one PostgreSQL', () => {
  let receiver: Server;
  let smtp: SMTPServer;
  const delivered: string[] = []; // webhook-id of every delivery received
  const mailed: string[] = []; // X-Billing-Event-Id of every message received
  let servers: ReturnType<typeof serverProcesses>;
  const bases: string[] = [];
  const outputs: string[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        delivered.push(String(req.headers['webhook-id']));
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, _session, cb) {
        simpleParser(stream)
          .then((mail) => {
            mailed.push(String(mail.headers.get('x-billing-event-id')));
            cb();
          })
          .catch(cb);
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    servers = serverProcesses('exactlyonce', {
      LOG_LEVEL: 'info',
      BILLING_ALLOW_HTTP_WEBHOOKS: '1',
      SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      RATE_LIMIT_PER_SECOND: '0',
      JOBS_POLL_MS: '100',
      CLOCK_ADVANCE_WAIT_MS: '60000',
    });
  }, 30_000);

  afterAll(async () => {
    await servers?.cleanup();
    receiver?.close();
    await new Promise<void>((r) => (smtp ? smtp.close(() => r()) : r()));
  });

  it('renewals from advances sent to every instance at once, deliveries and e-mails: each exactly once', async () => {
    const port = testPort();
    // Started at once on the empty database: they migrate it once and bootstrap one merchant.
    const children: ChildProcess[] = await Promise.all([0, 1, 2].map((i) => servers.start(port + i)));
    for (const [i, c] of children.entries()) {
      bases.push(`http://127.0.0.1:${port + i}`);
      outputs.push('');
      c.stdout!.on('data', (d) => (outputs[i] += d));
    }
    const db = new pg.Client({ connectionString: await servers.databaseUrl() });
    await db.connect();
    try {
      expect((await db.query('SELECT count(*)::int AS n FROM merchants')).rows[0].n).toBe(1);

      const call = async (i: number, method: string, path: string, body?: unknown) => {
        const r = await fetch(bases[i % 3]! + path, {
          method,
          headers: { authorization: servers.auth, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, body: (await r.json()) as any };
      };
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      expect((await call(0, 'POST', '/v1/webhook-endpoints', { url: hook })).status).toBe(201);
      expect((await call(1, 'PATCH', '/v1/email-settings', { upcoming_renewal: true })).status).toBe(200);
      const plan = (await call(2, 'POST', '/v1/plans', { name: 'Weekly', amount: 700, currency: 'USD', interval: 'week' })).body;
      // Customers, cards and subscriptions, each made on another instance.
      for (let i = 0; i < SUBSCRIPTIONS; i++) {
        const c = (await call(i, 'POST', '/v1/customers', { email: `once${i}@example.com` })).body;
        const si = (await call(i + 1, 'POST', '/v1/setup-intents', { customer_id: c.id })).body;
        expect((await call(i + 2, 'POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {})).status).toBe(200);
        expect((await call(i, 'POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body.status).toBe('active');
      }

      // Six rounds: the same advance (a week and an hour on) sent to the three instances at once.
      const start = new Date((await call(0, 'GET', '/v1/test-helpers/clock')).body.now).getTime();
      for (let round = 1; round <= ROUNDS; round++) {
        const to = new Date(start + round * (7 * DAY + 3_600_000)).toISOString();
        const answers = await Promise.all([0, 1, 2].map((i) => call(i, 'POST', '/v1/test-helpers/clock/advance', { to })));
        for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
        // The clock is at the target (a little past it for those that waited: it runs on in real time).
        for (const a of answers) expect(Date.parse(a.body.now)).toBeGreaterThanOrEqual(Date.parse(to));
      }

      // Wait until no job is left to run (deliveries and e-mails are claimed by the three workers).
      const end = Date.now() + 60_000;
      for (;;) {
        const { rows } = await db.query(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('pending', 'running') AND run_at <= now() + interval '1 hour'`);
        if (rows[0].n === 0) break;
        if (Date.now() > end) throw new Error('jobs still open after 60 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 500)); // a delivery or message already on its way

      // One invoice per subscription and period (the first and six renewals), gap-free numbers,
      // each paid by exactly one succeeded payment.
      const invoices = (await db.query(`SELECT id, number, subscription_id, period_start, status, payment_id FROM invoices`)).rows;
      expect(invoices).toHaveLength(SUBSCRIPTIONS * (ROUNDS + 1));
      expect(invoices.filter((i) => i.status !== 'paid')).toEqual([]);
      const periods = new Map<string, Set<number>>();
      for (const i of invoices) (periods.get(i.subscription_id) ?? periods.set(i.subscription_id, new Set()).get(i.subscription_id)!).add(i.period_start.getTime());
      expect([...periods.values()].map((s) => s.size)).toEqual(Array(SUBSCRIPTIONS).fill(ROUNDS + 1));
      expect(invoices.map((i) => Number(String(i.number).split('-').pop())).sort((a, b) => a - b)).toEqual(
        Array.from({ length: invoices.length }, (_, k) => k + 1),
      );
      const succeeded = (await db.query(`SELECT id FROM payments WHERE status = 'succeeded'`)).rows.map((r) => r.id as string).sort();
      expect(succeeded).toEqual(invoices.map((i) => i.payment_id as string).sort());

      // Every event delivered exactly once; every delivery job done.
      const events = (await db.query(`SELECT id FROM events`)).rows.map((r) => r.id as string).sort();
      expect(events.length).toBeGreaterThan(SUBSCRIPTIONS * (ROUNDS + 1) * 2);
      expect([...delivered].sort()).toEqual(events);
      expect((await db.query(`SELECT status, count(*)::int AS n FROM jobs WHERE kind = 'webhook.deliver' GROUP BY status`)).rows).toEqual([
        { status: 'done', n: events.length },
      ]);

      // Every e-mail reached the SMTP server exactly once: a receipt per paid invoice, a notice per
      // upcoming renewal (all but the first period's).
      const emails = (await db.query(`SELECT kind, status, event_id FROM emails`)).rows;
      expect(emails.filter((e) => e.kind === 'receipt')).toHaveLength(SUBSCRIPTIONS * (ROUNDS + 1));
      expect(emails.filter((e) => e.kind === 'upcoming_renewal').length).toBeGreaterThanOrEqual(SUBSCRIPTIONS * ROUNDS);
      expect(emails.filter((e) => e.status !== 'sent')).toEqual([]);
      expect([...mailed].sort()).toEqual(emails.map((e) => e.event_id as string).sort());

      // The three instances all served requests (their workers poll the same jobs table).
      for (const out of outputs) expect(out).toContain('"msg":"request"');
    } finally {
      await db.end();
    }
  }, 240_000);
});
