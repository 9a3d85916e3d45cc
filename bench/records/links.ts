import { linkTableName, qualifiedTable, quoteIdent, schemaNameForDatabase } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
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
 * The links suite's data: one database with `Others` (a tenth as many records as Items: Name,
 * Hours, Done, Due) and two tables of the same 100,000 rows, `Items` and `Items plain` (Name,
 * Amount, a link field `Others` → Others holding the same 1 to 5 links per record, and `Hours
 * plain`, the sum of the linked Others' Hours written as a plain number). Tables through the API,
 * rows and links generated in SQL into the physical tables as people.ts and formulas.ts do; then
 * three lookups and two rollups are added to the loaded Items through the API (POST …/fields),
 * so that the service fills them with its own UPDATE. 100 Items link each of the HOT_OTHERS hot
 * Others (the first ones), and nobody links the cold ones (the next HOT_OTHERS). The raw baseline
 * is a copy of each physical table and link table (`CREATE TABLE … (LIKE … INCLUDING ALL)`) in the
 * schema bench_links.
 */

export const OTHERS_FIELDS = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Hours', type: 'number' },
  { name: 'Done', type: 'checkbox' },
  { name: 'Due', type: 'date' },
] as const;
export type OthersFieldName = (typeof OTHERS_FIELDS)[number]['name'];

export const ITEMS_FIELDS = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Amount', type: 'number' },
  { name: 'Others', type: 'linked_record', template: { tableId: 'Others' } },
  { name: 'Hours plain', type: 'number' },
] as const;
export type ItemsFieldName = (typeof ITEMS_FIELDS)[number]['name'];

/** The rollup the filter and sort compare with `Hours plain`, and the one the add case adds. */
export const HOURS_SUM = { linkFieldId: 'Others', fieldId: 'Hours', function: 'sum' } as const;

/** The five computed fields of Items, added to the loaded table: the page case reads them all. */
export const LINKED_FIELDS = [
  { name: 'Other names', type: 'lookup', template: { linkFieldId: 'Others', fieldId: 'Name' } },
  { name: 'Other hours', type: 'lookup', template: { linkFieldId: 'Others', fieldId: 'Hours' } },
  { name: 'Other dues', type: 'lookup', template: { linkFieldId: 'Others', fieldId: 'Due' } },
  { name: 'Hours total', type: 'rollup', template: HOURS_SUM },
  {
    name: 'Last due',
    type: 'rollup',
    template: { linkFieldId: 'Others', fieldId: 'Due', function: 'max' },
  },
] as const;
export type LinkedFieldName = (typeof LINKED_FIELDS)[number]['name'];

/** A computed field as created: its result type and how long the service took to fill it. */
export interface LinkedFieldInfo {
  name: LinkedFieldName;
  id: string;
  type: string;
  template: Record<string, string>;
  resultType: string;
  /** POST …/fields on the loaded Items, end to end. */
  seconds: number;
}

/** Items linking each hot Other; Items link 1 to 5 Others each (uniform), 3 on average. */
export const HOT_LINKS = 100;

/**
 * Hot Others, and as many cold ones: the concurrent updates of L3 give each worker its own Other
 * (worker w the w-th modulo this), so that they measure the refresh and not a queue on one row.
 */
export const HOT_OTHERS = 4;
export const MAX_LINKS = 5;
/** Hours are quarters over 0..40: binary fractions, so that sums are exact in any order. */
export const HOURS_QUARTERS = 160;
/** The filter keeps Items whose Hours total is above this: ~14% (a sum of 1-5 Hours uniform over 0..40). */
export const HOURS_MIN = 100;

export const RAW_SCHEMA = 'bench_links';

interface LinkTable {
  tableId: string;
  table: string;
  fieldIds: Record<ItemsFieldName, string>;
  /** The junction table of its link field Others. */
  links: string;
}

