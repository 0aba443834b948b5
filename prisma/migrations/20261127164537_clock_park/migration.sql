-- A parked test clock (issue 23, defect 4): while real time is before clock_parked_until the
-- merchant's billing clock stands still at clock_parked_until + clock_offset_ms; afterwards it runs
-- on from there (src/platform/clock.ts). A clock advance parks it while it runs, and at its stop
-- point when it stops part-way (409 clock_advance_incomplete) until it is repeated.
-- AlterTable
ALTER TABLE "merchants" ADD COLUMN     "clock_parked_until" TIMESTAMPTZ(3);
