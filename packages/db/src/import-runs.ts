import { randomUUID } from 'node:crypto';
import { type RecordAuthor, ROOT_KEY_NAME, recordAuthor } from '@recordbase/contracts/api-keys';
import type { ImportRowError } from '@recordbase/contracts/imports';
import type pg from 'pg';
import type { PrismaClient, Tx } from './client';

/**
 * The state of every import, and every change of it, in one place: records-api starts and cancels
 * imports, the import worker claims them, reports progress, finishes, fails or hands them back,
 * and its sweep finds those Redis lost. An import is `queued`, then `running` under one run of the
 * worker (`attempt`), then `succeeded` or `failed`; a run writes only while the import is still its
 * own (`attempt` and `running`), so a cancel or a newer run makes an older run's writes no-ops.
 */

type Queryable = Pick<pg.Pool, 'query'>;

/** The statuses an import is open in: it holds a place among its key's imports. */
const OPEN_STATUSES = ['queued', 'running'];
const OPEN_STATUSES_SQL = `(${OPEN_STATUSES.map((status) => `'${status}'`).join(', ')})`;

/** What a run needs of its import, read as it claims it. */
export interface ImportRun {
  id: string;
  /** This run's id: the import is the run's while its `attempt` is this. */
  attempt: string;
  databaseId: string;
  s3Key: string;
  tableId: string | null;
  tableName: string | null;
  sheet: string | null;
  firstRowIsHeader: boolean;
}

/** An import to queue: what its runs will read, and the key that starts it (null: the root key). */
export type NewImport = Omit<ImportRun, 'attempt'> & { apiKeyId: string | null };

/**
 * Queues a new import, unless its key already has `maxOpenPerKey` open: then nothing is written
 * and the count is returned. The root key's imports are the installation's own work, unbounded.
 */
export async function queueImport(
  prisma: PrismaClient,
  row: NewImport,
  maxOpenPerKey: number,
): Promise<{ queued: true } | { queued: false; open: number }> {
  const data = { ...row, status: 'queued' };
  const keyId = row.apiKeyId;
  if (keyId === null) {
    await prisma.import.create({ data });
    return { queued: true };
  }
  return prisma.$transaction(async (tx) => {
    // Two starts of one key at once count each other.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`imports-of:${keyId}`}))`;
    const open = await tx.import.count({ where: { apiKeyId: keyId, status: { in: OPEN_STATUSES } } });
    if (open >= maxOpenPerKey) return { queued: false as const, open };
    await tx.import.create({ data });
    return { queued: true as const };
  });
}

/**
 * Fails a queued or running import with `message`; the run that holds it finds it no longer its
 * own at its next report or its commit, and writes nothing. The import as it now is, or null when
 * it had already ended.
 */
export async function cancelImportRun(prisma: PrismaClient, importId: string, message: string) {
  const [updated] = await prisma.import.updateManyAndReturn({
    where: { id: importId, status: { in: OPEN_STATUSES } },
    data: {
      status: 'failed',
      errors: [{ row: null, column: null, message }],
      updatedAt: new Date(),
    },
  });
  return updated ?? null;
}

/**
 * Takes the import for a new run: queued, or running under a run that died, and counts the run.
 * One that has had `maxRuns` runs fails instead with `usedUpMessage` ('used-up'); null when the
 * import is not open (cancelled, ended).
 */
export async function claimImport(
  client: Queryable,
  importId: string,
  maxRuns: number,
  usedUpMessage: string,
): Promise<ImportRun | 'used-up' | null> {
  const { rows } = await client.query<ImportRun>(
    `UPDATE imports SET status = 'running', attempt = $2, attempts = attempts + 1, rows_imported = 0,
            rows_total = NULL, errors = '[]', skipped_columns = '[]', updated_at = now()
      WHERE id = $1 AND status IN ${OPEN_STATUSES_SQL} AND attempts < $3
      RETURNING id, attempt, database_id AS "databaseId", s3_key AS "s3Key", table_id AS "tableId",
                table_name AS "tableName", sheet, first_row_is_header AS "firstRowIsHeader"`,
    [importId, randomUUID(), maxRuns],
  );
  if (rows[0]) return rows[0];
  const { rowCount } = await client.query(
    `UPDATE imports SET status = 'failed', attempt = NULL, rows_imported = 0, errors = $2::jsonb,
            updated_at = now()
      WHERE id = $1 AND status IN ${OPEN_STATUSES_SQL} AND attempts >= $3`,
    [importId, JSON.stringify([{ row: null, column: null, message: usedUpMessage }]), maxRuns],
  );
  return rowCount === 0 ? null : 'used-up';
}

