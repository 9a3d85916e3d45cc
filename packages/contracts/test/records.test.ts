import type { z } from 'zod';
import { fieldTypeGroups, fieldTypes, isComputedFieldType } from '../src/fields';
import {
  bulkDeleteRecordsRequestSchema,
  bulkRecordsRequestSchema,
  createRecordRequestSchema,
  type Filter,
  fieldTypeGroupsByFilterOperator,
  filterConditionSchema,
  filterOperatorSupportsFieldType,
  filterOperators,
  filterOperatorsByFieldTypeGroup,
  filterSchema,
  listRecordsRequestSchema,
  listRecordsResponseSchema,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  measureFilter,
  readFilterCondition,
  recordSchema,
  recordValueWriteSchemaByType,
  sortSchema,
  updateRecordRequestSchema,
} from '../src/records';

/** Each issue as "path: message", the way a 400 body would name it. */
function problems(result: z.ZodSafeParseResult<unknown>): string[] {
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

function nestGroups(levels: number): Filter {
  let filter: Filter = { field: 'Name', equals: 'x' };
  for (let level = 0; level < levels; level += 1) filter = { and: [filter] };
  return filter;
}

const fieldId = (suffix: number) => `fld${String(suffix).padStart(12, 'A')}`;

describe('filter operators', () => {
  it('lists the 14 operators of the specification', () => {
    expect(filterOperators).toHaveLength(14);
    expect(new Set(filterOperators).size).toBe(14);
  });

  it('matches the specification table of operators by field type group', () => {
    const specification = {
      text: [
        'equals',
        'does_not_equal',
        'contains',
        'does_not_contain',
        'starts_with',
        'ends_with',
        'is_empty',
        'is_not_empty',
        'in',
        'not_in',
      ],
      number: [
        'equals',
        'does_not_equal',
        'greater_than',
        'greater_than_or_equal_to',
        'less_than',
        'less_than_or_equal_to',
        'is_empty',
        'is_not_empty',
        'in',
        'not_in',
      ],
      date: [
        'equals',
        'does_not_equal',
        'greater_than',
        'greater_than_or_equal_to',
        'less_than',
        'less_than_or_equal_to',
        'is_empty',
        'is_not_empty',
      ],
      selection: [
        'equals',
        'does_not_equal',
        'contains',
        'does_not_contain',
        'is_empty',
        'is_not_empty',
        'in',
        'not_in',
      ],
      checkbox: ['equals', 'does_not_equal'],
      attachments: ['is_empty', 'is_not_empty'],
      linkedRecord: ['contains', 'does_not_contain', 'is_empty', 'is_not_empty', 'in', 'not_in'],
    };
    expect(Object.keys(filterOperatorsByFieldTypeGroup).sort()).toEqual(Object.keys(fieldTypeGroups).sort());
    for (const [group, operators] of Object.entries(specification)) {
      expect([...filterOperatorsByFieldTypeGroup[group as keyof typeof specification]].sort()).toEqual(
        [...operators].sort(),
      );
    }
    expect(Object.keys(fieldTypeGroupsByFilterOperator).sort()).toEqual([...filterOperators].sort());
  });

  it('answers whether an operator applies to a field type', () => {
    expect(filterOperatorSupportsFieldType('starts_with', 'email')).toBe(true);
    expect(filterOperatorSupportsFieldType('starts_with', 'number')).toBe(false);
    expect(filterOperatorSupportsFieldType('greater_than', 'datetime')).toBe(true);
    expect(filterOperatorSupportsFieldType('equals', 'attachments')).toBe(false);
    expect(filterOperatorSupportsFieldType('contains', 'linked_record')).toBe(true);
    expect(filterOperatorSupportsFieldType('in', 'checkbox')).toBe(false);
    for (const type of fieldTypes) {
      expect(filterOperators.some((operator) => filterOperatorSupportsFieldType(operator, type))).toBe(true);
    }
  });
});

describe('filter conditions', () => {
  it('accepts a condition with one operator and takes it apart', () => {
    const condition = filterConditionSchema.parse({ field: 'Age', greater_than: 30 });
    expect(readFilterCondition(condition)).toEqual({ field: 'Age', operator: 'greater_than', operand: 30 });
  });

  it('rejects a condition with two operators, naming both', () => {
    const messages = problems(filterSchema.safeParse({ field: 'Name', equals: 'a', contains: 'b' }));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('equals');
    expect(messages[0]).toContain('contains');
    expect(messages[0]).toContain('exactly one');
  });

  it('rejects a condition without an operator', () => {
    expect(problems(filterSchema.safeParse({ field: 'Name' }))[0]).toContain('needs exactly one operator');
  });

  it('rejects an unknown operator, naming it', () => {
    const messages = problems(filterSchema.safeParse({ field: 'Name', equal: 'a' }));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('unknown filter operator "equal"');
  });

  it('rejects a condition without a field', () => {
    expect(
      problems(filterSchema.safeParse({ equals: 'a' })).some((message) => message.startsWith('field:')),
    ).toBe(true);
  });

  it.each([
    ['is_empty', false],
    ['is_not_empty', 'yes'],
    ['in', 'a'],
    ['not_in', { a: 1 }],
    ['starts_with', 5],
    ['ends_with', null],
    ['equals', null],
    ['equals', ['a']],
    ['contains', { a: 1 }],
    ['greater_than', true],
    ['less_than_or_equal_to', ''],
  ])('rejects %s with operand %j, naming the operator in the path', (operator, operand) => {
    const messages = problems(filterSchema.safeParse({ field: 'x', [operator]: operand }));
    expect(messages.length).toBeGreaterThan(0);
    expect(messages[0]?.startsWith(`${operator}:`)).toBe(true);
  });

  it.each([
    ['equals', 'a'],
    ['equals', 3],
    ['equals', false],
    ['does_not_equal', 'a'],
    ['contains', 'recordid'],
    ['does_not_contain', 2],
    ['starts_with', 'ab'],
    ['ends_with', ''],
    ['is_empty', true],
    ['is_not_empty', true],
    ['in', ['a', 1, true]],
    ['not_in', []],
    ['greater_than', 5],
    ['greater_than_or_equal_to', '2024-01-01'],
    ['less_than', '2024-01-01T00:00:00Z'],
    ['less_than_or_equal_to', -1.5],
  ])('accepts %s with operand %j', (operator, operand) => {
    expect(filterSchema.safeParse({ field: 'x', [operator]: operand }).success).toBe(true);
  });

  it('rejects an in list of 1001 values', () => {
    const values = Array.from({ length: 1001 }, (_, index) => index);
    expect(problems(filterSchema.safeParse({ field: 'x', in: values }))[0]).toContain('at most 1000');
    expect(filterSchema.safeParse({ field: 'x', in: values.slice(1) }).success).toBe(true);
  });
});

describe('filter groups', () => {
  it('accepts nested and/or groups', () => {
    const filter = {
      or: [
        {
          and: [
            { field: 'Status', equals: 'Open' },
            { field: 'Age', greater_than: 3 },
          ],
        },
        { field: 'Tags', contains: 'urgent' },
      ],
    };
    expect(filterSchema.parse(filter)).toEqual(filter);
  });

  it('rejects a group with both and and or', () => {
    const messages = problems(
      filterSchema.safeParse({ and: [{ field: 'a', equals: 1 }], or: [{ field: 'b', equals: 1 }] }),
    );
    expect(messages[0]).toContain('exactly one of "and" or "or"');
  });

  it('rejects a group with extra keys', () => {
    const messages = problems(filterSchema.safeParse({ and: [{ field: 'a', equals: 1 }], field: 'b' }));
    expect(messages.some((message) => message.includes('"field"'))).toBe(true);
  });

  it('rejects an empty group and a group that is not an array', () => {
    expect(problems(filterSchema.safeParse({ and: [] }))[0]).toContain('at least one filter');
    expect(problems(filterSchema.safeParse({ or: { field: 'a', equals: 1 } }))[0]).toContain(
      'must be an array',
    );
  });

  it('names the path of a bad condition deep inside groups', () => {
    const messages = problems(
      filterSchema.safeParse({
        and: [{ field: 'a', equals: 1 }, { or: [{ field: 'b', equals: 1, in: [1] }] }],
      }),
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]?.startsWith('and.1.or.0:')).toBe(true);
  });

  it('rejects filters that are not objects', () => {
    for (const filter of ['x', 3, null, [{ field: 'a', equals: 1 }]]) {
      expect(problems(filterSchema.safeParse(filter))[0]).toContain('a filter must be a condition');
    }
  });
});

