-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "locale" TEXT;
