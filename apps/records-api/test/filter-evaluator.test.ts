import type { FieldType } from '@recordbase/contracts/fields';
import type { Filter, FilterOperator, RecordValue, Sort, TableRecord } from '@recordbase/contracts/records';
import { compareForSort, epochMicros, matchesFilter } from '@recordbase/domain/records/filter-evaluator';
import { buildTableMeta, type FieldMeta, type TableMeta } from '@recordbase/domain/records/table-meta';

const fieldList: [string, string, FieldType][] = [
  ['fldName000000000', 'Name', 'single_line_text'],
  ['fldEmail00000000', 'Email', 'email'],
  ['fldCount00000000', 'Count', 'number'],
  ['fldStars00000000', 'Stars', 'rating'],
  ['fldDue0000000000', 'Due', 'date'],
  ['fldAt00000000000', 'At', 'datetime'],
  ['fldStatus0000000', 'Status', 'single_select'],
  ['fldTags000000000', 'Tags', 'multiple_select'],
  ['fldDone000000000', 'Done', 'checkbox'],
  ['fldFiles00000000', 'Files', 'attachments'],
  ['fldOwners0000000', 'Owners', 'linked_record'],
];

const table: TableMeta = buildTableMeta({
  databaseId: '00000000-0000-4000-8000-000000000001',
  schemaName: 'base_00000000000040008000000000000001',
  id: 'tblThings00000000',
  name: 'Things',
  primaryFieldId: 'fldName000000000',
  fields: fieldList.map(([id, name, type]) => ({ id, name, type, template: {} as FieldMeta['template'] })),
});

const emptyValue: Record<FieldType, RecordValue> = {
  single_line_text: null,
  long_text: null,
  email: null,
  url: null,
  phone_number: null,
  number: null,
  currency: null,
  percent: null,
  rating: null,
  duration: null,
  date: null,
  datetime: null,
  single_select: null,
  multiple_select: [],
  checkbox: false,
  attachments: [],
  linked_record: [],
  autonumber: null,
  created_time: null,
  last_modified_time: null,
  created_by: null,
  last_modified_by: null,
  formula: null,
  count: 0,
  lookup: [],
  rollup: null,
};

const ID = '0190f3c2-7a4e-7b1c-8d2e-3f4a5b6c7d8e';
const P1 = '0190f3c2-0000-7000-8000-000000000001';
const P2 = '0190f3c2-0000-7000-8000-000000000002';

/** A record in API shape: values by field name, every other field empty. */
function record(values: Record<string, RecordValue>, extra: Partial<TableRecord> = {}): TableRecord {
  const data: Record<string, RecordValue> = {};
  const fields: Record<string, RecordValue> = {};
  for (const [id, name, type] of fieldList) {
    const value = Object.hasOwn(values, name) ? (values[name] as RecordValue) : emptyValue[type];
    data[id] = value;
    fields[name] = value;
  }
  return {
    id: ID,
    data,
    fields,
    createdAt: '2024-01-01T10:00:00.000Z',
    updatedAt: '2024-01-02T10:00:00.000Z',
    ...extra,
  };
}

const when = (field: string, operator: FilterOperator, operand: unknown): Filter =>
  ({ field, [operator]: operand }) as Filter;

/** [field, operator, operand, value, expected] */
type Example = [string, FilterOperator, unknown, RecordValue, boolean];

function check(examples: Example[]) {
  it.each(examples)('%s %s %j on %j → %s', (field, operator, operand, value, expected) => {
    expect(matchesFilter(record({ [field]: value }), when(field, operator, operand), table)).toBe(expected);
  });
}

