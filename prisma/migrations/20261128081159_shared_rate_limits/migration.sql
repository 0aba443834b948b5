-- Shared rate-limit and abuse counters (src/platform/rate-limit.ts, docs/operations.md "Several
-- instances"): one fixed window per key, so that every instance on this database counts against
-- the same limit. UNLOGGED: counters, not records — no WAL for the per-request updates, and a
-- crash of the database server only empties them. No index but the key (the purge of expired
-- rows scans a table of the keys active in the last minutes), so an update within a window is a
-- HOT update.
CREATE UNLOGGED TABLE "rate_limits" (
    "key" TEXT NOT NULL,
    "points" INTEGER NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);
