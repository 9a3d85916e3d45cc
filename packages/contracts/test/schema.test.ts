import type { z } from 'zod';
import { createApiKeyRequestSchema } from '../src/api-keys';
import { createFieldRequestSchema, parseTemplate, updateFieldRequestSchema } from '../src/fields';
import { startImportRequestSchema } from '../src/imports';
import {
  createTableRequestSchema,
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
const table = (name: string, fields: unknown[]) => ({ name, fields });

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