describe('matchesFilter: text', () => {
  check([
    ['Name', 'equals', 'Apple', 'Apple', true],
    ['Name', 'equals', 'apple', 'Apple', false],
    ['Name', 'equals', 'Apple', null, false],
    ['Name', 'does_not_equal', 'Apple', 'Apple', false],
    ['Name', 'does_not_equal', 'Apple', 'apple', true],
    ['Name', 'does_not_equal', 'Apple', null, true],
    ['Name', 'does_not_equal', 'Apple', '', true],
    ['Name', 'contains', 'PPL', 'Apple pie', true],
    ['Name', 'contains', 'x', 'Apple pie', false],
    ['Name', 'contains', 'x', null, false],
    ['Name', 'contains', '%', 'Apple pie', false],
    ['Name', 'contains', '%', '100%', true],
    ['Name', 'does_not_contain', 'PPL', 'Apple pie', false],
    ['Name', 'does_not_contain', 'x', 'Apple pie', true],
    ['Name', 'does_not_contain', 'x', null, true],
    ['Name', 'does_not_contain', 'x', '', true],
    ['Name', 'starts_with', 'aPP', 'Apple', true],
    ['Name', 'starts_with', 'ple', 'Apple', false],
    ['Name', 'starts_with', 'a', null, false],
    ['Name', 'ends_with', 'PLE', 'Apple', true],
    ['Name', 'ends_with', 'App', 'Apple', false],
    ['Name', 'ends_with', 'a', null, false],
    ['Name', 'is_empty', true, null, true],
    ['Name', 'is_empty', true, '', true],
    ['Name', 'is_empty', true, ' ', false],
    ['Name', 'is_not_empty', true, 'x', true],
    ['Name', 'is_not_empty', true, '', false],
    ['Name', 'is_not_empty', true, null, false],
    ['Email', 'in', ['a@x.io', 'b@x.io'], 'b@x.io', true],
    ['Email', 'in', ['a@x.io'], 'A@x.io', false],
    ['Email', 'in', [], 'a@x.io', false],
    ['Email', 'in', ['a@x.io'], null, false],
    ['Email', 'not_in', ['a@x.io'], 'b@x.io', true],
    ['Email', 'not_in', ['a@x.io'], 'a@x.io', false],
    ['Email', 'not_in', ['a@x.io'], null, true],
    ['Email', 'not_in', [], 'a@x.io', true],
  ]);
});

describe('matchesFilter: numbers', () => {
  check([
    ['Count', 'equals', 0, 0, true],
    ['Count', 'equals', 0, null, false],
    ['Count', 'equals', 2.5, 2.5, true],
    ['Count', 'does_not_equal', 1, 2, true],
    ['Count', 'does_not_equal', 1, 1, false],
    ['Count', 'does_not_equal', 1, null, true],
    ['Count', 'greater_than', 1, 2, true],
    ['Count', 'greater_than', 2, 2, false],
    ['Count', 'greater_than', -1, null, false],
    ['Count', 'greater_than_or_equal_to', 2, 2, true],
    ['Count', 'greater_than_or_equal_to', 2, 1, false],
    ['Count', 'less_than', 2, 1, true],
    ['Count', 'less_than', 2, 2, false],
    ['Count', 'less_than', 2, null, false],
    ['Count', 'less_than_or_equal_to', 2, 2, true],
    ['Count', 'less_than_or_equal_to', 2, 3, false],
    ['Stars', 'is_empty', true, null, true],
    ['Stars', 'is_empty', true, 0, false],
    ['Stars', 'is_not_empty', true, 0, true],
    ['Stars', 'in', [1, 3], 3, true],
    ['Stars', 'in', [1, 3], 2, false],
    ['Stars', 'in', [], 2, false],
    ['Stars', 'not_in', [1, 3], 2, true],
    ['Stars', 'not_in', [1, 3], 3, false],
    ['Stars', 'not_in', [1, 3], null, true],
  ]);
});

describe('matchesFilter: dates', () => {
  check([
    ['Due', 'equals', '2024-03-01', '2024-03-01', true],
    ['Due', 'equals', '2024-03-01', '2024-03-02', false],
    ['Due', 'equals', '2024-03-01', null, false],
    ['Due', 'equals', '2024-03-01T23:30:00-02:00', '2024-03-02', true],
    ['Due', 'equals', '2024-03-01T01:30:00+02:00', '2024-02-29', true],
    ['Due', 'does_not_equal', '2024-03-01', '2024-03-02', true],
    ['Due', 'does_not_equal', '2024-03-01', null, true],
    ['Due', 'does_not_equal', '2024-03-01', '2024-03-01', false],
    ['Due', 'greater_than', '2024-03-01', '2024-03-02', true],
    ['Due', 'greater_than', '2024-03-01', '2024-03-01', false],
    ['Due', 'greater_than', '1900-01-01', null, false],
    ['Due', 'greater_than_or_equal_to', '2024-03-01', '2024-03-01', true],
    ['Due', 'less_than', '2024-03-01', '2024-02-29', true],
    ['Due', 'less_than', '2024-03-01', '2024-03-01', false],
    ['Due', 'less_than', '2999-01-01', null, false],
    ['Due', 'less_than_or_equal_to', '2024-03-01', '2024-03-01', true],
    ['Due', 'less_than_or_equal_to', '2024-03-01', '2024-03-02', false],
    ['Due', 'is_empty', true, null, true],
    ['Due', 'is_not_empty', true, '2024-03-01', true],
  ]);
});

