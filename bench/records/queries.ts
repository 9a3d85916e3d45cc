import { linkTableName, qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import { random } from '../lib/random';
import {
  type Dataset,
  DEALS_FIELDS,
  type DealsFieldName,
  KINDS,
  NOTE_WORDS,
  ORGS,
  RARE_WORD,
  STATUS_OPTIONS,
  TAG_OPTIONS,
} from './dataset';
import type { HttpRunner } from './http-runner';
import type { SqlQuery } from './sql-runner';

/**
 * The measured cases. Reads (Q1-Q4c, Q7-Q7e: records/list; Q8a, Q8b: records/aggregate) carry the
 * API request body and the equivalent raw SQL; writes (Q5, Q6) build a bulk body per request.
 */

export interface ListBody {
  limit: number;
  offset?: number;
  cursor?: string;
  sort?: { field: string; direction: 'asc' | 'desc' }[];
  filter?: unknown;
  /** The projection: only these fields in `data` and `fields`. */
  fields?: string[];
  /** Link fields whose linked records' ids and primary values come beside each record. */
  expand?: string[];
}

export interface AggregateBody {
  filter?: unknown;
  groupBy?: string[];
  aggregations: { field?: string; fn: 'count' | 'sum' | 'avg' | 'min' | 'max' }[];
}

/** A record of a listing, as far as the checks look at it. */
export interface ApiRecord {
  id: string;
  data: Record<string, unknown>;
  expanded?: Record<string, unknown>;
}

export interface ReadCase {
  id: string;
  title: string;
  /**
   * Where the body goes: `list` (the default: the answer is a page of records) or `aggregate`
   * (the answer is groups; the raw query answers the same groups as `[key, ...values]` arrays).
   */
  endpoint?: 'list' | 'aggregate';
  body: ListBody | AggregateBody;
  /** The baseline: same WHERE, ORDER BY, LIMIT and OFFSET, records as JSON, total when asked. */
  raw: SqlQuery;
  /** For cases whose baseline has no total: the baseline plus the count(*) the API also runs. */
  rawWithTotal?: SqlQuery;
  /** The case whose page this one asks for in another shape (Q7p and Q7e: the plain page Q7). */
  sameAs?: string;
  /** `/bases/…/tables/…/records` of another table than the target's (formulas: the table without formulas). */
  recordsPath?: string;
  /** What else an API record must share with its raw row than its id: a difference, or null. */
  checkRecord?(api: ApiRecord, raw: Record<string, unknown>): string | null;
}

const Q2_AMOUNT = 50_000;
const Q2_STATUSES = ['Qualified', 'Proposal'];
const NON_SELECTIVE_WORD = 'software';

export interface RawShape {
  where: string;
  values: unknown[];
  order: string;
  limit: number;
  offset: number;
  withTotal: boolean;
  /** What the total counts, when not `where` (a keyset condition picks the page, not the total). */
  countWhere?: string;
}

/** What a raw page is read from: the table (aliased `r`, then `p`) and the JSON keys of a record. */
export interface RawSource {
  table: string;
  /** Columns of the table, rendered as they are. */
  columns: string[];
  /** More SQL expressions over the page row `p`, each with its `AS` (such as linked ids). */
  extra?: string[];
}

/**
 * Selects the page on the bare table first, then renders each record of the page as JSON: what
 * one would write by hand.
 */
export function rawList(source: RawSource, shape: RawShape): SqlQuery {
  const values = [...shape.values, shape.limit, shape.offset];
  const limit = `$${shape.values.length + 1}`;
  const offset = `$${shape.values.length + 2}`;
  const columns = [...source.columns.map((c) => `p.${quoteIdent(c)}`), ...(source.extra ?? [])];
  const records = `SELECT COALESCE(json_agg(row_to_json(x)), '[]'::json)::text FROM (
      SELECT ${columns.join(', ')}
        FROM (SELECT * FROM ${source.table} r WHERE ${shape.where} ORDER BY ${shape.order} LIMIT ${limit} OFFSET ${offset}) p
    ) x`;
  const total = shape.withTotal
    ? `, (SELECT count(*) FROM ${source.table} r WHERE ${shape.countWhere ?? shape.where}) AS total`
    : '';
  return { text: `SELECT (${records}) AS records${total}`, values };
}

/** Deals' Company link table. */
const companyLinks = (dataset: Dataset) =>
  qualifiedTable(dataset.schemaName, linkTableName(dataset.deals.fieldIds.Company));

/** Deals' raw page: keys are field ids (the API also repeats each value under the field name), with the linked ids. */
function dealsSource(dataset: Dataset): RawSource {
  const companyField = dataset.deals.fieldIds.Company;
  return {
    table: qualifiedTable(dataset.schemaName, dataset.deals.tableId),
    columns: ['id', 'created_at', 'updated_at', ...dataset.deals.columnFieldIds],
    extra: [
      `COALESCE((SELECT json_agg(l.linked_id ORDER BY l.position) FROM ${companyLinks(dataset)} l WHERE l.record_id = p.id), '[]'::json) AS ${quoteIdent(companyField)}`,
    ],
  };
}

export const DEFAULT_ORDER = 'r.created_at ASC, r.seq ASC';

/** Where Q4c starts: the row before the deep page, as the API's cursor and as raw keys. */
export interface DeepCursor {
  /** The `nextCursor` of the page that ends just before the deep page. */
  cursor: string;
  /** That page's last row: created_at (as PostgreSQL's text) and seq. */
  createdAt: string;
  seq: string;
}

/** The row before the deep page of Q4, by the same order: the start of Q4c. */
export function deepCursorSetup(dataset: Dataset): { body: ListBody; lastRow: SqlQuery } {
  const deepOffset = Math.floor(dataset.rows / 2);
  const table = qualifiedTable(dataset.schemaName, dataset.deals.tableId);
  return {
    body: { limit: 500, offset: deepOffset - 500 },
    lastRow: {
      text: `SELECT r.created_at::text AS created_at, r.seq::text AS seq FROM ${table} r ORDER BY ${DEFAULT_ORDER} LIMIT 1 OFFSET $1`,
      values: [deepOffset - 1],
    },
  };
}

/**
 * Q4c: the page of Q4 (offset 500,000 of 1,000,000), asked for with the cursor of the page
 * before it. Its baseline is the same keyset query by hand.
 */
export function deepCursorCase(dataset: Dataset, start: DeepCursor): ReadCase {
  const shape = (withTotal: boolean) =>
    rawList(dealsSource(dataset), {
      where: '(r.created_at, r.seq) > ($1::timestamptz, $2::bigint)',
      values: [start.createdAt, start.seq],
      order: DEFAULT_ORDER,
      limit: 500,
      offset: 0,
      withTotal,
      countWhere: 'TRUE',
    });
  return {
    id: 'Q4c',
    title: `deep page by cursor: the page at offset ${Math.floor(dataset.rows / 2)}, limit 500, default order`,
    body: { limit: 500, cursor: start.cursor },
    raw: shape(false),
    rawWithTotal: shape(true),
  };
}

export function readCases(dataset: Dataset): ReadCase[] {
  const f = dataset.deals.fieldIds;
  const col = (id: string) => `r.${quoteIdent(id)}`;
  const contains = (id: string, title: string, word: string): ReadCase => {
    const shape = {
      where: `${col(f.Name)} ILIKE $1::text ESCAPE '\\'`,
      values: [`%${word}%`],
      order: DEFAULT_ORDER,
      limit: 100,
      offset: 0,
      withTotal: true,
    };
    return {
      id,
      title,
      body: { filter: { field: 'Name', contains: word }, limit: 100 },
      raw: rawList(dealsSource(dataset), shape),
    };
  };
  const plain = (limit: number, offset: number, withTotal: boolean) =>
    rawList(dealsSource(dataset), {
      where: 'TRUE',
      values: [],
      order: DEFAULT_ORDER,
      limit,
      offset,
      withTotal,
    });
  const deepOffset = Math.floor(dataset.rows / 2);
  return [
    {
      id: 'Q1',
      title: 'first page of 500, default order',
      body: { limit: 500 },
      raw: plain(500, 0, false),
      rawWithTotal: plain(500, 0, true),
    },
    {
      id: 'Q2',
      title: `Amount > ${Q2_AMOUNT} and Status in [${Q2_STATUSES.join(', ')}], Amount desc, limit 100 offset 1000`,
      body: {
        filter: {
          and: [
            { field: 'Amount', greater_than: Q2_AMOUNT },
            { field: 'Status', in: Q2_STATUSES },
          ],
        },
        sort: [{ field: 'Amount', direction: 'desc' }],
        limit: 100,
        offset: 1000,
      },
      raw: rawList(dealsSource(dataset), {
        where: `(${col(f.Amount)} > $1::double precision AND ${col(f.Status)} = ANY($2::text[]))`,
        values: [Q2_AMOUNT, Q2_STATUSES],
        order: `${col(f.Amount)} DESC NULLS LAST, r.seq ASC`,
        limit: 100,
        offset: 1000,
        withTotal: true,
      }),
    },
    contains('Q3a', `Name contains '${RARE_WORD}' (selective, ~0.1%), limit 100`, RARE_WORD),
    contains(
      'Q3b',
      `Name contains '${NON_SELECTIVE_WORD}' (non-selective, ~25%), limit 100`,
      NON_SELECTIVE_WORD,
    ),
    {
      id: 'Q4',
      title: `deep page: offset ${deepOffset}, limit 500, default order`,
      body: { limit: 500, offset: deepOffset },
      raw: plain(500, deepOffset, false),
      rawWithTotal: plain(500, deepOffset, true),
    },
    ...shapedPageCases(dataset),
    ...aggregateCases(dataset),
  ];
}

// ---------------------------------------------------------------------------------------------
// The same page, projected and expanded
// ---------------------------------------------------------------------------------------------

/** Q7p's projection: the sort key and two short fields. */
const PROJECTED: DealsFieldName[] = ['Name', 'Amount', 'Status'];

/** Values as both sides render them (JSON text of the same value): compared as JSON. */
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Q7: a page of 100, Amount desc, every field (the Company link as its ids); Q7p: the same page
 * with `fields` naming three of its 18 fields; Q7e: the same page with `expand` on Company. The
 * table is not filtered, so the API's `total` is its maintained row count and no baseline counts.
 * Each baseline reshapes Q7's raw page the same way: Q7p selects only id, created_at, updated_at
 * and the three columns; Q7e adds to each row its linked companies' ids and Names (the Companies'
 * primary field), by a subquery on the link table joined to Companies.
 */
