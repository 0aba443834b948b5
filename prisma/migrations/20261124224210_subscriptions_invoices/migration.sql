-- AlterTable
ALTER TABLE "merchants" ADD COLUMN     "invoice_seq" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "signing_key" BYTEA;

-- AlterTable
ALTER TABLE "plans" ADD COLUMN     "apply_wallet_balance" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "plan_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "billing_anchor" TIMESTAMPTZ(3) NOT NULL,
    "period_index" INTEGER NOT NULL DEFAULT 0,
    "current_period_start" TIMESTAMPTZ(3) NOT NULL,
    "current_period_end" TIMESTAMPTZ(3) NOT NULL,
    "trial_start" TIMESTAMPTZ(3),
    "trial_end" TIMESTAMPTZ(3),
    "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
    "cancel_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    "paused_at" TIMESTAMPTZ(3),
    "resumes_at" TIMESTAMPTZ(3),
    "payment_method_id" TEXT,
    "latest_invoice_id" TEXT,
    "apply_wallet_balance" BOOLEAN NOT NULL DEFAULT false,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invoices" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "subscription_id" TEXT,
    "number" TEXT,
    "status" TEXT NOT NULL DEFAULT 'draft',
    "billing_reason" TEXT NOT NULL,
    "billing_key" TEXT,
    "currency" TEXT NOT NULL,
    "subtotal" BIGINT NOT NULL DEFAULT 0,
    "total" BIGINT NOT NULL DEFAULT 0,
    "amount_from_wallet" BIGINT NOT NULL DEFAULT 0,
    "amount_due" BIGINT NOT NULL DEFAULT 0,
    "amount_paid" BIGINT NOT NULL DEFAULT 0,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_payment_attempt" TIMESTAMPTZ(3),
    "first_failed_at" TIMESTAMPTZ(3),
    "payment_id" TEXT,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "due_date" TIMESTAMPTZ(3),
    "finalized_at" TIMESTAMPTZ(3),
    "paid_at" TIMESTAMPTZ(3),
    "voided_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "invoices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invoice_items" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "subscription_id" TEXT,
    "invoice_id" TEXT,
    "description" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "amount" BIGINT NOT NULL,
    "proration" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invoice_items_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "subscriptions_merchant_id_created_at_id_idx" ON "subscriptions"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "subscriptions_merchant_id_customer_id_created_at_id_idx" ON "subscriptions"("merchant_id", "customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "subscriptions_merchant_id_status_created_at_id_idx" ON "subscriptions"("merchant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "subscriptions_merchant_id_plan_id_created_at_id_idx" ON "subscriptions"("merchant_id", "plan_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "invoices_merchant_id_created_at_id_idx" ON "invoices"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "invoices_merchant_id_customer_id_created_at_id_idx" ON "invoices"("merchant_id", "customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "invoices_merchant_id_subscription_id_created_at_id_idx" ON "invoices"("merchant_id", "subscription_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "invoices_merchant_id_status_created_at_id_idx" ON "invoices"("merchant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "invoices_merchant_id_number_key" ON "invoices"("merchant_id", "number");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_subscription_id_billing_key_key" ON "invoices"("subscription_id", "billing_key");

-- CreateIndex
CREATE INDEX "invoice_items_merchant_id_invoice_id_idx" ON "invoice_items"("merchant_id", "invoice_id");

-- CreateIndex
CREATE INDEX "invoice_items_merchant_id_subscription_id_invoice_id_idx" ON "invoice_items"("merchant_id", "subscription_id", "invoice_id");

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_payment_method_id_fkey" FOREIGN KEY ("payment_method_id") REFERENCES "payment_methods"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoice_items" ADD CONSTRAINT "invoice_items_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoice_items" ADD CONSTRAINT "invoice_items_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoice_items" ADD CONSTRAINT "invoice_items_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Invariants the database keeps whatever the code does (CHECK constraints; the schema engine
-- leaves them alone).
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_status_check"
  CHECK ("status" IN ('trialing', 'active', 'past_due', 'paused', 'cancelled', 'incomplete', 'unpaid'));
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_period_check" CHECK ("current_period_end" > "current_period_start");
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_status_check"
  CHECK ("status" IN ('draft', 'open', 'paid', 'void', 'uncollectible'));
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_amounts_check"
  CHECK ("amount_due" >= 0 AND "amount_paid" >= 0 AND "amount_from_wallet" >= 0 AND "amount_paid" <= "amount_due");
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_number_check" CHECK (("number" IS NULL) = ("status" = 'draft'));
