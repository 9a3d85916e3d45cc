import type { FieldType } from '@recordbase/contracts/fields';
import type { TableRecord } from '@recordbase/contracts/records';
import fc from 'fast-check';
import { baseClient, type FieldBody } from './base-client';
import { createBase, type Harness, startHarness } from './harness';
import { CSV, type ImportFixture, importFixture, XLSX } from './import-fixture';

/**
 * The export round trip (api-contract "Export"): a random table exported as CSV or XLSX and read
 * back by the import flow into a new table gives the same values. The tables hold a random subset
 * of the field types whose values a file can carry (text, long text, email, url, phone, number,
 * currency, percent, rating, duration, checkbox, date, datetime, single select, and the computed
 * autonumber, created time and formulas), with hostile values: unicode, quotes, commas,
 * semicolons, line breaks, control characters, `_xHHHH_` look-alikes, edge spaces, formula
 * characters, large, tiny and negative numbers, dates around Excel's 1900 quirks, date-times
 * with milliseconds (midnight among them).
 *
 * Columns are matched by header name, rows by order. "The same value" means:
 * - an empty cell comes back empty (null, or false where the import typed the column checkbox);
 *   a column with no value at all may take any type;
 * - a number, checkbox, date or date-time (written, or a computed field's result) comes back as
 *   that type with the identical value: the import may not turn it into text;
 * - text (select options included) comes back as the identical string, except that in a CSV a
 *   cell starting with = + - @ tab or CR may carry the guard's `'` in front (the header too);
 * - text whose every value in the column reads as a number, checkbox or date is typed so by the
 *   import's inference (the file does not say it was text): then the value must be what the
 *   exported text means as that type, e.g. "007" → 7, " yes" → true.
 * Linked records, attachments, multiple selects, authors and lookups export as joined text that
 * no import reads back as the original value; they are left out.
 */

let h: Harness;
let f: ImportFixture;
let root: string;
let baseId: string;

const { url, newTable, list } = baseClient(
  () => h,
  () => baseId,
  () => root,
);

const RUNS = Number(process.env.EXPORT_ROUNDTRIP_RUNS ?? 20);

// Pieces of text that have broken some CSV or XLSX writer or reader somewhere.
const TEXT_PIECES = [
  'a',
  'Zoë',
  '中文',
  '😀',
  ' ',
  '  ',
  '"',
  '""',
  ',',
  ';',
  "'",
  '=',
  '+',
  '-',
  '@',
  '\t',
  '_x0041_',
  '_x005F_',
  '_x',
  '\u0001',
  '\u000b',
  '\u001f',
  '\u007f',
  '\u00a0',
  '\u2028',
  '\uFEFF',
  '\\',
  '<&>',
  ']]>',
  '0',
  '3.5',
  'true',
  '2024-01-02',
];
const LINE_BREAKS = ['\n', '\r\n', '\r'];

const noNul = (text: string) => text.replaceAll('\u0000', '');
const textOf = (pieces: fc.Arbitrary<string>) =>
  fc.array(pieces, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
const singleLine = textOf(
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...TEXT_PIECES) },
    { weight: 1, arbitrary: fc.string({ maxLength: 4, unit: 'grapheme' }).map(noNul) },
  ),
);
const multiLine = textOf(fc.constantFrom(...TEXT_PIECES, ...LINE_BREAKS));
/** Text that reads as another type: a column of only these is typed by the import's inference. */
const typedLookingText = fc.oneof(
  fc.integer({ min: -99999, max: 99999 }).map(String),
  fc.constantFrom('007', ' 42 ', '1.50', '-0.5', '1e3', '.5'),
  fc.constantFrom('yes', 'No', ' TRUE', 'x', 'unchecked'),
  fc.constantFrom('2024-02-29', ' 1899-12-31 '),
);

/** Numbers of up to 15 significant digits, as every spreadsheet keeps them. */
const decimalNumber = fc
  .tuple(fc.integer({ min: -999_999_999, max: 999_999_999 }), fc.integer({ min: 0, max: 6 }))
  .map(([units, places]) => units / 10 ** places);
