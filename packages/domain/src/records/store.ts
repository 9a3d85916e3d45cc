import { type DomainError, invalid } from '@recordbase/contracts/domain-errors';
import type { ListRecordsRequest } from '@recordbase/contracts/records';
import { databaseErrorOf, queryNamed } from '@recordbase/db';
import { moduleOfField, once, updatedColumns } from '@recordbase/db/field-types';
import { CLOCK_SQL } from '@recordbase/db/formula';
import {
  linkTableName,
  qualifiedTable,
  quoteIdent,
  requireColumnSpec,
  SqlParams,
} from '@recordbase/db/physical';
import type pg from 'pg';
import { countKey, keepTotal, keptTotal } from './count-cache';

import { decodeCursor, encodeCursor, listingDigest } from './cursor';
import type { ExpandedLink } from './expand';
import { compileFilter, holdsFormula } from './query-compiler';
import { type RecordShape, recordJsonSql, shapedRecordJsonSql } from './record-json';
import { keysetAfterSql, keyValuesSql, orderBySql, sortKeys } from './sort-order';
import {
  assertCurrentMeta,
  type FieldMeta,
  projectedFields,
  schemaVersionSql,
  type TableMeta,
} from './table-meta';
import type { PreparedRecord } from './values';

/**
 * SQL over one physical table: reads render records as JSON text in PostgreSQL; writes take
 * prepared values. Every function takes the connection to use, so callers choose the transaction.
 */

/** A pool or a client of one: what runs a statement. */
export type Queryable = Pick<pg.PoolClient, 'query'>;

const tableRef = (table: TableMeta) => qualifiedTable(table.schemaName, table.id);

function castFor(field: FieldMeta): string {
  return requireColumnSpec(field).sqlType;
}

/** A link field's linked ids as stored, in order: what an update compares a new list with. */
export function storedLinksSql(table: TableMeta, field: FieldMeta): string {
  const link = qualifiedTable(table.schemaName, linkTableName(field.id));
  return `ARRAY(SELECT l.linked_id FROM ${link} l WHERE l.record_id = r.id ORDER BY l.position)`;
}

/** How a listing renders its page, and whether it counts the records its filter matches. */
export interface ListRendering {
  /** The API's Record by default. */
  shape?: RecordShape;
  /** False: `total` is not counted (null), for an API that shows none. */
  total?: boolean;
}

const RECORD_SHAPE: RecordShape = { kind: 'record' };

export interface ListedRecords {
  /** A JSON array of records, as text, in the shape the listing asked for. */
  recordsJson: string;
  /** Null when the listing asked for no total. */
  total: number | null;
  /** Records on the page. */
  rowsOnPage: number;
  hasMore: boolean;
  /** Where the next page starts (cursor.ts), or null on the last page. */
  nextCursor: string | null;
  /** Records in the whole table as of the page, when known without a count. */
  tableRows: number | null;
}

/**
 * The most JSON one page of records may be. A page is one value read whole (PostgreSQL's, then
 * Node's), and records of long texts make 2,000 of them gigabytes: past V8's longest string.
 */
export const MAX_PAGE_BYTES = 32 * 1024 * 1024;

function pageTooLarge(fitting: number): DomainError {
  const size = `${MAX_PAGE_BYTES / (1024 * 1024)} MB`;
  return fitting > 0
    ? invalid(
        ['limit'],
        (at) =>
          `the page's records come to more than ${size} of JSON, and only the first ${fitting} fit; ask for at most ${fitting} records, or for fewer fields (${at(['fields'])})`,
      )
    : invalid(
        ['fields'],
        (at) =>
          `the first record of the page alone comes to more than ${size} of JSON; ask for fewer fields (${at(['fields'])})`,
      );
}

/** Past this many delta rows, a reader folds a table's count into one row. */
const COUNT_PARTS_BEFORE_COMPACTION = 64;

/**
 * A table's row count (sum of deltas), write version (sum of writes, see count-cache.ts) and the
 * number of rows they are spread over, as columns of a one-row subquery.
 */
