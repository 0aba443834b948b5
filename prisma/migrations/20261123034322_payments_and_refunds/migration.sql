-- CreateTable
CREATE TABLE "payments" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'created',
    "purpose" TEXT NOT NULL DEFAULT 'payment',
    "redirect_url" TEXT NOT NULL,
    "cancel_url" TEXT,
    "checkout" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "amount_refunded" BIGINT NOT NULL DEFAULT 0,
    "method" TEXT,
    "method_details" JSONB,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "checkout_token" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "processor_ref" TEXT,
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "refunds" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "reason" TEXT,
    "failure_code" TEXT,
    "processor_ref" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "payments_checkout_token_key" ON "payments"("checkout_token");

-- CreateIndex
CREATE INDEX "payments_merchant_id_created_at_id_idx" ON "payments"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "payments_merchant_id_status_created_at_id_idx" ON "payments"("merchant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "payments_merchant_id_customer_id_created_at_id_idx" ON "payments"("merchant_id", "customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "refunds_merchant_id_created_at_id_idx" ON "refunds"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "refunds_merchant_id_status_created_at_id_idx" ON "refunds"("merchant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "refunds_merchant_id_customer_id_created_at_id_idx" ON "refunds"("merchant_id", "customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "refunds_payment_id_created_at_idx" ON "refunds"("payment_id", "created_at" DESC);

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Money invariants, enforced by the database as a last line of defence (Prisma does not model
-- CHECK constraints; the schema engine leaves them alone).
ALTER TABLE "payments" ADD CONSTRAINT "payments_amount_check" CHECK ("amount" > 0);
ALTER TABLE "payments" ADD CONSTRAINT "payments_amount_refunded_check" CHECK ("amount_refunded" >= 0 AND "amount_refunded" <= "amount");
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_amount_check" CHECK ("amount" > 0);
