import { DomainError } from '@recordbase/contracts/domain-errors';
import { type FieldType, fieldTypes, groupOfFieldType } from '@recordbase/contracts/fields';
import {
  type Filter,
  type FilterOperator,
  filterOperators,
  filterOperatorsByFieldTypeGroup,
  filterSchema,
  type Sort,
} from '@recordbase/contracts/records';
import { SqlParams } from '@recordbase/db/physical';
import { compileFilter, compileSort, parseDateTimeOperand } from '@recordbase/domain/records/query-compiler';
import { buildTableMeta, type FieldMeta, type TableMeta } from '@recordbase/domain/records/table-meta';
import { AppError, httpErrorOf } from '@recordbase/server-kit/errors';

// One field of every type; the id spells the type so failures read well.
const idOf = (type: FieldType) => {
  const letters = type.replace(/_/g, '');
  // Long names keep their ends, which tell last_modified_time from last_modified_by.
  return `fld${(letters.length <= 12 ? letters : `${letters.slice(0, 10)}${letters.slice(-2)}`).padEnd(12, '0')}`;
};
const nameOf: Record<FieldType, string> = {
  single_line_text: 'Name',
  long_text: 'Notes',
  email: 'Email',
  url: 'Website',
  phone_number: 'Phone',
  number: 'Count',
  currency: 'Amount',
  percent: 'Share',
  rating: 'Stars',
  duration: 'Time spent',
  date: 'Due',
  datetime: 'Starts at',
  single_select: 'Status',
  multiple_select: 'Tags',
  checkbox: 'Done',
  attachments: 'Files',
  linked_record: 'Owners',
  autonumber: 'No',
  created_time: 'Created',
  last_modified_time: 'Modified',
  created_by: 'Creator',
  last_modified_by: 'Editor',
  formula: 'Formula',
  count: 'Owner count',
  lookup: 'Owner names',
  rollup: 'Owner total',
};

function templateOf(type: FieldType): FieldMeta['template'] {
  if (type === 'single_select' || type === 'multiple_select') {
    return { options: [{ name: 'Red' }, { name: 'Green' }] } as FieldMeta['template'];
  }
  if (type === 'linked_record') return { tableId: 'tblPeople00000000' } as FieldMeta['template'];
  if (type === 'count' || type === 'lookup' || type === 'rollup') {
    // As the service keeps them (linked-values.ts): filters read only the column.
    return {
      linkFieldId: idOf('linked_record'),
      tableId: 'tblPeople00000000',
      resultType: type === 'lookup' ? 'array' : 'number',
      head: '(SELECT count(*)::float8 FROM ',
      tail: ')',
    } as unknown as FieldMeta['template'];
  }
  return {} as FieldMeta['template'];
}

const table: TableMeta = buildTableMeta({
  databaseId: '00000000-0000-4000-8000-000000000001',
  schemaName: 'base_00000000000040008000000000000001',
  id: 'tblThings00000000',
  name: 'Things',
  primaryFieldId: idOf('single_line_text'),
  fields: fieldTypes.map((type) => ({
    id: idOf(type),
    name: nameOf[type],
    type,
    template: templateOf(type),
  })),
});

const col = (type: FieldType) => `r."${idOf(type)}"`;
const UUID_A = '0190f3c2-7a4e-7b1c-8d2e-3f4a5b6c7d8e';
const UUID_B = '0190f3c2-7a4e-7b1c-8d2e-3f4a5b6c7d8f';

function compile(filter: Filter): { sql: string; values: unknown[] } {
  const params = new SqlParams();
  const sql = compileFilter(filter, table, params);
  return { sql, values: params.values };
}

function condition(field: string, operator: FilterOperator, operand: unknown): Filter {
  return { field, [operator]: operand } as Filter;
}

/** The refusal of `filter` as the records routes answer it: a listing's filter is in its body. */
function compileError(filter: Filter): AppError {
  try {
    compile(filter);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return httpErrorOf(error as DomainError, 'body');
  }
  throw new Error(`expected ${JSON.stringify(filter)} to be refused`);
}

