import { qualifiedTable, quoteIdent, schemaNameForDatabase } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import { INDUSTRY_OPTIONS, select } from './dataset';
import {
  type DatabaseDto,
  type FieldDto,
  fieldIdsOf,
  pick,
  readState,
  seededInsert,
  timed,
  uuidV7,
  writeState,
} from './load';
import { FIRST_NAMES, indexesOf, LAST_NAMES } from './people';

/**
 * The formulas suite's data: one database with two tables of the same 100,000 rows, `Items`
 * (plain fields, among them `Total plain` = Amount x Quantity stored as a number, and five formula
 * fields of mixed result types, `Total` = `{Amount} * {Quantity}` among them) and `Items plain`
 * (the same plain fields, no formula). Tables and formula fields through the API (the formulas
 * while the table is empty), rows generated in SQL into the physical tables as people.ts does;
 * the raw baseline is a copy of each physical table (`CREATE TABLE … (LIKE … INCLUDING ALL)`: the
 * same columns, generated ones included, and indexes) in the schema bench_formulas.
 */

export const FORMULA_BASE_FIELDS = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Category', type: 'single_select', template: select(INDUSTRY_OPTIONS) },
  { name: 'Amount', type: 'number' },
  { name: 'Quantity', type: 'number' },
  { name: 'Due', type: 'date' },
  { name: 'Total plain', type: 'number' },
] as const;
export type FormulaBaseFieldName = (typeof FORMULA_BASE_FIELDS)[number]['name'];

/** Amount is uniform over 0..1000 (two decimals), Quantity over 1..100: Total over 0..100,000. */
export const AMOUNT_MAX = 1000;
export const QUANTITY_MAX = 100;

/** The numeric formula the filter and sort compare with `Total plain`, and the one the add case adds. */
export const TOTAL_EXPRESSION = '{Amount} * {Quantity}';

/** The five formula fields of Items: the page case reads them all. */
export const FORMULA_FIELDS = [
  { name: 'Total', expression: TOTAL_EXPRESSION },
  { name: 'Label', expression: 'UPPER(LEFT({Name}, 3)) & "-" & {Category}' },
  { name: 'Large', expression: 'AND({Amount} > 500, {Quantity} > 50)' },
  { name: 'Follow up', expression: "DATEADD({Due}, 30, 'days')" },
  { name: 'Days left', expression: "DATETIME_DIFF({Due}, TODAY(), 'days')" },
] as const;
export type FormulaFieldName = (typeof FORMULA_FIELDS)[number]['name'];

/**
 * The same five values as plain fields, in `Items values`: what a page of the formulas' results
 * costs as stored values, so that the page case can tell what formulas cost from what five more
 * fields cost.
 */
export const VALUE_FIELDS = [
  { name: 'Total', type: 'number' },
  { name: 'Label', type: 'single_line_text' },
  { name: 'Large', type: 'checkbox' },
  { name: 'Follow up', type: 'datetime' },
  { name: 'Days left', type: 'number' },
] as const satisfies readonly { name: FormulaFieldName; type: string }[];

/** A formula field as created: its result type and whether PostgreSQL stores it (a generated column). */
export interface FormulaFieldInfo {
  name: FormulaFieldName;
  id: string;
  expression: string;
  resultType: string;
  stored: boolean;
  /** The generated column's expression, as PostgreSQL keeps it, when stored. */
  column?: string;
}

export const RAW_SCHEMA = 'bench_formulas';

export interface FormulaTables {
  databaseId: string;
  items: { tableId: string; table: string; fieldIds: Record<FormulaBaseFieldName, string> };
  plain: { tableId: string; table: string; fieldIds: Record<FormulaBaseFieldName, string> };
  /** Items' rows with the formulas' values (Days left as of the load) in plain fields. */
  values: {
    tableId: string;
    table: string;
    fieldIds: Record<FormulaBaseFieldName | FormulaFieldName, string>;
  };
  formulas: FormulaFieldInfo[];
  /** The raw copies of the physical tables. */
  raw: { items: string; plain: string; values: string };
  rows: number;
  load: { seconds: number; steps: [step: string, seconds: number][] };
}

const BASE_NAME = 'records-bench-formulas';
const STATE_NAME = 'formulas';

export const recordsPathOf = (tables: FormulaTables, tableId: string) =>
  `/bases/${tables.databaseId}/tables/${tableId}/records`;