const number = fc.oneof(
  { weight: 4, arbitrary: decimalNumber },
  { weight: 1, arbitrary: fc.constantFrom(1e21, -1.5e300, 123456789012345, 5e-7, 0.1, -2.5e-10) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 999_999_999_999_999 }), fc.integer({ min: -30, max: 30 }))
      .map(([digits, exponent]) => Number(`${digits}e${exponent}`)),
  },
);

const MS_PER_DAY = 86_400_000;
const FIRST_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');
/** Instants over the years 1 to 9999, many near 1900-01-01 to 1900-03-01 (Excel's phantom 29 February). */
const instant = fc.oneof(
  fc.integer({ min: FIRST_MS, max: LAST_MS }),
  fc.integer({ min: Date.parse('1899-12-29T00:00:00Z'), max: Date.parse('1900-03-03T00:00:00Z') }),
  fc.integer({ min: Date.parse('1990-01-01T00:00:00Z'), max: Date.parse('2040-01-01T00:00:00Z') }),
);
const day = instant.map((ms) => new Date(ms).toISOString().slice(0, 10));
const dateTime = fc.oneof(
  instant.map((ms) => new Date(ms).toISOString()),
  // Midnight UTC: an XLSX date cell whose time part is zero.
  instant.map((ms) => new Date(Math.floor(ms / MS_PER_DAY) * MS_PER_DAY).toISOString()),
);

const OPTIONS = ['Open', '-Void', 'a, b', 'Zoë "q"', '=1+1', '42'];
const EMAILS = ['a@example.com', '-x@example.org', "o'neil+tag@example.co.uk", 'zoë@exämple.com'];
const URLS = ['https://example.com', 'http://example.org/a,b?q="1"&r=2#f', 'https://x.example/=y'];
const PHONES = ['+1 555 0100', '(020) 7946-0000', '-555 123', '555.123.4567 x12'];

const nullable = (value: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 4, arbitrary: value }, { weight: 1, arbitrary: fc.constant(null) });

/** A value arbitrary for each kind of written field, by name (so counterexamples print short). */
const VALUES = {
  text: nullable(singleLine),
  typedText: nullable(typedLookingText),
  longText: nullable(multiLine),
  email: nullable(fc.constantFrom(...EMAILS)),
  url: nullable(fc.constantFrom(...URLS)),
  phone: nullable(fc.constantFrom(...PHONES)),
  number: nullable(number),
  decimal: nullable(decimalNumber),
  rating: nullable(fc.integer({ min: 0, max: 5 })),
  duration: nullable(decimalNumber.map(Math.abs)),
  checkbox: fc.boolean(),
  date: nullable(day),
  dateTime: nullable(dateTime),
  option: nullable(fc.constantFrom(...OPTIONS)),
} satisfies Record<string, fc.Arbitrary<unknown>>;

interface Kind {
  type: FieldType;
  template?: object;
  /** How its values are written; computed fields have none. */
  values?: keyof typeof VALUES;
}

const WRITTEN_KINDS: fc.Arbitrary<Kind> = fc.oneof(
  fc.constantFrom<Kind>(
    { type: 'single_line_text', values: 'text' },
    { type: 'single_line_text', values: 'typedText' },
    { type: 'long_text', values: 'longText' },
    { type: 'email', values: 'email' },
    { type: 'url', values: 'url' },
    { type: 'phone_number', values: 'phone' },
    { type: 'currency', values: 'decimal' },
    { type: 'percent', values: 'decimal' },
    { type: 'rating', template: { max: 5 }, values: 'rating' },
    { type: 'duration', values: 'duration' },
    { type: 'checkbox', values: 'checkbox' },
    { type: 'date', values: 'date' },
    { type: 'datetime', values: 'dateTime' },
    { type: 'single_select', template: { options: OPTIONS.map((name) => ({ name })) }, values: 'option' },
  ),
  fc
    .integer({ min: 0, max: 8 })
    .map((decimalPlaces): Kind => ({ type: 'number', template: { decimalPlaces }, values: 'number' })),
);

