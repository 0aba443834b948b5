// Test-mode helpers over GraphQL: the merchant's billing clock.
import { merchantNow } from '../domain/clock/index.ts';
import { advanceClockAndRunDueWork } from '../jobs/clock-advance.ts';
import type { Ctx } from '../platform/context.ts';
import { NotFoundError, ValidationError } from '../platform/errors.ts';
import { builder } from './builder.ts';

const TestClock = builder.objectRef<{ now: Date }>('TestClock').implement({
  description: "A test-mode merchant's billing clock.",
  fields: (t) => ({ now: t.expose('now', { type: 'DateTime' }) }),
});

function testModeOnly(ctx: Ctx) {
  if (ctx.merchant.mode !== 'test') throw new NotFoundError('test clock', null, null);
}

builder.queryField('testClock', (t) =>
  t.field({
    type: TestClock,
    description: 'Test mode only: the billing clock.',
    resolve: async (_, __, { ctx }) => {
      testModeOnly(ctx);
      return { now: await merchantNow(ctx.runtime.prisma, ctx.merchant) };
    },
  }),
);

const AdvanceTestClockInput = builder.inputType('AdvanceTestClockInput', {
  fields: (t) => ({
    to: t.field({ type: 'DateTime', description: 'New time; later than the clock now.' }),
    seconds: t.int({ description: 'Seconds to move forward.' }),
  }),
});

builder.mutationField('advanceTestClock', (t) =>
  t.field({
    type: TestClock,
    description: 'Test mode only: moves the clock forward and runs every piece of work that became due, in due order.',
    errors: { types: [ValidationError, NotFoundError], dataField: { name: 'clock' }, result: { name: 'AdvanceTestClockSuccess' }, union: { name: 'AdvanceTestClockResult' } },
    args: { input: t.arg({ type: AdvanceTestClockInput, required: true }) },
    resolve: async (_, { input }, { ctx }) => {
      testModeOnly(ctx);
      const now = await advanceClockAndRunDueWork(ctx, {
        to: input.to ? input.to.toISOString() : undefined,
        seconds: input.seconds ?? undefined,
      });
      return { now };
    },
  }),
);
