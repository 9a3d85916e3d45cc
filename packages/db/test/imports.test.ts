import { ColumnInference, importCell } from '../src/field-types';
import { copyLine } from '../src/physical';

/** Imported text as field values (field-types/imports.ts) and as COPY lines (physical/copy.ts). */

const infer = (...values: string[]) => {
  const inference = new ColumnInference();
  for (const value of values) inference.observe(value);
  return inference.result();
};

describe('type inference over every value', () => {
  it.each([
    [['1', '2.50', '', '-3e2'], { type: 'number', template: { decimalPlaces: 2 } }],
    [['yes', 'No', 'TRUE', ''], { type: 'checkbox', template: {} }],
    [['2024-02-29', '2023-01-01'], { type: 'date', template: {} }],
    [['2024-02-29 10:00', '2024-03-01T12:30:15.5+02:00'], { type: 'datetime', template: {} }],
    [['ada@example.com', 'grace@example.org'], { type: 'email', template: {} }],
    [['https://example.com', 'http://a.example/x?y=1'], { type: 'url', template: {} }],
    [['hello', '42'], { type: 'single_line_text', template: {} }],
    [['one line', 'two\nlines'], { type: 'long_text', template: {} }],
    [['', ''], { type: 'single_line_text', template: {} }],
  ])('%j is %j', (values, expected) => {
    expect(infer(...values)).toEqual(expected);
  });

  it('never loses a value to a guess: one late value that does not fit widens the type', () => {
    const numbers = Array.from({ length: 10_000 }, (_, index) => String(index));
    expect(infer(...numbers).type).toBe('number');
    expect(infer(...numbers, '12abc').type).toBe('single_line_text');
    expect(infer('2024-02-29', '2024-02-30').type).toBe('single_line_text');
    expect(infer('1', '0', 'yes').type).toBe('checkbox');
    expect(infer('1', '0', '2').type).toBe('number');
  });
});

describe('cells', () => {
  it('are checked as written values, with a message naming the text', () => {
    expect(importCell('number', { decimalPlaces: 0 }, ' 12.5 ')).toEqual({ ok: true, value: 12.5 });
    expect(importCell('number', { decimalPlaces: 0 }, '')).toEqual({ ok: true, value: null });
    expect(importCell('checkbox', {}, '')).toEqual({ ok: true, value: false });
    expect(importCell('percent', { decimalPlaces: 0 }, '50%')).toEqual({ ok: true, value: 0.5 });
    expect(importCell('multiple_select', { options: [{ name: 'a' }, { name: 'b' }] }, 'b, a, b')).toEqual({
      ok: true,
      value: ['b', 'a'],
    });
    const notNumber = importCell('number', { decimalPlaces: 0 }, 'twelve');
    expect(notNumber).toEqual({ ok: false, message: expect.stringMatching(/^"twelve" must be a number/) });
    const option = importCell('single_select', { options: [{ name: 'Won' }] }, 'Lost');
    expect(option).toEqual({ ok: false, message: expect.stringMatching(/"Lost".*unknown option/) });
    expect(importCell('rating', { max: 5 }, '7')).toEqual({
      ok: false,
      message: expect.stringMatching(/between 0 and 5/),
    });
    expect(importCell('linked_record', { tableId: 't' }, 'x').ok).toBe(false);
  });
});

describe('COPY lines', () => {
  it('escape what the text format reserves and write NULL as \\N', () => {
    expect(copyLine(['a\tb', 'c\\d', 'e\nf\rg', null, 1.5, true, false])).toBe(
      'a\\tb\tc\\\\d\te\\nf\\rg\t\\N\t1.5\tt\tf\n',
    );
    expect(copyLine([['x', 'y "z"', 'back\\slash'], { a: 1 }])).toBe(
      '{"x","y \\\\"z\\\\"","back\\\\\\\\slash"}\t{"a":1}\n',
    );
  });
});
