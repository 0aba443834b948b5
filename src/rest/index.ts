// Every /v1 route, by area.
import { customerRoutes } from './customers.ts';
import { eventRoutes } from './events.ts';
import { paymentRoutes } from './payments.ts';
import { walletRoutes } from './wallets.ts';
import { webhookRoutes } from './webhooks.ts';
import { testHelperRoutes } from './test-helpers.ts';
import type { RouteDef } from './route.ts';

export const routes: RouteDef[] = [...customerRoutes, ...paymentRoutes, ...walletRoutes, ...webhookRoutes, ...eventRoutes, ...testHelperRoutes];
