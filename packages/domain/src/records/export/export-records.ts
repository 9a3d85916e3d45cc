import type { Principal } from '@recordbase/contracts/api-keys';
import type { ExportFormat, ExportRecordsRequest } from '@recordbase/contracts/records';
import { qualifiedTable, quoteLiteral, SqlParams } from '@recordbase/db/physical';
import type pg from 'pg';
import { type CopyToStreamQuery, to as copyTo } from 'pg-copy-streams';
import { expandedLinks } from '../expand';
import { presentRecords } from '../presentation';
import { compileFilter } from '../query-compiler';
import { recordJsonSql } from '../record-json';
import type { RecordsDb, TableAddress } from '../record-work';
import { withTable } from '../record-work';
import { orderBySql, sortKeys } from '../sort-order';
import { assertCurrentMeta, type FieldMeta, projectedFields, type TableMeta } from '../table-meta';
import { listingOf } from '../view-reads';
import { type CellKind, exportCellsSql } from './cells';
import { csvHeader } from './csv';
import { xlsxFile } from './xlsx';

/**
 * An export: every record a listing of the same body pages through, in its order, as one file
 * (api-contract "Export"). The listing's query runs in a read-only transaction on one connection of
 * the request, read as the client takes the bytes, so neither the records nor the file are ever
 * whole in memory: for CSV as PostgreSQL's COPY of the cells, which writes the file itself; for
 * NDJSON and XLSX as a server-side cursor fetched in batches, PostgreSQL rendering each row (a
 * record's JSON, or an XLSX row's cells) and Node joining rows or typing the cells and zipping the
 * sheet.
 */

const CURSOR = 'rb_export';

/**
 * The time limit of a CSV export's COPY, which is one statement from the first row to the last,
 * however slowly the client reads (the route ends a client that stalls for a minute).
 */
export const COPY_TIMEOUT_MS = 30 * 60_000;

/**
 * An SQL literal of a parameter's value in the text form node-postgres sends it in (arrays as
 * array literals, objects as JSON): a quoted literal is of unknown type until its context decides,
 * as an untyped parameter is, so the statement means the same.
 */
function literalText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) {
    const items = value.map((item) => {
      const text = literalText(item);
      return text === null ? 'NULL' : `"${text.replace(/[\\"]/g, '\\$&')}"`;
    });
    return `{${items.join(',')}}`;
  }
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `sql` with each `$n` replaced by the literal of `values[n - 1]` (its digits taken greedily: `$1` is never the start of `$10`). */
export function withLiterals(sql: string, values: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const text = literalText(values[Number(n) - 1]);
    return text === null ? 'NULL' : quoteLiteral(text);
  });
}

/** Rows per FETCH at first, and its bounds: a FETCH then aims at BATCH_BYTES of rows. */
const FIRST_BATCH_ROWS = 1000;
const MIN_BATCH_ROWS = 16;
const MAX_BATCH_ROWS = 5000;
/** What one batch of rows should come to: two are held at once (one written, the next fetched). */
export const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * How long the transaction may sit idle between two FETCHes (a client that stops reading):
 * PostgreSQL then ends the session itself, should the process fail to (the route's own stall limit
 * is shorter), so no snapshot is held forever.
 */
export const IDLE_IN_TRANSACTION_MS = 120_000;

export interface RecordExport {
  table: Pick<TableMeta, 'id' | 'name'>;
  format: ExportFormat;
  /** The file, chunk after chunk; it ends the transaction once the last row is out. */
  chunks(): AsyncGenerator<string | Uint8Array, void, undefined>;
  /** Ends the transaction and gives the connection back (idempotent); any iteration then stops. */
  close(): Promise<void>;
}

/** The cursor's rows in batches, the next one fetched while the current one is written. */
class RowBatches {
  #rows = FIRST_BATCH_ROWS;
  #pending: Promise<unknown[][]> | undefined;
  #done = false;

  constructor(private readonly client: pg.PoolClient) {}

