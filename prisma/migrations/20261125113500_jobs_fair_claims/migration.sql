-- Fair job claims (issue 21, item 6; hand-written: Prisma does not model partial indexes and its
-- schema engine leaves this one alone). The claim (src/jobs/runner.ts claimDueJobs) walks the
-- (kind, merchant) pairs that have work not finished yet — one index probe each, however many jobs
-- a merchant has queued — and takes each merchant's first due jobs from its own range. Only
-- pending and running jobs are in the index, so finished history never slows a claim.
CREATE INDEX "jobs_open_kind_merchant_run_at_idx" ON "jobs" ("kind", "merchant_id", "run_at", "id") WHERE "status" IN ('pending', 'running');
