-- Finished jobs are purged after JOBS_RETENTION_DAYS (src/jobs/maintenance.ts), in batches found
-- through this index (hand-written: Prisma does not model partial indexes). Only finished jobs are
-- in it, so it costs nothing to the claim's hot rows; failed jobs are kept for investigation.
CREATE INDEX "jobs_finished_updated_at_idx" ON "jobs" ("updated_at") WHERE "status" IN ('done', 'cancelled');
