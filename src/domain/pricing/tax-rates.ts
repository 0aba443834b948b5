// Tax rates (API-CONVENTIONS "Billing depth"; docs/billing.md "Tax rates"): a percentage with up to
// 4 decimals, exclusive (added to a line) or inclusive (contained in it). Subscriptions name them in
// default_tax_rates; each invoice line is taxed per rules.ts.
import type { Prisma, TaxRate } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type Db } from '../../platform/db/tenant.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { freeText, listQuery, metadata, parse, searchParam, searchWords, z } from '../../platform/validation.ts';
import { clockNow } from '../../platform/clock.ts';
import { isCountryCode } from '../../platform/countries.ts';
import type { PricingTaxRate } from './rules.ts';
import * as store from './store.ts';

/** At most this many tax rates on a subscription. */
export const MAX_TAX_RATES = 5;

const fourDecimals = (v: number) => Math.abs(v * 10_000 - Math.round(v * 10_000)) < 1e-6;

export const taxRateCreate = z.strictObject({
  display_name: freeText(100).meta({ example: 'VAT' }),
  percentage: z
    .number({ error: 'must be a number' })
    .min(0, { error: 'must be at least 0' })
    .max(100, { error: 'must be at most 100' })
    .refine(fourDecimals, { error: 'must have at most 4 decimals' })
    .meta({ description: 'The rate in percent, 0 to 100, up to 4 decimals.', example: 19.6 }),
  inclusive: z.boolean().optional().meta({ description: 'true: the tax is contained in the line amounts (extracted); false (default): added to them.' }),
  country: z
    .string()
    .refine(isCountryCode, { error: 'must be an assigned ISO 3166-1 alpha-2 country code, such as FR' })
    .transform((v) => v.toUpperCase())
    .optional()
    .meta({ description: 'An assigned ISO 3166-1 alpha-2 country code, any case; returned upper-case.', example: 'FR' }),
  jurisdiction: freeText(100).optional().meta({ example: 'FR' }),
  metadata: metadata.optional(),
});
export type TaxRateCreateInput = z.input<typeof taxRateCreate>;

/** What `search` matches (docs/billing.md "Tax rates"). */
export const TAX_RATE_SEARCH_DESCRIPTION =
  'Case-insensitive search: tax rates whose name, jurisdiction or country contains every word of the text ("vat fr" finds "VAT" in FR), or whose id is the text. 1 to 100 characters; combines with active.';

export const taxRateListQuery = z.strictObject({
  active: z.enum(['true', 'false']).optional().meta({ description: 'true: rates subscriptions may name; false: archived rates.' }),
  search: searchParam(TAX_RATE_SEARCH_DESCRIPTION, 'vat').optional(),
  ...listQuery,
});
export type TaxRateListQuery = z.output<typeof taxRateListQuery>;

export function taxRateToJSON(t: TaxRate) {
  return {
    id: t.id,
    object: 'tax_rate' as const,
    display_name: t.displayName,
    percentage: t.percentage / 10_000,
    inclusive: t.inclusive,
    country: t.country,
    jurisdiction: t.jurisdiction,
    active: t.active,
    metadata: t.metadata as Record<string, string>,
    created_at: t.createdAt.toISOString(),
  };
}

export function pricingTaxRate(t: TaxRate): PricingTaxRate {
  return { id: t.id, percentage: t.percentage, inclusive: t.inclusive };
}

export async function createTaxRate(ctx: Ctx, input: TaxRateCreateInput): Promise<TaxRate> {
  const data = parse(taxRateCreate, input);
  return inTransaction(ctx.db, async (tx) =>
    store.insertTaxRate(tx, {
      id: newId('tax_rate'),
      merchantId: ctx.merchant.id,
      displayName: data.display_name,
      percentage: Math.round(data.percentage * 10_000),
      inclusive: data.inclusive ?? false,
      country: data.country ?? null,
      jurisdiction: data.jurisdiction ?? null,
      metadata: data.metadata ?? {},
      createdAt: await clockNow({ ...ctx, db: tx }),
    }),
  );
}