const COMPUTED_KINDS: fc.Arbitrary<Kind> = fc.constantFrom<Kind>(
  { type: 'autonumber' },
  { type: 'created_time' },
  { type: 'formula', template: { expression: 'RECORD_ID()' } },
  { type: 'formula', template: { expression: "'=' & LEN(RECORD_ID())" } },
  { type: 'formula', template: { expression: 'LEN(RECORD_ID()) * 2.5 - 100' } },
  { type: 'formula', template: { expression: "IS_AFTER(CREATED_TIME(), '2000-01-01')" } },
  { type: 'formula', template: { expression: 'DATESTR(CREATED_TIME())' } },
  { type: 'formula', template: { expression: "DATEADD(CREATED_TIME(), 90, 'minutes')" } },
);

/** Field names: valid (nameSchema), never a system field's, distinct without regard to case. */
const NAME_PIECES = ['Name', 'a', 'B', 'é', '😀', ' ', ',', '"', ';', '=', '-', '@', '.', '#', '(1)'];
const fieldName = fc
  .array(fc.constantFrom(...NAME_PIECES), { minLength: 1, maxLength: 5 })
  .map((pieces) => pieces.join('').trim())
  .filter((name) => name.length > 0 && !['id', 'createdat', 'updatedat'].includes(name.toLowerCase()));

const tableArbitrary = fc
  .tuple(
    WRITTEN_KINDS,
    fc.array(fc.oneof({ weight: 4, arbitrary: WRITTEN_KINDS }, { weight: 1, arbitrary: COMPUTED_KINDS }), {
      maxLength: 7,
    }),
    fc.uniqueArray(fieldName, { minLength: 8, maxLength: 8, selector: (name) => name.toLowerCase() }),
    fc.integer({ min: 1, max: 20 }),
  )
  .chain(([primary, others, names, rows]) => {
    // The primary field is a written one: computed fields cannot all name records.
    const fields = [primary, ...others].map((kind, i) => ({ ...kind, name: names[i] as string }));
    const record = fc.record(
      Object.fromEntries(
        fields.flatMap((field) => (field.values ? [[field.name, VALUES[field.values]]] : [])),
      ),
    );
    return fc.record({
      fields: fc.constant(fields),
      records: fc.array(record, { minLength: rows, maxLength: rows }),
    });
  });

type ValueClass = 'text' | 'number' | 'checkbox' | 'date' | 'datetime';

/** What a field's values are, computed ones by their result type. */
function classOf(field: FieldBody): ValueClass {
  switch (field.resultType ?? field.type) {
    case 'number':
    case 'currency':
    case 'percent':
    case 'rating':
    case 'duration':
    case 'autonumber':
      return 'number';
    case 'checkbox':
      return 'checkbox';
    case 'date':
      return 'date';
    case 'datetime':
    case 'created_time':
      return 'datetime';
    default:
      return 'text';
  }
}

/** The CSV guard: a text cell starting with one of these is written with a `'` in front. */
const GUARDED = /^[-=+@\t\r]/;
const TRUE_WORDS = ['true', 'yes', 'y', '1', 'x', 'checked', '✓', '✔'];
const FALSE_WORDS = ['false', 'no', 'n', '0', 'unchecked'];

/** What exported text means as a type the import inferred for a text column (its documented forms). */
function textAs(type: ValueClass, text: string): unknown {
  const trimmed = text.trim();
  switch (type) {
    case 'number':
      return Number(trimmed);
    case 'checkbox':
      return TRUE_WORDS.includes(trimmed.toLowerCase())
        ? true
        : FALSE_WORDS.includes(trimmed.toLowerCase())
          ? false
          : `not a checkbox word: ${text}`;
    case 'date':
      return trimmed;
    case 'datetime':
      return new Date(
        Date.parse(trimmed.includes('T') ? trimmed : `${trimmed.replace(' ', 'T')}`),
      ).toISOString();
    case 'text':
      return text;
  }
}

