import { sqlQueryRequestSchema, sqlQueryResponseSchema, sqlSchemaResponseSchema } from '../src/sql';

describe('sql request', () => {
  it('defaults params to none and limit to 1000', () => {
    expect(sqlQueryRequestSchema.parse({ query: 'select 1' })).toEqual({
      query: 'select 1',
      params: [],
      limit: 1000,
    });
  });

  it('accepts scalar and null params and the limit bounds', () => {
    expect(
      sqlQueryRequestSchema.safeParse({ query: 'q', params: ['a', 1, true, null], limit: 1 }).success,
    ).toBe(true);
    expect(sqlQueryRequestSchema.safeParse({ query: 'q', limit: 10_000 }).success).toBe(true);
  });

  it.each([
    [{ query: '' }, 'query'],
    [{ query: '   ' }, 'query'],
    [{ query: 'x'.repeat(100_001) }, 'query'],
    [{ query: 'q', limit: 0 }, 'limit'],
    [{ query: 'q', limit: 10_001 }, 'limit'],
    [{ query: 'q', params: [{ a: 1 }] }, 'params'],
    [{ query: 'q', params: Array.from({ length: 101 }, () => 1) }, 'params'],
  ])('rejects %#, naming %s', (body, key) => {
    const result = sqlQueryRequestSchema.safeParse(body);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path[0]).toBe(key);
  });

  it('rejects unknown keys', () => {
    expect(sqlQueryRequestSchema.safeParse({ query: 'q', database: 'other' }).success).toBe(false);
  });
});

describe('sql responses', () => {
  it('shapes a result and the schema', () => {
    expect(
      sqlQueryResponseSchema.safeParse({
        columns: [{ name: 'Name', type: 'text' }],
        rows: [['Ada'], [null]],
        rowCount: 2,
        truncated: false,
      }).success,
    ).toBe(true);
    expect(
      sqlSchemaResponseSchema.safeParse({
        tables: [
          {
            name: 'People',
            tableId: 'tblAAAAAAAAAAAA1',
            columns: [
              { name: 'id', fieldId: null, fieldType: null, sqlType: 'uuid' },
              { name: 'Name', fieldId: 'fldAAAAAAAAAAAA1', fieldType: 'single_line_text', sqlType: 'text' },
            ],
          },
        ],
      }).success,
    ).toBe(true);
  });
});
