-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "anchor_generation" INTEGER NOT NULL DEFAULT 0;
