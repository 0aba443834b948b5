-- Events by the record they are about (GET /v1/events?object_id=, GraphQL events(objectId:)): the
-- id inside the event's data, as a column PostgreSQL keeps itself (generated: nothing in the
-- service writes it; adding it rewrites the table once). Under row-level security only a leakproof
-- comparison can use an index, and text = is one where jsonb operators are not: hence a column,
-- not an expression index.
ALTER TABLE "events" ADD COLUMN "object_id" TEXT GENERATED ALWAYS AS ("data" -> 'object' ->> 'id') STORED;

CREATE INDEX "events_merchant_id_object_id_created_at_id_idx" ON "events"("merchant_id", "object_id", "created_at" DESC, "id" DESC);