describe('matchesFilter: date-times', () => {
  check([
    // A date-only operand is the whole UTC day.
    ['At', 'equals', '2024-03-01', '2024-03-01T00:00:00.000Z', true],
    ['At', 'equals', '2024-03-01', '2024-03-01T23:59:59.999999Z', true],
    ['At', 'equals', '2024-03-01', '2024-03-02T00:00:00.000Z', false],
    ['At', 'equals', '2024-03-01', '2024-02-29T23:59:59.999Z', false],
    ['At', 'does_not_equal', '2024-03-01', '2024-03-02T00:00:00.000Z', true],
    ['At', 'does_not_equal', '2024-03-01', '2024-03-01T12:00:00.000Z', false],
    ['At', 'does_not_equal', '2024-03-01', null, true],
    ['At', 'greater_than', '2024-03-01', '2024-03-01T23:59:59.999Z', false],
    ['At', 'greater_than', '2024-03-01', '2024-03-02T00:00:00.000Z', true],
    ['At', 'greater_than_or_equal_to', '2024-03-01', '2024-03-01T00:00:00.000Z', true],
    ['At', 'greater_than_or_equal_to', '2024-03-01', '2024-02-29T23:59:59.999Z', false],
    ['At', 'less_than', '2024-03-01', '2024-02-29T23:59:59.999Z', true],
    ['At', 'less_than', '2024-03-01', '2024-03-01T00:00:00.000Z', false],
    ['At', 'less_than_or_equal_to', '2024-03-01', '2024-03-01T23:59:59.999Z', true],
    ['At', 'less_than_or_equal_to', '2024-03-01', '2024-03-02T00:00:00.000Z', false],
    // A date-time operand is an instant, whatever its offset.
    ['At', 'equals', '2024-03-01T12:00:00+01:00', '2024-03-01T11:00:00.000Z', true],
    ['At', 'equals', '2024-03-01T12:00:00Z', '2024-03-01T12:00:00.000001Z', false],
    ['At', 'greater_than', '2024-03-01T12:00:00Z', '2024-03-01T12:00:00.000001Z', true],
    ['At', 'greater_than', '2024-03-01T12:00:00Z', '2024-03-01T12:00:00.000Z', false],
    ['At', 'greater_than_or_equal_to', '2024-03-01T12:00:00Z', '2024-03-01T12:00:00.000Z', true],
    ['At', 'less_than', '2024-03-01T12:00:00Z', '2024-03-01T11:59:59.999999Z', true],
    ['At', 'less_than', '2024-03-01T12:00:00Z', '2024-03-01T12:00:00Z', false],
    ['At', 'less_than_or_equal_to', '2024-03-01T12:00:00Z', '2024-03-01T12:00:00Z', true],
    ['At', 'less_than', '2999-01-01T00:00:00Z', null, false],
    ['At', 'is_empty', true, null, true],
    ['At', 'is_not_empty', true, null, false],
  ]);

  it('reads date-times to the microsecond', () => {
    expect(epochMicros('1970-01-01T00:00:00Z')).toBe(0n);
    expect(epochMicros('1970-01-01T00:00:01.0000019Z')).toBe(1_000_001n);
    expect(epochMicros('1970-01-01T01:00:00+01:00')).toBe(0n);
    expect(epochMicros('0050-01-01T00:00:00Z')).toBe(BigInt(Date.parse('0050-01-01T00:00:00Z')) * 1000n);
  });
});

