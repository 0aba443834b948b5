// Customer e-mails: the merchant's switches, and the dev mailbox (test mode).
import * as emails from '../domain/emails/index.ts';
import { route, listEnvelope } from './route.ts';
import { emailObject, emailSettingsObject, listOf } from './schemas.ts';

const tag = 'Customer emails';

export const emailRoutes = [
  route({
    method: 'get', path: '/v1/email-settings', operationId: 'getEmailSettings', tag,
    summary: 'Which customer e-mails are sent',
    response: { status: 200, description: 'The switches.', schema: emailSettingsObject },
    handler: async (ctx) => emails.getEmailSettings(ctx),
  }),
  route({
    method: 'patch', path: '/v1/email-settings', operationId: 'updateEmailSettings', tag,
    example: { upcoming_renewal: true },
    summary: 'Switch customer e-mails on or off',
    description: 'Any of the booleans; the others keep their value. Applies to messages not made yet (an event whose message was already sent is not sent again).',
    body: emails.emailSettingsUpdate,
    response: { status: 200, description: 'The switches after the change.', schema: emailSettingsObject },
    handler: async (ctx, { body }) => emails.updateEmailSettings(ctx, body),
  }),
  route({
    method: 'get', path: '/v1/test-helpers/emails', operationId: 'listTestEmails', tag: 'Test helpers',
    summary: 'The dev mailbox: customer e-mails, newest first',
    description: 'Test mode only. Every customer e-mail the service made for the merchant: without SMTP_URL they stay here (`status: kept`); with it, they were also sent.',
    query: emails.emailListQuery,
    response: { status: 200, description: 'A page of e-mails.', schema: listOf(emailObject, 'EmailList') },
    handler: async (ctx, { query }) => listEnvelope(await emails.listEmails(ctx, query), emails.emailToJSON),
  }),
];