describe('filter limits', () => {
  it('measures depth as nested groups and counts conditions', () => {
    expect(measureFilter({ field: 'a', equals: 1 })).toMatchObject({ depth: 0, conditions: 1 });
    expect(measureFilter(nestGroups(3))).toMatchObject({ depth: 3, conditions: 1 });
    expect(
      measureFilter({
        and: [
          { field: 'a', equals: 1 },
          {
            or: [
              { field: 'b', equals: 1 },
              { field: 'c', equals: 1 },
            ],
          },
        ],
      }),
    ).toMatchObject({ depth: 2, conditions: 3 });
  });

  it(`accepts a filter nested ${MAX_FILTER_DEPTH} deep`, () => {
    expect(filterSchema.safeParse(nestGroups(MAX_FILTER_DEPTH)).success).toBe(true);
  });

  it(`rejects a filter nested deeper than ${MAX_FILTER_DEPTH}`, () => {
    expect(problems(filterSchema.safeParse(nestGroups(MAX_FILTER_DEPTH + 1)))).toEqual([
      ': nesting deeper than 10 levels',
    ]);
  });

  it('rejects a filter nested 100000 deep without exhausting the stack', () => {
    let filter: unknown = { field: 'a', equals: 1 };
    for (let level = 0; level < 100_000; level += 1) filter = { and: [filter] };
    expect(problems(listRecordsRequestSchema.safeParse({ filter }))).toEqual([
      'filter: nesting deeper than 10 levels',
    ]);
  });

  it(`accepts ${MAX_FILTER_CONDITIONS} conditions and rejects one more`, () => {
    const conditions = Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, (_, index) => ({
      field: 'a',
      equals: index,
    }));
    expect(filterSchema.safeParse({ or: conditions.slice(1) }).success).toBe(true);
    expect(problems(filterSchema.safeParse({ or: conditions }))[0]).toContain('more than 200 conditions');
    const spread = { and: [{ or: conditions.slice(0, 100) }, { or: conditions.slice(100) }] };
    expect(problems(filterSchema.safeParse(spread))[0]).toContain('more than 200 conditions');
  });
});