export interface LinkTables {
  databaseId: string;
  schemaName: string;
  others: {
    tableId: string;
    table: string;
    fieldIds: Record<OthersFieldName, string>;
    rows: number;
    /** Each linked by HOT_LINKS Items (HOT_OTHERS of them). */
    hot: { id: string; hours: number }[];
    /** Each linked by none (HOT_OTHERS of them). */
    cold: { id: string; hours: number }[];
  };
  items: LinkTable;
  plain: LinkTable;
  linked: LinkedFieldInfo[];
  /** The raw copies of the physical tables and of the two link tables. */
  raw: { others: string; items: string; plain: string; itemsLinks: string; plainLinks: string };
  rows: number;
  /** Link rows of Items (the same in Items plain). */
  links: number;
  /** Items whose Hours total is above the filter's bound (L2). */
  matching: number;
  load: { seconds: number; steps: [step: string, seconds: number][] };
}

const BASE_NAME = 'records-bench-links';
const STATE_NAME = 'links';

export const recordsPathOf = (tables: LinkTables, tableId: string) =>
  `/bases/${tables.databaseId}/tables/${tableId}/records`;

export const linkedId = (tables: LinkTables, name: LinkedFieldName) =>
  tables.linked.find((f) => f.name === name)!.id;

/** The generated rows of a table (`$1`: rows): system columns from `s`, fields from `values`. */
function generatedInsert(table: string, values: [column: string, sql: string][], extra = ''): string {
  const columns = ['id', 'created_at', 'updated_at', ...values.map(([column]) => column)];
  const expressions = [uuidV7('s.ts', 's.h'), 's.ts', 's.ts', ...values.map(([, sql]) => sql)];
  return `INSERT INTO ${table} (${columns.map(quoteIdent).join(', ')})
    SELECT ${expressions.join(',\n      ')}
    FROM (
      SELECT g, timestamptz '2024-01-01 00:00:00+00' + g * interval '15 seconds' AS ts, md5(g::text || random()::text) AS h${extra}
        FROM generate_series(1, $1::int) AS g
      OFFSET 0
    ) AS s`;
}

/**
 * The links of Items (`$1`: its rows): Item g (by seq, from 1) links k Others, k uniform over
 * 1..MAX_LINKS, at positions 0..k-1: the Others b + j·s (mod the pool) for a random start b and
 * step 1 <= s < pool/MAX_LINKS, so its k are distinct. The pool is every Other but the first
 * 2·HOT_OTHERS; Item m·step + h + 1, for m below HOT_LINKS and h below HOT_OTHERS, links the h-th
 * (hot) at position 0 instead, and nobody links the next HOT_OTHERS (cold).
 */
function insertLinksSql(tables: LinkTables): string {
  const pool = tables.others.rows - 2 * HOT_OTHERS;
  const step = Math.floor(tables.rows / HOT_LINKS);
  return `INSERT INTO ${tables.items.links} (record_id, linked_id, position)
    SELECT i.id, o.id, l.j
      FROM (
        SELECT n.id, n.g, 1 + floor(random() * ${MAX_LINKS})::int AS k, floor(random() * ${pool})::int AS b,
               1 + floor(random() * ${Math.floor(pool / MAX_LINKS) - 1})::int AS s
          FROM (SELECT id, row_number() OVER (ORDER BY seq) AS g FROM ${tables.items.table}) n
         WHERE n.g <= $1::int
        OFFSET 0
      ) i
      CROSS JOIN LATERAL generate_series(0, i.k - 1) AS l(j)
      JOIN (SELECT id, row_number() OVER (ORDER BY seq) - 1 AS n FROM ${tables.others.table}) o
        ON o.n = CASE WHEN l.j = 0 AND (i.g - 1) % ${step} < ${HOT_OTHERS} AND i.g <= ${HOT_LINKS * step}
                      THEN (i.g - 1) % ${step}
                      ELSE ${2 * HOT_OTHERS} + (i.b + l.j * i.s) % ${pool} END
     -- Each Item's links together, in Item order, as writes through the API lay them out.
     ORDER BY i.g, l.j`;
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

/** A copy of a table (columns, identity, defaults, indexes; not its triggers) with its rows. */
async function copyTable(pool: pg.Pool, from: string, to: string, order: string): Promise<void> {
  await pool.query(`CREATE TABLE ${to} (LIKE ${from} INCLUDING ALL)`);
  const columns = (await writableColumns(pool, from)).join(', ');
  await pool.query(
    `INSERT INTO ${to} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM ${from} ORDER BY ${order}`,
  );
}

/** Drops the database of an earlier run, if any, and the raw tables. */
export async function dropLinkTables(pool: pg.Pool, api: ApiClient): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${RAW_SCHEMA} CASCADE`);
  const old = await readState<{ databaseId: string }>(pool, STATE_NAME);
  if (!old) return;
  await api.call('DELETE', `/bases/${old.databaseId}`);
  await pool.query(`DELETE FROM bench.state WHERE name = $1`, [STATE_NAME]);
}

interface LinkedFieldDto extends FieldDto {
  template: Record<string, string>;
  resultType: string;
}

/** Adds a count, lookup or rollup field to a table through the API, timed end to end. */
export async function addLinkedField(
  api: ApiClient,
  databaseId: string,
  tableId: string,
  field: { name: string; type: string; template: object },
): Promise<{ created: LinkedFieldDto; seconds: number }> {
  const started = performance.now();
  const created = await api.expect<LinkedFieldDto>(
    201,
    'POST',
    `/bases/${databaseId}/tables/${tableId}/fields`,
    field,
  );
  return { created, seconds: (performance.now() - started) / 1000 };
}

/** Rows of `table` whose columns `a` and `b` differ (IS DISTINCT FROM). */
export async function differingRows(pool: pg.Pool, table: string, a: string, b: string): Promise<number> {
  const result = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE ${quoteIdent(a)} IS DISTINCT FROM ${quoteIdent(b)}`,
  );
  return result.rows[0]!.n;
}

