// Test-mode helpers over GraphQL: the merchant's billing clock. The domain refuses them to
// live-mode merchants (not found), as REST does.
import { clockAdvanceBody, testClockNow } from '../domain/clock/index.ts';
import { advanceClockAndRunDueWork } from '../jobs/clock-advance.ts';
import { NotFoundError, StateError, ValidationError } from '../platform/errors.ts';
import { builder } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { domainInput, mutate, PHASED } from './helpers.ts';

const TestClock = builder.objectRef<{ now: Date }>('TestClock').implement({
  description: "A test-mode merchant's billing clock.",
  fields: (t) => ({ now: t.expose('now', { type: 'DateTime' }) }),
});

builder.queryField('testClock', (t) =>
  t.field({
    type: TestClock,
    description: 'Test mode only: the billing clock.',
    resolve: async (_, __, { ctx }) => ({ now: await testClockNow(ctx.runtime.prisma, ctx.merchant) }),
  }),
);

const AdvanceTestClockInput = builder.inputType('AdvanceTestClockInput', {
  fields: (t) => ({
    to: t.field({ type: 'DateTime', description: 'New time; later than the clock now.' }),
    seconds: t.int({ description: 'Seconds to move forward.' }),
    idempotencyKey: t.string(),
  }),
});

builder.mutationField('advanceTestClock', (t) =>
  t.field({
    type: TestClock,
    description:
      'Test mode only: moves the clock forward and runs every piece of work that became due, in due order. More work than fits in two minutes: StateError clock_advance_incomplete, the clock moved part-way and stands still there (up to 30 s) until the advance is repeated with `to`. Advances of one merchant run one at a time: another one running (after a wait) is StateError clock_advance_in_progress.',
    errors: {
      types: [...new Set([...COMMON_ERRORS, ValidationError, NotFoundError, StateError])],
      dataField: { name: 'clock' },
      result: { name: 'AdvanceTestClockSuccess' },
      union: { name: 'AdvanceTestClockResult' },
    },
    args: { input: t.arg({ type: AdvanceTestClockInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'advanceTestClock', input, async (ctx, fields) => ({ now: await advanceClockAndRunDueWork(ctx, domainInput(clockAdvanceBody, fields)) }), PHASED),
  }),
);
