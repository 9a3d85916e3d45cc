import { type FieldType, fieldTypes, groupOfFieldType } from '@recordbase/contracts/fields';
import { filterOperatorsByFieldTypeGroup } from '@recordbase/contracts/records';
import { fieldTypeModule, fieldTypeModules } from '../src/field-types';
import { canConvert } from '../src/physical';

/** The registry against the contracts: one module per type, each with exactly its group's operators. */

describe('the field type registry', () => {
  it('has one module per field type, under its own name', () => {
    expect(Object.keys(fieldTypeModules).sort()).toEqual([...fieldTypes].sort());
    for (const type of fieldTypes) expect(fieldTypeModule(type).type).toBe(type);
  });

  it.each(fieldTypes)('gives %s SQL for exactly the operators of its group', (type) => {
    const operators = Object.keys(fieldTypeModule(type).filters).sort();
    expect(operators).toEqual([...filterOperatorsByFieldTypeGroup[groupOfFieldType(type)]].sort());
  });

  it('gives a column to every type whose values are not links', () => {
    for (const type of fieldTypes) {
      const module = fieldTypeModule(type);
      expect(module.column === undefined).toBe(module.prepared === 'links');
    }
  });
});

/** Which pairs convert, as they did when each type's switch lived in conversions.ts. */
const convertibleTo: Record<FieldType, FieldType[]> = {
  single_line_text: [
    'long_text',
    'email',
    'url',
    'phone_number',
    'number',
    'currency',
    'percent',
    'rating',
    'duration',
    'date',
    'datetime',
    'single_select',
    'multiple_select',
    'checkbox',
  ],
  long_text: [
    'single_line_text',
    'email',
    'url',
    'phone_number',
    'number',
    'currency',
    'percent',
    'rating',
    'duration',
    'date',
    'datetime',
    'single_select',
    'multiple_select',
    'checkbox',
  ],
  email: [
    'single_line_text',
    'long_text',
    'url',
    'phone_number',
    'number',
    'currency',
    'percent',
    'rating',
    'duration',
    'date',
    'datetime',
    'single_select',
    'multiple_select',
    'checkbox',
  ],
  url: [
    'single_line_text',
    'long_text',
    'email',
    'phone_number',
    'number',
    'currency',
    'percent',
    'rating',
    'duration',
    'date',
    'datetime',
    'single_select',
    'multiple_select',
    'checkbox',
  ],
  phone_number: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'number',
    'currency',
    'percent',
    'rating',
    'duration',
    'date',
    'datetime',
    'single_select',
    'multiple_select',
    'checkbox',
  ],
  number: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'phone_number',
    'currency',
    'percent',
    'rating',
    'duration',
    'single_select',
    'checkbox',
  ],
  currency: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'phone_number',
    'number',
    'percent',
    'rating',
    'duration',
    'single_select',
    'checkbox',
  ],
  percent: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'phone_number',
    'number',
    'currency',
    'rating',
    'duration',
    'single_select',
    'checkbox',
  ],
  rating: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'phone_number',
    'number',
    'currency',
    'percent',
    'duration',
    'single_select',
    'checkbox',
  ],
  duration: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'phone_number',
    'number',
    'currency',
    'percent',
    'rating',
    'single_select',
    'checkbox',
  ],
  date: ['single_line_text', 'long_text', 'email', 'url', 'phone_number', 'datetime'],
  datetime: ['single_line_text', 'long_text', 'email', 'url', 'phone_number', 'date'],
  single_select: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'phone_number',
    'number',
    'currency',
    'percent',
    'rating',
    'duration',
    'date',
    'datetime',
    'multiple_select',
    'checkbox',
  ],
  multiple_select: ['single_line_text', 'long_text', 'email', 'url', 'phone_number', 'single_select'],
  checkbox: [
    'single_line_text',
    'long_text',
    'email',
    'url',
    'phone_number',
    'number',
    'currency',
    'percent',
    'rating',
    'duration',
  ],
  attachments: [],
  linked_record: [],
};

describe('type conversions', () => {
  it.each(fieldTypes)('convert %s to the same types as before the registry', (from) => {
    const targets = fieldTypes.filter((to) => to !== from && canConvert(from, to));
    expect(targets).toEqual(convertibleTo[from]);
  });
});
