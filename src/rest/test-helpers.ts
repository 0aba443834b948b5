// Test-mode helpers (built-in test processor and the merchant billing clock). Live-mode
// merchants get 404 from all of them.
import { clockAdvanceBody, clockToJSON, testClockNow } from '../domain/clock/index.ts';
import { advanceClockAndRunDueWork } from '../jobs/clock-advance.ts';
import { z } from '../platform/validation.ts';
import { route } from './route.ts';

const tag = 'Test helpers';

const testClockObject = z
  .object({ object: z.literal('test_clock'), now: z.string().meta({ format: 'date-time' }) })
  .meta({ id: 'TestClock' });

export const testHelperRoutes = [
  route({
    method: 'get', path: '/v1/test-helpers/clock', operationId: 'getTestClock', tag,
    summary: "The merchant's billing clock",
    response: { status: 200, description: 'The clock.', schema: testClockObject },
    handler: async (ctx) => clockToJSON(await testClockNow(ctx.runtime.prisma, ctx.merchant)),
  }),
  route({
    method: 'post', path: '/v1/test-helpers/clock/advance', operationId: 'advanceTestClock', tag,
    example: { seconds: 86400 },
    summary: "Move the merchant's billing clock forward and run the work that became due",
    description:
      'Runs, before answering and in due order, every piece of work that became due: credit expiry, checkout expiry, refund settlement and webhook retries. Each runs at its own due time, as if the clock had passed through it. Advances of one merchant run one at a time: a second one waits (up to CLOCK_ADVANCE_WAIT_MS), then answers 409 clock_advance_in_progress with Retry-After. More work than fits in two minutes: 409 clock_advance_incomplete, the clock moved part-way and stands still there (up to 30 s) until the advance is repeated with `to`.',
    body: clockAdvanceBody,
    response: { status: 200, description: 'The clock after the move.', schema: testClockObject },
    phased: true,
    handler: async (ctx, { body }) => {
      return clockToJSON(await advanceClockAndRunDueWork(ctx, body));
    },
  }),
];
