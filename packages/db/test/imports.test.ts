import {
  ColumnInference,
  fieldTypeModule,
  INFERRED_TYPES,
  importCell,
  inferredCell,
  sameImportedValue,
} from '../src/field-types';
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

describe('cells of a column typed by inference', () => {
  const samples = [
    '0',
    '-12.50',
    ' 7 ',
    '1e3',
    '.5',
    'yes',
    'N',
    '✓',
    'checked',
    '2024-02-29',
    ' 2023-12-31 ',
    '2024-03-05T12:34:56Z',
    '2024-03-05 12:34',
    '2024-03-05T12:34:56.123456789+05:30',
    '2024-03-05t01:02:03.4z',
    '2024-02-29T24:00:00Z',
    'a@example.com',
    'https://example.com/x?y',
    'plain',
    ' spaced ',
    'two\nlines',
    '',
  ];

  it('read as the inferred type give what importCell gives, for every text the inference takes', () => {
    let compared = 0;
    for (const type of INFERRED_TYPES) {
      for (const text of samples) {
        const inference = new ColumnInference();
        inference.observe(text);
        if (text !== '' && inference.current() !== type) continue;
        const expected = [type, text, importCell(type, {}, text)];
        expect([type, text, inferredCell(type, {}, text)]).toEqual(expected);
        if (text !== '') expect([type, text, new ColumnInference().read(text)]).toEqual(expected);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(INFERRED_TYPES.length + 15);
  });

  it('read as the column narrows, repeated or not, give what importCell gives for its type then', () => {
    const inference = new ColumnInference();
    const texts = ['1', '0', '1', 'yes', '1', '2024-01-01', 'yes', 'a@b.co', 'x\ny', '1', 'a@b.co'];
    for (const text of texts) {
      const outcome = inference.read(text);
      const type = inference.current() as (typeof INFERRED_TYPES)[number];
      expect([text, type, outcome]).toEqual([text, type, importCell(type, {}, text)]);
    }
    expect(inference.current()).toBe('long_text');
  });

  it('keep their value from one type to another only among the types valued as their text', () => {
    expect(sameImportedValue('email', 'single_line_text')).toBe(true);
    expect(sameImportedValue('url', 'long_text')).toBe(true);
    expect(sameImportedValue('single_line_text', 'long_text')).toBe(true);
    expect(sameImportedValue('number', 'single_line_text')).toBe(false);
    expect(sameImportedValue('date', 'long_text')).toBe(false);
    expect(sameImportedValue('checkbox', 'checkbox')).toBe(true);
  });
});

describe('date-times in their ISO form', () => {
  const fail = (message: string): never => {
    throw new Error(message);
  };
  /** What the date-time type stores: the instant Date reads, in ISO form, years 1 to 9999. */
  const reference = (text: string): string | null => {
    const time = Date.parse(text);
    if (Number.isNaN(time)) return null;
    const iso = new Date(time).toISOString();
    return /^\d{4}-/.test(iso) && !iso.startsWith('0000') ? iso : null;
  };
  const stored = (text: string): string | null => {
    try {
      return fieldTypeModule('datetime').coerce(text, { template: {}, raw: text, fail }) as string;
    } catch {
      return null;
    }
  };

  it('are what Date makes of them, in range or out (months, days past 28, hour 24, year 0)', () => {
    let seed = 20261124;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % below;
    };
    const two = (n: number) => String(n).padStart(2, '0');
    for (let round = 0; round < 20_000; round += 1) {
      const year = [0, 1, 1970, 2024, 9999][random(5)] as number;
      const fraction = ['', '.1', '.12', '.123', '.1234'][random(5)] as string;
      const text = `${String(year).padStart(4, '0')}-${two(random(14))}-${two(random(33))}T${two(random(26))}:${two(random(61))}:${two(random(61))}${fraction}Z`;
      expect([text, stored(text)]).toEqual([text, reference(text)]);
    }
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
