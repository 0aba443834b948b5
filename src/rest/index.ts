// Every /v1 route, by area.
import { customerRoutes } from './customers.ts';
import { eventRoutes } from './events.ts';
import { paymentRoutes } from './payments.ts';
import { paymentMethodRoutes } from './payment-methods.ts';
import { billingRoutes } from './billing.ts';
import { pricingRoutes } from './pricing.ts';
import { invoicingRoutes } from './invoicing.ts';
import { walletRoutes } from './wallets.ts';
import { webhookRoutes } from './webhooks.ts';
import { testHelperRoutes } from './test-helpers.ts';
import { emailRoutes } from './emails.ts';
import { accountRoutes } from './account.ts';
import type { RouteDef } from './route.ts';

export const routes: RouteDef[] = [...customerRoutes, ...paymentMethodRoutes, ...paymentRoutes, ...walletRoutes, ...billingRoutes, ...pricingRoutes, ...invoicingRoutes, ...webhookRoutes, ...eventRoutes, ...emailRoutes, ...accountRoutes, ...testHelperRoutes];
