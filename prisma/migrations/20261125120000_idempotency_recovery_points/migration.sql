-- AlterTable
ALTER TABLE "idempotency_keys" DROP COLUMN "phases",
ADD COLUMN     "holder" TEXT,
ADD COLUMN     "recovery" JSONB;
