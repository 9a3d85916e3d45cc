import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { quoteIdent } from '@recordbase/db/physical';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { COLUMNS } from './dataset';

/**
 * The baseline: PostgreSQL's own `COPY … FROM STDIN (FORMAT csv, HEADER)` of the same CSV file
 * into an equivalent plain table (the file's columns with the types the import gives them, no
 * key, no index, no trigger), the file streamed from disk through pg-copy-streams as `psql
 * \copy` streams it; and the aggregates that check an imported table against it.
 */

/** The baseline table's column for each of the file's columns. */
export const BASELINE_COLUMNS = COLUMNS.map((column) => column.name.toLowerCase().replace(/\W+/g, '_'));

export interface CopyRun {
  seconds: number;
  rows: number;
}

export async function connect(databaseUrl: string, name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: name });
  await client.connect();
  return client;
}

export async function createBaselineTable(client: pg.Client, table: string): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
  await client.query(
    `CREATE TABLE ${quoteIdent(table)} (${COLUMNS.map((column, index) => `${quoteIdent(BASELINE_COLUMNS[index]!)} ${column.sql}`).join(', ')})`,
  );
}

/** Timed: from the COPY statement sent to its completion (every row written). */
export async function copyCsv(client: pg.Client, table: string, csvPath: string): Promise<CopyRun> {
  const started = performance.now();
  const stream = client.query(
    copyFrom(
      `COPY ${quoteIdent(table)} (${BASELINE_COLUMNS.map(quoteIdent).join(', ')}) FROM STDIN (FORMAT csv, HEADER)`,
    ),
  );
  await pipeline(createReadStream(csvPath, { highWaterMark: 256 * 1024 }), stream);
  return { seconds: (performance.now() - started) / 1000, rows: stream.rowCount };
}

/**
 * What the check compares, per table: row count, and per column the values present and a sum of
 * them (numbers exactly: the quantities, the prices in cents; dates as days, datetimes as
 * seconds; text by length, so that a quote, comma or line break read wrongly shows).
 */
export function aggregatesSql(table: string, columns: readonly string[]): string {
  const [name, quantity, price, active, joined, seen, email, website, notes] = columns.map(quoteIdent);
  return `SELECT count(*)::text AS rows,
    count(${name})::text AS names, coalesce(sum(length(${name})), 0)::text AS name_chars,
    count(${quantity})::text AS quantities, coalesce(sum(${quantity}), 0)::bigint::text AS quantity_sum,
    count(${price})::text AS prices, coalesce(sum(round(${price} * 100)), 0)::bigint::text AS price_cents,
    count(*) FILTER (WHERE ${active})::text AS trues,
    count(${joined})::text AS joined, coalesce(sum(${joined} - date '1970-01-01'), 0)::text AS joined_days,
    count(${seen})::text AS seen, coalesce(sum(extract(epoch FROM ${seen})), 0)::bigint::text AS seen_seconds,
    count(${email})::text AS emails, coalesce(sum(length(${email})), 0)::text AS email_chars,
    count(${website})::text AS websites, coalesce(sum(length(${website})), 0)::text AS website_chars,
    count(${notes})::text AS notes, coalesce(sum(length(${notes})), 0)::text AS note_chars,
    count(*) FILTER (WHERE strpos(${notes}, chr(10)) > 0)::text AS multiline_notes,
    count(*) FILTER (WHERE strpos(${notes}, '"') > 0)::text AS quoted_notes
    FROM ${table}`;
}

export async function aggregates(
  client: pg.Client,
  table: string,
  columns: readonly string[],
): Promise<Record<string, string>> {
  const { rows } = await client.query<Record<string, string>>(aggregatesSql(table, columns));
  return rows[0]!;
}

/** The floor's parts, in seconds. */
export interface HistoryFloor {
  /** All three, as one import's transaction would pay them. */
  seconds: number;
  copySeconds: number;
  indexSeconds: number;
  revisionSeconds: number;
}

/** Revisions a record event names at most: an import appends one event per this many records. */
const RECORDS_PER_EVENT = 1000;

/**
 * What PostgreSQL alone needs to keep an import's rows as a table of ours, whatever the importer:
 * the rows COPYed straight into a table of the imported table's own columns and types, the three
 * indexes every table has (built after the rows, as the import builds them), and the history row
 * each record's creation gets (record_revisions, with its two indexes). No checking, no staging,
 * no events: the least any design that keeps history in the import's transaction writes. Timed
 * like the baseline, in a transaction rolled back afterwards, so nothing of it stays. The ids come
 * from a sequence: the import sends its ids with the rows, and gen_random_uuid() per row would add
 * PostgreSQL work the import does not do.
 */
export async function historyFloor(
  client: pg.Client,
  imported: { table: string; columns: readonly string[] },
  csvPath: string,
): Promise<HistoryFloor> {
  const floor = quoteIdent('bench_history_floor');
  await client.query('BEGIN');
  try {
    await client.query(`CREATE TEMP SEQUENCE bench_floor_ids`);
    await client.query(
      `CREATE TABLE ${floor} (LIKE ${imported.table} INCLUDING DEFAULTS INCLUDING IDENTITY)`,
    );
    await client.query(
      `ALTER TABLE ${floor} ALTER COLUMN id SET DEFAULT lpad(to_hex(nextval('bench_floor_ids')), 32, '0')::uuid`,
    );
    // A checkbox column is NOT NULL (false when empty): COPY cannot make an empty cell false.
    for (const column of imported.columns)
      await client.query(`ALTER TABLE ${floor} ALTER COLUMN ${quoteIdent(column)} DROP NOT NULL`);
    const started = performance.now();
    const stream = client.query(
      copyFrom(
        `COPY ${floor} (${imported.columns.map(quoteIdent).join(', ')}) FROM STDIN (FORMAT csv, HEADER)`,
      ),
    );
    await pipeline(createReadStream(csvPath, { highWaterMark: 256 * 1024 }), stream);
    const copied = performance.now();
    await client.query(`ALTER TABLE ${floor} ADD PRIMARY KEY (id)`);
    await client.query(`CREATE UNIQUE INDEX ON ${floor} (seq)`);
    await client.query(`CREATE INDEX ON ${floor} (created_at, seq)`);
    const indexed = performance.now();
    // Negative event numbers: no real event has them, and the transaction is rolled back anyway.
    await client.query(
      `INSERT INTO record_revisions (table_id, event_seq, position, record_id)
       SELECT 'bench_history_floor', -1 - (seq - 1) / ${RECORDS_PER_EVENT}, (seq - 1) % ${RECORDS_PER_EVENT} + 1, id
         FROM ${floor} ORDER BY seq`,
    );
    const done = performance.now();
    return {
      seconds: (done - started) / 1000,
      copySeconds: (copied - started) / 1000,
      indexSeconds: (indexed - copied) / 1000,
      revisionSeconds: (done - indexed) / 1000,
    };
  } finally {
    await client.query('ROLLBACK');
  }
}
