import type pg from 'pg';

/**
 * What the suites that load a table in SQL share: the API's answers they read field ids from, the
 * SQL that draws values (a random element, a version 7 UUID), a seeded INSERT, and the timing of
 * load steps.
 */

export interface FieldDto {
  id: string;
  name: string;
  type: string;
}
export interface TableDto {
  id: string;
  name: string;
  fields: FieldDto[];
}
export interface DatabaseDto {
  id: string;
  tables: TableDto[];
}

export const sqlArray = (values: readonly string[]) =>
  `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]`;
/** A uniformly random element of a SQL array literal. */
export const pick = (values: readonly string[]) =>
  `(${sqlArray(values)})[1 + floor(random() * ${values.length})::int]`;

/** The ids of a table's fields by name; every field asked for must be there with its type. */
export function fieldIdsOf<Name extends string>(
  table: TableDto,
  fields: readonly { name: Name; type: string }[],
): Record<Name, string> {
  return Object.fromEntries(
    fields.map((field) => {
      const found = table.fields.find((f) => f.name === field.name && f.type === field.type);
      if (!found) throw new Error(`${table.name} lacks the ${field.type} field ${field.name}`);
      return [field.name, found.id];
    }),
  ) as Record<Name, string>;
}

/** Runs a generating INSERT (`$1`: rows) after setseed on the same connection: the same data every load. */
export async function seededInsert(pool: pg.Pool, seed: number, sql: string, rows: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT setseed($1)', [seed]);
    await client.query(sql, [rows]);
  } finally {
    client.release();
  }
}

/** A version 7 UUID of the creation time `ts`, as newRecordId makes them; `hex` is random hex text. */
export const uuidV7 = (ts: string, hex: string) =>
  `(lpad(to_hex(floor(extract(epoch FROM ${ts}) * 1000)::bigint), 12, '0') || '7' || substr(${hex}, 1, 3) || (ARRAY['8', '9', 'a', 'b'])[1 + floor(random() * 4)::int] || substr(${hex}, 4, 15))::uuid`;

export async function timed<T>(steps: [string, number][], step: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  steps.push([step, seconds]);
  console.log(`  ${step}: ${seconds.toFixed(1)} s`);
  return result;
}

export const select = (options: readonly string[]) => ({ options: options.map((name) => ({ name })) });