/** The generated rows into Items' physical table (`$1`: rows), in FORMULA_BASE_FIELDS order. */
function insertItemsSql(table: string, fieldIds: Record<FormulaBaseFieldName, string>): string {
  const values: Record<FormulaBaseFieldName, string> = {
    Name: `${pick(FIRST_NAMES)} || ' ' || ${pick(LAST_NAMES)}`,
    Category: pick(INDUSTRY_OPTIONS),
    Amount: 's.amount',
    Quantity: 's.quantity',
    Due: `date '2024-01-01' + floor(random() * 730)::int`,
    // What the formula computes, as a plain number.
    'Total plain': 's.amount * s.quantity',
  };
  const columns = ['id', 'created_at', 'updated_at', ...FORMULA_BASE_FIELDS.map((f) => fieldIds[f.name])];
  const expressions = [
    uuidV7('s.ts', 's.h'),
    's.ts',
    's.ts',
    ...FORMULA_BASE_FIELDS.map((f) => values[f.name]),
  ];
  return `INSERT INTO ${table} (${columns.map(quoteIdent).join(', ')})
    SELECT ${expressions.join(',\n      ')}
    FROM (
      SELECT g, timestamptz '2024-01-01 00:00:00+00' + g * interval '15 seconds' AS ts, md5(g::text || random()::text) AS h,
             round((random() * ${AMOUNT_MAX})::numeric, 2)::double precision AS amount,
             (1 + floor(random() * ${QUANTITY_MAX}))::double precision AS quantity
        FROM generate_series(1, $1::int) AS g
      OFFSET 0
    ) AS s`;
}

/** The columns of a table that can be written (not generated), in order. */
async function writableColumns(pool: pg.Pool, table: string): Promise<string[]> {
  const result = await pool.query<{ attname: string }>(
    `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0
        AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
    [table],
  );
  return result.rows.map((row) => quoteIdent(row.attname));
}

/** A copy of a physical table (columns, generated ones, identity, defaults, indexes) with its rows. */
async function copyTable(pool: pg.Pool, from: string, to: string): Promise<void> {
  await pool.query(`CREATE TABLE ${to} (LIKE ${from} INCLUDING ALL)`);
  const columns = (await writableColumns(pool, from)).join(', ');
  await pool.query(
    `INSERT INTO ${to} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM ${from} ORDER BY seq`,
  );
}

/** Drops the database of an earlier run, if any, and the raw tables. */
export async function dropFormulaTables(pool: pg.Pool, api: ApiClient): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${RAW_SCHEMA} CASCADE`);
  const old = await readState<{ databaseId: string }>(pool, STATE_NAME);
  if (!old) return;
  await api.call('DELETE', `/bases/${old.databaseId}`);
  await pool.query(`DELETE FROM bench.state WHERE name = $1`, [STATE_NAME]);
}

interface FormulaFieldDto extends FieldDto {
  resultType: string;
}

/** The expression and type of a generated column, as PostgreSQL keeps them; null when not generated. */
export async function generatedColumn(
  pool: pg.Pool,
  table: string,
  column: string,
): Promise<{ expression: string; type: string } | null> {
  const result = await pool.query<{ expression: string; type: string }>(
    `SELECT pg_get_expr(d.adbin, d.adrelid) AS expression, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND a.attgenerated = 's'`,
    [table, column],
  );
  return result.rows[0] ?? null;
}

