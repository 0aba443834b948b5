// Customer e-mails over GraphQL: the merchant's switches, and the dev mailbox (test mode).
import * as emails from '../domain/emails/index.ts';
import { NotFoundError, ValidationError } from '../platform/errors.ts';
import { builder, connectionComplexity } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { CheckoutLocale } from './payments.ts';
import { connectionType, domainInput, listArgs, mutate, toConnection } from './helpers.ts';

const EmailSettings = builder.objectRef<emails.EmailSettingsJSON>('EmailSettings').implement({
  description: 'Which customer e-mails the service sends (docs/emails.md).',
  fields: (t) => ({
    receipts: t.exposeBoolean('receipts', { description: 'Receipts for paid payments and invoices (default on).' }),
    failedPayments: t.exposeBoolean('failed_payments', { description: 'A failed invoice payment, with a link to fix it in the portal (default on).' }),
    trialEnding: t.exposeBoolean('trial_ending', { description: 'A trial ends in three days (default on).' }),
    upcomingRenewal: t.exposeBoolean('upcoming_renewal', { description: 'An upcoming renewal, three days before it (invoice.upcoming); off by default.' }),
    invoices: t.exposeBoolean('invoices', { description: 'Invoices to pay (send_invoice, with the link to the hosted invoice page; default on).' }),
  }),
});

const EmailKind = builder.enumType('EmailKind', { values: emails.EMAIL_KINDS });
const EmailStatus = builder.enumType('EmailStatus', { values: emails.EMAIL_STATUSES });

const Email = builder.prismaObject('Email', {
  description: 'A customer e-mail, as rendered (the dev mailbox).',
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.field({ type: EmailKind, resolve: (e) => e.kind as emails.EmailKind }),
    to: t.string({ resolve: (e) => e.recipient }),
    subject: t.exposeString('subject'),
    text: t.exposeString('text'),
    html: t.exposeString('html'),
    locale: t.field({ type: CheckoutLocale, description: 'The language it is written in.', resolve: (e) => e.locale as 'en' | 'fr' }),
    status: t.field({ type: EmailStatus, resolve: (e) => e.status as emails.EmailStatus }),
    attempts: t.exposeInt('attempts'),
    lastError: t.exposeString('lastError', { nullable: true }),
    eventId: t.exposeString('eventId', { description: 'The event that caused the message.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    sentAt: t.expose('sentAt', { type: 'DateTime', nullable: true }),
  }),
});

const EmailConnection = connectionType(Email, 'Email');

builder.queryFields((t) => ({
  emailSettings: t.field({
    type: EmailSettings,
    description: 'Which customer e-mails are sent.',
    resolve: (_, __, { ctx }) => emails.getEmailSettings(ctx),
  }),
  testEmails: t.field({
    type: EmailConnection,
    description: 'Test mode only: the dev mailbox, newest first (GET /v1/test-helpers/emails).',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      to: t.arg.string({ description: 'Only messages to this address.' }),
    },
    resolve: async (_, a, { ctx }) => toConnection(await emails.listEmails(ctx, listArgs(emails.emailListQuery, a))),
  }),
}));

const UpdateEmailSettingsInput = builder.inputType('UpdateEmailSettingsInput', {
  fields: (t) => ({
    receipts: t.boolean(),
    failedPayments: t.boolean(),
    trialEnding: t.boolean(),
    upcomingRenewal: t.boolean(),
    invoices: t.boolean(),
    idempotencyKey: t.string(),
  }),
});

builder.mutationField('updateEmailSettings', (t) =>
  t.field({
    type: EmailSettings,
    description: 'Switch customer e-mails on or off: any of the booleans; the others keep their value.',
    errors: {
      types: [...new Set([...COMMON_ERRORS, ValidationError, NotFoundError])],
      dataField: { name: 'emailSettings' },
      result: { name: 'UpdateEmailSettingsSuccess' },
      union: { name: 'UpdateEmailSettingsResult' },
    },
    args: { input: t.arg({ type: UpdateEmailSettingsInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'updateEmailSettings', input, (ctx, fields) => emails.updateEmailSettings(ctx, domainInput(emails.emailSettingsUpdate, fields))),
  }),
);
