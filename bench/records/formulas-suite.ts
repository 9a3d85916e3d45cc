import { quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import { type BenchConfig, selected } from './config';
import {
  dropFormulaTables,
  FORMULA_BASE_FIELDS,
  type FormulaBaseFieldName,
  type FormulaFieldInfo,
  type FormulaTables,
  formulaId,
  formulaIndexes,
  generatedColumn,
  loadFormulaTables,
  recordsPathOf,
  TOTAL_EXPRESSION,
} from './formulas';
import { DEFAULT_ORDER, type RawSource, type ReadCase, rawList } from './queries';
import type { Machine, ReadResult } from './results';
import { mergeRepeats, readIndexesBuilt, runOf, runReads, type SuiteContext } from './run';

/**
 * Formula fields (issue 28) on 100,000 records, each case through the API against its twin
 * without formulas, and beside raw SQL on copies of the physical tables, in the same run:
 * - F-plain / F-formula: a filter and a sort on `Total plain` (a number field) and on `Total`
 *   (the stored formula `{Amount} * {Quantity}`, the same numbers), each measured once the API's
 *   background read index on the field is built;
 * - P0 / P5 / P5v: the first page of 100 of `Items plain` (no formula), of `Items` (the same rows
 *   and five formula fields of mixed result types) and of `Items values` (the same rows and the
 *   formulas' values in five plain fields): P5 against P0 is what five more fields cost, P5 against
 *   P5v what it costs that they are formulas;
 * - adding a formula field to `Items plain` (POST …/fields, end to end) against PostgreSQL adding
 *   the generated column a user of PostgreSQL would write for it, `amount * quantity`, to the raw
 *   copy (the API's compiled expression guards overflow and blanks, and costs what it costs).
 */

export interface FieldAddResult {
  expression: string;
  /** The generated column as PostgreSQL keeps the API's: `<type> GENERATED ALWAYS AS (…) STORED`. */
  column: string;
  /** The baseline's hand-written generated column. */
  rawColumn: string;
  /** Seconds of each round, in order. */
  api: number[];
  raw: number[];
}

export interface FormulasResults {
  config: BenchConfig;
  machine: Machine;
  serverMode: string;
  startedAt: string;
  data: { rows: number; load: FormulaTables['load']; formulas: FormulaFieldInfo[] };
  /** How long the read indexes of the filter and sort took to be built after the first listings. */
  indexWaitSeconds: number;
  indexes: { api: string[]; raw: string[] };
  reads: ReadResult[];
  fieldAdd?: FieldAddResult;
}

/** The filter keeps Totals above this: ~16% of rows (Amount uniform over 0..1000, Quantity over 1..100). */
export const TOTAL_MIN = 50_000;
/** Rounds of the add case (each: the API adds and deletes the field, PostgreSQL adds and drops the column). */
export const FIELD_ADD_ROUNDS = 3;

/** What one would write by hand for a formula computed at read time, over the page row `p`. */
const RAW_READ_TIME: Record<string, (tables: FormulaTables) => string> = {
  'Days left': (tables) => `(p.${quoteIdent(tables.items.fieldIds.Due)} - current_date)`,
};

/** A raw row's system columns and its plain fields' columns, by the table's field ids. */
const baseColumns = (fieldIds: Record<FormulaBaseFieldName, string>) => [
  'id',
  'created_at',
  'updated_at',
  ...FORMULA_BASE_FIELDS.map((f) => fieldIds[f.name]),
];

function itemsSource(tables: FormulaTables): RawSource {
  const readTime = tables.formulas.filter((f) => !f.stored);
  return {
    table: tables.raw.items,
    columns: [
      ...baseColumns(tables.items.fieldIds),
      ...tables.formulas.filter((f) => f.stored).map((f) => f.id),
    ],
    extra: readTime.map((f) => {
      const sql = RAW_READ_TIME[f.name];
      if (!sql) throw new Error(`${f.name} is computed at read time and has no raw equivalent here`);
      return `${sql(tables)} AS ${quoteIdent(f.id)}`;
    }),
  };
}

/**
 * What the filter and sort cases ask for: the plain fields and Total, the same answer for both, so
 * that they differ only in the field filtered and sorted on (P5 measures what the other formulas cost).
 */
const FILTER_SORT_FIELDS = [...FORMULA_BASE_FIELDS.map((f) => f.name), 'Total'];

export function formulaReadCases(tables: FormulaTables): ReadCase[] {
  const filterSortSource: RawSource = {
    table: tables.raw.items,
    columns: [...baseColumns(tables.items.fieldIds), formulaId(tables, 'Total')],
  };
  const filterSort = (id: string, field: string, column: string): ReadCase => {
    const shape = (withTotal: boolean) =>
      rawList(filterSortSource, {
        where: `r.${quoteIdent(column)} > $1::double precision`,
        values: [TOTAL_MIN],
        order: `r.${quoteIdent(column)} DESC NULLS LAST, r.seq ASC`,
        limit: 100,
        offset: 0,
        withTotal,
      });
    return {
      id,
      title: `${field} > ${TOTAL_MIN}, ${field} desc, limit 100, fields: the plain ones and Total`,
      body: {
        filter: { field, greater_than: TOTAL_MIN },
        sort: [{ field, direction: 'desc' }],
        limit: 100,
        fields: FILTER_SORT_FIELDS,
      },
      raw: shape(false),
      rawWithTotal: shape(true),
    };
  };
  const page = { where: 'TRUE', values: [], order: DEFAULT_ORDER, limit: 100, offset: 0, withTotal: false };
  const plainSource: RawSource = {
    table: tables.raw.plain,
    columns: baseColumns(tables.plain.fieldIds),
  };
  return [
    filterSort('F-plain', 'Total plain', tables.items.fieldIds['Total plain']),
    filterSort('F-formula', 'Total', formulaId(tables, 'Total')),
    {
      id: 'P0',
      title: 'first page of 100, default order, Items plain (no formula field)',
      body: { limit: 100 },
      recordsPath: recordsPathOf(tables, tables.plain.tableId),
      raw: rawList(plainSource, page),
    },
    {
      id: 'P5',
      title: `first page of 100, default order, Items (the same and ${tables.formulas.length} formula fields)`,
      body: { limit: 100 },
      raw: rawList(itemsSource(tables), page),
    },
    {
      id: 'P5v',
      title: `first page of 100, default order, Items values (the same, the ${tables.formulas.length} formulas' values in plain fields)`,
      body: { limit: 100 },
      recordsPath: recordsPathOf(tables, tables.values.tableId),
      raw: rawList(
        {
          table: tables.raw.values,
          columns: ['id', 'created_at', 'updated_at', ...Object.values(tables.values.fieldIds)],
        },
        page,
      ),
    },
  ];
}

/**
 * Adds `Total added` = TOTAL_EXPRESSION to Items plain through the API, timed end to end, reads
 * the generated column the API made, deletes the field; then adds that same column to the raw
 * copy in one `ALTER TABLE`, timed, and drops it. Both rewrite 100,000 rows and rebuild the same
 * indexes.
 */
async function measureFieldAdds(
  pool: pg.Pool,
  api: ApiClient,
  tables: FormulaTables,
): Promise<FieldAddResult> {
  const fieldsPath = `/bases/${tables.databaseId}/tables/${tables.plain.tableId}/fields`;
  const { Amount, Quantity } = tables.plain.fieldIds;
  const rawColumn = `double precision GENERATED ALWAYS AS ("${Amount}" * "${Quantity}") STORED`;
  const result: FieldAddResult = { expression: TOTAL_EXPRESSION, column: '', rawColumn, api: [], raw: [] };
  for (let round = 1; round <= FIELD_ADD_ROUNDS; round++) {
    let started = performance.now();
    const created = await api.expect<{ id: string; resultType: string }>(201, 'POST', fieldsPath, {
      name: `Total added ${round}`,
      type: 'formula',
      template: { expression: TOTAL_EXPRESSION },
    });
    result.api.push((performance.now() - started) / 1000);
    const column = await generatedColumn(pool, tables.plain.table, created.id);
    if (!column) throw new Error('the added formula is not a stored generated column');
    result.column = `${column.type} GENERATED ALWAYS AS (${column.expression}) STORED`;
    const deleted = await api.call('DELETE', `${fieldsPath}/${created.id}`);
    if (deleted.status >= 300) throw new Error(`DELETE of the added field: status ${deleted.status}`);
    started = performance.now();
    await pool.query(`ALTER TABLE ${tables.raw.plain} ADD COLUMN bench_added ${rawColumn}`);
    result.raw.push((performance.now() - started) / 1000);
    await pool.query(`ALTER TABLE ${tables.raw.plain} DROP COLUMN bench_added`);
    console.log(
      `  add a formula field, round ${round}: API ${result.api.at(-1)!.toFixed(2)} s, ALTER TABLE ${result.raw.at(-1)!.toFixed(2)} s`,
    );
  }
  return result;
}

/** Loads the tables once, then BENCH_REPEATS rounds of the reads, then the add case. */
export async function runFormulasSuite(context: SuiteContext): Promise<FormulasResults> {
  const { config, server, apiKey, admin, api } = context;
  console.log(`--- formulas: loading ${config.formulaRows} Items and Items plain ...`);
  const tables = await loadFormulaTables(admin, api, config.formulaRows);
  console.log(`  loaded in ${tables.load.seconds.toFixed(1)} s`);
  const cases = formulaReadCases(tables);
  const target = {
    config,
    server,
    apiKey,
    recordsPath: recordsPathOf(tables, tables.items.tableId),
    table: { name: tables.items.table, pool: admin },
  };
  const indexWaitSeconds = await readIndexesBuilt(
    target,
    cases.filter((c) => c.id.startsWith('F-')),
    [
      { id: tables.items.fieldIds['Total plain']!, name: 'Total plain' },
      { id: formulaId(tables, 'Total'), name: 'Total' },
    ],
  );
  const readRounds: ReadResult[][] = [];
  for (let round = 1; round <= config.repeats; round++) {
    if (config.repeats > 1) console.log(`--- formulas round ${round} of ${config.repeats}`);
    readRounds.push(
      await runReads(
        target,
        cases.filter((c) => selected(config, c.id)),
      ),
    );
  }
  const indexes = await formulaIndexes(admin, tables);
  const fieldAdd = selected(config, 'add') ? await measureFieldAdds(admin, api, tables) : undefined;
  await dropFormulaTables(admin, api);
  return {
    ...runOf(context),
    data: { rows: tables.rows, load: tables.load, formulas: tables.formulas },
    indexWaitSeconds,
    indexes,
    reads: mergeRepeats(readRounds, [[]]).reads,
    ...(fieldAdd ? { fieldAdd } : {}),
  };
}
