// POST /v1/test-helpers/clock/advance and the advanceTestClock mutation.
//
// The work that becomes due is run first, in due order and each at its own due time, while the
// clock still shows the old time; only then does the clock move. So the background worker never
// sees these jobs as due and cannot run them early or out of order.
//
// An advance over more work than fits in its time budget (two minutes) moves the clock only to
// just before the first job it did not run, and answers 409 clock_advance_incomplete saying so:
// the same request with `to` carries on from there. The clock never passes work that has not run.
import { advanceTarget, merchantNow, setClock, type ClockAdvanceInput } from '../domain/clock/index.ts';
import type { Ctx } from '../platform/context.ts';
import { StateError } from '../platform/errors.ts';
import { earliestDue, runDueJobsFor } from './runner.ts';

export async function advanceClockAndRunDueWork(ctx: Ctx, input: ClockAdvanceInput, opts: { budgetMs?: number } = {}): Promise<Date> {
  const target = await advanceTarget(ctx.runtime.prisma, ctx.merchant, input);
  const { ran, complete } = await runDueJobsFor(ctx.runtime, ctx.log, ctx.merchant.id, target, { budgetMs: opts.budgetMs ?? ctx.runtime.clockAdvanceBudgetMs });
  if (complete) {
    await setClock(ctx, target);
    return target;
  }
  const next = await earliestDue(ctx.runtime, ctx.merchant.id, target);
  const reached = next ? new Date(next.getTime() - 1) : target;
  if (reached.getTime() > (await merchantNow(ctx.runtime.prisma, ctx.merchant)).getTime()) await setClock(ctx, reached);
  throw new StateError(
    'clock_advance_incomplete',
    `The advance ran ${ran} due jobs and stopped at ${reached.toISOString()} before reaching ${target.toISOString()} (too much work for one request). Repeat it with {"to": "${target.toISOString()}"} to carry on.`,
    null,
  );
}
