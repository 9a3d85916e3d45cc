import { z } from 'zod';
import { nameSchema, uuidSchema } from './common';

export const apiKeyScopes = [
  'records:read',
  'records:write',
  'schema:read',
  'schema:write',
  'webhooks:manage',
  'sql:read',
  'files:write',
] as const;
export const apiKeyScopeSchema = z.enum(apiKeyScopes);
export type ApiKeyScope = z.infer<typeof apiKeyScopeSchema>;

/** Who a request or a job acts as: an API key's id (null for the operator's root key), its reach. */
export interface Principal {
  /** null for the operator's ROOT_API_KEY. */
  keyId: string | null;
  /** The key's name, which created_by and last_modified_by fields show; `root` for the root key. */
  keyName: string;
  scopes: ReadonlySet<ApiKeyScope>;
  /** null: every database, including ones created later. */
  databaseIds: ReadonlySet<string> | null;
}

/** The id and name the root key goes by where a key is shown (created_by, last_modified_by). */
export const ROOT_KEY_ID = 'root';
export const ROOT_KEY_NAME = 'root';

/** A key as created_by and last_modified_by fields show the one that wrote a record. */
export interface RecordAuthor {
  /** The key's id; `root` for the root key. */
  id: string;
  name: string;
}

export function recordAuthor(keyId: string | null, keyName: string): RecordAuthor {
  return { id: keyId ?? ROOT_KEY_ID, name: keyName };
}

/** What a route asks of the key that calls it: a scope, or the root key. */
/** What a route needs of a key: a scope, any one of several (the route then serves what each allows), or root. */
export type RouteAccess = { scope: ApiKeyScope } | { anyScope: readonly ApiKeyScope[] } | { rootOnly: true };

export const createApiKeyRequestSchema = z.strictObject({
  name: nameSchema,
  scopes: z
    .array(apiKeyScopeSchema)
    .min(1, { error: 'must list at least one scope' })
    .max(apiKeyScopes.length)
    .refine((scopes) => new Set(scopes).size === scopes.length, { error: 'must not repeat a scope' }),
  databaseIds: z.array(uuidSchema).min(1).max(1000).optional().meta({
    description: 'The databases the key may reach; left out: every database, including later ones.',
  }),
});
export type CreateApiKeyRequest = z.infer<typeof createApiKeyRequestSchema>;

export const apiKeySchema = z.object({
  id: uuidSchema,
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(apiKeyScopeSchema),
  /** null: every database, including ones created later. */
  databaseIds: z.array(uuidSchema).nullable(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

/** Only the create response carries the key itself; it is never shown again. */
export const createdApiKeySchema = apiKeySchema.extend({
  key: z
    .string()
    .meta({ description: 'The key itself, shown this once: send it as Authorization: Bearer <key>.' }),
});
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;

export const apiKeyListSchema = z.object({ apiKeys: z.array(apiKeySchema) });
