-- An endpoint's own delivery attempts, newest first, with a status filter
-- (GET /v1/webhook-endpoints/:id/delivery-attempts?status=, GraphQL WebhookEndpoint.deliveryAttempts(status:)):
-- one index range scan of limit+1 rows whatever the endpoint's other attempts. Without a status the
-- list uses delivery_attempts_endpoint_id_created_at_id_idx (migration 20261123041521).
CREATE INDEX "delivery_attempts_endpoint_id_status_created_at_id_idx" ON "delivery_attempts"("endpoint_id", "status", "created_at" DESC, "id" DESC);
