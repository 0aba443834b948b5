// Authentication's statement: an API key by client id, with its merchant (src/platform/auth.ts).
import type { Prisma, PrismaClient } from './db/index.ts';

/** An API key row with its merchant. */
export type ApiKeyWithMerchant = Prisma.ApiKeyGetPayload<{ include: { merchant: true } }>;

/** The key of a client id (revoked or not), with its merchant; null when there is none. */
export function findApiKeyWithMerchant(prisma: PrismaClient | Prisma.TransactionClient, clientId: string): Promise<ApiKeyWithMerchant | null> {
  return prisma.apiKey.findUnique({ where: { clientId }, include: { merchant: true } });
}
