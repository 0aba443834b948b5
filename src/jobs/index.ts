// Every kind of background job, by area. Domain code enqueues (src/platform/jobs.ts); the handlers
// registered here do the work when it is due. Handlers are idempotent: a job may run twice.
import { expireIfDue, EXPIRE_JOB, recoverPayment, RECOVER_JOB } from '../domain/payments/index.ts';
import { settlePendingRefund, REFUND_SETTLE_JOB } from '../domain/refunds/index.ts';
import { expireSetupIntentIfDue, SETUP_EXPIRE_JOB } from '../domain/payment-methods/index.ts';
import { expireGrants, GRANT_EXPIRY_JOB } from '../domain/wallets/index.ts';
import { deliverAttempt, DELIVER_JOB } from '../domain/webhooks/index.ts';
// Registers the wallet top-up settlement on payment outcomes.
import '../domain/wallets/topups.ts';
import { chargeInvoice, INVOICE_CHARGE_JOB, recoverInvoiceCharge } from '../domain/billing/invoices.ts';
import { INVOICE_OVERDUE_JOB, markOverdue } from '../domain/billing/one-off.ts';
import {
  cycleSubscription,
  expireIncomplete,
  noticeTrialEnd,
  noticeUpcomingRenewal,
  resumeIfDue,
  SUB_CYCLE_JOB,
  SUB_INCOMPLETE_JOB,
  SUB_RESUME_JOB,
  SUB_TRIAL_NOTICE_JOB,
  SUB_UPCOMING_JOB,
} from '../domain/billing/subscriptions.ts';
import { BATCH_SPAN_MS as RENEWAL_BATCH_SPAN_MS, noticeUpcomingRenewals, renewBatch } from '../domain/billing/renewals.ts';
import { EMAIL_JOB, EMAIL_RETRY_DELAYS_MS, sendEventEmail, sendEventEmails } from '../domain/emails/index.ts';
import { JOB_COMPLETED, JobRegistry } from '../platform/jobs.ts';