/** A valid operand of an operator for a field type, with distinctive text so leaks show. */
function sampleOperand(type: FieldType | 'id' | 'createdAt', operator: FilterOperator): unknown {
  if (operator === 'is_empty' || operator === 'is_not_empty') return true;
  const list = operator === 'in' || operator === 'not_in';
  const group = type === 'id' ? 'id' : type === 'createdAt' ? 'date' : groupOfFieldType(type);
  switch (group) {
    case 'text':
    case 'selection':
      return list ? ["Zq7'one", 'Zq7two'] : "Zq7'); DROP TABLE x; --";
    case 'number':
      return list ? [98765.4321, 12345.678] : 98765.4321;
    case 'date':
      return type === 'date' ? '2031-07-15' : '2031-07-15T10:11:12.5+02:00';
    case 'checkbox':
      return true;
    case 'id':
    case 'linkedRecord':
      return list ? [UUID_A, UUID_B] : UUID_A;
    default:
      return true;
  }
}

describe('compileFilter: groups', () => {
  it('joins and/or groups in parentheses, nesting as given, numbering parameters in order', () => {
    const { sql, values } = compile({
      and: [
        { field: 'Name', equals: 'a' },
        {
          or: [
            { field: 'Count', greater_than: 1 },
            { field: 'Done', equals: true },
          ],
        },
      ],
    });
    expect(sql).toBe(
      `(${col('single_line_text')} = $1::text AND (${col('number')} > $2::double precision OR ${col('checkbox')} = $3::boolean))`,
    );
    expect(values).toEqual(['a', 1, true]);
  });

  it('accepts what the request schema parses', () => {
    const filter = filterSchema.parse({
      or: [
        { field: 'Name', contains: 'x' },
        { field: 'Tags', is_empty: true },
      ],
    });
    expect(compile(filter).sql).toBe(
      `(${col('single_line_text')} ILIKE $1::text ESCAPE '\\' OR cardinality(${col('multiple_select')}) = 0)`,
    );
  });

  it('finds fields by id and by name ignoring case', () => {
    expect(compile({ field: idOf('currency'), equals: 2 }).sql).toBe(
      `${col('currency')} = $1::double precision`,
    );
    expect(compile({ field: 'aMoUnT', equals: 2 }).sql).toBe(`${col('currency')} = $1::double precision`);
  });
});

describe('compileFilter: operands never reach the SQL text', () => {
  const cases: [FieldType | 'id' | 'createdAt', FilterOperator][] = [
    ...fieldTypes.flatMap((type) =>
      filterOperatorsByFieldTypeGroup[groupOfFieldType(type)].map(
        (operator) => [type, operator] as [FieldType, FilterOperator],
      ),
    ),
    ...(['equals', 'does_not_equal', 'in', 'not_in'] as const).map(
      (operator) => ['id', operator] as ['id', FilterOperator],
    ),
    ...filterOperatorsByFieldTypeGroup.date.map(
      (operator) => ['createdAt', operator] as ['createdAt', FilterOperator],
    ),
  ];

  it.each(cases)('%s %s', (type, operator) => {
    const field = type === 'id' || type === 'createdAt' ? type : nameOf[type];
    const operand = sampleOperand(type, operator);
    const { sql, values } = compile(condition(field, operator, operand));
    for (const text of [operand].flat().map(String)) {
      if (typeof operand === 'boolean') continue;
      expect(sql).not.toContain(text);
      expect(sql).not.toContain(text.slice(0, 4));
    }
    expect(sql).not.toMatch(/Zq7|98765|2031|0190f3c2/);
    // Every placeholder carries a cast, and every value has a placeholder.
    const placeholders = sql.match(/\$\d+/g) ?? [];
    expect(new Set(placeholders).size).toBe(values.length);
    expect(sql.match(/\$\d+(?!::)/g)).toBeNull();
  });
});