/** Tidies the tables after writes (autovacuum is off on the dev PostgreSQL): dead rows out, statistics in. */
export async function vacuumLinkTables(pool: pg.Pool, tables: LinkTables): Promise<void> {
  for (const table of [
    tables.others.table,
    tables.items.table,
    tables.plain.table,
    tables.items.links,
    tables.plain.links,
    ...Object.values(tables.raw),
  ])
    await pool.query(`VACUUM (ANALYZE) ${table}`);
}

/** The three tables with their generated rows and links, the five computed fields and the raw copies. */
export async function loadLinkTables(pool: pg.Pool, api: ApiClient, rows: number): Promise<LinkTables> {
  if (rows < 10 * HOT_LINKS) throw new Error(`the links suite needs at least ${10 * HOT_LINKS} Items`);
  const steps: [string, number][] = [];
  const started = performance.now();
  await dropLinkTables(pool, api);
  const othersRows = Math.round(rows / 10);
  const database = await timed(steps, 'create database, Others, Items and Items plain (API)', () =>
    api.expect<DatabaseDto>(201, 'POST', '/bases', {
      name: BASE_NAME,
      tables: [
        { name: 'Others', fields: OTHERS_FIELDS },
        { name: 'Items', fields: ITEMS_FIELDS },
        { name: 'Items plain', fields: ITEMS_FIELDS },
      ],
    }),
  );
  await writeState(pool, STATE_NAME, { databaseId: database.id });
  const schemaName = schemaNameForDatabase(database.id);
  const tableDto = (name: string) => {
    const table = database.tables.find((t) => t.name === name);
    if (!table) throw new Error(`the new database lacks ${name}`);
    return table;
  };
  const itemsTable = (name: string): LinkTable => {
    const table = tableDto(name);
    const fieldIds = fieldIdsOf<ItemsFieldName>(table, ITEMS_FIELDS);
    return {
      tableId: table.id,
      table: qualifiedTable(schemaName, table.id),
      fieldIds,
      links: qualifiedTable(schemaName, linkTableName(fieldIds.Others)),
    };
  };
  const othersDto = tableDto('Others');
  const tables: LinkTables = {
    databaseId: database.id,
    schemaName,
    others: {
      tableId: othersDto.id,
      table: qualifiedTable(schemaName, othersDto.id),
      fieldIds: fieldIdsOf<OthersFieldName>(othersDto, OTHERS_FIELDS),
      rows: othersRows,
      hot: [],
      cold: [],
    },
    items: itemsTable('Items'),
    plain: itemsTable('Items plain'),
    linked: [],
    raw: {
      others: `${RAW_SCHEMA}.others`,
      items: `${RAW_SCHEMA}.items`,
      plain: `${RAW_SCHEMA}.items_plain`,
      itemsLinks: `${RAW_SCHEMA}.items_links`,
      plainLinks: `${RAW_SCHEMA}.items_plain_links`,
    },
    rows,
    links: 0,
    matching: 0,
    load: { seconds: 0, steps },
  };
  const o = tables.others.fieldIds;
  await timed(steps, `insert ${othersRows} Others (SQL)`, () =>
    seededInsert(
      pool,
      0.31,
      generatedInsert(tables.others.table, [
        [o.Name, `${pick(FIRST_NAMES)} || ' ' || ${pick(LAST_NAMES)}`],
        [o.Hours, `floor(random() * ${HOURS_QUARTERS})::double precision / 4`],
        [o.Done, 'random() < 0.5'],
        [o.Due, `date '2024-01-01' + floor(random() * 730)::int`],
      ]),
      othersRows,
    ),
  );
  const i = tables.items.fieldIds;
  await timed(steps, `insert ${rows} Items (SQL)`, () =>
    seededInsert(
      pool,
      0.32,
      generatedInsert(tables.items.table, [
        [i.Name, `${pick(FIRST_NAMES)} || ' ' || ${pick(LAST_NAMES)}`],
        [i.Amount, 'round((random() * 1000)::numeric, 2)::double precision'],
      ]),
      rows,
    ),
  );
  await timed(steps, `link each Item to 1-${MAX_LINKS} Others, ${HOT_LINKS} to the hot one (SQL)`, () =>
    seededInsert(pool, 0.33, insertLinksSql(tables), rows),
  );
  await timed(steps, 'set Hours plain to the sum of the linked Hours (SQL)', () =>
    pool.query(
      `UPDATE ${tables.items.table} i SET ${quoteIdent(i['Hours plain'])} = s.total
         FROM (SELECT l.record_id, sum(o.${quoteIdent(o.Hours)}) AS total
                 FROM ${tables.items.links} l JOIN ${tables.others.table} o ON o.id = l.linked_id
                GROUP BY l.record_id) s
        WHERE i.id = s.record_id`,
    ),
  );
  const p = tables.plain.fieldIds;
  await timed(steps, 'copy Items and their links into Items plain (SQL)', async () => {
    const plainFields = ITEMS_FIELDS.filter((f) => f.type !== 'linked_record');
    const from = plainFields.map((f) => quoteIdent(i[f.name])).join(', ');
    const to = plainFields.map((f) => quoteIdent(p[f.name])).join(', ');
    await pool.query(
      `INSERT INTO ${tables.plain.table} (id, created_at, updated_at, ${to})
       SELECT id, created_at, updated_at, ${from} FROM ${tables.items.table} ORDER BY seq`,
    );
    await pool.query(
      `INSERT INTO ${tables.plain.links} (record_id, linked_id, position)
       SELECT record_id, linked_id, position FROM ${tables.items.links} ORDER BY record_id, position`,
    );
  });
  await timed(steps, 'VACUUM ANALYZE', () => vacuumPhysical(pool, tables));
  for (const field of LINKED_FIELDS) {
    const { created, seconds } = await addLinkedField(api, database.id, tables.items.tableId, field);
    steps.push([`add ${field.type} ${field.name} to the loaded Items (API)`, seconds]);
    tables.linked.push({
      name: field.name,
      id: created.id,
      type: created.type,
      template: created.template,
      resultType: created.resultType,
      seconds,
    });
    console.log(`  ${field.name} (${field.type}): ${created.resultType}, filled in ${seconds.toFixed(1)} s`);
  }
  await timed(steps, 'VACUUM ANALYZE', () => vacuumPhysical(pool, tables));
  await checkLoaded(pool, tables);
  await timed(steps, 'copy the tables and link tables into the raw schema and index them (SQL)', async () => {
    await pool.query(`CREATE SCHEMA ${RAW_SCHEMA}`);
    await copyTable(pool, tables.others.table, tables.raw.others, 'seq');
    await copyTable(pool, tables.items.table, tables.raw.items, 'seq');
    await copyTable(pool, tables.plain.table, tables.raw.plain, 'seq');
    await copyTable(pool, tables.items.links, tables.raw.itemsLinks, 'record_id, position');
    await copyTable(pool, tables.plain.links, tables.raw.plainLinks, 'record_id, position');
    // The read indexes the API builds for the filter and sort on each (read-indexes.ts).
    for (const column of [i['Hours plain'], linkedId(tables, 'Hours total')])
      await pool.query(`CREATE INDEX ON ${tables.raw.items} (${quoteIdent(column)} DESC NULLS LAST, seq)`);
  });
  await timed(steps, 'VACUUM ANALYZE', () => vacuumLinkTables(pool, tables));
  tables.load.seconds = (performance.now() - started) / 1000;
  return tables;
}

