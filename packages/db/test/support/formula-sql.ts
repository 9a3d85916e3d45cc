import type pg from 'pg';
import {
  compileFormula,
  FORMULA_COLUMN_TYPE,
  formulaReadSql,
  formulaResultSql,
} from '../../src/formula/compile';
import { inferFormula } from '../../src/formula/infer';
import { parseFormula } from '../../src/formula/parse';
import type { FormulaType } from '../../src/formula/types';

/**
 * Formulas computed by PostgreSQL over rows of a scratch table, with results in the API's shape:
 * the SQL side of the formula tests. Each field is a column of the SQL type its formula type is
 * stored in (a text field `text`, a number `float8`, …); values go in as the API writes them.
 */

export interface SqlRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  values: Readonly<Record<string, unknown>>;
}

const COLUMN_TYPE: Readonly<Record<FormulaType, string>> = {
  text: 'text',
  number: 'float8',
  checkbox: 'boolean NOT NULL DEFAULT false',
  date: 'date',
  datetime: 'timestamptz',
  array: 'text[]',
};

/** A result column as the API writes it, by the formula's type. */
function apiShapeSql(type: FormulaType, column: string): string {
  switch (type) {
    case 'date':
      return `to_char(${column}, 'YYYY-MM-DD')`;
    case 'datetime':
      return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    case 'number':
      // The shortest text that reads back to the same double, as the API sends numbers.
      return `${column}::text`;
    default:
      return `to_json(${column})::text`;
  }
}

function fromApiShape(type: FormulaType, text: string | null): unknown {
  if (text === null) return null;
  if (type === 'date' || type === 'datetime') return text;
  if (type === 'number') return Number(text);
  return JSON.parse(text);
}

/**
 * Each of `expressions` (fields by id) computed for each record, in a transaction rolled back
 * afterwards: results[expression][record]. `now` fixes NOW() and TODAY().
 */
export async function evaluateInPostgres(
  client: pg.ClientBase,
  fields: ReadonlyMap<string, FormulaType>,
  records: readonly SqlRecord[],
  expressions: readonly string[],
  now: Date,
): Promise<unknown[][]> {
  const fieldList = [...fields.entries()];
  const formulaFields = fieldList.map(([id, type]) => ({ id, name: id, type }));
  // Over `r.` for a query, and over bare columns for a stored generated column.
  const compile = (expression: string, row: string) => {
    const tree = parseFormula(expression);
    inferFormula(tree, formulaFields);
    return compileFormula(tree, {
      field: (id) => ({ type: fields.get(id)!, sql: formulaReadSql(fields.get(id)!, `${row}"${id}"`) }),
      recordId: `${row}id::text`,
      createdAt: `date_trunc('milliseconds', ${row}created_at AT TIME ZONE 'UTC')`,
      updatedAt: `date_trunc('milliseconds', ${row}updated_at AT TIME ZONE 'UTC')`,
      now: `'${now.toISOString()}'::timestamptz`,
    });
  };
  const compiled = expressions.map((expression) => compile(expression, 'r.'));
  await client.query('BEGIN');
  try {
    await client.query(
      `CREATE TEMP TABLE formula_rows (ordinal integer, id uuid, created_at timestamptz, updated_at timestamptz${fieldList
        .map(([id, type]) => `, "${id}" ${COLUMN_TYPE[type]}`)
        .join('')}) ON COMMIT DROP`,
    );
    for (const [ordinal, record] of records.entries()) {
      const values = fieldList.map(([id]) => record.values[id] ?? null);
      await client.query(
        `INSERT INTO formula_rows VALUES ($1, $2, $3, $4${fieldList
          .map(([, type], i) => `, ${type === 'checkbox' ? `coalesce($${i + 5}, false)` : `$${i + 5}`}`)
          .join('')})`,
        [ordinal, record.id, record.createdAt, record.updatedAt, ...values],
      );
    }
    // What the stored field would hold: PostgreSQL must take the expression as a generated column.
    for (const [i, expression] of expressions.entries()) {
      const stored = compile(expression, '');
      if (stored.volatile) continue;
      await client.query(
        `ALTER TABLE formula_rows ADD COLUMN g${i} ${FORMULA_COLUMN_TYPE[stored.type]} GENERATED ALWAYS AS (${formulaResultSql(stored)}) STORED`,
      );
    }
    const columns = compiled.flatMap((formula, i) => [
      `${apiShapeSql(formula.type, `(${formulaResultSql(formula)})`)} AS f${i}`,
      formula.volatile ? `NULL AS g${i}` : `${apiShapeSql(formula.type, `r.g${i}`)} AS g${i}`,
    ]);
    const { rows } = await client.query<Record<string, string | null>>(
      `SELECT ${columns.join(', ')} FROM formula_rows r ORDER BY ordinal`,
    );
    return compiled.map((formula, i) =>
      rows.map((row) => {
        if (!formula.volatile && row[`g${i}`] !== row[`f${i}`]) {
          throw new Error(`${expressions[i]}: stored ${row[`g${i}`]} but read ${row[`f${i}`]}`);
        }
        return fromApiShape(formula.type, row[`f${i}`] ?? null);
      }),
    );
  } finally {
    await client.query('ROLLBACK');
  }
}
