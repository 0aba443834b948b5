// POST /v1/test-helpers/clock/advance and the advanceTestClock mutation.
//
// The work that becomes due is run first, in due order and each at its own due time, while the
// clock still shows the old time; only then does the clock move. So the background worker never
// sees these jobs as due and cannot run them early or out of order.
import { advanceTarget, setClock, type ClockAdvanceInput } from '../domain/clock/index.ts';
import type { Ctx } from '../platform/context.ts';
import { runDueJobsFor } from './runner.ts';

export async function advanceClockAndRunDueWork(ctx: Ctx, input: ClockAdvanceInput): Promise<Date> {
  const target = await advanceTarget(ctx.runtime.prisma, ctx.merchant, input);
  await runDueJobsFor(ctx.runtime, ctx.log, ctx.merchant.id, target);
  await setClock(ctx, target);
  return target;
}