describe('compileFilter: text', () => {
  const name = col('single_line_text');
  it.each<[FilterOperator, unknown, string, unknown[]]>([
    ['equals', 'Ab', `${name} = $1::text`, ['Ab']],
    ['does_not_equal', 'Ab', `${name} IS DISTINCT FROM $1::text`, ['Ab']],
    ['contains', 'Ab', `${name} ILIKE $1::text ESCAPE '\\'`, ['%Ab%']],
    ['does_not_contain', 'Ab', `(${name} IS NULL OR ${name} NOT ILIKE $1::text ESCAPE '\\')`, ['%Ab%']],
    ['starts_with', 'Ab', `${name} ILIKE $1::text ESCAPE '\\'`, ['Ab%']],
    ['ends_with', 'Ab', `${name} ILIKE $1::text ESCAPE '\\'`, ['%Ab']],
    ['is_empty', true, `(${name} IS NULL OR ${name} = '')`, []],
    ['is_not_empty', true, `(${name} IS NOT NULL AND ${name} <> '')`, []],
    ['in', ['a', 'b'], `${name} = ANY($1::text[])`, [['a', 'b']]],
    ['not_in', ['a', 'b'], `(${name} IS NULL OR ${name} <> ALL($1::text[]))`, [['a', 'b']]],
  ])('%s', (operator, operand, sql, values) => {
    expect(compile(condition('Name', operator, operand))).toEqual({ sql, values });
  });

  it('escapes LIKE metacharacters of the operand', () => {
    expect(compile({ field: 'Name', contains: '50%_off\\' }).values).toEqual(['%50\\%\\_off\\\\%']);
    expect(compile({ field: 'Name', starts_with: '_' }).values).toEqual(['\\_%']);
    expect(compile({ field: 'Name', ends_with: '%' }).values).toEqual(['%\\%']);
  });

  it('compiles every text type alike', () => {
    for (const type of ['long_text', 'email', 'url', 'phone_number'] as const) {
      expect(compile({ field: nameOf[type], equals: 'x' }).sql).toBe(`${col(type)} = $1::text`);
    }
  });
});

describe('compileFilter: numbers', () => {
  const count = col('number');
  it.each<[FilterOperator, unknown, string]>([
    ['equals', 2, `${count} = $1::double precision`],
    ['does_not_equal', 2, `${count} IS DISTINCT FROM $1::double precision`],
    ['greater_than', 2, `${count} > $1::double precision`],
    ['greater_than_or_equal_to', 2, `${count} >= $1::double precision`],
    ['less_than', 2, `${count} < $1::double precision`],
    ['less_than_or_equal_to', 2, `${count} <= $1::double precision`],
    ['is_empty', true, `${count} IS NULL`],
    ['is_not_empty', true, `${count} IS NOT NULL`],
    ['in', [1, 2.5], `${count} = ANY($1::double precision[])`],
    ['not_in', [1, 2.5], `(${count} IS NULL OR ${count} <> ALL($1::double precision[]))`],
  ])('%s', (operator, operand, sql) => {
    expect(compile(condition('Count', operator, operand)).sql).toBe(sql);
  });

  it('passes numbers as they are', () => {
    expect(compile({ field: 'Stars', in: [1, 2] }).values).toEqual([[1, 2]]);
    expect(compile({ field: 'Share', less_than: 0.25 }).values).toEqual([0.25]);
  });
});

describe('compileFilter: dates', () => {
  const due = col('date');
  it('compares date fields with dates', () => {
    expect(compile({ field: 'Due', equals: '2024-02-29' })).toEqual({
      sql: `${due} = $1::date`,
      values: ['2024-02-29'],
    });
    expect(compile({ field: 'Due', does_not_equal: '2024-02-29' }).sql).toBe(
      `${due} IS DISTINCT FROM $1::date`,
    );
    expect(compile({ field: 'Due', greater_than: '2024-02-29' }).sql).toBe(`${due} > $1::date`);
    expect(compile({ field: 'Due', less_than_or_equal_to: '2024-02-29' }).sql).toBe(`${due} <= $1::date`);
    expect(compile({ field: 'Due', is_empty: true }).sql).toBe(`${due} IS NULL`);
    expect(compile({ field: 'Due', is_not_empty: true }).sql).toBe(`${due} IS NOT NULL`);
  });

  it('reduces a date-time operand on a date field to its UTC date', () => {
    expect(compile({ field: 'Due', equals: '2024-03-01T23:30:00-02:00' }).values).toEqual(['2024-03-02']);
    expect(compile({ field: 'Due', equals: '2024-03-01T01:30:00+02:00' }).values).toEqual(['2024-02-29']);
  });

  it('compares date-times as instants, in UTC with microseconds', () => {
    const at = col('datetime');
    expect(compile({ field: 'Starts at', equals: '2024-03-01T12:00:00+01:00' })).toEqual({
      sql: `${at} = $1::timestamptz`,
      values: ['2024-03-01T11:00:00.000000Z'],
    });
    expect(compile({ field: 'Starts at', does_not_equal: '2024-03-01T12:00:00Z' }).sql).toBe(
      `${at} IS DISTINCT FROM $1::timestamptz`,
    );
    expect(compile({ field: 'Starts at', greater_than_or_equal_to: '2024-03-01T12:00:00Z' }).sql).toBe(
      `${at} >= $1::timestamptz`,
    );
  });

  it('takes a date-only operand on a date-time field as the whole UTC day', () => {
    const at = col('datetime');
    const start = `($1::date::timestamp AT TIME ZONE 'UTC')`;
    const end = `(($1::date + 1)::timestamp AT TIME ZONE 'UTC')`;
    const day = (operator: FilterOperator) => compile(condition('Starts at', operator, '2024-03-01'));
    expect(day('equals')).toEqual({ sql: `(${at} >= ${start} AND ${at} < ${end})`, values: ['2024-03-01'] });
    expect(day('does_not_equal').sql).toBe(`(${at} IS NULL OR ${at} < ${start} OR ${at} >= ${end})`);
    expect(day('greater_than').sql).toBe(`${at} >= ${end}`);
    expect(day('greater_than_or_equal_to').sql).toBe(`${at} >= ${start}`);
    expect(day('less_than').sql).toBe(`${at} < ${start}`);
    expect(day('less_than_or_equal_to').sql).toBe(`${at} < ${end}`);
  });
});

