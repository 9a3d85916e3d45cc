import { randomUUID } from 'node:crypto';
import { type FieldType, groupOfFieldType } from '@recordbase/contracts/fields';
import {
  type Filter,
  type FilterOperator,
  filterOperatorsByFieldTypeGroup,
  type RecordValue,
  type Sort,
  type TableRecord,
} from '@recordbase/contracts/records';
import { createDb, type Db, newDatabaseId, newFieldId, newTableId, withTransaction } from '@recordbase/db';
import {
  addField,
  createDatabaseSchema,
  createTable,
  linkTableName,
  type PhysicalField,
  type PhysicalTable,
  qualifiedTable,
  quoteIdent,
  SqlParams,
  schemaNameForDatabase,
} from '@recordbase/db/physical';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { compareForSort, matchesFilter } from '@recordbase/domain/records/filter-evaluator';
import { compileFilter, compileSort } from '@recordbase/domain/records/query-compiler';
import { buildTableMeta, type FieldMeta, type TableMeta } from '@recordbase/domain/records/table-meta';

/**
 * Compiled filters and sorts against a real PostgreSQL table holding one field of every type,
 * each result checked twice: against the rows this file expects, and against the in-memory
 * evaluator (filter-evaluator.ts) run over the same rows read back in API shape.
 *
 * Seven rows, a to g. Row c is never written: every column keeps its default (NULL, '{}',
 * false, '[]', no links). The other rows mix matching, non-matching and explicitly empty values.
 */

const LABELS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'] as const;
type Label = (typeof LABELS)[number];
const ALL = LABELS.join(' ');

// --- The data, column by column (a, b, c, d, e, f, g; undefined = never written) --------------

const TEXT = ['Apple pie', 'apple', undefined, '', 'Banana_split 100%', 'PINEAPPLE', 'back\\slash'];
const NUMBERS = [5, 2, undefined, 10, 0, 5, 7];
const RATIOS = [0.1, -1.5, undefined, 2.25, 0, 1e-9, 100];
const DATES = ['2024-03-01', '2024-02-29', undefined, '2023-12-31', '2024-03-02', '2024-03-01', '1999-01-01'];
const DATE_TIMES = [
  '2024-03-01T00:00:00.000000Z',
  '2024-03-01T23:59:59.999999Z',
  undefined,
  '2024-03-02T00:00:00.000000Z',
  '2024-02-29T23:59:59.999000Z',
  '2024-03-01T12:30:00.000000Z',
  '2030-01-01T08:00:00.000000Z',
];
const STATUSES = ['Red', 'Green', undefined, 'Dark Red', 'Blue', 'Red', null];
const TAGS = [['Urgent'], ['Home', 'Work'], undefined, ['Work'], ['Urgent', 'Work'], ['Home'], []];
const DONE = [true, false, undefined, true, false, true, false];
const file = (name: string) => ({
  url: `https://files.example.com/${name}`,
  fileName: name,
  size: 10,
  mimeType: 'text/plain',
});
const FILES = [[file('a.txt')], [], undefined, [file('b.txt'), file('c.txt')], [], [file('d.txt')], []];
const PEOPLE = { p1: randomUUID(), p2: randomUUID(), p3: randomUUID() };
const { p1, p2, p3 } = PEOPLE;
const OWNERS = [[p1], [p1, p2], undefined, [p3], [], [p2], [p2, p3]];
const CREATED = [
  '2024-01-01T00:00:00Z',
  '2024-01-01T12:00:00Z',
  '2023-12-31T23:59:59.999999Z',
  '2024-01-02T00:00:00Z',
  '2024-01-01T00:00:00Z',
  '2024-01-01T23:59:59.999999Z',
  '2025-06-01T00:00:00+02:00',
];
const UPDATED = [
  '2024-02-01T00:00:00Z',
  '2024-02-01T10:00:00Z',
  '2024-02-01T10:00:00Z',
  '2024-02-02T00:00:00Z',
  '2024-02-01T10:00:00Z',
  '2024-01-31T23:59:59Z',
  '2025-06-01T00:00:00Z',
];

interface FieldSpec {
  name: string;
  type: FieldType;
  values: unknown[];
  template?: Record<string, unknown>;
}

