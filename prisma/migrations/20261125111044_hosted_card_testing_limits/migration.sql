-- AlterTable
ALTER TABLE "portal_sessions" ADD COLUMN     "browser_key_hash" TEXT,
ADD COLUMN     "opened_at" TIMESTAMPTZ(3),
ADD COLUMN     "setup_links" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "setup_intents" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE UNIQUE INDEX "portal_sessions_browser_key_hash_key" ON "portal_sessions"("browser_key_hash");
