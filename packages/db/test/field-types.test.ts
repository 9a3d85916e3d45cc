import {
  type ComputedResultType,
  computedResultTypes,
  type FieldType,
  fieldTypes,
  groupOfField,
  groupOfFieldType,
  isComputedFieldType,
  resultTypeOfField,
  resultTypeOfFieldType,
} from '@recordbase/contracts/fields';
import { filterOperatorsByFieldTypeGroup } from '@recordbase/contracts/records';
import { fieldTypeModule, fieldTypeModules, moduleOfField } from '../src/field-types';
import { canConvert, columnSpecOf, fieldValueSql } from '../src/physical';

/** The registry against the contracts: one module per type, each with exactly its group's operators. */

describe('the field type registry', () => {
  it('has one module per field type, under its own name', () => {
    expect(Object.keys(fieldTypeModules).sort()).toEqual([...fieldTypes].sort());
    for (const type of fieldTypes) expect(fieldTypeModule(type).type).toBe(type);
  });

  const ofTheirOwn = fieldTypes.filter((type) => type !== 'formula');

  it.each(ofTheirOwn)('gives %s SQL for exactly the operators of its group', (type) => {
    const operators = Object.keys(fieldTypeModule(type).filters).sort();
    expect(operators).toEqual([...filterOperatorsByFieldTypeGroup[groupOfFieldType(type)]].sort());
  });

  it('gives a column to every written type whose values are not links', () => {
    for (const type of fieldTypes.filter((type) => !isComputedFieldType(type))) {
      const module = fieldTypeModule(type);
      expect(module.column === undefined).toBe(module.prepared === 'links');
    }
  });

  it.each(ofTheirOwn.filter(isComputedFieldType))(
    'reads computed %s from a column or its valueSql, never takes a written value, never names a record',
    (type) => {
      const module = fieldTypeModule(type);
      expect(module.prepared).toBeUndefined();
      expect(module.fromText).toBeUndefined();
      expect(module.match).toBeUndefined();
      expect(module.primary).toBe(false);
      expect((module.column ?? module.columnOf) === undefined).toBe(module.valueSql !== undefined);
      // How a formula reads it is how its Field object says it reads.
      expect(module.formula).toBe(resultTypeOfFieldType(type));
    },
  );
});

describe('a formula field', () => {
  const formulaField = (resultType: ComputedResultType, stored: boolean) => ({
    id: 'fldformula0000000',
    type: 'formula' as const,
    template: {
      expression: '1',
      resultType,
      fieldIds: [],
      ...(stored ? { columnSql: '1' } : { valueSql: 'NULL' }),
    },
  });

  it.each(computedResultTypes)(
    'reads, filters and sorts as its result type %s, with exactly that group’s operators',
    (resultType) => {
      for (const stored of [true, false]) {
        const field = formulaField(resultType, stored);
        const module = moduleOfField(field);
        expect(module.type).toBe('formula');
        expect(module.formula).toBe(resultType);
        expect(resultTypeOfField(field)).toBe(resultType);
        expect(Object.keys(module.filters).sort()).toEqual(
          [...filterOperatorsByFieldTypeGroup[groupOfField(field)]].sort(),
        );
        expect(module.match).toBeUndefined();
        expect(module.prepared).toBeUndefined();
        expect(module.fromText).toBeUndefined();
        // A stored formula is a generated column, indexed as its result type; one read at read
        // time has no column, and nothing for an index to hold.
        expect(columnSpecOf(field)?.generated).toBe(stored ? '1' : undefined);
        expect(fieldValueSql(field)).toBe(stored ? 'r."fldformula0000000"' : '(NULL)');
        expect(module.readIndex !== undefined).toBe(stored && resultType !== 'array');
      }
    },
  );

  it('may name records, as a formula primary field does in Airtable', () => {
    expect(fieldTypeModule('formula').primary).toBeUndefined();
  });
});

/** Which pairs convert, as they did when each type's switch lived in conversions.ts. */
const textTypes: FieldType[] = ['single_line_text', 'long_text', 'email', 'url', 'phone_number'];
const numberTypes: FieldType[] = ['number', 'currency', 'percent', 'rating', 'duration'];
const fromText: FieldType[] = [
  ...textTypes,
  ...numberTypes,
  'date',
  'datetime',
  'single_select',
  'multiple_select',
  'checkbox',
];
const fromNumber: FieldType[] = [...textTypes, ...numberTypes, 'single_select', 'checkbox'];
/** The types that existed then; a type added since pins its own conversions in its tests. */
const convertibleTo: Partial<Record<FieldType, FieldType[]>> = {
  single_line_text: fromText,
  long_text: fromText,
  email: fromText,
  url: fromText,
  phone_number: fromText,
  number: fromNumber,
  currency: fromNumber,
  percent: fromNumber,
  rating: fromNumber,
  duration: fromNumber,
  date: [...textTypes, 'datetime'],
  datetime: [...textTypes, 'date'],
  single_select: fromText,
  multiple_select: [...textTypes, 'single_select'],
  checkbox: [...textTypes, ...numberTypes],
  attachments: [],
  linked_record: [],
};

describe('conversions of computed types', () => {
  const computed = fieldTypes.filter(isComputedFieldType);
  it.each(computed)('nothing converts into %s', (to) => {
    expect(fieldTypes.filter((from) => from !== to && canConvert(from, to))).toEqual([]);
  });
  it.each<[FieldType, FieldType[]]>([
    ['autonumber', [...textTypes, ...numberTypes, 'single_select', 'checkbox']],
    ['created_time', [...textTypes, 'date', 'datetime']],
    ['last_modified_time', [...textTypes, 'date', 'datetime']],
    // The key's name, as text.
    ['created_by', textTypes],
    ['last_modified_by', textTypes],
  ])('%s keeps its values as the types its readings build', (from, targets) => {
    const converts = fieldTypes.filter((to) => to !== from && canConvert(from, to));
    expect(converts.sort()).toEqual([...targets].sort());
  });
});

describe('type conversions', () => {
  const pinned = Object.keys(convertibleTo) as FieldType[];
  it.each(pinned)('convert %s to the same types as before the registry', (from) => {
    const targets = pinned.filter((to) => to !== from && canConvert(from, to));
    expect(targets).toEqual(pinned.filter((to) => to !== from && convertibleTo[from]!.includes(to)));
  });
});

describe('date values', () => {
  const accepts = (text: string): boolean => {
    const fail = (message: string): never => {
      throw new Error(message);
    };
    try {
      fieldTypeModule('date').coerce(text, { template: {}, raw: text, fail });
      return true;
    } catch {
      return false;
    }
  };

  it.each([
    ['2024-02-29', true],
    ['2023-02-29', false],
    ['2000-02-29', true],
    ['1900-02-29', false],
    ['0001-01-01', true],
    ['0000-01-01', false],
    ['9999-12-31', true],
    ['2024-04-31', false],
    ['2024-12-31', true],
    ['2024-13-01', false],
    ['2024-00-10', false],
    ['2024-01-00', false],
  ])('%s is a real date: %s (the proleptic Gregorian calendar, as PostgreSQL)', (text, real) => {
    expect(accepts(text)).toBe(real);
  });
});
