import { createHash } from 'node:crypto';
import { qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import type { FieldMeta, TableMeta } from './table-meta';

/**
 * Upserts look records up by their matchOn fields, which no index covers at first: a table of a
 * million records would be scanned on every request. The first upsert on a set of fields builds a
 * btree index on them in the background (CONCURRENTLY, so writers are not blocked); dropping a
 * field drops its indexes with it.
 */

const known = new Set<string>();
const building = new Set<string>();

/** Multiple selects match as sets (@> and <@), which a btree cannot serve. */
const indexable = (field: FieldMeta) => field.type !== 'multiple_select';

export function matchIndexName(table: TableMeta, fields: readonly FieldMeta[]): string {
  const digest = createHash('sha256')
    .update(fields.map((field) => field.id).join(','))
    .digest('hex')
    .slice(0, 12);
  return `${table.id}_match_${digest}`;
}

export function ensureMatchIndex(
  pool: pg.Pool,
  table: TableMeta,
  fields: readonly FieldMeta[],
  onError: (error: unknown) => void,
): void {
  if (!fields.every(indexable)) return;
  const name = matchIndexName(table, fields);
  const key = `${table.schemaName}.${name}`;
  if (known.has(key) || building.has(key)) return;
  building.add(key);
  const columns = fields.map((field) => quoteIdent(field.id)).join(', ');
  (async () => {
    const exists = await pool.query<{ valid: boolean | null }>(
      `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`,
      [`${quoteIdent(table.schemaName)}.${quoteIdent(name)}`],
    );
    const valid = exists.rows[0]?.valid;
    // An invalid index is what an interrupted CONCURRENTLY build leaves behind: rebuild it.
    if (valid === false)
      await pool.query(
        `DROP INDEX CONCURRENTLY IF EXISTS ${quoteIdent(table.schemaName)}.${quoteIdent(name)}`,
      );
    if (valid !== true) {
      await pool.query(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quoteIdent(name)} ON ${qualifiedTable(table.schemaName, table.id)} (${columns})`,
      );
    }
    known.add(key);
  })()
    .catch(onError)
    .finally(() => building.delete(key));
}
