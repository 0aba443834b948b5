// Every row of a list endpoint, page after page (100 a page, the list envelope's cursor).
import { expect } from 'vitest';
import type { Client } from './app.ts';

export async function listAll(api: Client, path: string): Promise<any[]> {
  const out: any[] = [];
  let after: string | undefined;
  for (;;) {
    const r = await api.get(`${path}${path.includes('?') ? '&' : '?'}limit=100${after ? `&after=${after}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.data);
    if (!r.body.has_more) return out;
    after = r.body.next_cursor;
  }
}