const FIELDS: FieldSpec[] = [
  { name: 'Title', type: 'single_line_text', values: TEXT },
  { name: 'Notes', type: 'long_text', values: TEXT },
  { name: 'Email', type: 'email', values: TEXT },
  { name: 'Website', type: 'url', values: TEXT },
  { name: 'Phone', type: 'phone_number', values: TEXT },
  { name: 'Count', type: 'number', values: NUMBERS },
  { name: 'Amount', type: 'currency', values: NUMBERS },
  { name: 'Share', type: 'percent', values: NUMBERS },
  { name: 'Stars', type: 'rating', values: NUMBERS },
  { name: 'Time spent', type: 'duration', values: NUMBERS },
  { name: 'Ratio', type: 'number', values: RATIOS },
  { name: 'Due', type: 'date', values: DATES },
  { name: 'Starts at', type: 'datetime', values: DATE_TIMES },
  {
    name: 'Status',
    type: 'single_select',
    values: STATUSES,
    template: { options: ['Red', 'Green', 'Blue', 'Dark Red'].map((name) => ({ name })) },
  },
  {
    name: 'Tags',
    type: 'multiple_select',
    values: TAGS,
    template: { options: ['Urgent', 'Home', 'Work'].map((name) => ({ name })) },
  },
  { name: 'Done', type: 'checkbox', values: DONE },
  { name: 'Files', type: 'attachments', values: FILES },
  { name: 'Owners', type: 'linked_record', values: OWNERS },
];

// --- The cases -----------------------------------------------------------------------------------

/** [operator, operand, the rows that match, as labels] */
type Case = [FilterOperator, unknown, string];

const RECORD_IDS: Record<Label, string> = Object.fromEntries(
  LABELS.map((label) => [label, randomUUID()]),
) as Record<Label, string>;
const UNKNOWN_ID = randomUUID();

const TEXT_CASES: Case[] = [
  ['equals', 'apple', 'b'],
  ['equals', 'Apple pie', 'a'],
  ['equals', 'Apple', ''],
  ['equals', '', 'd'],
  ['does_not_equal', 'apple', 'a c d e f g'],
  ['does_not_equal', '', 'a b c e f g'],
  ['contains', 'APPLE', 'a b f'],
  ['contains', '_', 'e'],
  ['contains', '%', 'e'],
  ['contains', '\\', 'g'],
  ['contains', 'e_p', ''],
  ['contains', 'zzz', ''],
  ['contains', '', 'a b d e f g'],
  ['does_not_contain', 'apple', 'c d e g'],
  ['does_not_contain', '%', 'a b c d f g'],
  ['does_not_contain', '', 'c'],
  ['starts_with', 'APP', 'a b'],
  ['starts_with', 'b', 'e g'],
  ['starts_with', 'banana_', 'e'],
  ['starts_with', 'banana%', ''],
  ['starts_with', 'pie', ''],
  ['ends_with', 'PIE', 'a'],
  ['ends_with', '100%', 'e'],
  ['ends_with', '0_%', ''],
  ['ends_with', 'apple', 'b f'],
  ['is_empty', true, 'c d'],
  ['is_not_empty', true, 'a b e f g'],
  ['in', ['apple', 'Apple pie', 'nope'], 'a b'],
  ['in', ['APPLE'], ''],
  ['in', [''], 'd'],
  ['in', [], ''],
  ['not_in', ['apple', 'Apple pie'], 'c d e f g'],
  ['not_in', ['PINEAPPLE', ''], 'a b c e g'],
  ['not_in', [], ALL],
];

const NUMBER_CASES: Case[] = [
  ['equals', 5, 'a f'],
  ['equals', 0, 'e'],
  ['equals', 6, ''],
  ['does_not_equal', 5, 'b c d e g'],
  ['does_not_equal', 0, 'a b c d f g'],
  ['greater_than', 5, 'd g'],
  ['greater_than', -1, 'a b d e f g'],
  ['greater_than', 10, ''],
  ['greater_than_or_equal_to', 5, 'a d f g'],
  ['greater_than_or_equal_to', 0, 'a b d e f g'],
  ['less_than', 2, 'e'],
  ['less_than', 5, 'b e'],
  ['less_than', 0, ''],
  ['less_than_or_equal_to', 2, 'b e'],
  ['less_than_or_equal_to', 10, 'a b d e f g'],
  ['is_empty', true, 'c'],
  ['is_not_empty', true, 'a b d e f g'],
  ['in', [2, 10, 99], 'b d'],
  ['in', [0], 'e'],
  ['in', [], ''],
  ['not_in', [5, 0], 'b c d g'],
  ['not_in', [99], ALL],
  ['not_in', [], ALL],
];