async function vacuumPhysical(pool: pg.Pool, tables: LinkTables): Promise<void> {
  for (const table of [
    tables.others.table,
    tables.items.table,
    tables.plain.table,
    tables.items.links,
    tables.plain.links,
  ])
    await pool.query(`VACUUM (ANALYZE) ${table}`);
}

/**
 * What the cases rely on: Hours total equals Hours plain in every Item; each hot Other is linked
 * by HOT_LINKS Items and each cold one by none; the two tables hold the same links. Notes the hot
 * and cold Others, the link count and how many Items the filter keeps.
 */
async function checkLoaded(pool: pg.Pool, tables: LinkTables): Promise<void> {
  const differing = await differingRows(
    pool,
    tables.items.table,
    tables.items.fieldIds['Hours plain'],
    linkedId(tables, 'Hours total'),
  );
  if (differing !== 0) throw new Error(`Hours total and Hours plain differ in ${differing} Items`);
  const hours = quoteIdent(tables.others.fieldIds.Hours);
  const ends = await pool.query<{ id: string; hours: number; linking: number }>(
    `SELECT o.id::text, o.${hours} AS hours,
            (SELECT count(*)::int FROM ${tables.items.links} l WHERE l.linked_id = o.id) AS linking
       FROM ${tables.others.table} o ORDER BY o.seq LIMIT ${2 * HOT_OTHERS}`,
  );
  const hot = ends.rows.slice(0, HOT_OTHERS);
  const cold = ends.rows.slice(HOT_OTHERS);
  const linking = ends.rows.map((row) => row.linking).join(', ');
  if (hot.some((row) => row.linking !== HOT_LINKS) || cold.some((row) => row.linking !== 0))
    throw new Error(`the hot and cold Others are linked ${linking} times`);
  tables.others.hot = hot.map(({ id, hours }) => ({ id, hours }));
  tables.others.cold = cold.map(({ id, hours }) => ({ id, hours }));
  const counts = await pool.query<{ items: number; plain: number; same: number }>(
    `SELECT (SELECT count(*)::int FROM ${tables.items.links}) AS items,
            (SELECT count(*)::int FROM ${tables.plain.links}) AS plain,
            (SELECT count(*)::int FROM ${tables.items.links} a JOIN ${tables.plain.links} b USING (record_id, linked_id, position)) AS same`,
  );
  const { items, plain, same } = counts.rows[0]!;
  if (items !== plain || items !== same) throw new Error('Items and Items plain hold different links');
  tables.links = items;
  const matching = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${tables.items.table} WHERE ${quoteIdent(linkedId(tables, 'Hours total'))} > $1`,
    [HOURS_MIN],
  );
  tables.matching = matching.rows[0]!.n;
  console.log(
    `  ${tables.links} links (${(tables.links / tables.rows).toFixed(2)} per Item); hot Others ${hot.map((row) => row.id).join(', ')}, cold ${cold.map((row) => row.id).join(', ')}; ${tables.matching} Items with Hours total > ${HOURS_MIN}`,
  );
}

/** The indexes of the API's Items and of its raw copy. */
export async function linkIndexes(pool: pg.Pool, tables: LinkTables) {
  return { api: await indexesOf(pool, tables.items.table), raw: await indexesOf(pool, tables.raw.items) };
}