const tableCountsSql = (tableIdParam: string) =>
  `SELECT sum(delta)::text AS row_count, sum(writes)::text AS version, count(*)::int AS parts
     FROM public.table_row_counts WHERE table_id = ${tableIdParam}`;

interface TableCounts {
  row_count: string | null;
  version: string | null;
  parts: number;
}

/** Folds a table's delta rows into one, keeping both sums, so reading them stays cheap. */
async function compactCounts(client: Queryable, table: TableMeta, counts: TableCounts): Promise<void> {
  if (counts.parts <= COUNT_PARTS_BEFORE_COMPACTION) return;
  await client.query(
    `WITH gone AS (DELETE FROM public.table_row_counts WHERE table_id = $1 RETURNING delta, writes)
     INSERT INTO public.table_row_counts (table_id, delta, writes)
     SELECT $1, sum(delta), sum(writes) FROM gone HAVING count(*) > 0`,
    [table.id],
  );
}

/**
 * The exact number of records the filter matches. The count of a filter is kept per table write
 * version, so a client paging through one filter pays for it once; `version` is the one the page
 * was read at.
 */
async function countMatching(
  client: Queryable,
  table: TableMeta,
  filter: ListRecordsRequest['filter'],
  version: string | null,
): Promise<number> {
  const params = new SqlParams();
  const where = filter ? compileFilter(filter, table, params) : 'TRUE';
  const key = countKey(table.id, where, params.values);
  // A filter on a formula of the clock (NOW(), TODAY()) matches other records as time passes,
  // with no write to move the version: its total is counted every time.
  const timeless = !where.includes(CLOCK_SQL);
  if (version !== null && timeless) {
    const kept = keptTotal(key, version);
    if (kept !== undefined) return kept;
  }
  const tableId = params.add(table.id);
  // The count and the version it belongs to come from one snapshot.
  const result = await client.query<{ total: string; version: string | null }>(
    `SELECT (SELECT count(*) FROM ${tableRef(table)} r WHERE ${where})::text AS total,
            (SELECT sum(writes) FROM public.table_row_counts WHERE table_id = ${tableId})::text AS version`,
    params.values,
  );
  const row = result.rows[0];
  const total = Number(row?.total ?? 0);
  if (row?.version != null && timeless) keepTotal(key, row.version, total);
  return total;
}

/** The page's rows (from the filter, order and offset or cursor) and how each renders. */
function pageSql(
  table: TableMeta,
  request: ListRecordsRequest,
  keys: ReturnType<typeof sortKeys>,
  digest: string,
  expanded: readonly ExpandedLink[],
  params: SqlParams,
  shape: RecordShape,
) {
  const conditions: string[] = [];
  if (request.cursor !== undefined) {
    conditions.push(keysetAfterSql(keys, decodeCursor(request.cursor, keys, digest), params));
  }
  if (request.filter) conditions.push(compileFilter(request.filter, table, params));
  const where =
    conditions.length > 0 ? conditions.map((condition) => `(${condition})`).join(' AND ') : 'TRUE';
  // One row past the page tells whether more exist without a second query.
  const pageSize = params.add(request.limit);
  const limit = params.add(request.limit + 1);
  const record = shapedRecordJsonSql(
    table,
    params,
    shape,
    projectedFields(table, request.fields, ['fields']),
    expanded,
  );
  const order = orderBySql(keys);
  if (request.offset === 0) {
    // A first page or a cursor's page reads its rows straight from the order's index: picking
    // the sequence numbers first would only fetch each row again by its own index.
    return {
      pageSize,
      record,
      ordinal: 'r.rb_page_n',
      rows: `FROM (SELECT r.*, row_number() OVER (ORDER BY ${order}) AS rb_page_n
               FROM ${tableRef(table)} r WHERE ${where} ORDER BY ${order} LIMIT ${limit}) r
       ${record.join}`,
    };
  }
  // Past an offset, the skipped rows are passed over in the index alone, and only the page's
  // rows are fetched.
  const offset = params.add(request.offset);
  return {
    pageSize,
    record,
    ordinal: 'page.n',
    rows: `FROM unnest(ARRAY(SELECT r.seq FROM ${tableRef(table)} r WHERE ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}))
            WITH ORDINALITY AS page(seq, n)
       JOIN ${tableRef(table)} r ON r.seq = page.seq
       ${record.join}`,
  };
}