const RATIO_CASES: Case[] = [
  ['equals', 0.1, 'a'],
  ['equals', 1e-9, 'f'],
  ['does_not_equal', 0.1, 'b c d e f g'],
  ['greater_than', 0, 'a d f g'],
  ['greater_than_or_equal_to', 0, 'a d e f g'],
  ['less_than', 0, 'b'],
  ['less_than_or_equal_to', 0.1, 'a b e f'],
  ['is_empty', true, 'c'],
  ['is_not_empty', true, 'a b d e f g'],
  ['in', [0.1, 2.25, 3], 'a d'],
  ['not_in', [0.1, 2.25], 'b c e f g'],
];

const DATE_CASES: Case[] = [
  ['equals', '2024-03-01', 'a f'],
  ['equals', '2024-02-29', 'b'],
  ['equals', '2024-03-01T23:30:00-02:00', 'e'],
  ['equals', '2024-03-01T01:30:00+02:00', 'b'],
  ['equals', '2000-01-01', ''],
  ['does_not_equal', '2024-03-01', 'b c d e g'],
  ['greater_than', '2024-02-29', 'a e f'],
  ['greater_than', '2024-03-02', ''],
  ['greater_than_or_equal_to', '2024-02-29', 'a b e f'],
  ['greater_than_or_equal_to', '2024-02-29T22:00:00-03:00', 'a e f'],
  ['less_than', '2024-01-01', 'd g'],
  ['less_than', '1999-01-01', ''],
  ['less_than_or_equal_to', '2023-12-31', 'd g'],
  ['less_than_or_equal_to', '2024-03-01', 'a b d f g'],
  ['is_empty', true, 'c'],
  ['is_not_empty', true, 'a b d e f g'],
];

const DATE_TIME_CASES: Case[] = [
  // A date-only operand: the whole UTC day.
  ['equals', '2024-03-01', 'a b f'],
  ['does_not_equal', '2024-03-01', 'c d e g'],
  ['greater_than', '2024-03-01', 'd g'],
  ['greater_than_or_equal_to', '2024-03-01', 'a b d f g'],
  ['less_than', '2024-03-01', 'e'],
  ['less_than_or_equal_to', '2024-03-01', 'a b e f'],
  ['equals', '2024-03-03', ''],
  // A date-time operand: an instant.
  ['equals', '2024-03-01T12:30:00Z', 'f'],
  ['equals', '2024-03-01T14:30:00+02:00', 'f'],
  ['equals', '2024-03-01T12:30:00.000001Z', ''],
  ['equals', '2024-03-01T23:59:59.999999Z', 'b'],
  ['does_not_equal', '2024-03-01T12:30:00Z', 'a b c d e g'],
  ['greater_than', '2024-03-01T12:30:00Z', 'b d g'],
  ['greater_than', '2024-03-01T23:59:59.999999Z', 'd g'],
  ['greater_than_or_equal_to', '2024-03-01T12:30:00Z', 'b d f g'],
  ['less_than', '2024-03-01T12:30:00Z', 'a e'],
  ['less_than', '2024-03-01T00:00:00.000001+00:00', 'a e'],
  ['less_than_or_equal_to', '2024-03-01T07:30:00-05:00', 'a e f'],
  ['less_than', '1990-01-01T00:00:00Z', ''],
  ['is_empty', true, 'c'],
  ['is_not_empty', true, 'a b d e f g'],
];