/** Why an imported cell is not the original's value, or null when it is. */
function mismatch(
  format: 'csv' | 'xlsx',
  original: { cls: ValueClass; value: unknown },
  imported: { cls: ValueClass; value: unknown },
): string | null {
  const { value } = original;
  // Empty stays empty: null, or false in a column the import typed as checkbox (its empty value).
  if (value === null || value === undefined)
    return imported.value === (imported.cls === 'checkbox' ? false : null) ? null : 'should be empty';
  if (original.cls === 'text') {
    const text = value as string;
    const written = format === 'csv' && GUARDED.test(text) ? [text, `'${text}`] : [text];
    if (imported.cls === 'text') return written.includes(imported.value as string) ? null : 'text differs';
    // The inference typed a column of text that reads as a number, checkbox or date.
    return written.some((form) => Object.is(textAs(imported.cls, form), imported.value))
      ? null
      : `text read as ${imported.cls} differs`;
  }
  if (imported.cls !== original.cls) return `${original.cls} came back as ${imported.cls}`;
  return Object.is(value, imported.value) ? null : 'value differs';
}

async function exportFile(tableId: string, format: 'csv' | 'xlsx'): Promise<Buffer> {
  const res = await h.api
    .post(url(`/tables/${tableId}/records/export`))
    .set('Authorization', root)
    .send({ format })
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
  expect(res.status).toBe(200);
  return res.body as Buffer;
}

async function importNew(file: Buffer, format: 'csv' | 'xlsx', tableName: string) {
  const s3Key = await f.upload(`export.${format}`, file, format === 'csv' ? CSV : XLSX);
  const started = await h.api
    .post(url('/imports'))
    .set('Authorization', root)
    .send({ s3Key, tableName })
    .expect(202);
  const status = await f.finished(baseId, started.body.id);
  expect([status.status, status.errors]).toEqual(['succeeded', []]);
  const table = await h.api
    .get(url(`/tables/${status.tableId}`))
    .set('Authorization', root)
    .expect(200);
  return { fields: table.body.fields as FieldBody[], records: await list(status.tableId as string) };
}

let tables = 0;

async function roundTrip(format: 'csv' | 'xlsx', { fields, records }: GeneratedTable) {
  tables += 1;
  const source = await newTable(
    `Source ${tables}`,
    fields.map(({ name, type, template }) => ({ name, type, ...(template ? { template } : {}) })),
  );
  if (records.length > 0) {
    await h.api
      .post(url(`/tables/${source.id}/records/bulk`))
      .set('Authorization', root)
      .send({ records })
      .expect(201);
  }
  // The values as the API answers them (computed ones included, numbers fitted to their places).
  const originals: TableRecord[] = await list(source.id);
  const back = await importNew(await exportFile(source.id, format), format, `Back ${tables}`);

  // Columns by header name: in a CSV a header may carry the guard too.
  const headerOf = (name: string) => (format === 'csv' && GUARDED.test(name) ? `'${name}` : name);
  expect(back.fields.map((field) => field.name)).toEqual(source.fields.map((field) => headerOf(field.name)));
  expect(back.records).toHaveLength(originals.length);

  const problems: string[] = [];
  source.fields.forEach((field, column) => {
    const imported = back.fields[column] as FieldBody;
    originals.forEach((record, row) => {
      const original = { cls: classOf(field), value: record.fields[field.name] ?? null };
      const read = { cls: classOf(imported), value: back.records[row]?.fields[imported.name] ?? null };
      const why = mismatch(format, original, read);
      if (why !== null) {
        problems.push(
          `${field.name} (${field.type}) row ${row + 1}: ${why}: ${JSON.stringify(original.value)} → ${imported.type} ${JSON.stringify(read.value)}`,
        );
      }
    });
  });
  expect(problems).toEqual([]);
}

interface GeneratedTable {
  fields: (Kind & { name: string })[];
  records: Record<string, unknown>[];
}

beforeAll(async () => {
  h = await startHarness();
  f = await importFixture(h);
  f.startWorker();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, { name: 'Round trip' });
  expect(base.status).toBe(201);
  baseId = base.body.id;
});

afterAll(async () => {
  await f?.close();
  await h?.close();
});

describe.each(['csv', 'xlsx'] as const)('an export as %s imported into a new table', (format) => {
  it('gives back the same values, field by field and row by row', async () => {
    await fc.assert(
      fc.asyncProperty(tableArbitrary, (table) => roundTrip(format, table)),
      { numRuns: RUNS },
    );
  }, 120_000);
});