/**
 * One page: the filter, order and offset (or the cursor's keyset condition) pick the page's rows
 * (past an offset, their sequence numbers first), and only the rows of the page are rendered as
 * JSON. The same statement reads the last row's sort keys for `nextCursor`,
 * and the table's row count and write version as of the page's snapshot.
 */
export async function listRecords(
  client: Queryable,
  table: TableMeta,
  request: ListRecordsRequest,
  expanded: readonly ExpandedLink[] = [],
  rendering: ListRendering = {},
): Promise<ListedRecords> {
  const keys = sortKeys(request.sort, table);
  const digest = listingDigest(table, request.filter);
  const params = new SqlParams();
  const shape = rendering.shape ?? RECORD_SHAPE;
  const { pageSize, record, ordinal, rows } = pageSql(table, request, keys, digest, expanded, params, shape);
  const counts = tableCountsSql(params.add(table.id));
  // Kept metadata is checked against the schema in the page's own snapshot (table-meta.ts).
  const schemaVersion =
    table.schemaVersion === undefined ? 'NULL' : schemaVersionSql(params.add(table.databaseId));
  const maxBytes = params.add(MAX_PAGE_BYTES);
  // PostgreSQL joins the page into one text: one value to read instead of one row per record.
  // A page past MAX_PAGE_BYTES is measured, not sent (checking its length costs nothing; keeping a
  // running sum of every record's would cost a sort of the page each time).
  let result: pg.QueryResult<
    {
      page: string | null;
      page_bytes: string | null;
      fetched: number;
      last_keys: unknown[] | null;
      schema_version: string | null;
    } & TableCounts
  >;
  try {
    // Named: a listing's text is the same for every page of the same table and shape, so its
    // parse (and, once PostgreSQL settles on a generic plan, its planning) is not paid per page.
    // A formula condition's text changes with its literals: such texts get a few names of their
    // own, so that varied formulas leave the connection's other names to the shapes that repeat.
    result = await queryNamed(
      client,
      `WITH counts AS MATERIALIZED (${counts})
       SELECT CASE WHEN octet_length(agg.page) <= ${maxBytes} THEN agg.page END AS page,
              octet_length(agg.page)::text AS page_bytes,
              agg.fetched, agg.last_keys,
              (SELECT row_count FROM counts), (SELECT version FROM counts), (SELECT parts FROM counts),
              ${schemaVersion} AS schema_version
         FROM (SELECT string_agg(${record.text}, ',' ORDER BY ${ordinal}) FILTER (WHERE ${ordinal} <= ${pageSize}) AS page,
                      count(*)::int AS fetched,
                      (array_agg(${keyValuesSql(keys)}) FILTER (WHERE ${ordinal} = ${pageSize}))[1] AS last_keys
                 ${rows}) agg`,
      params.values,
      { varying: holdsFormula(request.filter) },
    );
  } catch (error) {
    // Past PostgreSQL's 1 GB for one value: too large by far, and said the same way.
    if (databaseErrorOf(error)?.code === PROGRAM_LIMIT_EXCEEDED) {
      throw pageTooLarge(await recordsThatFit(client, table, request, keys, digest, expanded, shape));
    }
    throw error;
  }
  const row = result.rows[0];
  assertCurrentMeta(table, row?.schema_version);
  if (row?.page_bytes != null && Number(row.page_bytes) > MAX_PAGE_BYTES) {
    throw pageTooLarge(await recordsThatFit(client, table, request, keys, digest, expanded, shape));
  }
  const fetched = row?.fetched ?? 0;
  const hasMore = fetched > request.limit;
  const rowsOnPage = Math.min(fetched, request.limit);
  const tableCounts = row ?? { row_count: null, version: null, parts: 0 };
  // Listings are what fold a table's count parts: one that counts no total folds them too.
  await compactCounts(client, table, tableCounts);
  const total =
    rendering.total === false
      ? null
      : await pageTotal(client, table, request, { hasMore, rowsOnPage, counts: tableCounts });
  const nextCursor = hasMore && row?.last_keys ? encodeCursor(keys, digest, row.last_keys) : null;
  const tableRows = row?.row_count != null ? Number(row.row_count) : null;
  return { recordsJson: `[${row?.page ?? ''}]`, total, rowsOnPage, hasMore, nextCursor, tableRows };
}