  /** Starts the next FETCH. */
  prefetch(): void {
    if (this.#pending || this.#done) return;
    const pending = this.client
      .query<unknown[]>({ text: `FETCH ${this.#rows} FROM ${CURSOR}`, rowMode: 'array' })
      .then((result) => result.rows);
    // Awaited by next(); a close meanwhile leaves nobody to (the rejection is the cancel's).
    pending.catch(() => {});
    this.#pending = pending;
  }

  /** The next batch; empty once the cursor is spent. */
  async next(measure: (row: unknown[]) => number): Promise<unknown[][]> {
    if (this.#done) return [];
    this.prefetch();
    const rows = await this.#pending!;
    this.#pending = undefined;
    if (rows.length < this.#rows) this.#done = true;
    if (rows.length > 0) {
      let bytes = 0;
      for (const row of rows) bytes += measure(row);
      const perRow = Math.max(1, bytes / rows.length);
      this.#rows = Math.max(MIN_BATCH_ROWS, Math.min(MAX_BATCH_ROWS, Math.floor(BATCH_BYTES / perRow)));
    }
    return rows;
  }

  /** What is still fetching, to wait for before the transaction ends. */
  settle(): Promise<unknown> {
    return this.#pending?.catch(() => {}) ?? Promise.resolve();
  }
}

const textLength = (row: unknown[]) => {
  let length = 0;
  for (const value of row) if (typeof value === 'string') length += value.length;
  return length;
};

interface Shape {
  select: string;
  join: string;
  kinds: CellKind[];
}

/** What each row of the cursor holds for the format. */
async function shapeOf(
  records: RecordsDb,
  table: TableMeta,
  format: ExportFormat,
  fields: readonly FieldMeta[],
  params: SqlParams,
): Promise<Shape> {
  if (format === 'ndjson') {
    const record = recordJsonSql(table, params, undefined, fields);
    return { select: record.text, join: record.join, kinds: [] };
  }
  const linkFields = fields.filter((field) => field.type === 'linked_record').map((field) => field.id);
  const links = await expandedLinks(records.db, table, linkFields.length > 0 ? linkFields : undefined, [
    'fields',
  ]);
  const cells = exportCellsSql(table, fields, links);
  return {
    select: format === 'csv' ? cells.csvColumns : cells.columns,
    join: cells.join,
    kinds: cells.kinds,
  };
}

/**
 * Opens the export: the body checked (view, filter, sort, fields; a refusal is a DomainError
 * before any byte of the file), the cursor declared and its first batch fetched, so that what the
 * query itself refuses is refused before the answer starts too.
 */
export function openExport(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  request: ExportRecordsRequest,
): Promise<RecordExport> {
  const { db, tables, fileLinks } = records;
  return withTable(tables, db, principal, address, async (table) => {
    const { format, ...selection } = request;
    const listing = listingOf(table, selection);
    const params = new SqlParams();
    const fields = projectedFields(table, listing.fields, ['fields']);
    const where = listing.filter ? compileFilter(listing.filter, table, params) : 'TRUE';
    const orderBy = orderBySql(sortKeys(listing.sort, table));
    const shape = await shapeOf(records, table, format, fields, params);

    const client = await db.connect();
    let open = true;
    let copy: CopyToStreamQuery | undefined;
    const batches = new RowBatches(client);
    const close = async () => {
      if (!open) return;
      open = false;
      await batches.settle();
      // A COPY left midway is cancelled with the request (its connection then discarded).
      copy?.destroy();
      // Read-only: nothing to commit. A connection whose statement was cancelled (the client
      // left) is discarded by its release instead (cancellablePool).
      await client.query('ROLLBACK').catch(() => {});
      client.release();
    };
    const measure = format === 'xlsx' ? textLength : (row: unknown[]) => (row[0] as string).length;
    let first: unknown[][];
    try {
      // DateStyle ISO: date cells are the date column's own text (cells.ts), whatever the
      // server's default.
      await client.query(
        `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_MS}; SET LOCAL DateStyle = 'ISO, YMD'`,
      );
      // The transaction's one snapshot serves the schema check and the cursor: the rows are read
      // with the fields the metadata has.
      if (table.schemaVersion !== undefined) {
        const current = await client.query<{ schema_version: string | null }>(
          'SELECT schema_version::text FROM public.databases WHERE id = $1::uuid',
          [table.databaseId],
        );
        assertCurrentMeta(table, current.rows[0]?.schema_version);
      }
      const query = `SELECT ${shape.select} FROM ${qualifiedTable(table.schemaName, table.id)} r ${shape.join}
            WHERE ${where} ORDER BY ${orderBy}`;
      if (format === 'csv') {
        // PostgreSQL writes the CSV itself, at COPY's speed: quoting in C rather than per cell in
        // SQL. COPY takes no parameters, so they go in as literals, as the driver would send them.
        await client.query(`SET LOCAL statement_timeout = ${COPY_TIMEOUT_MS}`);
        copy = client.query(
          copyTo(`COPY (${withLiterals(query, params.values)}) TO STDOUT WITH (FORMAT csv)`),
        );
        first = [];
      } else {
        // Each FETCH runs under the connection's statement_timeout, as any other statement does.
        await client.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${query}`, params.values);
        first = await batches.next(measure);
      }
    } catch (error) {
      await close();
      throw error;
    }
    const present = (json: string) => presentRecords(json, table, principal, fileLinks);
    async function* rows(): AsyncGenerator<unknown[][], void, undefined> {
      let batch = first;
      while (batch.length > 0 && open) {
        batches.prefetch();
        yield batch;
        batch = await batches.next(measure);
      }
    }
    async function* chunks(): AsyncGenerator<string | Uint8Array, void, undefined> {
      try {
        if (format === 'ndjson') {
          for await (const batch of rows())
            yield `${batch.map((row) => present(row[0] as string)).join('\n')}\n`;
        } else if (format === 'csv') {
          yield csvHeader(fields);
          for await (const chunk of copy!) {
            if (!open) break;
            yield chunk as Buffer;
          }
        } else {
          yield* xlsxFile(table.name, fields, shape.kinds, rows());
        }
      } finally {
        await close();
      }
    }
    return { table: { id: table.id, name: table.name }, format, chunks, close };
  });
}
