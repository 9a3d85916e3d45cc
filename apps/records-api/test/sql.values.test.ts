import { asNumeric, asTimestamp } from '@recordbase/domain/sql/values';

/** PostgreSQL's text output to JSON values (values.ts): exact numbers stay numbers, the rest text. */

describe('numeric', () => {
  it.each([
    ['0', 0],
    ['-0.5', -0.5],
    ['1.50', 1.5],
    ['100000000000000000000', 1e20],
    ['0.000000000000000000123', 1.23e-19],
    ['123456789012345', 123456789012345],
    ['-12345678901234.5', -12345678901234.5],
  ])('%s is the number %d', (text, number) => {
    expect(asNumeric(text)).toBe(number);
  });

  it.each([
    '1234567890123456',
    '0.1234567890123456',
    '12345678901234567890.5',
    'NaN',
    'Infinity',
    '-Infinity',
  ])('%s stays text', (text) => {
    expect(asNumeric(text)).toBe(text);
  });
});

describe('timestamps', () => {
  it.each([
    ['2026-11-24 03:13:29.129887+00', '2026-11-24T03:13:29.129887Z'],
    ['2026-11-24 03:13:29.5+00', '2026-11-24T03:13:29.500Z'],
    ['2026-11-24 03:13:29+00', '2026-11-24T03:13:29.000Z'],
    ['2024-01-02 03:04:05', '2024-01-02T03:04:05.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(asTimestamp(text)).toBe(iso);
  });

  it.each(['infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '10000-01-01 00:00:00+00'])(
    '%s stays text',
    (text) => {
      expect(asTimestamp(text)).toBe(text);
    },
  );
});