const SINGLE_SELECT_CASES: Case[] = [
  ['equals', 'Red', 'a f'],
  ['equals', 'red', ''],
  ['equals', 'Purple', ''],
  ['does_not_equal', 'Red', 'b c d e g'],
  ['contains', 'red', 'a d f'],
  ['contains', 'RE', 'a b d f'],
  ['contains', 'x', ''],
  ['does_not_contain', 'red', 'b c e g'],
  ['does_not_contain', 'x', ALL],
  ['is_empty', true, 'c g'],
  ['is_not_empty', true, 'a b d e f'],
  ['in', ['Red', 'Blue'], 'a e f'],
  ['in', ['Purple'], ''],
  ['in', [], ''],
  ['not_in', ['Red', 'Blue'], 'b c d g'],
  ['not_in', [], ALL],
];

const MULTIPLE_SELECT_CASES: Case[] = [
  ['contains', 'Work', 'b d e'],
  ['contains', 'work', ''],
  ['contains', 'Purple', ''],
  ['does_not_contain', 'Work', 'a c f g'],
  ['does_not_contain', 'Purple', ALL],
  ['equals', 'Work', 'd'],
  ['equals', 'Urgent', 'a'],
  ['equals', 'Purple', ''],
  ['does_not_equal', 'Work', 'a b c e f g'],
  ['in', ['Urgent', 'Home'], 'a b e f'],
  ['in', ['Purple'], ''],
  ['in', [], ''],
  ['not_in', ['Urgent', 'Home'], 'c d g'],
  ['not_in', [], ALL],
  ['is_empty', true, 'c g'],
  ['is_not_empty', true, 'a b d e f'],
];

const CHECKBOX_CASES: Case[] = [
  ['equals', true, 'a d f'],
  ['equals', false, 'b c e g'],
  ['does_not_equal', true, 'b c e g'],
  ['does_not_equal', false, 'a d f'],
];

const ATTACHMENT_CASES: Case[] = [
  ['is_empty', true, 'b c e g'],
  ['is_not_empty', true, 'a d f'],
];

const LINKED_RECORD_CASES: Case[] = [
  ['contains', p1, 'a b'],
  ['contains', p3.toUpperCase(), 'd g'],
  ['contains', UNKNOWN_ID, ''],
  ['does_not_contain', p1, 'c d e f g'],
  ['does_not_contain', UNKNOWN_ID, ALL],
  ['is_empty', true, 'c e'],
  ['is_not_empty', true, 'a b d f g'],
  ['in', [p1, p3], 'a b d g'],
  ['in', [UNKNOWN_ID], ''],
  ['in', [], ''],
  ['not_in', [p1, p3], 'c e f'],
  ['not_in', [p2], 'a c d e'],
  ['not_in', [], ALL],
];

const ID_CASES: Case[] = [
  ['equals', RECORD_IDS.a, 'a'],
  ['equals', RECORD_IDS.b.toUpperCase(), 'b'],
  ['equals', UNKNOWN_ID, ''],
  ['does_not_equal', RECORD_IDS.a, 'b c d e f g'],
  ['in', [RECORD_IDS.a, RECORD_IDS.c, UNKNOWN_ID], 'a c'],
  ['in', [], ''],
  ['not_in', [RECORD_IDS.a, RECORD_IDS.c], 'b d e f g'],
  ['not_in', [], ALL],
];

const CREATED_AT_CASES: Case[] = [
  ['equals', '2024-01-01', 'a b e f'],
  ['equals', '2024-01-01T00:00:00Z', 'a e'],
  ['equals', '2025-05-31T22:00:00Z', 'g'],
  ['does_not_equal', '2024-01-01', 'c d g'],
  ['does_not_equal', '2024-01-01T00:00:00+00:00', 'b c d f g'],
  ['greater_than', '2024-01-01', 'd g'],
  ['greater_than', '2024-01-01T12:00:00Z', 'd f g'],
  ['greater_than_or_equal_to', '2024-01-01', 'a b d e f g'],
  ['greater_than_or_equal_to', '2024-01-01T12:00:00Z', 'b d f g'],
  ['less_than', '2024-01-01', 'c'],
  ['less_than', '2024-01-01T12:00:00Z', 'a c e'],
  ['less_than_or_equal_to', '2024-01-01', 'a b c e f'],
  ['less_than_or_equal_to', '2024-01-01T12:00:00Z', 'a b c e'],
  ['is_empty', true, ''],
  ['is_not_empty', true, ALL],
];

