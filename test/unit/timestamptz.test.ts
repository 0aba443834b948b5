// The fast timestamptz text parser of the raw SQL path gives the Date pg's own parser gives, for
// what PostgreSQL sends under any TimeZone setting, and hands everything else to pg's parser.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { timestamptzFromText } from '../../src/platform/db/index.ts';

const pgParse = pg.types.getTypeParser(1184, 'text') as (v: string) => Date | number;

describe('timestamptzFromText', () => {
  it('equals pg’s parser on every offset and precision PostgreSQL writes', () => {
    const samples = [
      '2026-11-25 03:29:49.434+00',
      '2026-11-25 03:29:49+00',
      '2026-11-25 03:29:49.4+05:30',
      '2026-11-25 03:29:49.123456-03',
      '1970-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999+14',
      '2024-02-29 12:00:00.5-09:30',
    ];
    for (const s of samples) expect(timestamptzFromText(s).getTime(), s).toBe((pgParse(s) as Date).getTime());
  });

  it('leaves the rest to pg’s parser (BC dates, infinity, years past 9999)', () => {
    for (const s of ['0044-03-15 12:00:00+00 BC', 'infinity', '-infinity', '12345-01-01 00:00:00+00']) {
      expect(timestamptzFromText(s), s).toEqual(pgParse(s));
    }
  });
});
