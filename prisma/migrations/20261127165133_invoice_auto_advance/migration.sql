-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "auto_advance" BOOLEAN NOT NULL DEFAULT true;
