import { importStatusSchema, startImportRequestSchema, startImportResponseSchema } from '../src/imports';

describe('start import request', () => {
  it('defaults firstRowIsHeader to true', () => {
    expect(startImportRequestSchema.parse({ s3Key: 'imports/a.csv' })).toEqual({
      s3Key: 'imports/a.csv',
      firstRowIsHeader: true,
    });
    expect(startImportRequestSchema.parse({ s3Key: 'k', firstRowIsHeader: false }).firstRowIsHeader).toBe(
      false,
    );
  });

  it('accepts a target table or a new table name, not both', () => {
    expect(startImportRequestSchema.safeParse({ s3Key: 'k', tableId: 'tblAAAAAAAAAAAA1' }).success).toBe(
      true,
    );
    expect(
      startImportRequestSchema.safeParse({ s3Key: 'k', tableName: 'People', sheet: 'Sheet1' }).success,
    ).toBe(true);
    const both = startImportRequestSchema.safeParse({ s3Key: 'k', tableId: 't', tableName: 'People' });
    expect(both.success).toBe(false);
    expect(both.error?.issues[0]?.message).toContain('not both');
  });

  it('rejects a missing s3Key and unknown keys', () => {
    expect(startImportRequestSchema.safeParse({}).success).toBe(false);
    expect(startImportRequestSchema.safeParse({ s3Key: '' }).success).toBe(false);
    const unknown = startImportRequestSchema.safeParse({ s3Key: 'k', delimiter: ';' });
    expect(unknown.error?.issues[0]?.message).toContain('delimiter');
  });
});

describe('import responses', () => {
  it('answers 202 with a queued status', () => {
    const id = '0190f2a4-5b6c-7d8e-9f00-112233445566';
    expect(startImportResponseSchema.parse({ id, status: 'queued' })).toEqual({ id, status: 'queued' });
    expect(startImportResponseSchema.safeParse({ id, status: 'running' }).success).toBe(false);
  });

  it('describes progress, skipped columns and row errors', () => {
    const status = {
      id: '0190f2a4-5b6c-7d8e-9f00-112233445566',
      status: 'succeeded',
      tableId: 'tblAAAAAAAAAAAA1',
      rowsImported: 9,
      rowsTotal: 10,
      skippedColumns: ['Unknown'],
      errors: [{ row: 4, column: 'Age', message: 'not a number' }],
      createdAt: '2026-11-24T03:00:00.000Z',
      updatedAt: '2026-11-24T03:00:05.000Z',
    };
    expect(importStatusSchema.parse(status)).toEqual(status);
    expect(
      importStatusSchema.safeParse({ ...status, tableId: null, rowsTotal: null, status: 'queued' }).success,
    ).toBe(true);
    expect(importStatusSchema.safeParse({ ...status, status: 'done' }).success).toBe(false);
  });
});