const UPDATED_AT_CASES: Case[] = [
  ['equals', '2024-02-01', 'a b c e'],
  ['equals', '2024-02-01T10:00:00Z', 'b c e'],
  ['does_not_equal', '2024-02-01', 'd f g'],
  ['greater_than', '2024-02-01', 'd g'],
  ['greater_than_or_equal_to', '2024-02-01T10:00:00Z', 'b c d e g'],
  ['less_than', '2024-02-01', 'f'],
  ['less_than_or_equal_to', '2024-02-01T00:00:00Z', 'a f'],
  ['is_empty', true, ''],
  ['is_not_empty', true, ALL],
];

const casesByType: Record<FieldType, Case[]> = {
  single_line_text: TEXT_CASES,
  long_text: TEXT_CASES,
  email: TEXT_CASES,
  url: TEXT_CASES,
  phone_number: TEXT_CASES,
  number: NUMBER_CASES,
  currency: NUMBER_CASES,
  percent: NUMBER_CASES,
  rating: NUMBER_CASES,
  duration: NUMBER_CASES,
  date: DATE_CASES,
  datetime: DATE_TIME_CASES,
  single_select: SINGLE_SELECT_CASES,
  multiple_select: MULTIPLE_SELECT_CASES,
  checkbox: CHECKBOX_CASES,
  attachments: ATTACHMENT_CASES,
  linked_record: LINKED_RECORD_CASES,
  // Computed types hold no written values to seed rows with: computed-fields.test.ts checks their
  // filters against the oracle through the API.
  autonumber: [],
  created_time: [],
  last_modified_time: [],
  created_by: [],
  last_modified_by: [],
  // Formulas filter as their result type: computed-fields.test.ts and formula-fields.test.ts.
  formula: [],
  // Counts, lookups and rollups filter as their result type: linked-values.test.ts.
  count: [],
  lookup: [],
  rollup: [],
};

/** [field, operator, operand, expected labels] for every field and system field. */
const CONDITIONS: [string, FilterOperator, unknown, string][] = [
  ...FIELDS.flatMap((field) =>
    (field.name === 'Ratio' ? RATIO_CASES : casesByType[field.type]).map(
      ([operator, operand, expected]) =>
        [field.name, operator, operand, expected] as [string, FilterOperator, unknown, string],
    ),
  ),
  ...ID_CASES.map(
    ([operator, operand, expected]) =>
      ['id', operator, operand, expected] as [string, FilterOperator, unknown, string],
  ),
  ...CREATED_AT_CASES.map(
    ([operator, operand, expected]) =>
      ['createdAt', operator, operand, expected] as [string, FilterOperator, unknown, string],
  ),
  ...UPDATED_AT_CASES.map(
    ([operator, operand, expected]) =>
      ['updatedAt', operator, operand, expected] as [string, FilterOperator, unknown, string],
  ),
];

const GROUP_CASES: [Filter, string][] = [
  [
    {
      and: [
        { field: 'Title', contains: 'apple' },
        { field: 'Count', greater_than: 2 },
      ],
    },
    'a f',
  ],
  [
    {
      or: [
        { field: 'Status', equals: 'Blue' },
        { field: 'Tags', equals: 'Work' },
      ],
    },
    'd e',
  ],
  [
    {
      and: [
        {
          or: [
            { field: 'Done', equals: true },
            { field: 'Owners', is_empty: true },
          ],
        },
        {
          or: [
            { field: 'Due', is_empty: true },
            { field: 'Starts at', greater_than: '2024-03-01' },
          ],
        },
      ],
    },
    'c d',
  ],
  [
    {
      or: [
        {
          and: [
            { field: 'Files', is_not_empty: true },
            { field: 'Ratio', less_than: 1 },
          ],
        },
        {
          and: [
            { field: 'id', equals: RECORD_IDS.g },
            { field: 'createdAt', greater_than: '2025-01-01' },
          ],
        },
      ],
    },
    'a f g',
  ],
  [{ and: [{ field: 'Title', is_not_empty: true }] }, 'a b e f g'],
  [{ or: [{ and: [{ or: [{ field: 'Stars', equals: 7 }] }] }] }, 'g'],
];

