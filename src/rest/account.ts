// The merchant's own settings (Stripe's /v1/account): name and branding.
import { accountToJSON, accountUpdate } from '../domain/merchants/account.ts';
import { getAccount, updateAccount } from '../services/account.ts';
import { route } from './route.ts';
import { accountObject } from './schemas.ts';

const tag = 'Account';

export const accountRoutes = [
  route({
    method: 'get', path: '/v1/account', operationId: 'getMerchantSettings', tag,
    summary: 'The merchant’s settings: name, mode, branding',
    response: { status: 200, description: 'The account.', schema: accountObject },
    handler: async (ctx) => accountToJSON(await getAccount(ctx)),
  }),
  route({
    method: 'patch', path: '/v1/account', operationId: 'updateMerchantSettings', tag,
    summary: 'Change the merchant’s name or branding',
    description:
      'Any of `name`, `branding.accent_color`, `branding.logo`; the others keep their value, null clears the colour or the logo. The hosted pages and invoice PDFs use them at once. Records `account.updated` (with `previous_attributes`) when something changed.',
    body: accountUpdate,
    response: { status: 200, description: 'The account after the change.', schema: accountObject },
    handler: async (ctx, { body }) => accountToJSON(await updateAccount(ctx, body)),
  }),
];
