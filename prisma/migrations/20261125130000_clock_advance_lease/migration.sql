-- One clock advance per merchant at a time, across processes (issue 21, items 5 and 8): the
-- running advance's token and when its lease runs out (src/jobs/clock-advance.ts). Renewed while
-- the advance runs; a process that dies leaves a lease that simply runs out.
-- AlterTable
ALTER TABLE "merchants" ADD COLUMN     "clock_advance_lease_until" TIMESTAMPTZ(3),
ADD COLUMN     "clock_advance_token" TEXT;
