import { isWellFormedText, nameSchema, textSchema } from '../src/common';
import { fieldNameSchema } from '../src/fields';
import { recordValuesInputSchema } from '../src/records';

describe('text PostgreSQL could not store as written', () => {
  it('finds lone surrogates, and only them', () => {
    expect(isWellFormedText('plain, é, 😀')).toBe(true);
    expect(isWellFormedText('\ud800')).toBe(false);
    expect(isWellFormedText('a\udc00b')).toBe(false);
    expect(isWellFormedText('😀'.slice(0, 1))).toBe(false);
    expect(isWellFormedText('😀'.slice(1))).toBe(false);
  });

  it('is refused by text and name schemas with a message saying why', () => {
    const text = textSchema(100).safeParse('a\ud800');
    expect(text.success).toBe(false);
    expect(text.error?.issues[0]?.message).toMatch(/lone surrogate/);
    expect(nameSchema.safeParse('\udfff').success).toBe(false);
  });
});

describe('the prototype key', () => {
  it('is no field name', () => {
    expect(fieldNameSchema.safeParse('__proto__').success).toBe(false);
    expect(fieldNameSchema.safeParse('proto').success).toBe(true);
  });

  it('is refused as a record key rather than silently dropped', () => {
    const parsed = recordValuesInputSchema.safeParse(
      JSON.parse('{"__proto__": {"admin": true}, "Name": "x"}'),
    );
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/__proto__/);
  });
});
