// Assembles the GraphQL schema from every area's types. `npm run schema:print` writes it to
// schema.graphql, which is committed; a test fails when the two differ.
import { printSchema } from 'graphql';
import { builder } from './builder.ts';
import './errors.ts';
import './customers.ts';
import './events.ts';
import './payments.ts';
import './payment-methods.ts';
import './wallets.ts';
import './pricing.ts';
import './billing.ts';
import './invoicing.ts';
import './webhooks.ts';
import './emails.ts';
import './merchants.ts';
import './overview.ts';
import './test-helpers.ts';

// Sorted, so that the live schema (what introspection answers) prints exactly as schema.graphql.
export const schema = builder.toSchema({ sortSchema: true });

export function printedSchema(): string {
  return printSchema(schema) + '\n';
}