// --- The database --------------------------------------------------------------------------------

let testDb: TestDatabase;
let db: Db;
let table: TableMeta;
let thingsRef: string;
/** The rows read back in API shape, in insertion order. */
let records: TableRecord[];
const labelById = new Map<string, Label>(LABELS.map((label) => [RECORD_IDS[label], label]));

async function run(statements: string[]) {
  await withTransaction(db.pool, async (client) => {
    for (const statement of statements) await client.query(statement);
  });
}

const castByType: Record<Exclude<FieldType, 'linked_record'>, string> = {
  single_line_text: 'text',
  long_text: 'text',
  email: 'text',
  url: 'text',
  phone_number: 'text',
  number: 'double precision',
  currency: 'double precision',
  percent: 'double precision',
  rating: 'smallint',
  duration: 'double precision',
  date: 'date',
  datetime: 'timestamptz',
  single_select: 'text',
  multiple_select: 'text[]',
  checkbox: 'boolean',
  attachments: 'jsonb',
  autonumber: 'bigint',
  created_time: 'timestamptz',
  last_modified_time: 'timestamptz',
  created_by: 'jsonb',
  last_modified_by: 'jsonb',
  formula: 'text',
  count: 'double precision',
  lookup: 'jsonb',
  rollup: 'double precision',
};

/** How a column is read so its value comes back in API shape. */
function selectExpression(field: FieldMeta): string {
  const column = `r.${quoteIdent(field.id)}`;
  if (field.type === 'linked_record') {
    const links = qualifiedTable(table.schemaName, linkTableName(field.id));
    return `ARRAY(SELECT l.linked_id::text FROM ${links} AS l WHERE l.record_id = r.id ORDER BY l.position)`;
  }
  if (field.type === 'date') return `${column}::text`;
  if (field.type === 'datetime') return utcText(column);
  return column;
}

function utcText(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** A row of the physical table (as selected above) → the record the API would return. */
function rowToRecord(row: Record<string, unknown>): TableRecord {
  const data: Record<string, RecordValue> = {};
  const fields: Record<string, RecordValue> = {};
  for (const field of table.fields) {
    const value = (row[field.id] ?? null) as RecordValue;
    data[field.id] = value;
    fields[field.name] = value;
  }
  return {
    id: row.id as string,
    data,
    fields,
    createdAt: row.created_at as string,
    updatedAt: row.updated_at as string,
  };
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url, { maxConnections: 3 });

  const databaseId = newDatabaseId();
  const schemaName = schemaNameForDatabase(databaseId);
  const people: PhysicalTable = { schemaName, id: newTableId(), name: 'People' };
  const things: PhysicalTable = { schemaName, id: newTableId(), name: 'Things' };
  const metas: FieldMeta[] = FIELDS.map((spec) => ({
    id: newFieldId(),
    name: spec.name,
    type: spec.type,
    template: (spec.type === 'linked_record'
      ? { tableId: people.id }
      : (spec.template ?? {})) as FieldMeta['template'],
  }));
  const physical = (meta: FieldMeta): PhysicalField => ({
    id: meta.id,
    name: meta.name,
    type: meta.type,
    ...(meta.type === 'linked_record' ? { linkedTableId: people.id } : {}),
  });
  // Most fields come with the table; Ratio and the link field are added after, as the service does.
  const later = (meta: FieldMeta) => meta.type === 'linked_record' || meta.name === 'Ratio';
  await run([
    ...createDatabaseSchema(databaseId),
    ...createTable(people, [{ id: newFieldId(), name: 'Name', type: 'single_line_text' }]),
    ...createTable(things, metas.filter((meta) => !later(meta)).map(physical)),
    ...metas.filter(later).flatMap((meta) => addField(things, physical(meta))),
  ]);

  table = buildTableMeta({
    databaseId,
    schemaName,
    id: things.id,
    name: things.name,
    primaryFieldId: metas[0]!.id,
    fields: metas,
  });
  thingsRef = qualifiedTable(schemaName, things.id);

  await db.pool.query(`INSERT INTO ${qualifiedTable(schemaName, people.id)} (id) VALUES ($1), ($2), ($3)`, [
    p1,
    p2,
    p3,
  ]);
  const linkField = metas.find((meta) => meta.type === 'linked_record')!;
  const links = qualifiedTable(schemaName, linkTableName(linkField.id));
  for (const [index, label] of LABELS.entries()) {
    const columns = ['id', 'created_at', 'updated_at'];
    const params = new SqlParams();
    const values = [
      `${params.add(RECORD_IDS[label])}::uuid`,
      `${params.add(CREATED[index])}::timestamptz`,
      `${params.add(UPDATED[index])}::timestamptz`,
    ];
    FIELDS.forEach((spec, fieldIndex) => {
      const meta = metas[fieldIndex]!;
      const value = spec.values[index];
      if (value === undefined || meta.type === 'linked_record') return;
      columns.push(quoteIdent(meta.id));
      const param = meta.type === 'attachments' ? JSON.stringify(value) : value;
      values.push(`${params.add(param)}::${castByType[meta.type]}`);
    });
    await db.pool.query(
      `INSERT INTO ${thingsRef} (${columns.join(', ')}) VALUES (${values.join(', ')})`,
      params.values,
    );
    const linked = (OWNERS[index] ?? []) as string[];
    for (const [position, linkedId] of linked.entries()) {
      await db.pool.query(`INSERT INTO ${links} (record_id, linked_id, position) VALUES ($1, $2, $3)`, [
        RECORD_IDS[label],
        linkedId,
        position,
      ]);
    }
  }

  const select = [
    'r.id::text AS id',
    `${utcText('r.created_at')} AS created_at`,
    `${utcText('r.updated_at')} AS updated_at`,
    ...table.fields.map((field) => `${selectExpression(field)} AS ${quoteIdent(field.id)}`),
  ];
  const result = await db.pool.query(`SELECT ${select.join(', ')} FROM ${thingsRef} AS r ORDER BY r.seq`);
  records = result.rows.map(rowToRecord);
});