/**
 * Hands a run's import back, queued again, the run not counted (its worker was stopped rather
 * than stopped by it). The run, if it goes on until its process ends, writes nothing.
 */
export async function releaseImport(client: Queryable, importId: string, attempt: string): Promise<void> {
  await client.query(
    `UPDATE imports SET status = 'queued', attempt = NULL, attempts = greatest(attempts - 1, 0),
            rows_imported = 0, rows_total = NULL, updated_at = now()
      WHERE id = $1 AND attempt = $2 AND status = 'running'`,
    [importId, attempt],
  );
}

/** Reports a run's progress; false when the import is no longer the run's. */
export async function reportImportProgress(
  client: Queryable,
  run: Pick<ImportRun, 'id' | 'attempt'>,
  rowsImported: number,
  rowsTotal: number | null,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE imports SET rows_imported = $3, rows_total = COALESCE($4, rows_total), updated_at = now()
      WHERE id = $1 AND attempt = $2 AND status = 'running'`,
    [run.id, run.attempt, rowsImported, rowsTotal],
  );
  return rowCount !== 0;
}

/**
 * Marks the import succeeded, in the transaction that writes its rows; false (write nothing then)
 * when it is no longer the run's.
 */
export async function succeedImport(
  tx: Tx,
  run: Pick<ImportRun, 'id' | 'attempt'>,
  outcome: {
    tableId: string;
    rowsImported: number;
    rowsTotal: number;
    errors: readonly ImportRowError[];
    skippedColumns: readonly string[];
  },
): Promise<boolean> {
  const updated = await tx.$executeRawUnsafe(
    `UPDATE imports SET status = 'succeeded', table_id = $3, rows_imported = $4, rows_total = $5,
            errors = $6::jsonb, skipped_columns = $7::jsonb, updated_at = now()
      WHERE id = $1::uuid AND attempt = $2::uuid AND status = 'running'`,
    run.id,
    run.attempt,
    outcome.tableId,
    outcome.rowsImported,
    outcome.rowsTotal,
    JSON.stringify(outcome.errors),
    JSON.stringify(outcome.skippedColumns),
  );
  return updated !== 0;
}

/** Marks the run's import failed with `errors`, if it is still the run's. */
export async function failImport(
  client: Queryable,
  run: Pick<ImportRun, 'id' | 'attempt'>,
  errors: readonly ImportRowError[],
): Promise<void> {
  await client.query(
    `UPDATE imports SET status = 'failed', rows_imported = 0, errors = $3::jsonb, updated_at = now()
      WHERE id = $1 AND attempt = $2 AND status = 'running'`,
    [run.id, run.attempt, JSON.stringify(errors)],
  );
}

/**
 * Up to `limit` imports whose job Redis may have lost, oldest first: queued for longer than
 * `queuedGraceMs`, or running with no report for `staleAfterMs` (a dead run's).
 */
export async function importsToRequeue(
  client: Queryable,
  queuedGraceMs: number,
  staleAfterMs: number,
  limit: number,
): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM imports
      WHERE (status = 'queued' AND updated_at < now() - make_interval(secs => $1))
         OR (status = 'running' AND updated_at < now() - make_interval(secs => $2))
      ORDER BY created_at LIMIT $3`,
    [queuedGraceMs / 1000, staleAfterMs / 1000, limit],
  );
  return rows.map((row) => row.id);
}

/** The key that started the import: null for the root key, or when the import is gone. */
export async function importStartedBy(client: Queryable, importId: string): Promise<string | null> {
  const { rows } = await client.query<{ api_key_id: string | null }>(
    'SELECT api_key_id::text FROM imports WHERE id = $1',
    [importId],
  );
  return rows[0]?.api_key_id ?? null;
}

/**
 * The key an import's records are created by, as their created_by fields show it. A key revoked
 * since the import began keeps its id, and its id stands for its name.
 */
export async function importAuthor(tx: Pick<Tx, '$queryRawUnsafe'>, importId: string): Promise<RecordAuthor> {
  const rows = await tx.$queryRawUnsafe<{ id: string | null; name: string | null }[]>(
    `SELECT i.api_key_id::text AS id, k.name FROM imports i LEFT JOIN api_keys k ON k.id = i.api_key_id WHERE i.id = $1::uuid`,
    importId,
  );
  const id = rows[0]?.id ?? null;
  return recordAuthor(id, id === null ? ROOT_KEY_NAME : (rows[0]?.name ?? id));
}