describe('sort', () => {
  it('defaults the direction to asc', () => {
    expect(sortSchema.parse({ field: 'Name' })).toEqual({ field: 'Name', direction: 'asc' });
  });

  it('accepts the deprecated fieldId alias and yields field', () => {
    expect(sortSchema.parse({ fieldId: 'fldAAAAAAAAAAAA1', direction: 'desc' })).toEqual({
      field: 'fldAAAAAAAAAAAA1',
      direction: 'desc',
    });
  });

  it('rejects a sort with neither field nor fieldId', () => {
    expect(problems(sortSchema.safeParse({ direction: 'asc' }))[0]).toContain('needs "field"');
  });

  it('rejects a sort with both field and fieldId', () => {
    expect(problems(sortSchema.safeParse({ field: 'a', fieldId: 'a' }))[0]).toContain('not both');
  });

  it('rejects other directions and unknown keys', () => {
    expect(problems(sortSchema.safeParse({ field: 'a', direction: 'DESC' }))[0]).toBe(
      'direction: must be "asc" or "desc"',
    );
    expect(problems(sortSchema.safeParse({ field: 'a', order: 'asc' }))[0]).toContain('"order"');
  });
});

describe('list records request', () => {
  it('defaults limit 500 offset 0 for an absent or empty body', () => {
    expect(listRecordsRequestSchema.parse(undefined)).toEqual({ limit: 500, offset: 0 });
    expect(listRecordsRequestSchema.parse({})).toEqual({ limit: 500, offset: 0 });
  });

  it('accepts the bounds of limit and offset', () => {
    expect(listRecordsRequestSchema.parse({ limit: 1, offset: 0 })).toMatchObject({ limit: 1, offset: 0 });
    expect(listRecordsRequestSchema.parse({ limit: 2000, offset: 10_000 })).toMatchObject({
      limit: 2000,
      offset: 10_000,
    });
  });

  it.each([
    [{ limit: 0 }, 'limit'],
    [{ limit: 2001 }, 'limit'],
    [{ limit: 1.5 }, 'limit'],
    [{ limit: '10' }, 'limit'],
    [{ offset: -1 }, 'offset'],
    [{ sort: { field: 'a' } }, 'sort'],
    [{ sort: [{ field: '' }] }, 'sort.0.field'],
    [{ cursor: '' }, 'cursor'],
    [{ cursor: 5 }, 'cursor'],
    [{ cursor: 'abc', offset: 10 }, 'cursor'],
  ])('rejects %j, naming %s', (body, path) => {
    const messages = problems(listRecordsRequestSchema.safeParse(body));
    expect(messages.length).toBeGreaterThan(0);
    expect(messages[0]?.startsWith(`${path}:`)).toBe(true);
  });

  it('takes a cursor instead of an offset, or beside offset 0, and names both when combined', () => {
    expect(listRecordsRequestSchema.parse({ cursor: 'abc' })).toEqual({
      limit: 500,
      offset: 0,
      cursor: 'abc',
    });
    expect(listRecordsRequestSchema.parse({ cursor: 'abc', offset: 0 })).toMatchObject({ cursor: 'abc' });
    const messages = problems(listRecordsRequestSchema.safeParse({ cursor: 'abc', offset: 500 }));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^cursor: .*body\.offset/);
  });

  it('rejects unknown keys in the list body', () => {
    const messages = problems(listRecordsRequestSchema.safeParse({ limit: 10, pageSize: 10 }));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('pageSize');
  });

  it('parses a full body', () => {
    const body = {
      limit: 50,
      offset: 100,
      sort: [{ field: 'createdAt', direction: 'desc' }, { fieldId: 'Name' }],
      filter: {
        and: [
          { field: 'Status', in: ['Open', 'Blocked'] },
          { field: 'Done', equals: false },
        ],
      },
    };
    expect(listRecordsRequestSchema.parse(body)).toEqual({
      ...body,
      sort: [
        { field: 'createdAt', direction: 'desc' },
        { field: 'Name', direction: 'asc' },
      ],
    });
  });

  it('names the filter path of a bad condition', () => {
    const messages = problems(
      listRecordsRequestSchema.safeParse({ filter: { and: [{ field: 'a', is_empty: false }] } }),
    );
    expect(messages[0]?.startsWith('filter.and.0.is_empty:')).toBe(true);
  });
});