afterAll(async () => {
  await db?.close();
  await testDb?.drop();
});

const labelsOf = (ids: string[]) => ids.map((id) => labelById.get(id) ?? id);
const sortedLabels = (text: string) => (text === '' ? [] : text.split(' ').sort());

async function matchingLabels(filter: Filter): Promise<string[]> {
  const params = new SqlParams();
  const where = compileFilter(filter, table, params);
  const result = await db.pool.query<{ id: string }>(
    `SELECT r.id::text AS id FROM ${thingsRef} AS r WHERE ${where}`,
    params.values,
  );
  return labelsOf(result.rows.map((row) => row.id)).sort();
}

function evaluatedLabels(filter: Filter): string[] {
  return labelsOf(
    records.filter((record) => matchesFilter(record, filter, table)).map((record) => record.id),
  ).sort();
}

// --- The tests -----------------------------------------------------------------------------------

describe('the fixture', () => {
  it('reads back in API shape, empty values as the contract says', () => {
    const c = records[2]!;
    expect(c.id).toBe(RECORD_IDS.c);
    expect(c.fields).toEqual({
      ...Object.fromEntries(FIELDS.map((spec) => [spec.name, null])),
      Tags: [],
      Done: false,
      Files: [],
      Owners: [],
    });
    const a = records[0]!;
    expect(a.fields).toMatchObject({
      Title: 'Apple pie',
      Stars: 5,
      Ratio: 0.1,
      Due: '2024-03-01',
      'Starts at': '2024-03-01T00:00:00.000000Z',
      Status: 'Red',
      Tags: ['Urgent'],
      Done: true,
      Files: [file('a.txt')],
      Owners: [p1],
    });
    expect(records[6]!.createdAt).toBe('2025-05-31T22:00:00.000000Z');
    expect(records.map((record) => record.fields.Owners)).toEqual(OWNERS.map((owners) => owners ?? []));
  });

  it('covers every operator of every field type with matching and non-matching rows', () => {
    const missing: string[] = [];
    for (const spec of FIELDS) {
      for (const operator of filterOperatorsByFieldTypeGroup[groupOfFieldType(spec.type)]) {
        const results = CONDITIONS.filter(([field, op]) => field === spec.name && op === operator).map(
          ([, , , expected]) => sortedLabels(expected).length,
        );
        // At least one case where some rows match and others do not.
        if (!results.some((count) => count > 0 && count < LABELS.length))
          missing.push(`${spec.name} ${operator}`);
      }
    }
    for (const [system, operators] of [
      ['id', ['equals', 'does_not_equal', 'in', 'not_in']],
      ['createdAt', filterOperatorsByFieldTypeGroup.date],
      ['updatedAt', filterOperatorsByFieldTypeGroup.date],
    ] as const) {
      for (const operator of operators) {
        if (!CONDITIONS.some(([field, op]) => field === system && op === operator))
          missing.push(`${system} ${operator}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('holds an empty value in every field', () => {
    for (const field of table.fields) {
      const empty = records.filter((record) => {
        const value = record.data[field.id];
        return (
          value === null || value === '' || value === false || (Array.isArray(value) && value.length === 0)
        );
      });
      expect([field.name, empty.length > 0]).toEqual([field.name, true]);
    }
  });
});

describe('every operator on every field type, against PostgreSQL and the evaluator', () => {
  it.each(CONDITIONS)('%s %s %j → [%s]', async (field, operator, operand, expected) => {
    const filter = { field, [operator]: operand } as Filter;
    const fromSql = await matchingLabels(filter);
    expect(fromSql).toEqual(sortedLabels(expected));
    expect(evaluatedLabels(filter)).toEqual(fromSql);
  });
});

describe('groups', () => {
  it.each(GROUP_CASES)('%j → [%s]', async (filter, expected) => {
    const fromSql = await matchingLabels(filter);
    expect(fromSql).toEqual(sortedLabels(expected));
    expect(evaluatedLabels(filter)).toEqual(fromSql);
  });
});

describe('sorts, against PostgreSQL and compareForSort', () => {
  async function sqlOrder(sort: Sort[] | undefined): Promise<string[]> {
    const result = await db.pool.query<{ id: string }>(
      `SELECT r.id::text AS id FROM ${thingsRef} AS r ORDER BY ${compileSort(sort, table)}`,
    );
    return labelsOf(result.rows.map((row) => row.id));
  }

  /** compareForSort, ties kept in insertion order (Array.prototype.sort is stable) as r.seq does. */
  function expectedOrder(sort: Sort[] | undefined): string[] {
    const ordered = [...records].sort((a, b) => compareForSort(a, b, sort, table));
    return labelsOf(ordered.map((record) => record.id));
  }

  const single = [...FIELDS.map((spec) => spec.name), 'id', 'createdAt', 'updatedAt'].flatMap((field) =>
    (['asc', 'desc'] as const).map((direction): Sort[] => [{ field, direction }]),
  );
  const multiple: Sort[][] = [
    [
      { field: 'Done', direction: 'asc' },
      { field: 'Count', direction: 'desc' },
    ],
    [
      { field: 'Status', direction: 'desc' },
      { field: 'Title', direction: 'asc' },
    ],
    [
      { field: 'Tags', direction: 'desc' },
      { field: 'createdAt', direction: 'asc' },
    ],
    [
      { field: 'Files', direction: 'asc' },
      { field: 'Owners', direction: 'desc' },
      { field: 'Due', direction: 'asc' },
    ],
  ];

  it.each([undefined, [], ...single, ...multiple])('%j', async (sort) => {
    expect(await sqlOrder(sort)).toEqual(expectedOrder(sort));
  });

  it('spot checks: empty first ascending, last descending; text by code point; the default order', async () => {
    expect(await sqlOrder([{ field: 'Title', direction: 'asc' }])).toEqual([
      'c',
      'd',
      'a',
      'e',
      'f',
      'b',
      'g',
    ]);
    expect(await sqlOrder([{ field: 'Count', direction: 'desc' }])).toEqual([
      'd',
      'g',
      'a',
      'f',
      'b',
      'e',
      'c',
    ]);
    expect(await sqlOrder([{ field: 'Owners', direction: 'asc' }])).toEqual([
      'c',
      'e',
      'a',
      'd',
      'f',
      'b',
      'g',
    ]);
    expect(await sqlOrder(undefined)).toEqual(['c', 'a', 'e', 'b', 'f', 'd', 'g']);
  });
});