describe('matchesFilter: selection', () => {
  check([
    ['Status', 'equals', 'Red', 'Red', true],
    ['Status', 'equals', 'red', 'Red', false],
    ['Status', 'equals', 'Red', null, false],
    ['Status', 'does_not_equal', 'Red', 'Green', true],
    ['Status', 'does_not_equal', 'Red', null, true],
    ['Status', 'does_not_equal', 'Red', 'Red', false],
    ['Status', 'contains', 'RE', 'Green', true],
    ['Status', 'contains', 'x', 'Green', false],
    ['Status', 'contains', 'x', null, false],
    ['Status', 'does_not_contain', 'x', null, true],
    ['Status', 'does_not_contain', 'RE', 'Green', false],
    ['Status', 'in', ['Red', 'Blue'], 'Blue', true],
    ['Status', 'in', ['Red', 'Blue'], null, false],
    ['Status', 'not_in', ['Red', 'Blue'], null, true],
    ['Status', 'not_in', ['Red', 'Blue'], 'Red', false],
    ['Status', 'is_empty', true, null, true],
    ['Status', 'is_not_empty', true, 'Red', true],
    ['Tags', 'contains', 'A', ['A', 'B'], true],
    ['Tags', 'contains', 'a', ['A', 'B'], false],
    ['Tags', 'contains', 'A', [], false],
    ['Tags', 'does_not_contain', 'A', [], true],
    ['Tags', 'does_not_contain', 'A', ['B'], true],
    ['Tags', 'does_not_contain', 'A', ['A'], false],
    ['Tags', 'equals', 'A', ['A'], true],
    ['Tags', 'equals', 'A', ['A', 'B'], false],
    ['Tags', 'equals', 'A', [], false],
    ['Tags', 'does_not_equal', 'A', ['A', 'B'], true],
    ['Tags', 'does_not_equal', 'A', [], true],
    ['Tags', 'does_not_equal', 'A', ['A'], false],
    ['Tags', 'in', ['A', 'C'], ['B', 'C'], true],
    ['Tags', 'in', ['A', 'C'], ['B'], false],
    ['Tags', 'in', [], ['B'], false],
    ['Tags', 'not_in', ['A', 'C'], ['B'], true],
    ['Tags', 'not_in', ['A', 'C'], [], true],
    ['Tags', 'not_in', ['A', 'C'], ['C'], false],
    ['Tags', 'is_empty', true, [], true],
    ['Tags', 'is_empty', true, ['A'], false],
    ['Tags', 'is_not_empty', true, ['A'], true],
  ]);
});

describe('matchesFilter: checkbox, attachments, linked records', () => {
  const file = { url: 'https://x.io/a', fileName: 'a.txt', size: 1, mimeType: 'text/plain' };
  check([
    ['Done', 'equals', true, true, true],
    ['Done', 'equals', true, false, false],
    ['Done', 'equals', false, false, true],
    ['Done', 'does_not_equal', true, false, true],
    ['Done', 'does_not_equal', false, false, false],
    ['Files', 'is_empty', true, [], true],
    ['Files', 'is_empty', true, [file], false],
    ['Files', 'is_not_empty', true, [file], true],
    ['Owners', 'contains', P1, [P1, P2], true],
    ['Owners', 'contains', P1.toUpperCase(), [P1], true],
    ['Owners', 'contains', P1, [P2], false],
    ['Owners', 'does_not_contain', P1, [], true],
    ['Owners', 'does_not_contain', P1, [P1], false],
    ['Owners', 'is_empty', true, [], true],
    ['Owners', 'is_not_empty', true, [P2], true],
    ['Owners', 'in', [P1, ID], [P2, P1], true],
    ['Owners', 'in', [ID], [P2, P1], false],
    ['Owners', 'in', [], [P1], false],
    ['Owners', 'not_in', [ID], [P2], true],
    ['Owners', 'not_in', [ID], [], true],
    ['Owners', 'not_in', [P2], [P1, P2], false],
  ]);
});

describe('matchesFilter: system fields and groups', () => {
  const plain = record({ Name: 'x', Count: 3 });

  it('id', () => {
    expect(matchesFilter(plain, { field: 'id', equals: ID }, table)).toBe(true);
    expect(matchesFilter(plain, { field: 'id', equals: ID.toUpperCase() }, table)).toBe(true);
    expect(matchesFilter(plain, { field: 'id', does_not_equal: ID }, table)).toBe(false);
    expect(matchesFilter(plain, { field: 'id', in: [P1, ID] }, table)).toBe(true);
    expect(matchesFilter(plain, { field: 'id', in: [] }, table)).toBe(false);
    expect(matchesFilter(plain, { field: 'id', not_in: [P1] }, table)).toBe(true);
    expect(matchesFilter(plain, { field: 'id', not_in: [ID] }, table)).toBe(false);
  });

  it('createdAt and updatedAt compare as date-times and are never empty', () => {
    expect(matchesFilter(plain, { field: 'createdAt', equals: '2024-01-01' }, table)).toBe(true);
    expect(matchesFilter(plain, { field: 'updatedAt', equals: '2024-01-01' }, table)).toBe(false);
    expect(matchesFilter(plain, { field: 'updatedAt', greater_than: '2024-01-02T09:00:00Z' }, table)).toBe(
      true,
    );
    expect(matchesFilter(plain, { field: 'createdAt', is_empty: true }, table)).toBe(false);
    expect(matchesFilter(plain, { field: 'updatedAt', is_not_empty: true }, table)).toBe(true);
  });

  it('finds fields by id and by name ignoring case', () => {
    expect(matchesFilter(plain, { field: 'fldCount00000000', equals: 3 }, table)).toBe(true);
    expect(matchesFilter(plain, { field: 'COUNT', equals: 3 }, table)).toBe(true);
  });

  it('and / or, nested', () => {
    const yes = { field: 'Count', equals: 3 } as Filter;
    const no = { field: 'Name', equals: 'y' } as Filter;
    expect(matchesFilter(plain, { and: [yes, yes] }, table)).toBe(true);
    expect(matchesFilter(plain, { and: [yes, no] }, table)).toBe(false);
    expect(matchesFilter(plain, { or: [no, yes] }, table)).toBe(true);
    expect(matchesFilter(plain, { or: [no, no] }, table)).toBe(false);
    expect(matchesFilter(plain, { and: [yes, { or: [no, { and: [yes] }] }] }, table)).toBe(true);
  });

  it('throws on an unknown field', () => {
    expect(() => matchesFilter(plain, { field: 'Nope', equals: 1 }, table)).toThrow('unknown field');
  });
});

