-- The customer credit balance (issue 23: credits owed to a customer are never dropped): one row
-- per (customer, currency) holding the balance, the lock of its movements, and its ledger.
-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "credit_applied" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "customer_balances" (
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "balance" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "customer_balances_pkey" PRIMARY KEY ("customer_id","currency")
);

-- CreateTable
CREATE TABLE "customer_balance_transactions" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "ending_balance" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "invoice_id" TEXT,
    "subscription_id" TEXT,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "customer_balance_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "customer_balances_merchant_id_idx" ON "customer_balances"("merchant_id");

-- CreateIndex
CREATE INDEX "customer_balance_transactions_merchant_id_customer_id_creat_idx" ON "customer_balance_transactions"("merchant_id", "customer_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "customer_balances" ADD CONSTRAINT "customer_balances_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "customer_balances" ADD CONSTRAINT "customer_balances_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "customer_balance_transactions" ADD CONSTRAINT "customer_balance_transactions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "customer_balance_transactions" ADD CONSTRAINT "customer_balance_transactions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Row-level security, as every merchant-owned table (20261127120000_tenant_row_security).
ALTER TABLE customer_balances ENABLE ROW LEVEL SECURITY;
ALTER TABLE customer_balances FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON customer_balances
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));
ALTER TABLE customer_balance_transactions ENABLE ROW LEVEL SECURITY;
ALTER TABLE customer_balance_transactions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON customer_balance_transactions
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));

-- Credits left waiting on cancelled subscriptions under the previous rule (kept there, never
-- billed again: docs/billing.md "Cancel") move to their customers' credit balances, each with its
-- ledger entry; the waiting lines go.
WITH credits AS (
  SELECT s.merchant_id, s.customer_id, s.id AS subscription_id, p.currency, -sum(l.amount) AS amount, max(l.created_at) AS at
  FROM subscriptions s
  JOIN plans p ON p.id = s.plan_id
  JOIN invoice_items l ON l.subscription_id = s.id AND l.invoice_id IS NULL
  WHERE s.status = 'cancelled'
  GROUP BY s.merchant_id, s.customer_id, s.id, p.currency
  HAVING sum(l.amount) < 0
), ledger AS (
  INSERT INTO customer_balance_transactions (id, merchant_id, customer_id, currency, amount, ending_balance, type, subscription_id, description, created_at)
  SELECT 'cbtxn_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 22), merchant_id, customer_id, currency, amount,
         sum(amount) OVER (PARTITION BY customer_id, currency ORDER BY at, subscription_id),
         'subscription_credit', subscription_id, 'Unused time and credits of subscription ' || subscription_id, at
  FROM credits
  RETURNING 1
), balances AS (
  INSERT INTO customer_balances (merchant_id, customer_id, currency, balance, updated_at)
  SELECT merchant_id, customer_id, currency, sum(amount), max(at) FROM credits GROUP BY merchant_id, customer_id, currency
  RETURNING 1
)
DELETE FROM invoice_items l USING credits c WHERE l.subscription_id = c.subscription_id AND l.invoice_id IS NULL;