describe('parseDateTimeOperand', () => {
  it.each([
    ['2024-02-29', { kind: 'day', day: '2024-02-29' }],
    ['2024-03-01T00:00:00Z', { kind: 'instant', utc: '2024-03-01T00:00:00.000000Z' }],
    ['2024-03-01T00:00:00.1234567Z', { kind: 'instant', utc: '2024-03-01T00:00:00.123456Z' }],
    ['2024-03-01T00:30:00+01:00', { kind: 'instant', utc: '2024-02-29T23:30:00.000000Z' }],
    ['2024-12-31T23:00:00-05:30', { kind: 'instant', utc: '2025-01-01T04:30:00.000000Z' }],
    ['0050-06-01T00:00:00Z', { kind: 'instant', utc: '0050-06-01T00:00:00.000000Z' }],
  ])('%s', (text, parsed) => {
    expect(parseDateTimeOperand(text)).toEqual(parsed);
  });

  it.each([
    '2024-02-30',
    '2023-02-29',
    '2024-13-01',
    '2024-00-10',
    '0000-01-01',
    '2024-1-01',
    '2024-03-01T00:00:00',
    '2024-03-01T00:00Z',
    '2024-03-01T24:00:00Z',
    '2024-03-01T10:60:00Z',
    '2024-03-01T10:00:60Z',
    '2024-03-01 10:00:00Z',
    '2024-03-01T10:00:00+0100',
    '0001-01-01T00:00:00+01:00',
    '9999-12-31T23:00:00-02:00',
    'yesterday',
    '',
  ])('refuses %s', (text) => {
    expect(parseDateTimeOperand(text)).toBeNull();
  });
});

describe('compileFilter: selection', () => {
  const status = col('single_select');
  const tags = col('multiple_select');
  it.each<[FilterOperator, unknown, string, unknown[]]>([
    ['equals', 'Red', `${status} = $1::text`, ['Red']],
    ['does_not_equal', 'Red', `${status} IS DISTINCT FROM $1::text`, ['Red']],
    ['contains', 're', `${status} ILIKE $1::text ESCAPE '\\'`, ['%re%']],
    ['does_not_contain', 're', `(${status} IS NULL OR ${status} NOT ILIKE $1::text ESCAPE '\\')`, ['%re%']],
    ['is_empty', true, `${status} IS NULL`, []],
    ['is_not_empty', true, `${status} IS NOT NULL`, []],
    ['in', ['Red'], `${status} = ANY($1::text[])`, [['Red']]],
    ['not_in', ['Red'], `(${status} IS NULL OR ${status} <> ALL($1::text[]))`, [['Red']]],
  ])('single select %s', (operator, operand, sql, values) => {
    expect(compile(condition('Status', operator, operand))).toEqual({ sql, values });
  });

  it.each<[FilterOperator, unknown, string]>([
    ['contains', 'Red', `${tags} @> ARRAY[$1::text]`],
    ['does_not_contain', 'Red', `NOT (${tags} @> ARRAY[$1::text])`],
    ['equals', 'Red', `(${tags} @> ARRAY[$1::text] AND ${tags} <@ ARRAY[$1::text])`],
    ['does_not_equal', 'Red', `NOT (${tags} @> ARRAY[$1::text] AND ${tags} <@ ARRAY[$1::text])`],
    ['in', ['Red'], `${tags} && $1::text[]`],
    ['not_in', ['Red'], `NOT (${tags} && $1::text[])`],
    ['is_empty', true, `cardinality(${tags}) = 0`],
    ['is_not_empty', true, `cardinality(${tags}) > 0`],
  ])('multiple select %s', (operator, operand, sql) => {
    expect(compile(condition('Tags', operator, operand)).sql).toBe(sql);
  });

  it('accepts an option name the field does not have (it matches nothing)', () => {
    expect(compile({ field: 'Status', equals: 'Purple' }).values).toEqual(['Purple']);
    expect(compile({ field: 'Tags', in: ['Purple'] }).values).toEqual([['Purple']]);
  });
});

