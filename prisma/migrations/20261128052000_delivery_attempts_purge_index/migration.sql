-- Finished delivery attempts (succeeded or failed) are purged after RETENTION_DELIVERY_ATTEMPTS_DAYS
-- (src/jobs/maintenance.ts), in batches found through this index (hand-written: Prisma does not
-- model partial indexes). Pending attempts are not in it: they are work still to do.
CREATE INDEX "delivery_attempts_finished_created_at_idx" ON "delivery_attempts" ("created_at") WHERE "status" <> 'pending';
