import {
  appendSelectedEventsSql,
  type ImportRun,
  importAuthor,
  succeedImport,
  type Tx,
} from '@recordbase/db';
import { type FieldShape, fieldTypeModule, importCell, insertedColumns } from '@recordbase/db/field-types';
import { copyValue, qualifiedTable, quoteIdent, quoteLiteral, systemColumns } from '@recordbase/db/physical';
import type { TransactionEvents } from '@recordbase/domain/events';
import type { Queryable } from '@recordbase/domain/records/store';
import { loadTableMeta } from '@recordbase/domain/records/table-loader';
import { recordCreatedViewMembers } from '@recordbase/domain/records/view-members';
import type { CellErrors } from './errors';
import { NotOurs, type PlannedColumn } from './run-context';
import { stagingColumns, stagingTable } from './staging';

/**
 * The final move of an import, inside its one transaction: the staged rows into the table in the
 * file's order (a new table's numbering taken from staging), one record.created event per batch of
 * them, and the import marked succeeded only while the run still holds it.
 */

const EVENT_BATCH = 1000;

interface Target {
  databaseId: string;
  id: string;
  schemaName: string;
}

/**
 * The staged columns as the target's values: each column's COPY text read as its type, an empty
 * cell staged before the column's type was known given the type's empty value (false for a
 * checkbox).
 */
function stagedValues(columns: readonly PlannedColumn[]): string[] {
  return columns.map((column, index) => {
    const sqlType = fieldTypeModule(column.type).column?.sqlType ?? 'text';
    const value = `${stagingColumns(columns.length)[index]}::${sqlType}`;
    const empty = importCell(column.type, column.template, '');
    return empty.ok && empty.value !== null
      ? `COALESCE(${value}, ${quoteLiteral(copyValue(empty.value))}::${sqlType})`
      : value;
  });
}

/**
 * The staged rows into an existing table, in the file's order, and their events; the computed
 * columns a write keeps (created_by…) are filled as the API's writes fill them, by the key that
 * started the import.
 */
export async function moveRows(
  tx: Tx,
  events: TransactionEvents,
  run: ImportRun,
  target: Target & { fields: readonly FieldShape[] },
  columns: readonly PlannedColumn[],
): Promise<void> {
  let authored = false;
  const kept = insertedColumns(target.fields, {
    author: () => {
      authored = true;
      return '$1::jsonb';
    },
  });
  const into = [
    'id',
    ...columns.map((column) => quoteIdent(column.fieldId as string)),
    ...kept.map((column) => column.column),
  ].join(', ');
  const from = ['id', ...stagedValues(columns), ...kept.map((column) => column.value)].join(', ');
  const author = authored ? [JSON.stringify(await importAuthor(tx, run.id))] : [];
  await tx.$executeRawUnsafe(
    `INSERT INTO ${qualifiedTable(target.schemaName, target.id)} (${into}) SELECT ${from} FROM ${stagingTable(run.attempt)} ORDER BY ord`,
    ...author,
  );
  await appendRecordEvents(tx, events, run, target);
}

/**
 * The staged rows into a table made by this import, its insertion order (`seq`) the file's: the
 * staging table's own numbering, so no sort is needed; the table's sequence then follows on.
 */
export async function insertIntoNewTable(
  tx: Tx,
  run: ImportRun,
  target: Target,
  columns: readonly PlannedColumn[],
) {
  const table = qualifiedTable(target.schemaName, target.id);
  const into = [
    systemColumns.id,
    systemColumns.seq,
    ...columns.map((column) => quoteIdent(column.fieldId as string)),
  ].join(', ');
  const from = ['id', 'ord', ...stagedValues(columns)].join(', ');
  await tx.$executeRawUnsafe(
    `INSERT INTO ${table} (${into}) OVERRIDING SYSTEM VALUE SELECT ${from} FROM ${stagingTable(run.attempt)}`,
  );
  await tx.$queryRawUnsafe(
    `SELECT setval(pg_get_serial_sequence($1, '${systemColumns.seq}'), max(${systemColumns.seq})) FROM ${table}`,
    table,
  );
}

/** One record.created per batch of ids, appended in SQL: the ids never come through the worker. */
export async function appendRecordEvents(
  tx: Tx,
  events: TransactionEvents,
  run: ImportRun,
  target: Target,
): Promise<void> {
  // By the key that started the import, as history shows who wrote.
  const actor = JSON.stringify(await importAuthor(tx, run.id));
  const appended = await tx.$queryRawUnsafe<{ id: string; heard: boolean }[]>(
    appendSelectedEventsSql(
      `SELECT gen_random_uuid(), $1::uuid, $2, 'record.created', 'import',
            json_build_object('tableId', $2::text, 'recordIds', json_agg(id ORDER BY ord)), $3::json
       FROM ${stagingTable(run.attempt)} GROUP BY (ord - 1) / ${EVENT_BATCH} ORDER BY min(ord)`,
      'id::text',
      { actor: true },
    ),
    target.databaseId,
    target.id,
    actor,
  );
  events.appended(
    appended.filter((event) => event.heard).map((event) => event.id),
    appended.length,
  );
  // The views webhooks watch learn which imported records are inside them (view-members.ts).
  if (appended.length === 0) return;
  const table = await loadTableMeta(rowsOf(tx), target.databaseId, target.id);
  await recordCreatedViewMembers(
    rowsOf(tx),
    table,
    appended.map((event) => event.id),
  );
}

/** The transaction's raw queries in the shape of pg's `query`, as the record modules read rows. */
function rowsOf(tx: Tx): Queryable {
  const query = async (text: string, values: unknown[] = []) => ({
    rows: await tx.$queryRawUnsafe<unknown[]>(text, ...values),
  });
  // Only `rows` is read of what pg's query answers.
  return { query } as unknown as Queryable;
}

interface Outcome {
  tableId: string;
  rowsImported: number;
  rowsTotal: number;
  errors: CellErrors;
  skipped: string[];
}

/** Marks the import succeeded in the transaction that writes its rows, if it is still this run's. */
export async function finish(tx: Tx, run: ImportRun, outcome: Outcome): Promise<void> {
  const ours = await succeedImport(tx, run, {
    tableId: outcome.tableId,
    rowsImported: outcome.rowsImported,
    rowsTotal: outcome.rowsTotal,
    errors: outcome.errors.list(),
    skippedColumns: outcome.skipped,
  });
  if (!ours) throw new NotOurs();
}
