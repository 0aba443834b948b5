-- Customer search (GET /v1/customers?search=, GraphQL customers(search:)): a live customer's
-- lower-cased email and the words of its lower-cased name, one row each, kept by a trigger.
-- `term` is in the "C" collation, so "starts with p" is the range p <= term < p || U+10FFFF on
-- the (merchant_id, kind, term) index, with operators that are leakproof — the only ones
-- PostgreSQL uses an index for under row-level security (LIKE, lower(), text search are not).
-- CreateTable
CREATE TABLE "customer_search_terms" (
    "customer_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "term" TEXT COLLATE "C" NOT NULL,

    CONSTRAINT "customer_search_terms_pkey" PRIMARY KEY ("customer_id","kind","term")
);

-- CreateIndex
CREATE INDEX "customer_search_terms_merchant_id_kind_term_idx" ON "customer_search_terms"("merchant_id", "kind", "term");

-- AddForeignKey
ALTER TABLE "customer_search_terms" ADD CONSTRAINT "customer_search_terms_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Row-level security, as on every merchant table.
ALTER TABLE customer_search_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE customer_search_terms FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON customer_search_terms
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id));

-- The terms of a customer row: its email, and the words of its name split at white space and
-- ASCII punctuation ("Jean-Luc O'Brien" → jean, luc, o, brien). None for a deleted customer.
-- Inlined in the trigger (no helper function: a call per row cost ~40 µs more per insert).
CREATE FUNCTION customers_search_terms_sync() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.email IS NOT DISTINCT FROM OLD.email AND NEW.name IS NOT DISTINCT FROM OLD.name
       AND NEW.deleted_at IS NOT DISTINCT FROM OLD.deleted_at THEN
      RETURN NULL;
    END IF;
    DELETE FROM customer_search_terms WHERE customer_id = NEW.id;
  END IF;
  IF NEW.deleted_at IS NULL THEN
    INSERT INTO customer_search_terms (customer_id, merchant_id, kind, term)
    SELECT DISTINCT NEW.id, NEW.merchant_id, x.kind, x.term FROM (
      SELECT 'email' AS kind, lower(NEW.email) AS term
      UNION ALL
      SELECT 'name', w FROM regexp_split_to_table(lower(coalesce(NEW.name, '')), '[[:space:]!-/:-@[-`{-~]+') AS w
    ) x WHERE x.term <> '';
  END IF;
  RETURN NULL;
END
$f$;

CREATE TRIGGER customers_search_terms_sync AFTER INSERT OR UPDATE ON customers
  FOR EACH ROW EXECUTE FUNCTION customers_search_terms_sync();

-- The customers there already.
INSERT INTO customer_search_terms (customer_id, merchant_id, kind, term)
SELECT DISTINCT c.id, c.merchant_id, x.kind, x.term
  FROM customers c,
       LATERAL (SELECT 'email' AS kind, lower(c.email) AS term
                UNION ALL
                SELECT 'name', w FROM regexp_split_to_table(lower(coalesce(c.name, '')), '[[:space:]!-/:-@[-`{-~]+') AS w) x
 WHERE c.deleted_at IS NULL AND x.term <> '';