/** The two tables with `rows` generated rows each, their formula fields and their raw copies. */
export async function loadFormulaTables(pool: pg.Pool, api: ApiClient, rows: number): Promise<FormulaTables> {
  const steps: [string, number][] = [];
  const started = performance.now();
  await dropFormulaTables(pool, api);
  const database = await timed(steps, 'create database, Items and Items plain (API)', () =>
    api.expect<DatabaseDto>(201, 'POST', '/bases', {
      name: BASE_NAME,
      tables: [
        { name: 'Items', fields: FORMULA_BASE_FIELDS },
        { name: 'Items plain', fields: FORMULA_BASE_FIELDS },
        { name: 'Items values', fields: [...FORMULA_BASE_FIELDS, ...VALUE_FIELDS] },
      ],
    }),
  );
  await writeState(pool, STATE_NAME, { databaseId: database.id });
  const schema = schemaNameForDatabase(database.id);
  const tableOf = (name: string) => {
    const table = database.tables.find((t) => t.name === name);
    if (!table) throw new Error(`the new database lacks ${name}`);
    return {
      tableId: table.id,
      table: qualifiedTable(schema, table.id),
      fieldIds: fieldIdsOf<FormulaBaseFieldName>(table, FORMULA_BASE_FIELDS),
    };
  };
  const items = tableOf('Items');
  const plain = tableOf('Items plain');
  const valuesTable = database.tables.find((t) => t.name === 'Items values')!;
  const values = {
    tableId: valuesTable.id,
    table: qualifiedTable(schema, valuesTable.id),
    fieldIds: fieldIdsOf<FormulaBaseFieldName | FormulaFieldName>(valuesTable, [
      ...FORMULA_BASE_FIELDS,
      ...VALUE_FIELDS,
    ]),
  };
  const formulas = await timed(
    steps,
    `add ${FORMULA_FIELDS.length} formula fields to the empty Items (API)`,
    () => addFormulaFields(pool, api, database.id, items),
  );
  const tables: FormulaTables = {
    databaseId: database.id,
    items,
    plain,
    values,
    formulas,
    raw: {
      items: `${RAW_SCHEMA}.items`,
      plain: `${RAW_SCHEMA}.items_plain`,
      values: `${RAW_SCHEMA}.items_values`,
    },
    rows,
    load: { seconds: 0, steps },
  };
  await timed(steps, `insert ${rows} Items (SQL; PostgreSQL computes the stored formulas)`, () =>
    seededInsert(pool, 0.28, insertItemsSql(items.table, items.fieldIds), rows),
  );
  await timed(steps, `copy them into Items plain (SQL)`, async () => {
    const from = FORMULA_BASE_FIELDS.map((f) => quoteIdent(items.fieldIds[f.name])).join(', ');
    const to = FORMULA_BASE_FIELDS.map((f) => quoteIdent(plain.fieldIds[f.name])).join(', ');
    await pool.query(
      `INSERT INTO ${plain.table} (id, created_at, updated_at, ${to})
       SELECT id, created_at, updated_at, ${from} FROM ${items.table} ORDER BY seq`,
    );
  });
  await timed(steps, `copy them and the formulas' values into Items values (SQL)`, async () => {
    const base = FORMULA_BASE_FIELDS.map((f) => f.name);
    const from = [
      ...base.map((name) => quoteIdent(items.fieldIds[name])),
      ...VALUE_FIELDS.map((f) =>
        f.name === 'Days left'
          ? `(${quoteIdent(items.fieldIds.Due)} - (now() AT TIME ZONE 'UTC')::date)::double precision`
          : quoteIdent(formulaId(tables, f.name)),
      ),
    ];
    const to = [...base, ...VALUE_FIELDS.map((f) => f.name)].map((name) => quoteIdent(values.fieldIds[name]));
    await pool.query(
      `INSERT INTO ${values.table} (id, created_at, updated_at, ${to.join(', ')})
       SELECT id, created_at, updated_at, ${from.join(', ')} FROM ${items.table} ORDER BY seq`,
    );
  });
  await timed(steps, 'copy the three into the raw tables and index them (SQL)', async () => {
    await pool.query(`CREATE SCHEMA ${RAW_SCHEMA}`);
    await copyTable(pool, items.table, tables.raw.items);
    await copyTable(pool, plain.table, tables.raw.plain);
    await copyTable(pool, values.table, tables.raw.values);
    // The read indexes the API builds for the filter and sort on each (read-indexes.ts): ordered
    // as the sort, empty values last, then the insertion order.
    for (const column of [items.fieldIds['Total plain'], formulaId(tables, 'Total')])
      await pool.query(`CREATE INDEX ON ${tables.raw.items} (${quoteIdent(column)} DESC NULLS LAST, seq)`);
  });
  await timed(steps, 'VACUUM ANALYZE', async () => {
    for (const table of [items.table, plain.table, values.table, ...Object.values(tables.raw)])
      await pool.query(`VACUUM (ANALYZE) ${table}`);
  });
  // The filter and sort compare Total with Total plain: they must hold the same numbers.
  const differing = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${items.table}
      WHERE ${quoteIdent(items.fieldIds['Total plain'])} IS DISTINCT FROM ${quoteIdent(formulaId(tables, 'Total'))}`,
  );
  if (differing.rows[0]?.n !== 0)
    throw new Error(`Total and Total plain differ in ${differing.rows[0]?.n} rows`);
  tables.load.seconds = (performance.now() - started) / 1000;
  return tables;
}

export const formulaId = (tables: FormulaTables, name: FormulaFieldName) =>
  tables.formulas.find((f) => f.name === name)!.id;

async function addFormulaFields(
  pool: pg.Pool,
  api: ApiClient,
  databaseId: string,
  items: FormulaTables['items'],
): Promise<FormulaFieldInfo[]> {
  const added: FormulaFieldInfo[] = [];
  for (const field of FORMULA_FIELDS) {
    const created = await api.expect<FormulaFieldDto>(
      201,
      'POST',
      `/bases/${databaseId}/tables/${items.tableId}/fields`,
      { name: field.name, type: 'formula', template: { expression: field.expression } },
    );
    const column = await generatedColumn(pool, items.table, created.id);
    const stored = column !== null;
    added.push({
      ...field,
      id: created.id,
      resultType: created.resultType,
      stored,
      ...(column ? { column: column.expression } : {}),
    });
    console.log(
      `  ${field.name} = ${field.expression}: ${created.resultType}, ${stored ? 'stored' : 'read time'}`,
    );
  }
  return added;
}

/** The indexes of the API's Items and of its raw copy. */
export async function formulaIndexes(pool: pg.Pool, tables: FormulaTables) {
  return { api: await indexesOf(pool, tables.items.table), raw: await indexesOf(pool, tables.raw.items) };
}
