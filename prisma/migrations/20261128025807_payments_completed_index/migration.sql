-- CreateIndex
CREATE INDEX "payments_merchant_id_status_completed_at_idx" ON "payments"("merchant_id", "status", "completed_at");
