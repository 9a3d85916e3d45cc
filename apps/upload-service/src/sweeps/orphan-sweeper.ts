import { type Connections, withTransaction } from '@recordbase/db';
import { qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import type { Logger } from '@recordbase/server-kit/logger';
import { createLoop, type Loop } from '@recordbase/server-kit/periodic';
import type { ObjectStorage } from '@recordbase/storage';
import type pg from 'pg';
import { notifyFilesFreed } from '../files/upload-lookups';

/**
 * Deletes uploaded files nothing refers to once their grace period is over: an attachment no
 * record of its database holds (or whose database is gone), an import file no import names.
 *
 * Files are taken in small batches, locked (SKIP LOCKED: a record write attaching one holds it
 * FOR SHARE, and wins), checked and deleted in one transaction, so a file cannot be attached and
 * swept at once. Rows go first, bytes after the commit: a row never points at deleted bytes for
 * long, and an object whose delete failed is only storage left over. Files found referenced are
 * stamped and looked at again only a grace period later.
 */

export interface SweepOptions {
  /** How old an unreferenced file must be before it goes. */
  graceMs: number;
  batchSize?: number;
}

interface Candidate {
  id: string;
  key: string;
  kind: string;
  database_id: string | null;
  database_exists: boolean;
}

interface AttachmentColumn {
  schema_name: string;
  table_id: string;
  field_id: string;
}

const DEFAULT_BATCH = 100;
const SWEEP_STATEMENT_TIMEOUT_MS = 120_000;

async function attachmentColumns(client: pg.PoolClient, databaseId: string): Promise<AttachmentColumn[]> {
  const result = await client.query<AttachmentColumn>(
    `SELECT d.schema_name, t.id AS table_id, f.id AS field_id
       FROM fields f JOIN tables t ON t.id = f.table_id JOIN databases d ON d.id = t.database_id
      WHERE d.id = $1 AND f.type = 'attachments'`,
    [databaseId],
  );
  return result.rows;
}

/** The keys among `keys` that some record of the database holds in an attachments field. */
async function referencedAttachments(
  client: pg.PoolClient,
  databaseId: string,
  keys: string[],
): Promise<Set<string>> {
  const referenced = new Set<string>();
  for (const column of await attachmentColumns(client, databaseId)) {
    const pending = keys.filter((key) => !referenced.has(key));
    if (pending.length === 0) break;
    // An attachment's url ends with `/files/<key>`; comparing the end avoids LIKE's wildcards.
    const result = await client.query<{ key: string }>(
      `SELECT DISTINCT k.key
         FROM ${qualifiedTable(column.schema_name, column.table_id)} r
         CROSS JOIN LATERAL jsonb_array_elements(r.${quoteIdent(column.field_id)}) AS a(value)
         JOIN unnest($1::text[]) AS k(key) ON right(a.value->>'url', length(k.key) + 7) = '/files/' || k.key`,
      [pending],
    );
    for (const row of result.rows) referenced.add(row.key);
  }
  return referenced;
}

async function referencedImports(client: pg.PoolClient, keys: string[]): Promise<Set<string>> {
  const result = await client.query<{ s3_key: string }>(
    'SELECT DISTINCT s3_key FROM imports WHERE s3_key = ANY($1::text[])',
    [keys],
  );
  return new Set(result.rows.map((row) => row.s3_key));
}

/** One batch; returns the keys deleted and how many files were looked at. */
export async function sweepOrphanBatch(
  db: Connections,
  storage: ObjectStorage,
  options: SweepOptions,
): Promise<{ deleted: string[]; examined: number }> {
  const batch = options.batchSize ?? DEFAULT_BATCH;
  const orphans = await withTransaction(
    db,
    async (client) => {
      const candidates = await client.query<Candidate>(
        `SELECT f.id::text, f.key, f.kind, f.database_id::text,
              EXISTS (SELECT 1 FROM databases d WHERE d.id = f.database_id) AS database_exists
         FROM uploaded_files f
        WHERE f.created_at < now() - make_interval(secs => $1)
          AND (f.checked_at IS NULL OR f.checked_at < now() - make_interval(secs => $1))
        ORDER BY f.created_at
        LIMIT $2
        FOR UPDATE OF f SKIP LOCKED`,
        [options.graceMs / 1000, batch],
      );
      const kept = new Set<string>();
      const byDatabase = new Map<string, string[]>();
      for (const file of candidates.rows) {
        if (file.kind === 'attachment' && file.database_id && file.database_exists) {
          byDatabase.set(file.database_id, [...(byDatabase.get(file.database_id) ?? []), file.key]);
        }
      }
      for (const [databaseId, keys] of byDatabase) {
        for (const key of await referencedAttachments(client, databaseId, keys)) kept.add(key);
      }
      const importKeys = candidates.rows.filter((file) => file.kind === 'import').map((file) => file.key);
      if (importKeys.length > 0) for (const key of await referencedImports(client, importKeys)) kept.add(key);
      const gone = candidates.rows.filter((file) => !kept.has(file.key));
      await client.query('UPDATE uploaded_files SET checked_at = now() WHERE key = ANY($1::text[])', [
        [...kept],
      ]);
      await client.query('DELETE FROM uploaded_files WHERE id = ANY($1::uuid[])', [
        gone.map((file) => file.id),
      ]);
      // Databases' stored bytes went down: every upload-service reads them again (on commit).
      if (gone.length > 0) await client.query(notifyFilesFreed);
      return { keys: gone.map((file) => file.key), examined: candidates.rowCount ?? 0 };
    },
    // Looking for references scans attachments columns: more than a request's time.
    { statementTimeoutMs: SWEEP_STATEMENT_TIMEOUT_MS },
  );
  for (const key of orphans.keys) await storage.delete(key);
  return { deleted: orphans.keys, examined: orphans.examined };
}

/** Batches until one comes back short: everything due now has been looked at. */
export async function sweepOrphans(
  db: Connections,
  storage: ObjectStorage,
  options: SweepOptions,
): Promise<string[]> {
  const deleted: string[] = [];
  for (;;) {
    const batch = await sweepOrphanBatch(db, storage, options);
    deleted.push(...batch.deleted);
    if (batch.examined < (options.batchSize ?? DEFAULT_BATCH)) return deleted;
  }
}

/** Runs the sweep now and then `intervalMs` after each; `stop` ends it once a sweep in progress has. */
export function scheduleOrphanSweeps(
  db: Connections,
  storage: ObjectStorage,
  options: SweepOptions & { intervalMs: number },
  logger: Logger,
): Loop {
  const loop = createLoop(
    'sweeping unreferenced uploads',
    options.intervalMs,
    async () => {
      const deleted = await sweepOrphans(db, storage, options);
      if (deleted.length > 0) logger.info({ count: deleted.length }, 'deleted unreferenced uploads');
    },
    logger,
  );
  loop.start();
  return loop;
}