describe('compileFilter: checkbox, attachments, linked records, system fields', () => {
  it('checkbox', () => {
    expect(compile({ field: 'Done', equals: false })).toEqual({
      sql: `${col('checkbox')} = $1::boolean`,
      values: [false],
    });
    expect(compile({ field: 'Done', does_not_equal: true }).sql).toBe(
      `${col('checkbox')} IS DISTINCT FROM $1::boolean`,
    );
  });

  it('attachments', () => {
    expect(compile({ field: 'Files', is_empty: true }).sql).toBe(
      `jsonb_array_length(${col('attachments')}) = 0`,
    );
    expect(compile({ field: 'Files', is_not_empty: true }).sql).toBe(
      `jsonb_array_length(${col('attachments')}) > 0`,
    );
  });

  it('linked records go through the junction table', () => {
    const links = `"${table.schemaName}"."${idOf('linked_record')}_links"`;
    const some = (extra: string) =>
      `EXISTS (SELECT 1 FROM ${links} AS lnk WHERE lnk.record_id = r.id${extra})`;
    expect(compile({ field: 'Owners', contains: UUID_A })).toEqual({
      sql: some(' AND lnk.linked_id = $1::uuid'),
      values: [UUID_A],
    });
    expect(compile({ field: 'Owners', does_not_contain: UUID_A }).sql).toBe(
      `NOT ${some(' AND lnk.linked_id = $1::uuid')}`,
    );
    expect(compile({ field: 'Owners', is_empty: true }).sql).toBe(`NOT ${some('')}`);
    expect(compile({ field: 'Owners', is_not_empty: true }).sql).toBe(some(''));
    expect(compile({ field: 'Owners', in: [UUID_A, UUID_B] })).toEqual({
      sql: some(' AND lnk.linked_id = ANY($1::uuid[])'),
      values: [[UUID_A, UUID_B]],
    });
    expect(compile({ field: 'Owners', not_in: [] }).sql).toBe(
      `NOT ${some(' AND lnk.linked_id = ANY($1::uuid[])')}`,
    );
  });

  it('id', () => {
    expect(compile({ field: 'id', equals: UUID_A })).toEqual({ sql: 'r.id = $1::uuid', values: [UUID_A] });
    expect(compile({ field: 'id', does_not_equal: UUID_A }).sql).toBe('r.id <> $1::uuid');
    expect(compile({ field: 'id', in: [UUID_A] }).sql).toBe('r.id = ANY($1::uuid[])');
    expect(compile({ field: 'id', not_in: [UUID_A] }).sql).toBe('r.id <> ALL($1::uuid[])');
    expect(compile({ field: 'id', equals: UUID_A.toUpperCase() }).values).toEqual([UUID_A.toUpperCase()]);
  });

  it('createdAt and updatedAt', () => {
    expect(compile({ field: 'createdAt', greater_than: '2024-01-01T00:00:00Z' })).toEqual({
      sql: 'r.created_at > $1::timestamptz',
      values: ['2024-01-01T00:00:00.000000Z'],
    });
    expect(compile({ field: 'updatedAt', equals: '2024-01-01' }).sql).toBe(
      `(r.updated_at >= ($1::date::timestamp AT TIME ZONE 'UTC') AND r.updated_at < (($1::date + 1)::timestamp AT TIME ZONE 'UTC'))`,
    );
    expect(compile({ field: 'createdAt', is_empty: true }).sql).toBe('FALSE');
    expect(compile({ field: 'updatedAt', is_not_empty: true }).sql).toBe('TRUE');
  });
});

