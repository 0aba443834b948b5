// Benchmark (not a test), for docs/scaling.md: the events table as it is, partitioned by merchant
// (HASH, 16 partitions) and partitioned by time (RANGE on created_at, one partition a month), each
// holding the same rows — ROWS events (default 3,000,000) over 12 months, a third of them one big
// merchant's, the rest spread over 2,000 merchants. Generated once by one INSERT … SELECT
// generate_series into the plain table and copied into the two partitioned ones, in a scratch
// database dropped at the end. For each table: the statements the events list and `GET
// /v1/events/:id` make (the list's first page, a page deep in a cursor, the type filter, the
// total count, one event by id), planning + execution time (median of RUNS, EXPLAIN ANALYZE) and
// pages touched; then retention: deleting the oldest month, against detaching its partition.
//
//   npx tsx bench/partitioning.ts
//   ROWS=1000000 RUNS=5 npx tsx bench/partitioning.ts
import pg from 'pg';
import { run, scratchDatabase } from './scratch.ts';

const ROWS = Number(process.env.ROWS ?? 3_000_000);
const RUNS = Number(process.env.RUNS ?? 7);
const MERCHANTS = 2000;
const TYPES = ['customer.created', 'payment.succeeded', 'invoice.paid', 'wallet.debited', 'subscription.updated', 'refund.created'];

