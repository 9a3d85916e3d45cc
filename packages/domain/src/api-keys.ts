import { randomUUID } from 'node:crypto';
import type { ApiKey, CreateApiKeyRequest, CreatedApiKey } from '@recordbase/contracts/api-keys';
import { invalid, notFound } from '@recordbase/contracts/domain-errors';
import {
  API_KEYS_CHANNEL,
  apiKeyDisplayPrefix,
  hashApiKey,
  newApiKeySecret,
  notifyStatement,
  type PrismaClient,
} from '@recordbase/db';
import { toApiKeyDto } from './serialize';

/** API keys are the operator's business: the routes admit only the root key. */

export async function createApiKey(prisma: PrismaClient, input: CreateApiKeyRequest): Promise<CreatedApiKey> {
  const databaseIds = input.databaseIds ? [...new Set(input.databaseIds.map((id) => id.toLowerCase()))] : [];
  if (input.databaseIds) {
    const found = await prisma.database.findMany({
      where: { id: { in: databaseIds } },
      select: { id: true },
    });
    const missing = databaseIds.filter((id) => !found.some((row) => row.id === id));
    if (missing.length > 0) throw invalid(['databaseIds'], `no database with id ${missing.join(', ')}`);
  }
  const key = newApiKeySecret();
  const row = await prisma.apiKey.create({
    data: {
      id: randomUUID(),
      name: input.name,
      prefix: apiKeyDisplayPrefix(key),
      hash: hashApiKey(key),
      scopes: input.scopes,
      databaseIds,
      allDatabases: input.databaseIds === undefined,
    },
  });
  return { ...toApiKeyDto(row), key };
}

export async function listApiKeys(prisma: PrismaClient): Promise<ApiKey[]> {
  const rows = await prisma.apiKey.findMany({ orderBy: { createdAt: 'asc' } });
  return rows.map(toApiKeyDto);
}

/**
 * Deleting the row revokes the key. Every process that keeps keys drops them on the commit's
 * NOTIFY; this one drops its own (`afterRevoke`) before answering, since the notification may
 * arrive after its next request.
 */
export async function revokeApiKey(
  prisma: PrismaClient,
  id: string,
  afterRevoke?: () => void,
): Promise<void> {
  const [result] = await prisma.$transaction([
    prisma.apiKey.deleteMany({ where: { id } }),
    prisma.$executeRawUnsafe(notifyStatement(API_KEYS_CHANNEL)),
  ]);
  afterRevoke?.();
  if (result.count === 0) throw notFound(`API key ${id} not found`);
}