describe('compileFilter: 400s', () => {
  it('an unknown field', () => {
    const error = compileError({
      and: [
        { field: 'Name', equals: 'x' },
        { field: 'Foo', equals: 'x' },
      ],
    });
    expect(error.status).toBe(400);
    expect(error.code).toBe('BAD_REQUEST');
    // The condition's place in the tree, and the names within a few edits of the one given.
    expect(error.message).toBe('body.filter.and[1].field: unknown field "Foo"');
    expect(compileError({ field: 'Nmae', equals: 'x' }).message).toBe(
      'body.filter.field: unknown field "Nmae" (did you mean "Name"?)',
    );
    // System field names are exact.
    expect(compileError({ field: 'createdat', is_not_empty: true }).message).toBe(
      'body.filter.field: unknown field "createdat" (did you mean "createdAt"?)',
    );
  });

  const unsupported = fieldTypes.flatMap((type) =>
    filterOperators
      .filter((operator) => !filterOperatorsByFieldTypeGroup[groupOfFieldType(type)].includes(operator))
      .map((operator) => [type, operator] as const),
  );
  it.each(unsupported)('%s does not take %s', (type, operator) => {
    const error = compileError(condition(nameOf[type], operator, sampleOperand(type, operator)));
    expect(error.status).toBe(400);
    expect(error.message).toContain(
      `body.filter: operator "${operator}" is not supported for ${type} field "${nameOf[type]}"`,
    );
  });

  it('names the operator and field in unsupported-operator messages', () => {
    expect(compileError({ field: 'Amount', starts_with: 'x' }).message).toBe(
      'body.filter: operator "starts_with" is not supported for currency field "Amount" (supported: equals, does_not_equal, is_empty, is_not_empty, in, not_in, greater_than, greater_than_or_equal_to, less_than, less_than_or_equal_to)',
    );
  });

  it.each<[string, FilterOperator, unknown]>([
    ['id', 'contains', UUID_A],
    ['id', 'greater_than', UUID_A],
    ['id', 'is_empty', true],
    ['createdAt', 'contains', '2024'],
    ['updatedAt', 'in', ['2024-01-01']],
    ['createdAt', 'starts_with', '2024'],
  ])('system field %s does not take %s', (field, operator, operand) => {
    expect(compileError(condition(field, operator, operand)).message).toContain(
      `body.filter: operator "${operator}" is not supported for system field "${field}"`,
    );
  });

  it.each<[string, FilterOperator, unknown, string]>([
    ['Name', 'equals', 5, 'needs a string, got 5'],
    ['Notes', 'contains', true, 'needs a string, got true'],
    ['Email', 'in', ['a', 1], 'needs an array of strings, got ["a",1]'],
    ['Phone', 'not_in', [false], 'needs an array of strings'],
    ['Amount', 'equals', '5', '"equals" on currency field "Amount" needs a number, got "5"'],
    ['Count', 'greater_than', '10', 'needs a number'],
    ['Stars', 'in', [1, '2'], 'needs an array of numbers, got [1,"2"]'],
    ['Time spent', 'not_in', ['60'], 'needs an array of numbers'],
    ['Share', 'does_not_equal', false, 'needs a number'],
    [
      'Due',
      'equals',
      '2024-02-30',
      'needs a valid date (YYYY-MM-DD) or ISO 8601 date-time, got "2024-02-30"',
    ],
    ['Due', 'greater_than', 20240101, 'needs a valid date'],
    ['Due', 'less_than', 'tomorrow', 'needs a valid date'],
    ['Due', 'equals', true, 'needs a valid date'],
    ['Starts at', 'equals', '2024-03-01T10:00:00', 'needs a valid ISO 8601 date-time with a time zone'],
    ['Starts at', 'less_than', '2024-02-30T10:00:00Z', 'needs a valid ISO 8601 date-time'],
    ['Starts at', 'greater_than', 1709287200000, 'needs a valid ISO 8601 date-time'],
    ['createdAt', 'equals', '2024-13-01', 'on system field "createdAt" needs a valid ISO 8601 date-time'],
    ['Status', 'equals', 1, 'needs an option name, got 1'],
    ['Status', 'in', ['Red', 2], 'needs an array of option names'],
    ['Status', 'contains', false, 'needs a string'],
    ['Tags', 'contains', 3, 'needs an option name'],
    ['Tags', 'equals', true, 'needs an option name'],
    ['Tags', 'not_in', [null], 'needs an array of option names'],
    ['Done', 'equals', 'true', '"equals" on checkbox field "Done" needs true or false, got "true"'],
    ['Done', 'does_not_equal', 1, 'needs true or false'],
    [
      'Owners',
      'contains',
      'rec1',
      '"contains" on linked_record field "Owners" needs a record id (UUID), got "rec1"',
    ],
    ['Owners', 'in', [UUID_A, 'x'], 'needs an array of record ids (UUIDs)'],
    ['Owners', 'does_not_contain', 7, 'needs a record id'],
    ['id', 'equals', 'abc', 'on system field "id" needs a record id (UUID), got "abc"'],
    ['id', 'not_in', ['abc'], 'needs an array of record ids'],
  ])('%s %s %j', (field, operator, operand, message) => {
    const error = compileError(condition(field, operator, operand));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^body\.filter: /);
    expect(error.message).toContain(message);
  });

  it('shortens long operands in messages', () => {
    const message = compileError({ field: 'Count', equals: 'x'.repeat(500) }).message;
    expect(message.length).toBeLessThan(250);
  });
});