const PROGRAM_LIMIT_EXCEEDED = '54000';

/**
 * How many of the page's records fit in MAX_PAGE_BYTES, joined as the page joins them: each
 * record is rendered again and only its length comes back. Run only for a page already found too
 * large, to tell the caller what to ask for instead.
 */
async function recordsThatFit(
  client: Queryable,
  table: TableMeta,
  request: ListRecordsRequest,
  keys: ReturnType<typeof sortKeys>,
  digest: string,
  expanded: readonly ExpandedLink[],
  shape: RecordShape,
): Promise<number> {
  const params = new SqlParams();
  const { pageSize, record, ordinal, rows } = pageSql(table, request, keys, digest, expanded, params, shape);
  const result = await client.query<{ sizes: string[] | null }>(
    `SELECT array_agg(octet_length(${record.text})::text ORDER BY ${ordinal}) FILTER (WHERE ${ordinal} <= ${pageSize}) AS sizes
       ${rows}`,
    params.values,
  );
  let bytes = -1;
  let fitting = 0;
  for (const size of result.rows[0]?.sizes ?? []) {
    // Each record and the comma before it, the first has none.
    bytes += Number(size) + 1;
    if (bytes > MAX_PAGE_BYTES) break;
    fitting += 1;
  }
  return fitting;
}

async function pageTotal(
  client: Queryable,
  table: TableMeta,
  request: ListRecordsRequest,
  page: { hasMore: boolean; rowsOnPage: number; counts: TableCounts },
): Promise<number> {
  const { counts } = page;
  // A partial page ends the result, so its end is the total; only a full or empty page needs a
  // count. After a cursor, what came before is unknown.
  if (request.cursor === undefined && !page.hasMore && (page.rowsOnPage > 0 || request.offset === 0)) {
    return request.offset + page.rowsOnPage;
  }
  if (!request.filter && counts.row_count !== null) return Number(counts.row_count);
  return countMatching(client, table, request.filter, counts.version);
}

/** Records as JSON text, in the order of `ids`; missing ids are absent from the map. */
export async function fetchRecordsJson(
  client: Queryable,
  table: TableMeta,
  ids: readonly string[],
  fields: readonly FieldMeta[] = table.fields,
  expanded: readonly ExpandedLink[] = [],
): Promise<Map<string, string>> {
  const params = new SqlParams();
  const record = recordJsonSql(table, params, undefined, fields, expanded);
  const result = await client.query<{ id: string; j: string }>(
    `SELECT r.id::text AS id, ${record.text} AS j FROM ${tableRef(table)} r ${record.join} WHERE r.id = ANY(${params.add(ids)}::uuid[])`,
    params.values,
  );
  return new Map(result.rows.map((row) => [row.id, row.j]));
}

