-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "collection_method" TEXT NOT NULL DEFAULT 'charge_automatically',
ADD COLUMN     "days_until_due" INTEGER,
ADD COLUMN     "hosted_token" TEXT,
ADD COLUMN     "overdue_at" TIMESTAMPTZ(3),
ADD COLUMN     "post_payment_credit_notes_amount" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "pre_payment_credit_notes_amount" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "pending_invoice_items" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL DEFAULT 1,
    "unit_amount" BIGINT NOT NULL,
    "amount" BIGINT NOT NULL,
    "invoice_id" TEXT,
    "line_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "pending_invoice_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "credit_notes" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "reason" TEXT,
    "memo" TEXT,
    "refund_amount" BIGINT NOT NULL DEFAULT 0,
    "credit_amount" BIGINT NOT NULL DEFAULT 0,
    "refund_id" TEXT,
    "customer_balance_transaction_id" TEXT,
    "lines" JSONB NOT NULL DEFAULT '[]',
    "status" TEXT NOT NULL DEFAULT 'issued',
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "credit_notes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "credit_note_counters" (
    "merchant_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "credit_note_counters_pkey" PRIMARY KEY ("merchant_id")
);

-- CreateIndex
CREATE INDEX "pending_invoice_items_merchant_id_created_at_id_idx" ON "pending_invoice_items"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "pending_invoice_items_merchant_id_customer_id_currency_invo_idx" ON "pending_invoice_items"("merchant_id", "customer_id", "currency", "invoice_id");

-- CreateIndex
CREATE INDEX "credit_notes_merchant_id_created_at_id_idx" ON "credit_notes"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "credit_notes_merchant_id_invoice_id_created_at_id_idx" ON "credit_notes"("merchant_id", "invoice_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "credit_notes_merchant_id_number_key" ON "credit_notes"("merchant_id", "number");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_hosted_token_key" ON "invoices"("hosted_token");

-- AddForeignKey
ALTER TABLE "pending_invoice_items" ADD CONSTRAINT "pending_invoice_items_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pending_invoice_items" ADD CONSTRAINT "pending_invoice_items_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pending_invoice_items" ADD CONSTRAINT "pending_invoice_items_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Row-level security, as on every merchant table.
ALTER TABLE pending_invoice_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE pending_invoice_items FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON pending_invoice_items
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));

-- Row-level security, as on every merchant table.
ALTER TABLE credit_notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE credit_notes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON credit_notes
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));

-- Row-level security, as on every merchant table.
ALTER TABLE credit_note_counters ENABLE ROW LEVEL SECURITY;
ALTER TABLE credit_note_counters FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON credit_note_counters
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));
