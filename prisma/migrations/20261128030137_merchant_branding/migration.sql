-- AlterTable
ALTER TABLE "merchants" ADD COLUMN     "accent_color" TEXT,
ADD COLUMN     "logo" BYTEA,
ADD COLUMN     "logo_type" TEXT;
