import { type FieldType, fieldTypeContracts } from '@recordbase/contracts/fields';
import fc from 'fast-check';
import { fieldTypeModule } from '../src/field-types';
import { SURELY_WRITABLE } from '../src/field-types/imports';

/**
 * The import's shortcut past the write schemas may only vouch for what the schemas take, as they
 * give it back: anything it lets through unchecked would be stored although the API refuses it.
 */

const surely = Object.entries(SURELY_WRITABLE) as [FieldType, (value: unknown) => boolean][];

/** Text near every edge the schemas check: lengths, NUL, lone and paired surrogates, line breaks. */
const edgyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom('a', '@', '.', ' ', '\n', '\u0000', '\ud83d', '\ude00', '/', ':', '+', '1', 'x'),
  }),
  fc
    .tuple(
      fc.constantFrom('', 'mailto:', 'http://', 'https://', 'ftp://', '+'),
      fc.string(),
      fc.constantFrom('', '@b.co', '.com', '/p?q#f'),
    )
    .map(([a, b, c]) => a + b + c),
  fc
    .constantFrom(60, 61, 254, 255, 2048, 2049, 100_000, 100_001)
    .chain((length) =>
      fc
        .constantFrom('a', '1', 'é')
        .map((unit) => `${length > 300 ? 'https://' : ''}${unit.repeat(length)}`.slice(0, length)),
    ),
  fc.constantFrom(
    'a@b.co',
    'https://example.com/x',
    '+1 (555) 010-9999 ext. 12',
    'Ada 😀',
    'a\u0000b',
    'a\ud800',
  ),
  // Values of each pattern at their type's longest and one past it.
  fc.constantFrom(
    `${'a'.repeat(248)}@b.co`,
    `${'a'.repeat(249)}@b.co`,
    `+${'1'.repeat(40)}ext.${' '.repeat(10)}12345`,
    `+${'1'.repeat(40)}ext.${' '.repeat(10)}123456`,
  ),
);

const anyValue = fc.oneof(
  edgyText,
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1e308, 5e-324),
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
);

describe('SURELY_WRITABLE', () => {
  test.each(surely)('%s: only what the write schema takes, as it gives it back', (type, vouches) => {
    fc.assert(
      fc.property(anyValue, (value) => {
        if (!vouches(value)) return;
        const parsed = fieldTypeContracts[type].writeValue.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(Object.is(parsed.data, value)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  test('it vouches for the common cells of an import, so the schemas are really skipped', () => {
    const cells: [FieldType, string][] = [
      ['single_line_text', 'Quinn Joshi'],
      ['long_text', 'new lead\nsecond line 😀'],
      ['email', 'qjoshi9@inbox.org'],
      ['url', 'https://joshi.io/817'],
      ['phone_number', '+1 555 0100'],
      ['number', '8670'],
      ['currency', '12.50'],
      ['checkbox', 'false'],
    ];
    for (const [type, text] of cells) {
      const value = fieldTypeModule(type).fromText?.(text);
      expect([type, SURELY_WRITABLE[type]?.(value)]).toEqual([type, true]);
    }
  });

  test('it leaves refusals to the schema, which words them', () => {
    for (const [type, value] of [
      ['single_line_text', 'a\u0000b'],
      ['long_text', 'x'.repeat(100_001)],
      ['email', 'not an email'],
      ['url', 'ftp://example.com'],
      ['number', Number.POSITIVE_INFINITY],
      ['checkbox', 'yes'],
    ] as [FieldType, unknown][]) {
      expect([type, SURELY_WRITABLE[type]?.(value)]).toEqual([type, false]);
      expect(fieldTypeContracts[type].writeValue.safeParse(value).success).toBe(false);
    }
  });
});
