import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * An import's rows on their way: an unlogged table in the import_staging schema, filled by COPY
 * as the file streams, emptied into the target in the import's one transaction, dropped
 * afterwards. A run that died leaves its table to the next run's sweep. Its columns are text, the
 * values' COPY text, read as the target's types by the move (the same input functions COPY into
 * the typed columns would use): a new table's types are known only at the end of the file.
 */

export const STAGING_SCHEMA = 'import_staging';
/** COPY of a 50 MB file takes seconds; the pool's 15 s would stop a big file on a slow disk. */
const COPY_TIMEOUT_MS = 15 * 60 * 1000;

export function stagingTable(attempt: string): string {
  return `${quoteIdent(STAGING_SCHEMA)}.${quoteIdent(`run_${attempt.replace(/-/g, '')}`)}`;
}

/** `ord` keeps the file's order; `c0`, `c1`… hold the target's columns in the order given. */
export async function createStaging(pool: pg.Pool, attempt: string, columnCount: number): Promise<void> {
  const columns = stagingColumns(columnCount).map((column) => `${column} text`);
  await pool.query(
    `CREATE UNLOGGED TABLE ${stagingTable(attempt)} (ord bigint GENERATED ALWAYS AS IDENTITY, id uuid NOT NULL${columns.map((column) => `, ${column}`).join('')})`,
  );
}

export const stagingColumns = (count: number) => Array.from({ length: count }, (_, index) => `c${index}`);

/** Streams `lines` (COPY text format, id first) into the staging table. */
export async function copyIntoStaging(
  pool: pg.Pool,
  attempt: string,
  columnCount: number,
  lines: AsyncIterable<string>,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query(`SET statement_timeout = ${COPY_TIMEOUT_MS}`);
    const columns = ['id', ...stagingColumns(columnCount)].join(', ');
    const target = client.query(copyFrom(`COPY ${stagingTable(attempt)} (${columns}) FROM STDIN`));
    await pipeline(Readable.from(lines), target);
  } finally {
    // The session's timeout was raised for the COPY: the connection does not go back as it is.
    client.release(true);
  }
}

export async function dropStaging(pool: pg.Pool, attempt: string): Promise<void> {
  await pool.query(`DROP TABLE IF EXISTS ${stagingTable(attempt)}`);
}

/** Staging tables no running import holds: left by runs that died. */
export async function sweepStaging(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c
      WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'
        AND NOT EXISTS (SELECT 1 FROM imports i WHERE i.status = 'running' AND 'run_' || replace(i.attempt::text, '-', '') = c.relname)`,
    [STAGING_SCHEMA],
  );
  for (const { name } of rows)
    await pool.query(`DROP TABLE IF EXISTS ${quoteIdent(STAGING_SCHEMA)}.${quoteIdent(name)}`);
  return rows.length;
}
