-- CreateTable
CREATE TABLE "email_settings" (
    "merchant_id" TEXT NOT NULL,
    "receipts" BOOLEAN NOT NULL DEFAULT true,
    "failed_payments" BOOLEAN NOT NULL DEFAULT true,
    "trial_ending" BOOLEAN NOT NULL DEFAULT true,
    "upcoming_renewal" BOOLEAN NOT NULL DEFAULT false,
    "invoices" BOOLEAN NOT NULL DEFAULT true,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "email_settings_pkey" PRIMARY KEY ("merchant_id")
);

-- CreateTable
CREATE TABLE "emails" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "html" TEXT NOT NULL,
    "locale" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "transport" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "message_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "sent_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "emails_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "emails_merchant_id_created_at_id_idx" ON "emails"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "emails_merchant_id_recipient_created_at_id_idx" ON "emails"("merchant_id", "recipient", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "emails_merchant_id_event_id_key" ON "emails"("merchant_id", "event_id");

-- AddForeignKey
ALTER TABLE "email_settings" ADD CONSTRAINT "email_settings_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "emails" ADD CONSTRAINT "emails_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Row-level security (docs/database.md): a merchant's statements see its own rows only.
ALTER TABLE "email_settings" ENABLE ROW LEVEL SECURITY;
ALTER TABLE "email_settings" FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON "email_settings"
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));
ALTER TABLE "emails" ENABLE ROW LEVEL SECURITY;
ALTER TABLE "emails" FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON "emails"
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));
