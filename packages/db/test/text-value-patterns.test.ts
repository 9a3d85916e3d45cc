import { textValuePatterns } from '@recordbase/contracts/fields';
import pg from 'pg';
import { TEST_ADMIN_URL } from '../src/testing';

/**
 * The value patterns run in JavaScript on write and in PostgreSQL (`~*`) when a field's type is
 * converted: both engines must accept them and classify every value alike.
 */
const samples: Record<keyof typeof textValuePatterns, string[]> = {
  email: [
    'ada@example.com',
    'ADA@EXAMPLE.COM',
    'first.last+tag@sub.example.co.uk',
    'a@b.c',
    'a@.b.c',
    'not an email',
    'ada@example',
    'ada@example.',
    'ada@.com',
    '@example.com',
    'ada@@example.com',
    'a@b@c.d',
    'ada@exa\tmple.com',
    `a@${'a.'.repeat(100)}@`,
  ],
  url: [
    'https://example.com',
    'http://example.com/a/b?c=d#e',
    'HTTPS://EXAMPLE.COM',
    'https://127.0.0.1:8080/',
    'javascript:alert(1)',
    'ftp://example.com',
    'https://',
    'https:///path',
    'https://exa mple.com',
  ],
  phone_number: [
    '+1 (555) 123-4567',
    '555-1234 x12',
    '555-1234 ext. 12',
    '555-1234 EXT 12',
    '555-1234ext.12',
    '123',
    '1'.repeat(40),
    '1'.repeat(41),
    'call me',
    '12',
    '555-1234 x',
    '555-1234 x1234567',
    '++1 555 1234',
    `123${' '.repeat(38)}x1`,
    `555-1234 x${' '.repeat(10)}1`,
    `555-1234 x${' '.repeat(11)}1`,
  ],
};

let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: TEST_ADMIN_URL });
  await client.connect();
});
afterAll(async () => {
  await client.end();
});

describe.each(Object.keys(samples) as (keyof typeof textValuePatterns)[])('textValuePatterns.%s', (type) => {
  it('classifies each sample in PostgreSQL as in JavaScript', async () => {
    const pattern = textValuePatterns[type];
    const values = samples[type];
    const result = await client.query<{ value: string; matches: boolean }>(
      'SELECT value, value ~* $2 AS matches FROM unnest($1::text[]) AS value',
      [values, pattern],
    );
    const inPostgres = Object.fromEntries(result.rows.map((row) => [row.value, row.matches]));
    const inJavaScript = Object.fromEntries(
      values.map((value) => [value, new RegExp(pattern, 'i').test(value)]),
    );
    expect(inPostgres).toEqual(inJavaScript);
    expect(Object.values(inJavaScript)).toContain(true);
    expect(Object.values(inJavaScript)).toContain(false);
  });
});
