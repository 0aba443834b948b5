// Every kind of background job, by area. Domain code enqueues (src/jobs/queue.ts); the handlers
// registered here do the work when it is due. Handlers are idempotent: a job may run twice.
import { expireIfDue, EXPIRE_JOB } from '../domain/payments/index.ts';
import { expireGrants, GRANT_EXPIRY_JOB } from '../domain/wallets/index.ts';
// Registers the wallet top-up settlement on payment outcomes.
import '../domain/wallets/topups.ts';
import { JobRegistry } from './runner.ts';

export function createJobRegistry(): JobRegistry {
  const registry = new JobRegistry();
  registry.register(EXPIRE_JOB, {
    async run(ctx, job) {
      await expireIfDue(ctx, String(job.payload.payment_id));
    },
  });
  registry.register(GRANT_EXPIRY_JOB, {
    async run(ctx, job) {
      await expireGrants(ctx, String(job.payload.wallet_id));
    },
  });
  return registry;
}
