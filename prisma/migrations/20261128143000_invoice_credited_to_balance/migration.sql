-- A subscription invoice whose total is below zero credits the customer's credit balance with the
-- difference when it is finalised (issue 25, item 6; Stripe's rule for a negative invoice total):
-- the amount it credited, shown on the invoice. Before, such a total waited on the subscription as
-- a "Credit carried over" line for its next invoice (lines already waiting still bill as before).
ALTER TABLE "invoices" ADD COLUMN "credited_to_balance" BIGINT NOT NULL DEFAULT 0;
