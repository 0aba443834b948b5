-- A wallet's ledger lists in the order its movements were applied. A movement's created_at is
-- the billing clock's time, decided before the movement waits for the wallet's lock, so under
-- concurrency two movements could list (created_at DESC, id DESC) in the opposite order of the
-- one the trigger applied them in, or tie to the millisecond. Now each wallet remembers the time
-- of its last movement, and a movement is stamped at least 1 ms after it: the application reads
-- last_ledger_at with the wallet's lock and stamps the row itself (so what it answers is what is
-- stored); the trigger makes it so for any writer that does not (docs/wallets.md).

ALTER TABLE "wallets" ADD COLUMN "last_ledger_at" TIMESTAMPTZ(3);

UPDATE "wallets" w SET "last_ledger_at" = (SELECT max(t."created_at") FROM "wallet_transactions" t WHERE t."wallet_id" = w."id");

CREATE OR REPLACE FUNCTION "wallet_apply_transaction"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  current_balance BIGINT;
  last_at TIMESTAMPTZ;
BEGIN
  SELECT "balance", "last_ledger_at" INTO current_balance, last_at FROM "wallets" WHERE "id" = NEW."wallet_id" FOR UPDATE;
  IF current_balance IS NULL THEN
    RAISE EXCEPTION 'wallet % does not exist', NEW."wallet_id";
  END IF;
  IF NEW."balance_before" <> current_balance THEN
    RAISE EXCEPTION 'ledger row for wallet % starts at % but the balance is %', NEW."wallet_id", NEW."balance_before", current_balance
      USING ERRCODE = 'check_violation';
  END IF;
  -- Each movement lists after the one before it (created_at DESC, id DESC is the ledger's order).
  IF last_at IS NOT NULL AND NEW."created_at" <= last_at THEN
    NEW."created_at" := last_at + interval '1 millisecond';
  END IF;
  UPDATE "wallets" SET "balance" = NEW."balance_after", "last_ledger_at" = NEW."created_at", "updated_at" = now() WHERE "id" = NEW."wallet_id";
  RETURN NEW;
END $$;
