-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN     "phases" INTEGER NOT NULL DEFAULT 0;

-- ---------------------------------------------------------------------------------------------
-- Hand-written: two ledger types for refunds of top-up payments. `refund` takes the refunded
-- money back out of the wallet (in the refund's transaction); `refund_reversal` puts it back
-- when the processor refuses the refund. Arithmetic: only credit, topup and refund_reversal add.
ALTER TABLE "wallet_transactions" DROP CONSTRAINT "wallet_transactions_type_check";
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_type_check"
  CHECK ("type" IN ('topup', 'debit', 'credit', 'expiry', 'refund', 'refund_reversal'));
ALTER TABLE "wallet_transactions" DROP CONSTRAINT "wallet_transactions_arithmetic_check";
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_arithmetic_check" CHECK (
  "balance_after" = "balance_before" + CASE WHEN "type" IN ('credit', 'topup', 'refund_reversal') THEN "amount" ELSE -"amount" END
);