/** Replaces the links each write gives (its others stay). */
async function replaceLinks(
  client: Queryable,
  table: TableMeta,
  writes: readonly { id: string; record: PreparedRecord }[],
) {
  for (const field of table.fields.filter((f) => f.type === 'linked_record')) {
    const touched = writes.filter((write) => write.record.links.has(field.id));
    if (touched.length === 0) continue;
    const link = qualifiedTable(table.schemaName, linkTableName(field.id));
    await client.query(`DELETE FROM ${link} WHERE record_id = ANY($1::uuid[])`, [
      touched.map((write) => write.id),
    ]);
    const recordIds: string[] = [];
    const linkedIds: string[] = [];
    const positions: number[] = [];
    for (const write of touched) {
      write.record.links.get(field.id)!.forEach((linkedId, position) => {
        recordIds.push(write.id);
        linkedIds.push(linkedId);
        positions.push(position);
      });
    }
    if (recordIds.length > 0) {
      await client.query(
        `INSERT INTO ${link} (record_id, linked_id, position) SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[])`,
        [recordIds, linkedIds, positions],
      );
    }
  }
}

/**
 * Partial updates in one statement: each record changes only the fields it gave (a flag per column
 * says whether the value applies, a link list is null when not given); updatedAt moves for each,
 * and the computed columns the write keeps are set from what the record had before (the
 * statement still sees its old links, replaced after it).
 */
export async function updateRecords(
  client: Queryable,
  table: TableMeta,
  writes: readonly { id: string; record: PreparedRecord }[],
  /** `{id, name}` of the key that writes (authorOf), as JSON. */
  author: string,
) {
  if (writes.length === 0) return;
  const columnFields = table.fields.filter(
    (field) => field.type !== 'linked_record' && writes.some((write) => write.record.columns.has(field.id)),
  );
  const linkFields = table.fields.filter(
    (field) => field.type === 'linked_record' && writes.some((write) => write.record.links.has(field.id)),
  );
  const params = new SqlParams();
  const rows = writes.map((write) => {
    const values = [`${params.add(write.id)}::uuid`];
    for (const field of columnFields) {
      const given = write.record.columns.has(field.id);
      values.push(
        given ? 'true' : 'false',
        given
          ? `${params.add(write.record.columns.get(field.id))}::${castFor(field)}`
          : `NULL::${castFor(field)}`,
      );
    }
    for (const field of linkFields) {
      const links = write.record.links.get(field.id);
      values.push(links ? `${params.add(links)}::uuid[]` : 'NULL::uuid[]');
    }
    return `(${values.join(', ')})`;
  });
  const names = [
    'id',
    ...columnFields.flatMap((_, i) => [`given${i}`, `value${i}`]),
    ...linkFields.map((_, i) => `links${i}`),
  ];
  const changed = (fieldIds: readonly string[] | undefined) => {
    const watched = (field: FieldMeta) => fieldIds === undefined || fieldIds.includes(field.id);
    const conditions = [
      ...columnFields.flatMap((field, i) =>
        watched(field) ? [`(v.given${i} AND v.value${i} IS DISTINCT FROM r.${quoteIdent(field.id)})`] : [],
      ),
      ...linkFields.flatMap((field, i) =>
        watched(field)
          ? [`(v.links${i} IS NOT NULL AND v.links${i} IS DISTINCT FROM ${storedLinksSql(table, field)})`]
          : [],
      ),
    ];
    return conditions.length > 0 ? `(${conditions.join(' OR ')})` : 'false';
  };
  const kept = updatedColumns(table.fields, {
    author: once(() => `${params.add(author)}::jsonb`),
    changed,
  });
  const assignments = [
    'updated_at = now()',
    ...columnFields.map(
      (field, i) =>
        `${quoteIdent(field.id)} = CASE WHEN v.given${i} THEN v.value${i} ELSE r.${quoteIdent(field.id)} END`,
    ),
    ...kept.map((column) => `${column.column} = ${column.value}`),
  ];
  await client.query(
    `UPDATE ${tableRef(table)} AS r SET ${assignments.join(', ')}
       FROM (VALUES ${rows.join(', ')}) AS v(${names.join(', ')})
      WHERE r.id = v.id`,
    params.values,
  );
  await replaceLinks(client, table, writes);
}

/**
 * Ids of existing records among `ids`, locked against concurrent change until commit. Metadata
 * read at another schema version is refused (StaleTableMeta, which withTable retries with fresh
 * metadata): an update or delete with metadata cached before a count, lookup or rollup began to read
 * the table would not refresh it, and the notification dropping that cache may still be in flight.
 */