function shapedPageCases(dataset: Dataset): ReadCase[] {
  const f = dataset.deals.fieldIds;
  const shape = {
    where: 'TRUE',
    values: [],
    order: `r.${quoteIdent(f.Amount)} DESC NULLS LAST, r.seq ASC`,
    limit: 100,
    offset: 0,
    withTotal: false,
  };
  const body: ListBody = { sort: [{ field: 'Amount', direction: 'desc' }], limit: 100 };
  const plain = dealsSource(dataset);
  const projected = PROJECTED.map((name) => f[name]);
  const companies = qualifiedTable(dataset.schemaName, dataset.companies.tableId);
  const companyName = `c.${quoteIdent(dataset.companies.fieldIds.Name)}`;
  const expanded = `COALESCE((SELECT json_agg(json_build_object('id', c.id, 'primary', ${companyName}) ORDER BY l.position)
           FROM ${companyLinks(dataset)} l JOIN ${companies} c ON c.id = l.linked_id
          WHERE l.record_id = p.id), '[]'::json) AS expanded`;
  return [
    {
      id: 'Q7',
      title: 'plain page: limit 100, Amount desc, every field',
      body,
      raw: rawList(plain, shape),
    },
    {
      id: 'Q7p',
      title: `the page of Q7 projected: fields ${PROJECTED.join(', ')}`,
      body: { ...body, fields: PROJECTED },
      raw: rawList({ table: plain.table, columns: ['id', 'created_at', 'updated_at', ...projected] }, shape),
      sameAs: 'Q7',
      checkRecord: (api, raw) => {
        const keys = Object.keys(api.data);
        if (keys.length !== projected.length || !projected.every((id) => keys.includes(id)))
          return `data holds ${keys.length} fields, not the ${projected.length} projected`;
        const differing = projected.find((id) => !sameJson(api.data[id], raw[id]));
        return differing ? `field ${differing}: API ${api.data[differing]}, raw ${raw[differing]}` : null;
      },
    },
    {
      id: 'Q7e',
      title: 'the page of Q7 with expand: [Company] (linked ids and primary values)',
      body: { ...body, expand: ['Company'] },
      raw: rawList({ ...plain, extra: [...(plain.extra ?? []), expanded] }, shape),
      sameAs: 'Q7',
      checkRecord: (api, raw) =>
        sameJson(api.expanded?.Company, raw.expanded)
          ? null
          : `expanded Company: API ${JSON.stringify(api.expanded?.Company)}, raw ${JSON.stringify(raw.expanded)}`,
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Aggregation beside the same GROUP BY
// ---------------------------------------------------------------------------------------------

const Q8_AMOUNT = 90_000;

/**
 * Q8a: count, sum and avg of Amount per Status over every Deal; Q8b: the same over the Deals
 * with Amount > 90,000 (~10%). The baseline is the GROUP BY one would write, in the API's group
 * order (a sort on Status: empty first, then the option names byte-wise), each group rendered as
 * `[key, count, sum, avg]` into one JSON text, as the page baselines render theirs.
 */
function aggregateCases(dataset: Dataset): ReadCase[] {
  const f = dataset.deals.fieldIds;
  const table = qualifiedTable(dataset.schemaName, dataset.deals.tableId);
  const status = `r.${quoteIdent(f.Status)}`;
  const amount = `r.${quoteIdent(f.Amount)}`;
  const aggregations: AggregateBody['aggregations'] = [
    { fn: 'count' },
    { field: 'Amount', fn: 'sum' },
    { field: 'Amount', fn: 'avg' },
  ];
  const grouped = (where: string, values: unknown[]): SqlQuery => ({
    text: `SELECT COALESCE(json_agg(json_build_array(g.status, g.count, g.sum, g.avg)), '[]'::json)::text AS records FROM (
      SELECT ${status} AS status, count(*) AS count, sum(${amount}) AS sum, avg(${amount}) AS avg
        FROM ${table} r WHERE ${where}
       GROUP BY ${status} ORDER BY ${status} COLLATE "C" ASC NULLS FIRST
    ) g`,
    values,
  });
  return [
    {
      id: 'Q8a',
      title: 'aggregate: count, sum(Amount), avg(Amount) per Status, every Deal',
      endpoint: 'aggregate',
      body: { groupBy: ['Status'], aggregations },
      raw: grouped('TRUE', []),
    },
    {
      id: 'Q8b',
      title: `aggregate: the same over Amount > ${Q8_AMOUNT} (~10%)`,
      endpoint: 'aggregate',
      body: {
        filter: { field: 'Amount', greater_than: Q8_AMOUNT },
        groupBy: ['Status'],
        aggregations,
      },
      raw: grouped(`${amount} > $1::double precision`, [Q8_AMOUNT]),
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

/** The same write as raw SQL: one statement per request, on a table of the raw baseline. */
export interface RawWrite {
  /** Where the report shows it: `raw` (the table with its read indexes) or `rawBare` (without). */
  key: 'raw' | 'rawBare';
  label: string;
  statement(worker: number, sequence: number): SqlQuery;
}

export interface WriteCase {
  id: string;
  title: string;
  expectedStatus: number;
  recordsPerRequest: number;
  /** The JSON body of one request. */
  body(worker: number, sequence: number): string;
  /** Run before the API is measured (outside the timing). */
  prepare?(http: HttpRunner): Promise<void>;
  raw?: RawWrite[];
}

export const RECORDS_PER_REQUEST = 100;

export function writeCases(dataset: Dataset, runId: string): WriteCase[] {
  const next = random(7);
  const pickOf = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const words = (n: number) => Array.from({ length: n }, () => pickOf(NOTE_WORDS)).join(' ');
  const companies = dataset.companies.ids;
  const day = (offset: number) =>
    new Date(Date.UTC(2024, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10);

  /** A Deals record with a value for every field, keyed by field name. */
  const fullRecord = (ref: string) => {
    const org = pickOf(ORGS);
    const handle = org.toLowerCase();
    const tags = next() < 0.5 ? [] : [pickOf(TAG_OPTIONS)];
    return {
      Name: `${org} ${pickOf(['Software', 'Hardware', 'Services', 'Logistics'])} ${pickOf(KINDS)} ${ref}`,
      Notes: next() < 0.3 ? null : words(8),
      Email: `buyer.${ref.toLowerCase()}@${handle}.example.com`,
      Website: `https://www.${handle}.example.com/deals/${ref}`,
      Phone: `+1 555 ${String(Math.floor(next() * 10_000_000)).padStart(7, '0')}`,
      Quantity: 1 + Math.floor(next() * 500),
      Amount: Math.round(next() * 10_000_000) / 100,
      Probability: Math.round(next() * 100) / 100,
      Rating: Math.floor(next() * 6),
      Duration: Math.floor(next() * 7200),
      CloseDate: day(Math.floor(next() * 730)),
      LastContact: new Date(Date.UTC(2024, 0, 1) + Math.floor(next() * 365 * 86_400_000)).toISOString(),
      Status: pickOf(STATUS_OPTIONS),
      Tags: tags,
      Won: next() < 0.2,
      Files:
        next() < 0.1
          ? [
              {
                url: `https://cdn.example.com/contracts/${ref}.pdf`,
                fileName: `${ref}.pdf`,
                size: 12_345,
                mimeType: 'application/pdf',
              },
            ]
          : [],
      Company: [pickOf(companies)],
      Ref: ref,
    };
  };

  const existingRef = () => `D-${String(1 + Math.floor(next() * dataset.rows)).padStart(7, '0')}`;
  /** Half keys of loaded records (updated), half new keys (created); no field the reads filter on. */
  const upsertRecords = (sequence: number) => {
    const refs = new Set<string>();
    while (refs.size < RECORDS_PER_REQUEST / 2) refs.add(existingRef());
    const existing = [...refs];
    return Array.from({ length: RECORDS_PER_REQUEST }, (_, i) => ({
      Ref: i % 2 === 0 ? existing[i / 2]! : `U-${runId}-${sequence}-${i}`,
      Quantity: 1 + Math.floor(next() * 500),
      Rating: Math.floor(next() * 6),
      Notes: words(6),
      Won: next() < 0.2,
    }));
  };

  // Every field is covered, so the field list the benchmark claims stays honest.
  const covered = Object.keys(fullRecord('x'));
  const missing = DEALS_FIELDS.filter((field) => !covered.includes(field.name));
  if (missing.length > 0)
    throw new Error(`bulk create records lack ${missing.map((m) => m.name).join(', ')}`);

  return [
    {
      id: 'Q5',
      title: 'bulk create, 100 records per request (every field type)',
      expectedStatus: 201,
      recordsPerRequest: RECORDS_PER_REQUEST,
      body: (_worker, sequence) =>
        JSON.stringify({
          records: Array.from({ length: RECORDS_PER_REQUEST }, (_, i) =>
            fullRecord(`B-${runId}-${sequence}-${i}`),
          ),
        }),
    },
    {
      id: 'Q6',
      title: 'upsert, 100 records per request, matchOn Ref (50 existing + 50 new keys)',
      expectedStatus: 200,
      recordsPerRequest: RECORDS_PER_REQUEST,
      body: (_worker, sequence) =>
        JSON.stringify({ records: upsertRecords(sequence), matchOn: [dataset.deals.fieldIds.Ref] }),
    },
  ];
}
