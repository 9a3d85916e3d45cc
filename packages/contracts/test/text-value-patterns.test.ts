import { textValuePatterns } from '../src/fields';
import { recordValueWriteSchemaByType } from '../src/records';

/** The patterns before they were made linear: what the rewrites must still agree with. */
const previousPatterns = {
  email: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$',
  url: '^https?://[^\\s/?#]+([/?#][^\\s]*)?$',
  phone_number: '^[+]?[0-9 ()./-]{3,40}([ ]*(x|ext[.]?)[ ]*[0-9]{1,6})?$',
} as const;

type PatternType = keyof typeof textValuePatterns;

const matches = (pattern: string, value: string) => new RegExp(pattern, 'i').test(value);

const examples: Record<PatternType, { valid: string[]; invalid: string[] }> = {
  email: {
    valid: [
      'ada@example.com',
      'ADA@EXAMPLE.COM',
      'first.last+tag@sub.example.co.uk',
      'a@b.c',
      'a@.b.c',
      "o'brien@example.org",
      'user@xn--bcher-kva.example',
    ],
    invalid: [
      'not an email',
      'ada@example',
      'ada@example.',
      'ada@.com',
      '@example.com',
      'ada@@example.com',
      'ada@exa mple.com',
      'ada@example.com ',
      'a@b@c.d',
      '',
    ],
  },
  url: {
    valid: [
      'https://example.com',
      'http://example.com/a/b?c=d#e',
      'HTTPS://EXAMPLE.COM',
      'https://127.0.0.1:8080/',
      'https://example.com?x',
    ],
    invalid: [
      'javascript:alert(1)',
      'ftp://example.com',
      'https://',
      'https:///path',
      'https://exa mple.com',
      '',
    ],
  },
  phone_number: {
    valid: [
      '+1 (555) 123-4567',
      '555-1234',
      '555-1234 x12',
      '555-1234 ext. 12',
      '555-1234 EXT 12',
      '555-1234ext.12',
      '+44 20 7946 0958',
      '123',
      '1'.repeat(40),
    ],
    invalid: [
      'call me',
      '12',
      '555-1234 x',
      '555-1234 x1234567',
      '1'.repeat(41),
      '++1 555 1234',
      '555#1234',
      '',
    ],
  },
};

describe('text value patterns', () => {
  describe.each(Object.keys(examples) as PatternType[])('%s', (type) => {
    const { valid, invalid } = examples[type];

    it.each(valid)('accepts %j, as before', (value) => {
      expect(matches(textValuePatterns[type], value)).toBe(true);
      expect(matches(previousPatterns[type], value)).toBe(true);
    });

    it.each(invalid)('refuses %j, as before', (value) => {
      expect(matches(textValuePatterns[type], value)).toBe(false);
      expect(matches(previousPatterns[type], value)).toBe(false);
    });

    it('is what the record value schema checks', () => {
      for (const value of valid.filter((text) => text !== '' && text.length <= 60)) {
        expect(recordValueWriteSchemaByType[type].safeParse(value).success).toBe(true);
      }
      for (const value of invalid.filter((text) => text !== '')) {
        expect(recordValueWriteSchemaByType[type].safeParse(value).success).toBe(false);
      }
    });
  });

  /** Every string up to `maxLength` over `alphabet`, shortest first. */
  function* allStrings(alphabet: readonly string[], maxLength: number): Generator<string> {
    let layer = [''];
    for (let length = 0; length <= maxLength; length += 1) {
      yield* layer;
      layer = layer.flatMap((prefix) => alphabet.map((character) => prefix + character));
    }
  }

  function disagreements(type: PatternType, alphabet: readonly string[], maxLength: number): string[] {
    const current = new RegExp(textValuePatterns[type], 'i');
    const previous = new RegExp(previousPatterns[type], 'i');
    const found: string[] = [];
    for (const value of allStrings(alphabet, maxLength)) {
      if (current.test(value) !== previous.test(value)) found.push(value);
    }
    return found;
  }

  it('classifies every short string over the email alphabet as before', () => {
    expect(disagreements('email', ['a', '@', '.', ' ', '\t'], 7)).toEqual([]);
  });

  it('classifies every short string over the phone alphabet as before', () => {
    expect(disagreements('phone_number', ['1', ' ', 'x', 'e', 't', '.', '+'], 6)).toEqual([]);
  });

  it('is stricter for phone numbers only where they are absurd', () => {
    const manySpacesBeforeExtension = `123${' '.repeat(38)}x1`;
    const manySpacesAfterExtension = `555-1234 x${' '.repeat(11)}1`;
    for (const value of [manySpacesBeforeExtension, manySpacesAfterExtension]) {
      expect(matches(previousPatterns.phone_number, value)).toBe(true);
      expect(matches(textValuePatterns.phone_number, value)).toBe(false);
    }
    expect(matches(textValuePatterns.phone_number, `555-1234 x${' '.repeat(10)}1`)).toBe(true);
  });

  it('refuses an email value too long before its pattern runs', () => {
    const hostile = `a@${'a.'.repeat(40_000)}@`;
    const result = recordValueWriteSchemaByType.email.safeParse(hostile);
    expect(result.error?.issues.map((issue) => issue.message)).toEqual(['must be at most 254 characters']);
  });
});