const record = {
  id: '0190f2a4-5b6c-7d8e-9f00-112233445566',
  data: { fldAAAAAAAAAAAA1: 'Ada', fldAAAAAAAAAAAA2: [] },
  fields: { Name: 'Ada', Files: [] },
  createdAt: '2024-05-01T12:00:00.000Z',
  updatedAt: '2024-05-01T12:00:00.000Z',
};

describe('records in responses', () => {
  it('accepts a record and a list response', () => {
    expect(recordSchema.parse(record)).toEqual(record);
    const answer = { records: [record], total: 1, hasMore: false, nextCursor: null };
    expect(listRecordsResponseSchema.safeParse(answer).success).toBe(true);
    expect(listRecordsResponseSchema.safeParse({ ...answer, hasMore: true, nextCursor: 'abc' }).success).toBe(
      true,
    );
  });

  it('rejects a list response without nextCursor', () => {
    expect(listRecordsResponseSchema.safeParse({ records: [], total: 0, hasMore: false }).success).toBe(
      false,
    );
  });

  it('rejects a list response without hasMore', () => {
    expect(listRecordsResponseSchema.safeParse({ records: [], total: 0 }).success).toBe(false);
  });
});

describe('bulk create or upsert request', () => {
  it('accepts 1 to 100 records and ignores an id key', () => {
    const parsed = bulkRecordsRequestSchema.parse({ records: [{ id: 'mine', Name: 'Ada' }] });
    expect(parsed.records).toEqual([{ Name: 'Ada' }]);
    const hundred = Array.from({ length: 100 }, () => ({ Name: 'x' }));
    expect(bulkRecordsRequestSchema.safeParse({ records: hundred }).success).toBe(true);
  });

  it('rejects 0 and 101 records', () => {
    expect(problems(bulkRecordsRequestSchema.safeParse({ records: [] }))[0]).toBe(
      'records: must hold at least one record',
    );
    const tooMany = Array.from({ length: 101 }, () => ({ Name: 'x' }));
    expect(problems(bulkRecordsRequestSchema.safeParse({ records: tooMany }))[0]).toBe(
      'records: must hold at most 100 records',
    );
  });

  it('rejects records that are not objects', () => {
    expect(
      problems(bulkRecordsRequestSchema.safeParse({ records: [['a']] }))[0]?.startsWith('records.0:'),
    ).toBe(true);
    expect(bulkRecordsRequestSchema.safeParse({ records: [null] }).success).toBe(false);
    expect(bulkRecordsRequestSchema.safeParse({}).success).toBe(false);
  });

  it('accepts matchOn with 1 and 20 field ids', () => {
    expect(bulkRecordsRequestSchema.safeParse({ records: [{}], matchOn: [fieldId(1)] }).success).toBe(true);
    const twenty = Array.from({ length: 20 }, (_, index) => fieldId(index));
    expect(bulkRecordsRequestSchema.safeParse({ records: [{}], matchOn: twenty }).success).toBe(true);
  });

  it('rejects matchOn with 21 ids', () => {
    const twentyOne = Array.from({ length: 21 }, (_, index) => fieldId(index));
    expect(problems(bulkRecordsRequestSchema.safeParse({ records: [{}], matchOn: twentyOne }))[0]).toBe(
      'matchOn: must name at most 20 field ids',
    );
  });

  it('rejects an empty matchOn, a field name in matchOn and a repeated id', () => {
    expect(bulkRecordsRequestSchema.safeParse({ records: [{}], matchOn: [] }).success).toBe(false);
    expect(problems(bulkRecordsRequestSchema.safeParse({ records: [{}], matchOn: ['Email'] }))[0]).toContain(
      'field names are not accepted',
    );
    expect(
      bulkRecordsRequestSchema.safeParse({ records: [{}], matchOn: [fieldId(1), fieldId(1)] }).success,
    ).toBe(false);
  });

  it('rejects unknown top-level keys', () => {
    expect(problems(bulkRecordsRequestSchema.safeParse({ records: [{}], dryRun: true }))[0]).toContain(
      'dryRun',
    );
  });
});