/** `batchSize`: the most jobs of one kind a clock advance runs at once (CLOCK_ADVANCE_BATCH_SIZE); 1: none in batches. */
export function createJobRegistry(opts: { batchSize?: number } = {}): JobRegistry {
  const batchSize = opts.batchSize ?? 100;
  const registry = new JobRegistry();
  registry.register(EXPIRE_JOB, {
    async run(ctx, job) {
      await expireIfDue(ctx, String(job.payload.payment_id));
    },
  });
  // A charge attempt whose process died before recording the outcome (any payment, any purpose).
  registry.register(RECOVER_JOB, {
    async run(ctx, job) {
      await recoverPayment(ctx, String(job.payload.payment_id), ctx.runtime.chargeRecoveryMs);
    },
  });
  registry.register(SETUP_EXPIRE_JOB, {
    async run(ctx, job) {
      await expireSetupIntentIfDue(ctx, String(job.payload.setup_intent_id));
    },
  });
  registry.register(REFUND_SETTLE_JOB, {
    async run(ctx, job) {
      await settlePendingRefund(ctx, String(job.payload.refund_id));
    },
  });
  registry.register(GRANT_EXPIRY_JOB, {
    async run(ctx, job) {
      await expireGrants(ctx, String(job.payload.wallet_id));
    },
  });
  // The billing engine. Each handler checks, under the subscription's (or invoice's) lock, that its
  // moment is still current, so running one twice or in two processes does the work once.
  registry.register(SUB_CYCLE_JOB, {
    async run(ctx, job) {
      await cycleSubscription(ctx, String(job.payload.subscription_id), Number(job.payload.period_end));
    },
    // Due subscriptions renew in batches (src/domain/billing/renewals.ts), in a clock advance and in the worker.
    // Within a day of the first: nothing a renewal schedules comes due sooner (the next period,
    // a retry, a checkout's expiry), so the batch runs each where it would have run alone.
    batch: batchSize <= 1 ? undefined : {
      size: batchSize,
      spanMs: RENEWAL_BATCH_SPAN_MS,
      async run(ctx, jobs, at) {
        const due = jobs.map((job) => ({
          jobId: job.id,
          runAt: job.runAt,
          subscriptionId: String(job.payload.subscription_id),
          periodEnd: Number(job.payload.period_end),
          at: at(job),
        }));
        const rest = new Set((await renewBatch(ctx, due)).map((d) => d.jobId));
        return jobs.filter((j) => rest.has(j.id));
      },
    },
  });
  registry.register(SUB_TRIAL_NOTICE_JOB, {
    async run(ctx, job) {
      await noticeTrialEnd(ctx, String(job.payload.subscription_id), Number(job.payload.trial_end));
    },
  });
  // Marks itself done with its event, in one transaction (once, whatever the number of runs).
  registry.register(SUB_UPCOMING_JOB, {
    async run(ctx, job) {
      return (await noticeUpcomingRenewal(ctx, String(job.payload.subscription_id), Number(job.payload.period_end), job.id)) ? JOB_COMPLETED : undefined;
    },
    // A clock advance sends the notices due together in one go (renewals.ts).
    batch: batchSize <= 1 ? undefined : {
      size: batchSize,
      spanMs: RENEWAL_BATCH_SPAN_MS,
      ordered: false,
      async run(ctx, jobs, at) {
        const due = jobs.map((j) => ({ jobId: j.id, subscriptionId: String(j.payload.subscription_id), periodEnd: Number(j.payload.period_end), at: at(j) }));
        const alone = new Set(await noticeUpcomingRenewals(ctx, due));
        return jobs.filter((j) => alone.has(j.id));
      },
    },
  });
  registry.register(SUB_RESUME_JOB, {
    async run(ctx, job) {
      await resumeIfDue(ctx, String(job.payload.subscription_id), Number(job.payload.resumes_at));
    },
  });
  registry.register(SUB_INCOMPLETE_JOB, {
    async run(ctx, job) {
      await expireIncomplete(ctx, String(job.payload.subscription_id));
    },
  });
  registry.register(INVOICE_CHARGE_JOB, {
    async run(ctx, job) {
      const id = String(job.payload.invoice_id);
      if (job.payload.recover_payment_id) await recoverInvoiceCharge(ctx, id, String(job.payload.recover_payment_id));
      else await chargeInvoice(ctx, id, Number(job.payload.attempt), { whileInFlight: 'defer', automatic: true });
    },
  });
  // An open send_invoice invoice at its due date: invoice.overdue, once.
  registry.register(INVOICE_OVERDUE_JOB, {
    async run(ctx, job) {
      await markOverdue(ctx, String(job.payload.invoice_id));
    },
  });
  registry.register(DELIVER_JOB, {
    // Delivery failures are attempts of their own (retry schedule in domain/webhooks); these
    // retries only cover the job failing to run (e.g. the database was briefly unavailable).
    retryDelaysMs: [5_000, 30_000, 120_000],
    leaseMs: 60_000,
    lane: 'deliveries',
    async run(ctx, job) {
      // A success marks the job done in the statement that records it (one round trip fewer).
      return (await deliverAttempt(ctx, String(job.payload.attempt_id), job.id)) ? JOB_COMPLETED : undefined;
    },
  });
  // A customer e-mail (one per event: the job is keyed by the event). SMTP is slow I/O, so it runs
  // in the deliveries lane; a refused send is retried after these delays, then the message is failed.
  registry.register(EMAIL_JOB, {
    retryDelaysMs: EMAIL_RETRY_DELAYS_MS,
    leaseMs: 120_000,
    lane: 'deliveries',
    async run(ctx, job) {
      await sendEventEmail(ctx, String(job.payload.event_id), { last: job.attempts > EMAIL_RETRY_DELAYS_MS.length });
    },
    // A clock advance composes the messages its work made due many at a time (a renewal batch's
    // receipts): the records they need read once for all of them.
    batch: batchSize <= 1 ? undefined : {
      size: batchSize,
      spanMs: 86_400_000,
      ordered: false,
      async run(ctx, jobs) {
        const alone = new Set(await sendEventEmails(ctx, jobs.map((j) => ({ jobId: j.id, eventId: String(j.payload.event_id) }))));
        return jobs.filter((j) => alone.has(j.id));
      },
    },
  });
  return registry;
}
