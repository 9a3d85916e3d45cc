import { qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import { type DatabaseDto, fieldIdsOf, pick, seededInsert, select, timed, uuidV7 } from '../lib/sql-dataset';

/**
 * The exported table: a base with one table of the usual column mix (text, long text with the
 * characters CSV must quote, email, numbers, date, datetime, single select, checkbox), its table
 * and fields created through the API, its rows generated in SQL straight into the physical table
 * (INSERT … SELECT generate_series, with the helpers of lib/sql-dataset.ts), then
 * VACUUM ANALYZE, so neither reader pays for hint bits or a missing visibility map.
 */

/** The words the rows are drawn from. */
const STATUS_OPTIONS = ['Lead', 'Qualified', 'Proposal', 'Won', 'Lost'] as const;
const ORGS = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Stark',
  'Wayne',
  'Wonka',
  'Tyrell',
  'Vandelay',
];
const SECTORS = ['Software', 'Hardware', 'Services', 'Logistics'];
const NOTE_WORDS = [
  'call',
  'scheduled',
  'follow',
  'up',
  'with',
  'procurement',
  'legal',
  'review',
  'budget',
  'quote',
];

export const EXPORT_FIELDS = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Notes', type: 'long_text' },
  { name: 'Email', type: 'email' },
  { name: 'Quantity', type: 'number' },
  { name: 'Amount', type: 'currency' },
  { name: 'CloseDate', type: 'date' },
  { name: 'LastContact', type: 'datetime' },
  { name: 'Status', type: 'single_select', template: select(STATUS_OPTIONS) },
  { name: 'Won', type: 'checkbox' },
] as const;

export type ExportFieldName = (typeof EXPORT_FIELDS)[number]['name'];

export interface ExportDataset {
  databaseId: string;
  tableId: string;
  /** The physical table, schema-qualified and quoted. */
  physical: string;
  /** The field columns in the table's field order: the export's columns. */
  columns: string[];
  rows: number;
  steps: [string, number][];
}

function insertSql(physical: string, fieldIds: Record<ExportFieldName, string>): string {
  const orEmpty = (share: number, value: string) =>
    `CASE WHEN random() < ${share} THEN NULL ELSE ${value} END`;
  const values: Record<ExportFieldName, string> = {
    Name: `s.org || ' ' || s.sector || ' #' || s.g`,
    // About one in ten has a comma, a quoted word and a line break: what CSV quotes and escapes.
    Notes: orEmpty(
      0.3,
      `(SELECT string_agg(${pick(NOTE_WORDS)}, ' ') FROM generate_series(1, 6 + (s.g % 15)))
        || CASE WHEN s.g % 10 = 0 THEN E', "urgent"\\nsee thread' ELSE '' END`,
    ),
    Email: orEmpty(0.2, `'buyer.' || s.g || '@' || lower(s.org) || '.example.com'`),
    Quantity: orEmpty(0.1, `(1 + floor(random() * 500))::double precision`),
    Amount: orEmpty(0.05, `round((random() * 100000)::numeric, 2)::double precision`),
    CloseDate: orEmpty(0.3, `date '2024-01-01' + floor(random() * 730)::int`),
    LastContact: orEmpty(0.3, `s.ts + random() * interval '30 days'`),
    Status: orEmpty(0.05, pick(STATUS_OPTIONS)),
    Won: 'random() < 0.2',
  };
  const columns = ['id', 'created_at', 'updated_at', ...EXPORT_FIELDS.map((field) => fieldIds[field.name])];
  const selected = [
    uuidV7('s.ts', 's.h'),
    's.ts',
    's.ts',
    ...EXPORT_FIELDS.map((field) => values[field.name]),
  ];
  return `INSERT INTO ${physical} (${columns.map(quoteIdent).join(', ')})
    SELECT ${selected.join(',\n      ')}
    FROM (
      SELECT g, timestamptz '2024-01-01 00:00:00+00' + g * interval '15 seconds' AS ts, md5(g::text || random()::text) AS h,
             ${pick(ORGS)} AS org, ${pick(SECTORS)} AS sector
        FROM generate_series(1, $1::int) AS g
      OFFSET 0
    ) AS s`;
}

export async function createDataset(pool: pg.Pool, api: ApiClient, rows: number): Promise<ExportDataset> {
  const steps: [string, number][] = [];
  const base = await timed(steps, 'create the base, table and fields (API)', () =>
    api.expect<DatabaseDto>(201, 'POST', '/bases', {
      name: 'Export',
      tables: [{ name: 'Deals', fields: EXPORT_FIELDS }],
    }),
  );
  const table = base.tables[0]!;
  const fieldIds = fieldIdsOf<ExportFieldName>(table, EXPORT_FIELDS);
  const physical = qualifiedTable(`base_${base.id.replace(/-/g, '')}`, table.id);
  await timed(steps, `insert ${rows} records (SQL)`, () =>
    seededInsert(pool, 0.42, insertSql(physical, fieldIds), rows),
  );
  await timed(steps, 'VACUUM ANALYZE', () => pool.query(`VACUUM (ANALYZE) ${physical}`));
  return {
    databaseId: base.id,
    tableId: table.id,
    physical,
    columns: EXPORT_FIELDS.map((field) => fieldIds[field.name]),
    rows,
    steps,
  };
}
