import { typecastValue } from '../src/field-types';

describe('typecastValue', () => {
  it.each([
    ['number', '1,5', '1,5'],
    ['number', ' -3.25 ', -3.25],
    ['number', '', null],
    ['currency', '10', 10],
    ['checkbox', 'No', false],
    ['checkbox', 1, 1],
    ['date', '2026-02-03', '2026-02-03'],
    ['datetime', '2026-02-03T04:05+02:00', '2026-02-03T04:05:00+02:00'],
    ['single_line_text', 12.5, '12.5'],
    ['long_text', false, 'false'],
    ['single_line_text', '', ''],
    ['single_select', 3, '3'],
    ['single_select', '  Open ', 'Open'],
    ['multiple_select', 'a, b,,c', ['a', 'b', 'c']],
    ['multiple_select', [' Smith, John ', ''], ['Smith, John']],
    ['linked_record', 'not converted', 'not converted'],
    ['attachments', 'not converted', 'not converted'],
  ] as const)('%s: %j → %j', (type, given, expected) => {
    expect(typecastValue(type, given)).toEqual(expected);
  });
});
