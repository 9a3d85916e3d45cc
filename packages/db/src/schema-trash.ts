import type { FieldType } from '@recordbase/contracts/fields';
import type pg from 'pg';
import { isLockNotAvailable } from './errors';
import { type PhysicalField, purgeTrashedField, purgeTrashedTable, quoteLiteral } from './physical';

/**
 * The database trash's purge (migrations/*_schema_trash.sql): entries deleted more than the
 * retention ago leave for good, with the data they kept (physical/ddl.ts, trashField). The schema
 * service writes and restores entries; this is the retention sweep's part.
 *
 * Each entry goes in a transaction of its own that waits at most PURGE_LOCK_TIMEOUT_MS for its
 * locks: dropping a kept column or link table locks the live tables it belongs to or points at,
 * and a purge must never queue writers behind a long read. An entry whose locks are busy, or
 * which a restore holds, is left for a later sweep.
 */

export const PURGE_LOCK_TIMEOUT_MS = 1000;

interface KeptFieldRow {
  id: string;
  name: string;
  type: string;
  template: unknown;
}

const physicalField = (field: KeptFieldRow): PhysicalField => ({
  id: field.id,
  name: field.name,
  type: field.type as FieldType,
  template: field.template,
});

// The oldest first; an entry a restore or another sweep holds is skipped.
const LOCK_EXPIRED_SQL = `
SELECT t.id, t.kind, t.table_id, t.entry, d.schema_name
  FROM schema_trash t JOIN databases d ON d.id = t.database_id
 WHERE t.deleted_at < now() - $1 * interval '1 millisecond'
   AND t.id <> ALL ($2::text[])
 ORDER BY t.deleted_at
 LIMIT 1
   FOR UPDATE OF t SKIP LOCKED`;

/** The entry's kept data dropped, and the entry deleted, in the caller's transaction. */
async function purgeEntry(
  client: pg.PoolClient,
  entry: { id: string; kind: string; table_id: string; entry: unknown; schema_name: string },
): Promise<void> {
  const table = { schemaName: entry.schema_name, id: entry.table_id, name: '' };
  const statements: string[] = [];
  if (entry.kind === 'field') {
    statements.push(
      ...purgeTrashedField(table, physicalField((entry.entry as { field: KeptFieldRow }).field)),
    );
  } else {
    // Its own fields deleted before it go with it: their kept link tables first.
    const fields = await client.query<{ id: string; entry: { field: KeptFieldRow } }>(
      `SELECT id, entry FROM schema_trash WHERE table_id = $1 AND kind = 'field' FOR UPDATE`,
      [entry.table_id],
    );
    for (const row of fields.rows)
      statements.push(...purgeTrashedField(table, physicalField(row.entry.field)));
    const { fields: own, inboundLinks } = entry.entry as {
      fields: KeptFieldRow[];
      inboundLinks: KeptFieldRow[];
    };
    const linkFieldIds = [...own, ...inboundLinks]
      .filter((field) => field.type === 'linked_record')
      .map((field) => field.id);
    statements.push(
      ...purgeTrashedTable(table, linkFieldIds),
      // Its deleted records still in the trash, which no table will take back now (the rows of
      // those restored or purged go with their events, as history's).
      `DELETE FROM record_trash WHERE table_id = ${quoteLiteral(entry.table_id)} AND stored IS NOT NULL`,
    );
    await client.query(`DELETE FROM schema_trash WHERE table_id = $1 AND kind = 'field'`, [entry.table_id]);
  }
  for (const statement of statements) await client.query(statement);
  await client.query('DELETE FROM schema_trash WHERE id = $1', [entry.id]);
}

/**
 * Purges up to `batchSize` entries deleted more than `olderThanMs` ago; returns how many. Fewer
 * than asked when none are left, or when some had busy locks (they wait for the next sweep).
 */
export async function purgeSchemaTrash(
  pool: pg.Pool,
  olderThanMs: number,
  batchSize: number,
): Promise<number> {
  let purged = 0;
  // Entries whose locks were busy: left for a later sweep, and the ones after them tried now.
  const busy: string[] = [];
  const client = await pool.connect();
  try {
    while (purged + busy.length < batchSize) {
      await client.query('BEGIN');
      let entryId: string | undefined;
      try {
        await client.query(`SET LOCAL lock_timeout = ${PURGE_LOCK_TIMEOUT_MS}`);
        const { rows } = await client.query(LOCK_EXPIRED_SQL, [olderThanMs, busy]);
        const entry = rows[0];
        if (!entry) {
          await client.query('COMMIT');
          break;
        }
        entryId = entry.id;
        await purgeEntry(client, entry);
        await client.query('COMMIT');
        purged += 1;
      } catch (error) {
        await client.query('ROLLBACK');
        if (!isLockNotAvailable(error) || entryId === undefined) throw error;
        busy.push(entryId);
      }
    }
  } finally {
    client.release();
  }
  return purged;
}