export async function getTaxRate(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<TaxRate> {
  const t = await store.findTaxRate(db, id);
  if (!t) throw new NotFoundError('tax rate', id, param);
  return t;
}

/** The search as a filter: the id, or every word (searchWords) within the name, jurisdiction or country, case-insensitive. */
function taxRateSearchFilter(search: string | undefined): Prisma.TaxRateWhereInput {
  if (search === undefined) return {};
  const within = (w: string) => ({ contains: w, mode: 'insensitive' as const });
  return { OR: [{ id: search }, { AND: searchWords(search).map((w) => ({ OR: [{ displayName: within(w) }, { jurisdiction: within(w) }, { country: within(w) }] })) }] };
}

export async function listTaxRates(ctx: Ctx, q: TaxRateListQuery): Promise<Page<TaxRate>> {
  const filter: Prisma.TaxRateWhereInput = { AND: [q.active === undefined ? {} : { active: q.active === 'true' }, taxRateSearchFilter(q.search)] };
  return paginate(
    q,
    ({ where, ...page }) => store.listTaxRates(ctx.db, { AND: [where, filter] }, page),
    () => store.countTaxRates(ctx.db, filter),
  );
}

/**
 * Archives a tax rate (final, as a plan's archive): no subscription may name it any more
 * (default_tax_rates: 400 parameter_invalid); the subscriptions that have it keep it, and their
 * invoices are taxed with it as before. Archiving an archived rate is 409 tax_rate_archived.
 * No event: the catalogue has no tax-rate events (docs/billing.md "Tax rates").
 */
export async function archiveTaxRate(ctx: Ctx, id: string): Promise<TaxRate> {
  return inTransaction(ctx.db, async (tx) => {
    const archived = await store.archiveTaxRate(tx, id);
    const t = await getTaxRate(ctx, id, tx);
    if (!archived) throw new StateError('tax_rate_archived', `Tax rate ${id} is already archived.`, null);
    return t;
  });
}

/**
 * The default_tax_rates a subscription is given: each an existing active rate of the merchant
 * (404 resource_missing otherwise, param default_tax_rates), no repeats, at most MAX_TAX_RATES.
 * Returns the ids in the order given.
 */
export async function checkTaxRates(ctx: Ctx, db: Db, ids: readonly string[], param = 'default_tax_rates'): Promise<string[]> {
  if (new Set(ids).size !== ids.length) throw new ValidationError('parameter_invalid', `Invalid ${param}: a tax rate is named twice.`, param);
  if (ids.length > MAX_TAX_RATES) throw new ValidationError('parameter_invalid', `Invalid ${param}: at most ${MAX_TAX_RATES} tax rates.`, param);
  const rows = new Map((await store.listTaxRatesById(db, [...ids])).map((t) => [t.id, t]));
  for (const id of ids) {
    const t = rows.get(id);
    if (!t) throw new NotFoundError('tax rate', id, param);
    if (!t.active) throw new ValidationError('parameter_invalid', `Invalid ${param}: tax rate ${id} is inactive.`, param);
  }
  return [...ids];
}

/** Tax rates by id, in the order given (unknown ids left out), for pricing invoices. */
export async function taxRatesForPricing(db: Db, ids: readonly string[]): Promise<PricingTaxRate[]> {
  if (ids.length === 0) return [];
  const rows = new Map((await store.listTaxRatesById(db, [...ids])).map((t) => [t.id, t]));
  return ids.flatMap((id) => {
    const t = rows.get(id);
    return t ? [pricingTaxRate(t)] : [];
  });
}

/** Tax rate rows by id, in the order given (unknown ids left out): a subscription's default_tax_rates in GraphQL. */
export async function taxRatesByIds(ctx: Ctx, ids: readonly string[]): Promise<TaxRate[]> {
  if (ids.length === 0) return [];
  const rows = new Map((await store.listTaxRatesById(ctx.db, [...ids])).map((t) => [t.id, t]));
  return ids.flatMap((id) => rows.get(id) ?? []);
}
