// The merchant's API keys over GraphQL (issue 24, the merchant dashboard): list, create (the secret
// is in that answer only), revoke. The same domain functions as the CLI's `key create`/`key revoke`,
// limited to the request's merchant.
import * as merchants from '../domain/merchants/index.ts';
import { NotFoundError, StateError, ValidationError } from '../platform/errors.ts';
import { listQuery, z } from '../platform/validation.ts';
import { builder, connectionComplexity } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, toConnection } from './helpers.ts';
import { accountToJSON, accountUpdate, MAX_LOGO_BYTES, type AccountJSON } from '../domain/merchants/account.ts';
import { getAccount, updateAccount } from '../services/account.ts';
import type { ApiKey as ApiKeyRow } from '../generated/prisma/client.ts';

const apiKeyListQuery = z.strictObject({ ...listQuery });

export const ApiKey = builder.objectRef<ApiKeyRow>('ApiKey').implement({
  description: 'An API key of the merchant (HTTP Basic: client id and secret). The secret is never shown again after createApiKey; when a key was last used is not recorded.',
  fields: (t) => ({
    clientId: t.exposeString('clientId', { description: 'The Basic-auth user name (ck_…).' }),
    secretLast4: t.exposeString('secretLast4', { description: 'The last four characters of the secret, to tell keys apart.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When it was revoked; null: active.' }),
    active: t.boolean({ resolve: (k) => k.revokedAt === null }),
  }),
});

const ApiKeyConnection = connectionType(ApiKey, 'ApiKey');

const NewApiKey = builder.objectRef<{ key: ApiKeyRow; clientSecret: string }>('NewApiKey').implement({
  description: 'A key just created, with its secret: shown in this answer only (only a hash is stored).',
  fields: (t) => ({
    apiKey: t.field({ type: ApiKey, resolve: (n) => n.key }),
    clientSecret: t.exposeString('clientSecret', { description: 'sk_test_… or sk_live_…: store it now, it cannot be shown again.' }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.field({
    type: ApiKeyConnection,
    description: 'The merchant’s API keys, active and revoked, newest first.',
    complexity: connectionComplexity,
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string() },
    resolve: async (_, a, { ctx }) => toConnection(await merchants.listApiKeysOfMerchant(ctx.runtime.prisma, ctx.merchant.id, listArgs(apiKeyListQuery, a))),
  }),
}));

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    idempotencyKey: t.string({
      description: 'Not accepted here (ValidationError): a stored answer would keep the new secret in the database for 24 h, and only its hash is ever stored. A retry makes another key; revoke the spare one.',
    }),
  }),
});

const RevokeApiKeyInput = builder.inputType('RevokeApiKeyInput', {
  fields: (t) => ({
    clientId: t.string({ required: true, description: 'The key’s client id (ck_…).' }),
    idempotencyKey: t.string(),
  }),
});

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: NewApiKey,
    description: 'Creates another API key for the merchant (CLI: `key create`). Its secret is in this answer only.',
    errors: { types: COMMON_ERRORS, dataField: { name: 'newApiKey' }, result: { name: 'CreateApiKeySuccess' }, union: { name: 'CreateApiKeyResult' } },
    args: { input: t.arg({ type: CreateApiKeyInput, required: false }) },
    resolve: (_, { input }, { ctx }) => {
      if (input?.idempotencyKey != null) {
        throw new ValidationError('parameter_invalid', 'createApiKey does not take an idempotencyKey: its answer carries the new secret, which is not stored.', 'idempotencyKey');
      }
      return merchants.createApiKeyOfMerchant(ctx.runtime.prisma, ctx.merchant.id);
    },
  }),
  revokeApiKey: t.field({
    type: ApiKey,
    description:
      'Revokes one of the merchant’s keys (CLI: `key revoke`); it stops working within seconds. The key of this very request may be revoked (this answer still arrives); the last active key may not (StateError last_api_key: create another first). Another merchant’s or an already revoked key: NotFoundError.',
    errors: { types: [...COMMON_ERRORS, NotFoundError, StateError], dataField: { name: 'apiKey' }, result: { name: 'RevokeApiKeySuccess' }, union: { name: 'RevokeApiKeyResult' } },
    args: { input: t.arg({ type: RevokeApiKeyInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'revokeApiKey', input, (ctx, { clientId }) => merchants.revokeApiKeyOfMerchantById(ctx.db, ctx.merchant.id, clientId)),
  }),
}));

// ---------------------------------------------------------------- the merchant's settings

const MerchantMode = builder.enumType('MerchantMode', { values: ['test', 'live'] as const });

const Branding = builder.objectRef<AccountJSON['branding']>('Branding').implement({
  description: 'How the hosted pages and invoice PDFs look for the merchant’s customers.',
  fields: (t) => ({
    accentColor: t.exposeString('accent_color', { nullable: true, description: '#RRGGBB; null: the default blue.' }),
    logo: t.exposeString('logo', { nullable: true, description: 'The logo as a data: URL (PNG or JPEG), or null.' }),
  }),
});

const MerchantAccount = builder.objectRef<AccountJSON>('MerchantAccount').implement({
  description: 'The merchant the request acts for (REST: GET /v1/account).',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name', { description: 'Shown to customers on the hosted pages, e-mails and invoice PDFs.' }),
    mode: t.field({ type: MerchantMode, resolve: (a) => a.mode }),
    branding: t.field({ type: Branding, resolve: (a) => a.branding }),
    createdAt: t.field({ type: 'DateTime', resolve: (a) => new Date(a.created_at) }),
  }),
});

builder.queryFields((t) => ({
  merchant: t.field({
    type: MerchantAccount,
    description: 'The merchant the request acts for: name, mode, branding (the dashboard’s viewer).',
    resolve: async (_, __, { ctx }) => accountToJSON(await getAccount(ctx)),
  }),
}));

const BrandingInput = builder.inputType('BrandingInput', {
  fields: (t) => ({
    accentColor: t.string({ description: '#RRGGBB; null clears it (the default).' }),
    logo: t.string({ description: `A data: URL of a PNG or JPEG, at most ${MAX_LOGO_BYTES / 1024} KiB decoded; null removes it. SVG is refused (it can carry script).` }),
  }),
});

const UpdateMerchantSettingsInput = builder.inputType('UpdateMerchantSettingsInput', {
  fields: (t) => ({
    name: t.string({ description: '1 to 200 characters.' }),
    branding: t.field({ type: BrandingInput }),
    idempotencyKey: t.string(),
  }),
});

builder.mutationField('updateMerchantSettings', (t) =>
  t.field({
    type: MerchantAccount,
    description: 'Changes the merchant’s name or branding (REST: PATCH /v1/account); the others keep their value. Records account.updated.',
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'merchant' }, result: { name: 'UpdateMerchantSettingsSuccess' }, union: { name: 'UpdateMerchantSettingsResult' } },
    args: { input: t.arg({ type: UpdateMerchantSettingsInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'updateMerchantSettings', input, async (ctx, fields) => accountToJSON(await updateAccount(ctx, domainInput(accountUpdate, fields)))),
  }),
);
