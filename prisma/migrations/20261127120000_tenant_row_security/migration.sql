-- Tenancy by construction (issue 22): row-level security on every table that holds a merchant's
-- rows, keyed by the transaction's or connection's setting `billing.merchant_id`. A statement run
-- for a merchant sees and changes only that merchant's rows, whatever its WHERE says (or forgets);
-- system work (the job runner, authentication, migrations) runs with the setting empty and sees
-- every merchant. The application sets it (src/platform/db/): SET LOCAL at the start of a
-- merchant's Prisma transaction, per connection on the raw-SQL pool.
--
-- Superusers and BYPASSRLS roles skip row-level security, so a connection as one of them switches
-- to the role `billing_tenant` (created here when this role may create roles; the application
-- SETs ROLE to it after migrating). A table owner that is not a superuser is held by FORCE.
-- The policy is one expression per row: the setting read once (`IN` evaluates it once), no
-- sub-select (init plans would cost every single-row statement more than they save on scans).

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'billing_tenant')
     AND (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
    BEGIN
      CREATE ROLE billing_tenant NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL; -- another database of this cluster created it at the same moment
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'billing_tenant') THEN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO billing_tenant', current_schema());
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO billing_tenant', current_schema());
    EXECUTE format('GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA %I TO billing_tenant', current_schema());
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO billing_tenant', current_schema());
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO billing_tenant', current_schema());
    -- A BYPASSRLS role that is not a superuser needs membership to SET ROLE; an owner without
    -- BYPASSRLS never does (FORCE holds it), and may lack the right to grant it.
    IF (SELECT rolbypassrls AND NOT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
      BEGIN
        EXECUTE format('GRANT billing_tenant TO %I', current_user);
      EXCEPTION WHEN insufficient_privilege THEN
        NULL; -- the service then starts with a warning (row-level security not enforced)
      END;
    END IF;
  END IF;
END $$;

DO $$
DECLARE
  t text;
BEGIN
  FOR t IN
    SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name AND tb.table_type = 'BASE TABLE'
    WHERE c.table_schema = current_schema() AND c.column_name = 'merchant_id'
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format(
      $p$CREATE POLICY tenant_isolation ON %I
         USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))
         WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', merchant_id))$p$,
      t);
  END LOOP;
END $$;

-- The merchant's own row: a merchant sees itself only.
ALTER TABLE merchants ENABLE ROW LEVEL SECURITY;
ALTER TABLE merchants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON merchants
  USING (coalesce(current_setting('billing.merchant_id', true), '') IN ('', id))
  WITH CHECK (coalesce(current_setting('billing.merchant_id', true), '') IN ('', id));
