-- AlterTable
ALTER TABLE "refunds" ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';