describe('compileSort', () => {
  const sort = (...entries: [string, 'asc' | 'desc'][]): string =>
    compileSort(
      entries.map(([field, direction]): Sort => ({ field, direction })),
      table,
    );

  it('defaults to creation order with the insertion-order tie-breaker', () => {
    expect(compileSort(undefined, table)).toBe('r.created_at ASC, r.seq ASC');
    expect(compileSort([], table)).toBe('r.created_at ASC, r.seq ASC');
  });

  it('applies entries in order, empty values smallest, then the tie-breaker', () => {
    expect(sort(['Count', 'desc'], ['Name', 'asc'])).toBe(
      `${col('number')} DESC NULLS LAST, ${col('single_line_text')} COLLATE "C" ASC NULLS FIRST, r.seq ASC`,
    );
  });

  it.each<[string, string]>([
    ['Name', `${col('single_line_text')} COLLATE "C"`],
    ['Notes', `${col('long_text')} COLLATE "C"`],
    ['Email', `${col('email')} COLLATE "C"`],
    ['Website', `${col('url')} COLLATE "C"`],
    ['Phone', `${col('phone_number')} COLLATE "C"`],
    ['Count', col('number')],
    ['Amount', col('currency')],
    ['Share', col('percent')],
    ['Stars', col('rating')],
    ['Time spent', col('duration')],
    ['Due', col('date')],
    ['Starts at', col('datetime')],
    ['Status', `${col('single_select')} COLLATE "C"`],
    ['Tags', `${col('multiple_select')} COLLATE "C"`],
    ['Done', col('checkbox')],
    ['Files', `jsonb_array_length(${col('attachments')})`],
    [
      'Owners',
      `(SELECT count(*) FROM "${table.schemaName}"."${idOf('linked_record')}_links" AS lnk WHERE lnk.record_id = r.id)`,
    ],
  ])('%s', (field, expression) => {
    expect(sort([field, 'asc'])).toBe(`${expression} ASC NULLS FIRST, r.seq ASC`);
    expect(sort([field, 'desc'])).toBe(`${expression} DESC NULLS LAST, r.seq ASC`);
  });

  // Never empty: no NULLS clause, so the order is the one of the table's (created_at, seq) index.
  it.each<[string, string]>([
    ['id', 'r.id'],
    ['createdAt', 'r.created_at'],
    ['updatedAt', 'r.updated_at'],
  ])('system field %s', (field, expression) => {
    expect(sort([field, 'asc'])).toBe(`${expression} ASC, r.seq ASC`);
    expect(sort([field, 'desc'])).toBe(`${expression} DESC, r.seq ASC`);
  });

  it('finds fields by id', () => {
    expect(sort([idOf('date'), 'asc'])).toBe(`${col('date')} ASC NULLS FIRST, r.seq ASC`);
  });

  it('refuses an unknown field, naming the entry', () => {
    let caught: unknown;
    try {
      sort(['Name', 'asc'], ['X', 'desc']);
    } catch (error) {
      // As the records routes answer it: a listing's sort is in its body.
      caught = error instanceof DomainError ? httpErrorOf(error, 'body') : error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).status).toBe(400);
    expect((caught as AppError).message).toBe('body.sort[1].field: unknown field "X"');
  });
});
