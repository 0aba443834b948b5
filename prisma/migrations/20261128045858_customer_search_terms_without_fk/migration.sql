-- Customer search terms without a foreign key to customers (issue 22: the key was checked once
-- per term row, about a third of what the trigger added to every customer insert). The trigger
-- that writes the rows is their integrity: it now also removes them when a customer row is
-- deleted (customers are soft-deleted, so that branch is a safety net, not a path).
-- DropForeignKey
ALTER TABLE "customer_search_terms" DROP CONSTRAINT "customer_search_terms_customer_id_fkey";

-- A customer without a name (most API-created ones) gets its one email row by a plain INSERT …
-- VALUES instead of the word-splitting query.
CREATE OR REPLACE FUNCTION customers_search_terms_sync() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM customer_search_terms WHERE customer_id = OLD.id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF NEW.email IS NOT DISTINCT FROM OLD.email AND NEW.name IS NOT DISTINCT FROM OLD.name
       AND NEW.deleted_at IS NOT DISTINCT FROM OLD.deleted_at THEN
      RETURN NULL;
    END IF;
    DELETE FROM customer_search_terms WHERE customer_id = NEW.id;
  END IF;
  IF NEW.deleted_at IS NULL THEN
    IF coalesce(NEW.name, '') = '' THEN
      IF NEW.email <> '' THEN
        INSERT INTO customer_search_terms (customer_id, merchant_id, kind, term)
        VALUES (NEW.id, NEW.merchant_id, 'email', lower(NEW.email));
      END IF;
    ELSE
      INSERT INTO customer_search_terms (customer_id, merchant_id, kind, term)
      SELECT DISTINCT NEW.id, NEW.merchant_id, x.kind, x.term FROM (
        SELECT 'email' AS kind, lower(NEW.email) AS term
        UNION ALL
        SELECT 'name', w FROM regexp_split_to_table(lower(NEW.name), '[[:space:]!-/:-@[-`{-~]+') AS w
      ) x WHERE x.term <> '';
    END IF;
  END IF;
  RETURN NULL;
END
$f$;

DROP TRIGGER customers_search_terms_sync ON customers;
CREATE TRIGGER customers_search_terms_sync AFTER INSERT OR UPDATE OR DELETE ON customers
  FOR EACH ROW EXECUTE FUNCTION customers_search_terms_sync();