const COLUMNS = `id text NOT NULL, merchant_id text NOT NULL, type text NOT NULL, data jsonb NOT NULL, created_at timestamptz(3) NOT NULL`;
// The two indexes of the real table (prisma/schema.prisma, model Event).
const indexes = (t: string) => [
  `CREATE INDEX ${t}_list ON ${t} (merchant_id, created_at DESC, id DESC)`,
  `CREATE INDEX ${t}_type ON ${t} (merchant_id, type, created_at DESC, id DESC)`,
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const scratch = await scratchDatabase('partitioning');
  const db = new pg.Client({ connectionString: scratch.url });
  await db.connect();
  try {
    const t = async (label: string, sql: string) => {
      const t0 = performance.now();
      await db.query(sql);
      console.log(`  ${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    };
    console.log(`events: ${ROWS.toLocaleString('en')} rows over 12 months; a third are one merchant's, the rest over ${MERCHANTS} merchants`);
    await db.query(`CREATE TABLE events_plain (${COLUMNS}, PRIMARY KEY (id))`);
    // By merchant: the partition key must be in every unique index, so the primary key becomes
    // (merchant_id, id) — ids stay unique in practice (131 random bits), but only per merchant by constraint.
    await db.query(`CREATE TABLE events_hash (${COLUMNS}, PRIMARY KEY (merchant_id, id)) PARTITION BY HASH (merchant_id)`);
    for (let i = 0; i < 16; i++) await db.query(`CREATE TABLE events_hash_${i} PARTITION OF events_hash FOR VALUES WITH (MODULUS 16, REMAINDER ${i})`);
    // By time: the primary key becomes (id, created_at); one partition a month.
    await db.query(`CREATE TABLE events_range (${COLUMNS}, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)`);
    const start = Date.UTC(2025, 11, 1);
    for (let m = 0; m < 12; m++) {
      const from = new Date(Date.UTC(2025, 11 + m, 1)).toISOString();
      const to = new Date(Date.UTC(2025, 12 + m, 1)).toISOString();
      await db.query(`CREATE TABLE events_range_${m} PARTITION OF events_range FOR VALUES FROM ('${from}') TO ('${to}')`);
    }
    // One INSERT … SELECT: ids look like ours, created_at spread evenly over the 12 months (the
    // row number orders them in time), every third row the big merchant's.
    await t(
      'generate (events_plain)',
      `INSERT INTO events_plain (id, merchant_id, type, data, created_at)
       SELECT 'evt_' || md5(i::text),
              CASE WHEN i % 3 = 0 THEN 'mer_big' ELSE 'mer_' || (i % ${MERCHANTS}) END,
              (ARRAY['${TYPES.join("','")}'])[1 + i % ${TYPES.length}],
              jsonb_build_object('object', jsonb_build_object('id', 'obj_' || i, 'object', 'payment', 'amount', i % 10000, 'currency', 'USD', 'status', 'succeeded')),
              timestamptz '${new Date(start).toISOString()}' + (i::float8 / (${ROWS} + 1)) * interval '365 days'
       FROM generate_series(1, ${ROWS}) AS i`,
    );
    await t('copy into events_hash', `INSERT INTO events_hash SELECT * FROM events_plain`);
    await t('copy into events_range', `INSERT INTO events_range SELECT * FROM events_plain`);
    for (const table of ['events_plain', 'events_hash', 'events_range']) {
      for (const sql of indexes(table)) await db.query(sql);
      await db.query(`VACUUM ANALYZE ${table}`);
    }
    const size = async (table: string) =>
      (await db.query(`SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS s FROM pg_class c WHERE c.relname = $1 OR c.relname LIKE $1 || '\\_%' AND c.relkind = 'r'`, [table])).rows[0].s;
    for (const table of ['events_plain', 'events_hash', 'events_range']) console.log(`  ${table}: ${await size(table)} with indexes`);

    // A cursor half way through the big merchant's list, one through a small one's; an id.
    const mid = (await db.query(`SELECT created_at, id FROM events_plain WHERE merchant_id = 'mer_big' ORDER BY created_at DESC, id DESC OFFSET ${Math.floor(ROWS / 6)} LIMIT 1`)).rows[0];
    const small = 'mer_7';
    const smallMid = (await db.query(`SELECT created_at, id FROM events_plain WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC OFFSET 500 LIMIT 1`, [small])).rows[0];
    const oneId = (await db.query(`SELECT id, merchant_id FROM events_plain WHERE merchant_id = $1 OFFSET 100 LIMIT 1`, [small])).rows[0];
    const queries: [string, string, unknown[]][] = [
      ['big merchant, first page (21 rows)', `SELECT * FROM %T WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT 21`, ['mer_big']],
      // The cursor as afterCursorWhere writes it (src/platform/pagination.ts) …
      ['big merchant, a page half way (cursor)', `SELECT * FROM %T WHERE merchant_id = $1 AND created_at <= $2 AND (created_at < $2 OR id < $3) ORDER BY created_at DESC, id DESC LIMIT 21`, ['mer_big', mid.created_at, mid.id]],
      // … and as it did until 2026-11-28: no bound on the index range, every newer row scanned.
      ['the same, cursor as `created_at < c OR (created_at = c AND id < c.id)`', `SELECT * FROM %T WHERE merchant_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) ORDER BY created_at DESC, id DESC LIMIT 21`, ['mer_big', mid.created_at, mid.id]],
      ['big merchant, type filter, first page', `SELECT * FROM %T WHERE merchant_id = $1 AND type = $2 ORDER BY created_at DESC, id DESC LIMIT 21`, ['mer_big', 'invoice.paid']],
      ['small merchant, first page', `SELECT * FROM %T WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT 21`, [small]],
      ['small merchant, a page half way', `SELECT * FROM %T WHERE merchant_id = $1 AND created_at <= $2 AND (created_at < $2 OR id < $3) ORDER BY created_at DESC, id DESC LIMIT 21`, [small, smallMid.created_at, smallMid.id]],
      ['small merchant, total count', `SELECT count(*) FROM %T WHERE merchant_id = $1`, [small]],
      ['big merchant, total count', `SELECT count(*) FROM %T WHERE merchant_id = $1`, ['mer_big']],
      ['one event by id (GET /v1/events/:id)', `SELECT * FROM %T WHERE merchant_id = $1 AND id = $2`, [oneId.merchant_id, oneId.id]],
    ];
    const rows: string[] = ['| statement | plain | by merchant (HASH ×16) | by month (RANGE ×12) |', '|---|---:|---:|---:|'];
    for (const [label, sql, params] of queries) {
      const cells: string[] = [];
      for (const table of ['events_plain', 'events_hash', 'events_range']) {
        const times: number[] = [];
        let buffers = 0;
        let partitions = 0;
        for (let r = 0; r < RUNS; r++) {
          const plan = (await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.replace('%T', table)}`, params)).rows[0]['QUERY PLAN'][0];
          times.push(plan['Planning Time'] + plan['Execution Time']);
          const walk = (n: any): void => {
            if (n['Relation Name']) partitions++;
            for (const c of n.Plans ?? []) walk(c);
          };
          partitions = 0;
          walk(plan.Plan);
          buffers = (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0);
        }
        cells.push(`${median(times).toFixed(2)} ms, ${buffers} pages${table === 'events_plain' ? '' : `, ${partitions} scanned`}`);
      }
      const line = `| ${label} | ${cells.join(' | ')} |`;
      rows.push(line);
      console.log(line);
    }

    // Retention: the oldest month.
    const month = new Date(Date.UTC(2026, 0, 1)).toISOString();
    const t0 = performance.now();
    const deleted = await db.query(`DELETE FROM events_plain WHERE created_at < $1`, [month]);
    const deleteMs = performance.now() - t0;
    const t1 = performance.now();
    await db.query(`ALTER TABLE events_range DETACH PARTITION events_range_0`);
    await db.query(`DROP TABLE events_range_0`);
    const detachMs = performance.now() - t1;
    const retention = `retention, the oldest month (${deleted.rowCount} rows): DELETE on the plain table ${(deleteMs / 1000).toFixed(1)} s (and the dead rows left to vacuum); DETACH + DROP of its partition ${detachMs.toFixed(0)} ms`;
    console.log(`\n${rows.join('\n')}\n\n${retention}`);
  } finally {
    await db.end();
    await scratch.drop();
  }
}

run(main);
