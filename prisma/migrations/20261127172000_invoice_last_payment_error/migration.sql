-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "last_payment_error_code" TEXT,
ADD COLUMN     "last_payment_error_message" TEXT;
