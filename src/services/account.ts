// The merchant's settings change (PATCH /v1/account, GraphQL updateMerchantSettings, the CLI's
// `merchant update`): the merchants area owns the row, the events area the account.updated event,
// which merchants (below events) cannot record — so the change is here, both in one transaction.
import type { Merchant } from '../generated/prisma/client.ts';
import type { ClockMerchant } from '../platform/clock.ts';
import type { Clock } from '../platform/clock.ts';
import { inTransaction, type Db } from '../platform/db/tenant.ts';
import { NotFoundError } from '../platform/errors.ts';
import { parse } from '../platform/validation.ts';
import { previousAttributes, recordEvent } from '../domain/events/index.ts';
import { accountToJSON, accountUpdate, parseLogo, type AccountUpdateInput } from '../domain/merchants/account.ts';
import { findMerchant, lockMerchantRow, updateMerchantSettingsRow } from '../domain/merchants/store.ts';

export interface AccountScope {
  merchant: ClockMerchant;
  clock?: Clock | undefined;
  /** the merchant's scoped client (a request's ctx.db; the CLI's forMerchant) */
  db: Db;
}

/** The merchant's own row (GET /v1/account). */
export async function getAccount(scope: AccountScope): Promise<Merchant> {
  const m = await findMerchant(scope.db as never, scope.merchant.id);
  if (!m) throw new NotFoundError('account', scope.merchant.id);
  return m;
}

/**
 * Changes the name and branding given (the others keep their value; null clears the colour or the
 * logo) and records account.updated with the previous values, in one transaction. No change, no event.
 */
export async function updateAccount(scope: AccountScope, input: AccountUpdateInput): Promise<Merchant> {
  const data = parse(accountUpdate, input);
  const logo = data.branding?.logo === undefined ? undefined : data.branding.logo === null ? null : parseLogo(data.branding.logo);
  return inTransaction(scope.db, async (tx) => {
    const before = await lockMerchantRow(tx as never, scope.merchant.id);
    if (!before) throw new NotFoundError('account', scope.merchant.id);
    const accent = data.branding?.accent_color;
    const after = await updateMerchantSettingsRow(tx as never, scope.merchant.id, {
      name: data.name,
      accentColor: accent === undefined ? undefined : accent === null ? null : accent.toUpperCase(),
      ...(logo === undefined ? {} : logo === null ? { logoType: null, logo: null } : { logoType: logo.type, logo: new Uint8Array(logo.bytes) }),
    });
    const prev = previousAttributes(accountToJSON(before) as never, accountToJSON(after) as never);
    if (Object.keys(prev).length > 0) await recordEvent(tx, scope, 'account.updated', accountToJSON(after), prev);
    return after;
  });
}