export async function lockExisting(
  client: Queryable,
  table: TableMeta,
  ids: readonly string[],
): Promise<Set<string>> {
  const result = await client.query<{ ids: string[] | null; schema_version: string | null }>(
    `SELECT ARRAY(SELECT id::text FROM ${tableRef(table)} WHERE id = ANY($1::uuid[]) FOR UPDATE) AS ids,
            ${schemaVersionSql('$2')} AS schema_version`,
    [ids, table.databaseId],
  );
  const row = result.rows[0]!;
  assertCurrentMeta(table, row.schema_version);
  return new Set(row.ids ?? []);
}

/** One matchOn field (its column as SQL) equal to an incoming value (as SQL). */
export function matchCondition(field: FieldMeta, column: string, value: string): string {
  const match = moduleOfField(field).match;
  if (match?.equals) return match.equals(column, value);
  const key = match?.key;
  if (!key || key.of(column) === column) return `${column} = ${value}`;
  // The indexed expression lets PostgreSQL use the match index; the values rule out hash collisions.
  return `${key.of(column)} = ${key.of(value)} AND ${column} = ${value}`;
}

/** The query of findMatches: which record ids equal each key (`idx` is the key's position). */
export function matchQuery(
  table: TableMeta,
  matchOn: readonly FieldMeta[],
  keys: readonly unknown[][],
): { text: string; values: unknown[] } {
  const params = new SqlParams();
  const rows = keys.map(
    (values, index) =>
      `(${params.add(index)}::int, ${values.map((value, i) => `${params.add(value)}::${castFor(matchOn[i]!)}`).join(', ')})`,
  );
  const valueColumns = matchOn.map((_, i) => `k${i}`);
  const on = matchOn
    .map((field, i) => matchCondition(field, `r.${quoteIdent(field.id)}`, `v.k${i}`))
    .join(' AND ');
  return {
    text: `SELECT v.idx, r.id::text AS id FROM ${tableRef(table)} r
       JOIN (VALUES ${rows.join(', ')}) AS v(idx, ${valueColumns.join(', ')}) ON ${on}`,
    values: params.values,
  };
}

/**
 * Existing records equal to each incoming key on every matchOn field. Callers hold the advisory
 * locks of those keys, so no concurrent upsert can insert the same key in between.
 */
export async function findMatches(
  client: Queryable,
  table: TableMeta,
  matchOn: readonly FieldMeta[],
  keys: readonly unknown[][],
): Promise<Map<number, string[]>> {
  const query = matchQuery(table, matchOn, keys);
  const result = await client.query<{ idx: number; id: string }>(query.text, query.values);
  const matches = new Map<number, string[]>();
  for (const row of result.rows) matches.set(row.idx, [...(matches.get(row.idx) ?? []), row.id]);
  return matches;
}

/**
 * Serialises upserts of the same keys of `table`: transaction-scoped advisory locks, taken in one
 * global order. Metadata of another schema version is refused, as lockExisting does.
 */
export async function lockKeys(client: Queryable, table: TableMeta, keys: readonly string[]): Promise<void> {
  const result = await client.query<{ schema_version: string | null }>(
    `SELECT (SELECT count(pg_advisory_xact_lock(h)) FROM (SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest($1::text[]) AS k ORDER BY 1) AS ordered) AS locked,
            ${schemaVersionSql('$2')} AS schema_version`,
    [keys, table.databaseId],
  );
  assertCurrentMeta(table, result.rows[0]!.schema_version);
}

/** The records' JSON texts as one JSON array, in the order of `ids` (all of which exist). */
export async function recordsInOrder(
  client: Queryable,
  table: TableMeta,
  ids: readonly string[],
): Promise<string> {
  const byId = await fetchRecordsJson(client, table, ids);
  return `[${ids.map((id) => byId.get(id)).join(',')}]`;
}
