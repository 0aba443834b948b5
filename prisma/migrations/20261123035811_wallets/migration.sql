-- CreateTable
CREATE TABLE "wallets" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "balance" BIGINT NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL DEFAULT 'active',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "closed_at" TIMESTAMPTZ(3),

    CONSTRAINT "wallets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_transactions" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "wallet_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "balance_before" BIGINT NOT NULL,
    "balance_after" BIGINT NOT NULL,
    "reference" TEXT,
    "description" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_grants" (
    "id" BIGSERIAL NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "wallet_id" TEXT NOT NULL,
    "transaction_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "remaining" BIGINT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "expired_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_grants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_topups" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "wallet_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "transaction_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "wallet_topups_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "wallets_merchant_id_created_at_id_idx" ON "wallets"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "wallets_merchant_id_customer_id_currency_idx" ON "wallets"("merchant_id", "customer_id", "currency");

-- CreateIndex
CREATE INDEX "wallet_transactions_wallet_id_created_at_id_idx" ON "wallet_transactions"("wallet_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "wallet_transactions_wallet_id_type_created_at_id_idx" ON "wallet_transactions"("wallet_id", "type", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "wallet_transactions_wallet_id_reference_key" ON "wallet_transactions"("wallet_id", "reference");

-- CreateIndex
CREATE UNIQUE INDEX "wallet_grants_transaction_id_key" ON "wallet_grants"("transaction_id");

-- CreateIndex
CREATE INDEX "wallet_grants_wallet_id_expires_at_idx" ON "wallet_grants"("wallet_id", "expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "wallet_topups_payment_id_key" ON "wallet_topups"("payment_id");

-- CreateIndex
CREATE INDEX "wallet_topups_wallet_id_created_at_id_idx" ON "wallet_topups"("wallet_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_grants" ADD CONSTRAINT "wallet_grants_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_grants" ADD CONSTRAINT "wallet_grants_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_grants" ADD CONSTRAINT "wallet_grants_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "wallet_transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_topups" ADD CONSTRAINT "wallet_topups_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_topups" ADD CONSTRAINT "wallet_topups_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_topups" ADD CONSTRAINT "wallet_topups_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Money invariants (hand-written; Prisma does not model these and its schema engine leaves them
-- alone). The ledger is the source of truth: inserting a wallet_transactions row is the only way
-- to change wallets.balance, and the row must start from the current balance.

-- At most one wallet per customer and currency that is not closed.
CREATE UNIQUE INDEX "wallets_one_open_per_customer_currency" ON "wallets" ("merchant_id", "customer_id", "currency") WHERE "status" <> 'closed';

ALTER TABLE "wallets" ADD CONSTRAINT "wallets_balance_check" CHECK ("balance" >= 0);
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_status_check" CHECK ("status" IN ('active', 'frozen', 'closed'));
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_amount_check" CHECK ("amount" > 0);
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_type_check" CHECK ("type" IN ('topup', 'debit', 'credit', 'expiry'));
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_arithmetic_check" CHECK (
  "balance_after" = "balance_before" + CASE WHEN "type" IN ('credit', 'topup') THEN "amount" ELSE -"amount" END
);
ALTER TABLE "wallet_grants" ADD CONSTRAINT "wallet_grants_remaining_check" CHECK ("remaining" >= 0 AND "remaining" <= "amount");

-- Applies each new ledger row to its wallet. The row's balance_before must be the wallet's
-- current balance (the wallet row is locked here, so concurrent writers serialise), and the
-- resulting balance may not go below zero (wallets_balance_check).
CREATE FUNCTION "wallet_apply_transaction"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE current_balance BIGINT;
BEGIN
  SELECT "balance" INTO current_balance FROM "wallets" WHERE "id" = NEW."wallet_id" FOR UPDATE;
  IF current_balance IS NULL THEN
    RAISE EXCEPTION 'wallet % does not exist', NEW."wallet_id";
  END IF;
  IF NEW."balance_before" <> current_balance THEN
    RAISE EXCEPTION 'ledger row for wallet % starts at % but the balance is %', NEW."wallet_id", NEW."balance_before", current_balance
      USING ERRCODE = 'check_violation';
  END IF;
  UPDATE "wallets" SET "balance" = NEW."balance_after", "updated_at" = now() WHERE "id" = NEW."wallet_id";
  RETURN NEW;
END $$;

CREATE TRIGGER "wallet_transactions_apply" BEFORE INSERT ON "wallet_transactions"
  FOR EACH ROW EXECUTE FUNCTION "wallet_apply_transaction"();

-- The ledger is append-only, and balances change only through it.
CREATE FUNCTION "wallet_ledger_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'wallet_transactions is append-only' USING ERRCODE = 'check_violation';
END $$;

CREATE TRIGGER "wallet_transactions_append_only" BEFORE UPDATE OR DELETE ON "wallet_transactions"
  FOR EACH ROW EXECUTE FUNCTION "wallet_ledger_immutable"();

CREATE FUNCTION "wallet_balance_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."balance" <> OLD."balance" AND pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'wallets.balance changes only through wallet_transactions' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER "wallets_balance_guard" BEFORE UPDATE OF "balance" ON "wallets"
  FOR EACH ROW EXECUTE FUNCTION "wallet_balance_guard"();
