import fc from 'fast-check';
import type pg from 'pg';
import { createDb, type Db } from '../src/client';
import { compileFormula } from '../src/formula/compile';
import { prepareFormula } from '../src/formula/infer';
import { parseFormula } from '../src/formula/parse';
import { createTestDatabase, type TestDatabase } from '../src/testing';
import { formulaCaseArbitrary, formulaFieldTypes } from './support/formula-arbitraries';
import { EXAMPLE_NOW, exampleFieldTypes, exampleRecord, FORMULA_EXAMPLES } from './support/formula-examples';
import { evaluateFormula } from './support/formula-oracle';
import { evaluateInPostgres } from './support/formula-sql';

/**
 * Formulas as PostgreSQL computes them (compile.ts and the formula_functions migration) against
 * the in-memory oracle and Airtable's documented examples. Every formula without NOW() or TODAY()
 * is also added as a stored generated column, which must be accepted and hold the same values.
 */

let testDb: TestDatabase;
let db: Db;
let client: pg.PoolClient;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url);
  client = await db.pool.connect();
  // A formula that keeps a backend busy for seconds is a bug here, not a slow machine.
  await client.query("SET statement_timeout = '5s'");
});
afterAll(async () => {
  client?.release();
  await db?.close();
  await testDb?.drop();
});

/** Results agree exactly, but for numbers from EXP, LOG and POWER, whose libm may differ by an ulp. */
function agree(sql: unknown, oracle: unknown, expression: string): boolean {
  if (typeof sql === 'number' && typeof oracle === 'number' && /\b(EXP|LOG|POWER)\(/i.test(expression)) {
    return sql === oracle || Math.abs(sql - oracle) <= 1e-12 * Math.max(Math.abs(sql), Math.abs(oracle));
  }
  return Object.is(sql, oracle) || JSON.stringify(sql) === JSON.stringify(oracle);
}

describe("Airtable's documented examples", () => {
  test.each(FORMULA_EXAMPLES.map((example) => [example.written, example] as const))(
    '%s',
    async (_written, example) => {
      const [results] = await evaluateInPostgres(
        client,
        exampleFieldTypes(example),
        [exampleRecord(example)],
        [example.formula],
        EXAMPLE_NOW,
      );
      expect(results![0]).toEqual(example.expected);
    },
  );
});

test('random formulas over random records agree with the oracle', async () => {
  const now = new Date('2026-03-31T23:59:59.999Z');
  await fc.assert(
    fc.asyncProperty(formulaCaseArbitrary({ withNow: true }), async ({ table, expression, records }) => {
      const types = formulaFieldTypes(table);
      const [sql] = await evaluateInPostgres(client, types, records, [expression], now);
      records.forEach((record, i) => {
        const oracle = evaluateFormula(expression, types, record, now);
        if (!agree(sql![i], oracle, expression)) {
          throw new Error(
            `${expression}\nrecord ${JSON.stringify(record.values)}\nSQL ${JSON.stringify(sql![i])}, oracle ${JSON.stringify(oracle)}`,
          );
        }
      });
    }),
    { numRuns: Number(process.env.FORMULA_PROPERTY_RUNS ?? 300) },
  );
}, 240_000);

describe('values PostgreSQL would refuse to compute give blank, never an error', () => {
  const cases: Array<[string, unknown]> = [
    ['1e308 * 10', null],
    ['1e-308 * 1e-308', 0],
    ['-1e308 - 1e308', null],
    ['1 / 0', null],
    ['MOD(5, 0)', null],
    ['POWER(-8, 1/3)', null],
    ['POWER(0, -1)', null],
    ['POWER(10, 400)', null],
    ['POWER(10, -400)', 0],
    ['SQRT(-1)', null],
    ['LOG(0)', null],
    ['LOG(10, 1)', null],
    ['EXP(1000)', null],
    ['EXP(-1000)', 0],
    ['ROUND(1e300, 22)', null],
    ['CEILING(1.7976931348623157e308, 1)', 1.7976931348623157e308],
    ['FLOOR(5, 0)', null],
    ['VALUE("1e400")', null],
    ['VALUE("1e-400")', 0],
    ['DATEADD("9999-12-31", 1, "days")', null],
    ['DATEADD("2020-01-01", 1e300, "years")', null],
    ['DATEADD("2020-01-01", 1e300, "ms")', null],
    ['DATEADD("0001-01-01", -1, "ms")', null],
    ['DATETIME_DIFF("9999-12-31", "0001-01-01", "ms")', 315537811200000],
    ['YEAR("2021-02-30")', null],
    ['HOUR("2021-01-01T24:00")', null],
    ['REPT("ab", 1e300)', null],
    ['REPT(IF(BLANK(), "x"), 1e300)', null],
    ['LEFT("ab", 1e300)', 'ab'],
    ['MID("ab", 1e300, 1e300)', null],
    ['SUM(1e308, 1e308)', null],
    ['AVERAGE(1e308, 1e308)', null],
  ];
  test.each(cases)('%s', async (expression, expected) => {
    const [results] = await evaluateInPostgres(
      client,
      new Map(),
      [
        {
          id: '018d6a2e-4f1b-7c3a-9e2d-5b8f0a1c2d3e',
          createdAt: EXAMPLE_NOW.toISOString(),
          updatedAt: EXAMPLE_NOW.toISOString(),
          values: {},
        },
      ],
      [expression],
      EXAMPLE_NOW,
    );
    expect(results![0]).toEqual(expected);
  });
});

test('a formula that writes out past the size limit is refused at its first character', () => {
  // Each level doubles what the next one expands to; a real formula field chain does the same.
  let expression = '1';
  for (let i = 0; i < 16; i += 1) expression = `SWITCH(${expression}, 1, 2, 3, 4, 5)`;
  const tree = parseFormula(expression);
  prepareFormula(expression, []);
  expect(() =>
    compileFormula(tree, {
      field: () => {
        throw new Error('no fields');
      },
      recordId: 'r.id::text',
      createdAt: 'r.created_at',
      updatedAt: 'r.updated_at',
    }),
  ).toThrow('at character 1: the formula is too large');
});
