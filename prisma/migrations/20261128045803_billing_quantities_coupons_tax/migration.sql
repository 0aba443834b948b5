-- AlterTable
ALTER TABLE "invoice_items" ADD COLUMN     "discount_amount" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "quantity" INTEGER,
ADD COLUMN     "tax_amounts" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "taxable" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "unit_amount" BIGINT;

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "coupon_id" TEXT,
ADD COLUMN     "discount_amount" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "tax_amount" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "coupon_id" TEXT,
ADD COLUMN     "default_tax_rates" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "discount_end" TIMESTAMPTZ(3),
ADD COLUMN     "discount_start" TIMESTAMPTZ(3),
ADD COLUMN     "quantity" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "coupons" (
    "merchant_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "percent_off_bp" INTEGER,
    "amount_off" BIGINT,
    "currency" TEXT,
    "duration" TEXT NOT NULL,
    "duration_in_months" INTEGER,
    "max_redemptions" INTEGER,
    "redeem_by" TIMESTAMPTZ(3),
    "times_redeemed" INTEGER NOT NULL DEFAULT 0,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "coupons_pkey" PRIMARY KEY ("merchant_id","id")
);

-- CreateTable
CREATE TABLE "tax_rates" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "percentage" INTEGER NOT NULL,
    "inclusive" BOOLEAN NOT NULL DEFAULT false,
    "country" TEXT,
    "jurisdiction" TEXT,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tax_rates_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "coupons_merchant_id_created_at_id_idx" ON "coupons"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tax_rates_merchant_id_created_at_id_idx" ON "tax_rates"("merchant_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tax_rates" ADD CONSTRAINT "tax_rates_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Plan lines issued before quantities bill one unit at the plan's price.
UPDATE invoice_items i SET quantity = 1, unit_amount = i.amount WHERE i.proration = false AND i.description NOT LIKE 'Credit carried over from %';
-- A credit carried over from an earlier invoice had its discount and tax counted there.
UPDATE invoice_items SET taxable = false WHERE proration = false AND description LIKE 'Credit carried over from %';

-- Row-level security, as every merchant-owned table (20261127120000_tenant_row_security).
ALTER TABLE coupons ENABLE ROW LEVEL SECURITY;
ALTER TABLE coupons FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON coupons
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));
ALTER TABLE tax_rates ENABLE ROW LEVEL SECURITY;
ALTER TABLE tax_rates FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tax_rates
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));