describe('single records and bulk delete', () => {
  it('takes {record} for create and patch, dropping an id', () => {
    expect(createRecordRequestSchema.parse({ record: { id: 'x', Name: 'Ada' } })).toEqual({
      record: { Name: 'Ada' },
    });
    expect(updateRecordRequestSchema.parse({ record: {} })).toEqual({ record: {} });
    expect(createRecordRequestSchema.safeParse({ Name: 'Ada' }).success).toBe(false);
    expect(createRecordRequestSchema.safeParse({ record: 'Ada' }).success).toBe(false);
  });

  it('takes 1 to 100 ids for bulk delete', () => {
    expect(bulkDeleteRecordsRequestSchema.safeParse({ ids: ['not-a-uuid-yet'] }).success).toBe(true);
    expect(bulkDeleteRecordsRequestSchema.safeParse({ ids: [] }).success).toBe(false);
    const tooMany = Array.from({ length: 101 }, (_, index) => String(index));
    expect(bulkDeleteRecordsRequestSchema.safeParse({ ids: tooMany }).success).toBe(false);
  });
});

describe('record values on write', () => {
  const accepts = (type: keyof typeof recordValueWriteSchemaByType, value: unknown) =>
    recordValueWriteSchemaByType[type].safeParse(value).success;

  it('covers every field type and accepts null as empty', () => {
    expect(Object.keys(recordValueWriteSchemaByType).sort()).toEqual([...fieldTypes].sort());
    for (const type of fieldTypes.filter((type) => !isComputedFieldType(type))) {
      expect(accepts(type, null)).toBe(true);
    }
  });

  it('takes no value at all for a computed type', () => {
    for (const type of fieldTypes.filter(isComputedFieldType)) {
      for (const value of [null, 1, 'x', { id: 'root', name: 'root' }])
        expect(accepts(type, value)).toBe(false);
    }
  });

  it('checks the shape of each type', () => {
    expect(accepts('email', 'ada@example.com')).toBe(true);
    expect(accepts('email', 'not an email')).toBe(false);
    expect(accepts('url', 'https://example.com/a')).toBe(true);
    expect(accepts('url', 'javascript:alert(1)')).toBe(false);
    expect(accepts('phone_number', '+1 (555) 123-4567')).toBe(true);
    expect(accepts('phone_number', 'call me')).toBe(false);
    expect(accepts('number', '5')).toBe(false);
    expect(accepts('rating', 3)).toBe(true);
    expect(accepts('rating', 2.5)).toBe(false);
    expect(accepts('date', '2024-02-29')).toBe(true);
    expect(accepts('date', '2024-02-30')).toBe(false);
    expect(accepts('datetime', '2024-05-01T12:00:00+02:00')).toBe(true);
    expect(accepts('datetime', '2024-05-01')).toBe(false);
    expect(accepts('multiple_select', ['a', 'b'])).toBe(true);
    expect(accepts('multiple_select', 'a')).toBe(false);
    expect(accepts('checkbox', 'true')).toBe(false);
    expect(accepts('attachments', [{ url: 'http://files/x' }])).toBe(true);
    expect(accepts('attachments', [{ url: 'http://files/x', extra: 1 }])).toBe(false);
    expect(accepts('linked_record', ['0190f2a4-5b6c-7d8e-9f00-112233445566'])).toBe(true);
    expect(accepts('linked_record', ['rec1'])).toBe(false);
  });
});

describe('request types', () => {
  it('types the filter of a list body for clients', () => {
    const filter: NonNullable<z.input<typeof listRecordsRequestSchema>>['filter'] = {
      and: [{ field: 'a', equals: 1 }, { or: [{ field: 'b', in: [1] }] }],
    };
    // @ts-expect-error is_empty takes true only
    const wrongOperand: Filter = { field: 'a', is_empty: false };
    // @ts-expect-error a number is no filter
    const notAFilter: NonNullable<z.input<typeof listRecordsRequestSchema>>['filter'] = 5;
    expect(filterSchema.safeParse(filter).success).toBe(true);
    expect(filterSchema.safeParse(wrongOperand).success).toBe(false);
    expect(filterSchema.safeParse(notAFilter).success).toBe(false);
  });
});