describe('compareForSort', () => {
  const by = (field: string, direction: 'asc' | 'desc' = 'asc'): Sort[] => [{ field, direction }];
  const order = (records: TableRecord[], sort: Sort[] | undefined) =>
    [...records].sort((a, b) => compareForSort(a, b, sort, table)).map((each) => each.fields.Name);
  const named = (name: string, values: Record<string, RecordValue>, extra: Partial<TableRecord> = {}) =>
    record({ Name: name, ...values }, extra);

  it('puts empty values first ascending and last descending', () => {
    const records = [named('b', { Count: 2 }), named('n', {}), named('a', { Count: -1 })];
    expect(order(records, by('Count'))).toEqual(['n', 'a', 'b']);
    expect(order(records, by('Count', 'desc'))).toEqual(['b', 'a', 'n']);
  });

  it('sorts text by code unit, empty string after null', () => {
    const records = ['b', 'B', 'a', '', 'A', 'ab'].map((name) => named(name, {}));
    expect(order([...records, record({})], by('Name'))).toEqual([null, '', 'A', 'B', 'a', 'ab', 'b']);
  });

  it('sorts by each type', () => {
    const file = { url: 'u', fileName: 'f', size: 1, mimeType: 'm' };
    const x = named('x', {
      Due: '2024-01-02',
      At: '2024-01-01T00:00:00.000001Z',
      Status: 'B',
      Tags: ['A', 'B'],
      Done: true,
      Files: [file],
      Owners: [P1, P2],
    });
    const y = named('y', {
      Due: '2024-01-01',
      At: '2024-01-01T00:00:00Z',
      Status: 'A',
      Tags: ['A'],
      Done: false,
      Files: [],
      Owners: [P2],
    });
    for (const field of ['Due', 'At', 'Status', 'Tags', 'Done', 'Files', 'Owners']) {
      expect([field, order([x, y], by(field))]).toEqual([field, ['y', 'x']]);
      expect([field, order([y, x], by(field, 'desc'))]).toEqual([field, ['x', 'y']]);
    }
  });

  it('sorts multiple selects element by element, a prefix first', () => {
    const records = [
      named('ab', { Tags: ['A', 'B'] }),
      named('b', { Tags: ['B'] }),
      named('e', {}),
      named('a', { Tags: ['A'] }),
    ];
    expect(order(records, by('Tags'))).toEqual(['e', 'a', 'ab', 'b']);
  });

  it('sorts by system fields; no sort means createdAt ascending', () => {
    const early = named(
      'early',
      {},
      { id: P2, createdAt: '2024-01-01T00:00:00+01:00', updatedAt: '2024-05-01T00:00:00Z' },
    );
    const late = named(
      'late',
      {},
      { id: P1, createdAt: '2024-01-01T00:00:00Z', updatedAt: '2024-04-01T00:00:00Z' },
    );
    expect(order([late, early], undefined)).toEqual(['early', 'late']);
    expect(order([late, early], [])).toEqual(['early', 'late']);
    expect(order([early, late], by('createdAt', 'desc'))).toEqual(['late', 'early']);
    expect(order([early, late], by('updatedAt'))).toEqual(['late', 'early']);
    expect(order([early, late], by('id'))).toEqual(['late', 'early']);
  });

  it('applies later entries only to ties, and returns 0 on a full tie', () => {
    const a = named('a', { Count: 1, Stars: 2 });
    const b = named('b', { Count: 1, Stars: 1 });
    expect(order([a, b], [...by('Count'), ...by('Stars')])).toEqual(['b', 'a']);
    expect(order([a, b], [...by('Count'), ...by('Stars', 'desc')])).toEqual(['a', 'b']);
    expect(compareForSort(a, b, by('Count'), table)).toBe(0);
  });
});
