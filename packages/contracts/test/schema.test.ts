import type { z } from 'zod';
import { createApiKeyRequestSchema } from '../src/api-keys';
import {
  createFieldRequestSchema,
  MAX_SELECT_OPTIONS,
  parseTemplate,
  updateFieldRequestSchema,
} from '../src/fields';
import { startImportRequestSchema } from '../src/imports';
import {
  createDatabaseRequestSchema,
  createTableRequestSchema,
  MAX_FIELDS_PER_REQUEST,
  MAX_FIELDS_PER_TABLE,
  MAX_SELECT_OPTIONS_PER_REQUEST,
  MAX_TABLES_PER_REQUEST,
  measureSchemaRequest,
  updateDatabaseRequestSchema,
  updateTableRequestSchema,
} from '../src/schema';
import { sqlQueryRequestSchema } from '../src/sql';

function problems(result: z.ZodSafeParseResult<unknown>): string[] {
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain NUL characters';

const textField = (index: number) => ({ name: `Field ${index}`, type: 'single_line_text' });
const selectField = (index: number, options: number) => ({
  name: `Select ${index}`,
  type: 'single_select',
  template: { options: Array.from({ length: options }, (_, option) => ({ name: `o${option}` })) },
});
const table = (name: string, fields: unknown[]) => ({ name, fields });
const tableOfFields = (name: string, count: number) =>
  table(
    name,
    Array.from({ length: count }, (_, index) => textField(index)),
  );

describe('what one POST /bases may create', () => {
  it('keeps the bounds of the issue', () => {
    expect(MAX_FIELDS_PER_REQUEST).toBe(500);
    expect(MAX_TABLES_PER_REQUEST).toBeLessThanOrEqual(50);
    expect(MAX_SELECT_OPTIONS_PER_REQUEST).toBe(10_000);
  });

  it('counts tables, fields and select options of the raw body', () => {
    expect(
      measureSchemaRequest([
        table('A', [textField(0), selectField(1, 3)]),
        table('B', [selectField(0, 2)]),
        'not a table',
        { name: 'C' },
        table('D', [{ type: 'single_select', template: { options: 'many' } }]),
      ]),
    ).toEqual({ tables: 5, fields: 4, selectOptions: 5 });
  });

  it(`accepts ${MAX_FIELDS_PER_REQUEST} fields across tables`, () => {
    const tables = Array.from({ length: 10 }, (_, index) =>
      tableOfFields(`T${index}`, MAX_FIELDS_PER_REQUEST / 10),
    );
    expect(createDatabaseRequestSchema.safeParse({ name: 'Base', tables }).success).toBe(true);
  });

  it('refuses more fields in all than one request may create, naming the bound and the number', () => {
    const tables = Array.from({ length: 50 }, (_, index) => tableOfFields(`T${index}`, 500));
    expect(problems(createDatabaseRequestSchema.safeParse({ name: 'Base', tables }))).toEqual([
      `tables: one request creates at most ${MAX_FIELDS_PER_REQUEST} fields in all; this one asks for 25000`,
    ]);
    const twoTables = [tableOfFields('A', 300), tableOfFields('B', 201)];
    expect(problems(createDatabaseRequestSchema.safeParse({ name: 'Base', tables: twoTables }))).toEqual([
      `tables: one request creates at most ${MAX_FIELDS_PER_REQUEST} fields in all; this one asks for 501`,
    ]);
  });

  it('refuses more tables than one request may create, before parsing them', () => {
    const tables = Array.from({ length: MAX_TABLES_PER_REQUEST + 1 }, () => ({ name: NUL, fields: 'none' }));
    expect(problems(createDatabaseRequestSchema.safeParse({ name: 'Base', tables }))).toEqual([
      `tables: one request creates at most ${MAX_TABLES_PER_REQUEST} tables; this one asks for ${MAX_TABLES_PER_REQUEST + 1}`,
    ]);
    const allowed = Array.from({ length: MAX_TABLES_PER_REQUEST }, (_, index) =>
      tableOfFields(`T${index}`, 1),
    );
    expect(createDatabaseRequestSchema.safeParse({ name: 'Base', tables: allowed }).success).toBe(true);
  });

  it('refuses more select options in all than one request may create', () => {
    const perField = MAX_SELECT_OPTIONS;
    const fields = (count: number) =>
      Array.from({ length: count }, (_, index) => selectField(index, perField));
    const allowed = MAX_SELECT_OPTIONS_PER_REQUEST / perField;
    expect(
      createDatabaseRequestSchema.safeParse({ name: 'Base', tables: [table('A', fields(allowed))] }).success,
    ).toBe(true);
    expect(
      problems(
        createDatabaseRequestSchema.safeParse({
          name: 'Base',
          tables: [table('A', fields(allowed)), table('B', fields(1))],
        }),
      ),
    ).toEqual([
      `tables: one request creates at most ${MAX_SELECT_OPTIONS_PER_REQUEST} select options in all; this one asks for ${MAX_SELECT_OPTIONS_PER_REQUEST + perField}`,
    ]);
  });
});

describe('what one POST /tables may create', () => {
  it(`accepts ${MAX_FIELDS_PER_TABLE} fields and refuses more, naming the bound and the number`, () => {
    expect(createTableRequestSchema.safeParse(tableOfFields('T', MAX_FIELDS_PER_TABLE)).success).toBe(true);
    expect(problems(createTableRequestSchema.safeParse(tableOfFields('T', 600)))).toEqual([
      `: a table has at most ${MAX_FIELDS_PER_TABLE} fields; this one asks for 600`,
    ]);
  });

  it('refuses more select options than one request may create', () => {
    const fields = Array.from({ length: 11 }, (_, index) => selectField(index, MAX_SELECT_OPTIONS));
    expect(problems(createTableRequestSchema.safeParse(table('T', fields)))).toEqual([
      `: one request creates at most ${MAX_SELECT_OPTIONS_PER_REQUEST} select options in all; this one asks for 11000`,
    ]);
  });

  it('still refuses a table without fields and names a bad field', () => {
    expect(problems(createTableRequestSchema.safeParse(table('T', [])))[0]).toContain('at least one field');
    expect(
      problems(createTableRequestSchema.safeParse(table('T', [{ name: `F${NUL}`, type: 'number' }]))),
    ).toEqual([`fields.0.name: ${NUL_MESSAGE}`]);
  });
});

describe('NUL and control characters in schema requests', () => {
  it('refuses them in database, table and field names', () => {
    expect(problems(updateDatabaseRequestSchema.safeParse({ name: `B${NUL}` }))).toEqual([
      `name: ${NUL_MESSAGE}`,
    ]);
    expect(problems(createTableRequestSchema.safeParse(table(`T${NUL}`, [textField(0)])))).toEqual([
      `name: ${NUL_MESSAGE}`,
    ]);
    expect(problems(createFieldRequestSchema.safeParse({ name: 'F\u0002', type: 'number' }))).toEqual([
      'name: must not contain control characters',
    ]);
    expect(problems(updateFieldRequestSchema.safeParse({ name: `F${NUL}` }))).toEqual([
      `name: ${NUL_MESSAGE}`,
    ]);
  });

  it('refuses them in primaryFieldId', () => {
    expect(problems(updateTableRequestSchema.safeParse({ primaryFieldId: `fld${NUL}` }))).toEqual([
      `primaryFieldId: ${NUL_MESSAGE}`,
    ]);
    expect(updateTableRequestSchema.safeParse({ primaryFieldId: 'fldAAAAAAAAAAAA1' }).success).toBe(true);
  });

  it('refuses them in select option names and colours', () => {
    expect(parseTemplate('single_select', { options: [{ name: `A${NUL}` }] })).toEqual({
      ok: false,
      problems: [`template.options.0.name: ${NUL_MESSAGE}`],
    });
    expect(parseTemplate('multiple_select', { options: [{ name: 'A', color: `red${NUL}` }] })).toEqual({
      ok: false,
      problems: [`template.options.0.color: ${NUL_MESSAGE}`],
    });
    expect(parseTemplate('single_select', { options: [{ name: 'A', color: 'red\n' }] })).toEqual({
      ok: false,
      problems: ['template.options.0.color: must not contain control characters'],
    });
    expect(parseTemplate('single_select', { options: [{ name: 'A', color: 'blue' }] }).ok).toBe(true);
  });

  it('refuses them in currencySymbol and a linked table', () => {
    expect(parseTemplate('currency', { currencySymbol: `€${NUL}` })).toEqual({
      ok: false,
      problems: [`template.currencySymbol: ${NUL_MESSAGE}`],
    });
    expect(parseTemplate('currency', { currencySymbol: '€' })).toEqual({
      ok: true,
      template: { currencySymbol: '€', decimalPlaces: 2 },
    });
    expect(parseTemplate('linked_record', { tableId: `T${NUL}` })).toEqual({
      ok: false,
      problems: [`template.tableId: ${NUL_MESSAGE}`],
    });
    expect(parseTemplate('linked_record', { tableId: 'T\u001b' })).toEqual({
      ok: false,
      problems: ['template.tableId: must not contain control characters'],
    });
  });

  it('refuses them in API key names and bounds database ids', () => {
    const scopes = ['records:read'];
    expect(problems(createApiKeyRequestSchema.safeParse({ name: `K${NUL}`, scopes }))).toEqual([
      `name: ${NUL_MESSAGE}`,
    ]);
    expect(
      createApiKeyRequestSchema.safeParse({ name: 'K', scopes, databaseIds: ['0'.repeat(100_000)] }).error
        ?.issues[0]?.code,
    ).toBe('too_big');
  });

  it('refuses NUL in imports and SQL requests', () => {
    expect(problems(startImportRequestSchema.safeParse({ s3Key: `k${NUL}` }))).toEqual([
      `s3Key: ${NUL_MESSAGE}`,
    ]);
    expect(problems(startImportRequestSchema.safeParse({ s3Key: 'k', tableId: `T${NUL}` }))).toEqual([
      `tableId: ${NUL_MESSAGE}`,
    ]);
    expect(problems(startImportRequestSchema.safeParse({ s3Key: 'k', sheet: `S${NUL}` }))).toEqual([
      `sheet: ${NUL_MESSAGE}`,
    ]);
    expect(problems(sqlQueryRequestSchema.safeParse({ query: `SELECT 1${NUL}` }))).toEqual([
      `query: ${NUL_MESSAGE}`,
    ]);
    expect(problems(sqlQueryRequestSchema.safeParse({ query: 'SELECT $1', params: [`a${NUL}`] }))).toEqual([
      `params.0: ${NUL_MESSAGE}`,
    ]);
  });
});
