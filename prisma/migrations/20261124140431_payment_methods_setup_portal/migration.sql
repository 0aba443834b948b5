-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "default_payment_method_id" TEXT;

-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "payment_method_id" TEXT,
ALTER COLUMN "redirect_url" DROP NOT NULL;

-- CreateTable
CREATE TABLE "setup_intents" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'requires_payment_method',
    "return_url" TEXT,
    "payment_method_types" JSONB NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "token" TEXT NOT NULL,
    "payment_method_id" TEXT,
    "portal_session_id" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "setup_intents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payment_methods" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT,
    "owner_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "details" JSONB NOT NULL,
    "processor_token" TEXT NOT NULL,
    "detached_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "payment_methods_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "portal_sessions" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "return_url" TEXT NOT NULL,
    "locale" TEXT NOT NULL DEFAULT 'en',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "portal_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "setup_intents_token_key" ON "setup_intents"("token");

-- CreateIndex
CREATE UNIQUE INDEX "setup_intents_payment_method_id_key" ON "setup_intents"("payment_method_id");

-- CreateIndex
CREATE INDEX "setup_intents_merchant_id_created_at_id_idx" ON "setup_intents"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "setup_intents_merchant_id_customer_id_created_at_id_idx" ON "setup_intents"("merchant_id", "customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "payment_methods_merchant_id_customer_id_created_at_id_idx" ON "payment_methods"("merchant_id", "customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "payment_methods_merchant_id_created_at_id_idx" ON "payment_methods"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "portal_sessions_token_key" ON "portal_sessions"("token");

-- CreateIndex
CREATE INDEX "portal_sessions_merchant_id_created_at_id_idx" ON "portal_sessions"("merchant_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_payment_method_id_fkey" FOREIGN KEY ("payment_method_id") REFERENCES "payment_methods"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "setup_intents" ADD CONSTRAINT "setup_intents_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "setup_intents" ADD CONSTRAINT "setup_intents_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "setup_intents" ADD CONSTRAINT "setup_intents_payment_method_id_fkey" FOREIGN KEY ("payment_method_id") REFERENCES "payment_methods"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payment_methods" ADD CONSTRAINT "payment_methods_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payment_methods" ADD CONSTRAINT "payment_methods_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
