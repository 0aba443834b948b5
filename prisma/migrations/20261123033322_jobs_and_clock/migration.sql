-- AlterTable
ALTER TABLE "merchants" ADD COLUMN     "clock_offset_ms" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "jobs" (
    "id" BIGSERIAL NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "key" TEXT,
    "ref" TEXT,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "run_at" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "locked_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "jobs_status_run_at_idx" ON "jobs"("status", "run_at");

-- CreateIndex
CREATE INDEX "jobs_merchant_id_status_run_at_idx" ON "jobs"("merchant_id", "status", "run_at");

-- CreateIndex
CREATE INDEX "jobs_merchant_id_ref_idx" ON "jobs"("merchant_id", "ref");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_kind_key_key" ON "jobs"("kind", "key");

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
