import type { TableRecord } from '@recordbase/contracts/records';
import { parseFormula, printFormula } from '@recordbase/db/formula';
import fc from 'fast-check';
import {
  expressionArbitrary,
  formulaFieldTypes,
  type OracleTable,
  recordArbitrary,
  tableArbitrary,
} from '../../../packages/db/test/support/formula-arbitraries';
import { evaluateFormula } from '../../../packages/db/test/support/formula-oracle';
import { createBase, type Harness, startHarness } from './harness';

/**
 * Random formulas as formula fields of random tables, over random records written through the
 * API, agree with the in-memory oracle: the whole path (compiling on save against real columns of
 * every type, stored generated columns, the records' JSON) against the semantics stated in
 * JavaScript. packages/db's formula-sql.test.ts holds the compiler alone to the same oracle with
 * many more formulas.
 */

let h: Harness;
let root: string;
let baseId: string;

const url = (path = '') => `/api/v1/bases/${baseId}${path}`;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Formula properties',
    tables: [{ name: 'Seed', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  expect(base.status).toBe(201);
  baseId = base.body.id;
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** Exactly, but for the results of EXP, LOG and POWER, whose libm may differ from V8's by an ulp. */
function agree(got: unknown, expected: unknown, expression: string): boolean {
  if (typeof got === 'number' && typeof expected === 'number' && /\b(EXP|LOG|POWER)\(/i.test(expression)) {
    return Math.abs(got - expected) <= 1e-12 * Math.max(Math.abs(got), Math.abs(expected));
  }
  return JSON.stringify(got) === JSON.stringify(expected);
}

/** The table's fields as the API creates them (long_text, which takes any text the generator makes). */
function fieldInputs(table: OracleTable) {
  return table.fields.map((field, i) => ({
    name: `F${i}`,
    type: field.type === 'single_line_text' ? 'long_text' : field.type,
    ...(field.type === 'multiple_select'
      ? { template: { options: field.choices.map((name) => ({ name })) } }
      : {}),
  }));
}

test('formula fields over records written through the API agree with the oracle', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      tableArbitrary.chain((table) =>
        fc.record({
          table: fc.constant(table),
          expressions: fc.array(expressionArbitrary(table), { minLength: 1, maxLength: 4 }),
          records: fc.array(recordArbitrary(table), { minLength: 1, maxLength: 4 }),
        }),
      ),
      async ({ table, expressions, records }) => {
        run += 1;
        const nameOf = new Map(table.fields.map((field, i) => [field.id, `F${i}`]));
        const written = expressions.map((expression) =>
          printFormula(parseFormula(expression), (id) => nameOf.get(id)!),
        );
        const created = await h.api
          .post(url('/tables'))
          .set('Authorization', root)
          .send({
            name: `Run ${run}`,
            fields: [
              { name: 'Key', type: 'single_line_text' },
              ...fieldInputs(table),
              ...written.map((expression, i) => ({
                name: `X${i}`,
                type: 'formula',
                template: { expression },
              })),
            ],
          });
        if (created.status !== 201)
          throw new Error(`${written.join(' | ')}: ${JSON.stringify(created.body)}`);
        const tableId = created.body.id as string;
        const bodies = records.map((record) =>
          Object.fromEntries(
            table.fields.map((field) => [nameOf.get(field.id)!, record.values[field.id] ?? null]),
          ),
        );
        const res = await h.api
          .post(url(`/tables/${tableId}/records/bulk`))
          .set('Authorization', root)
          .send({ records: bodies });
        if (res.status !== 201)
          throw new Error(`writing ${JSON.stringify(bodies)}: ${JSON.stringify(res.body)}`);
        const types = formulaFieldTypes(table);
        (res.body.records as TableRecord[]).forEach((saved, r) => {
          const record = {
            ...records[r]!,
            id: saved.id,
            createdAt: saved.createdAt,
            updatedAt: saved.updatedAt,
          };
          expressions.forEach((expression, i) => {
            const expected = evaluateFormula(expression, types, record, new Date());
            const got = saved.fields[`X${i}`];
            if (!agree(got, expected, expression)) {
              throw new Error(
                `${written[i]}\nrecord ${JSON.stringify(bodies[r])}\nAPI ${JSON.stringify(got)}, oracle ${JSON.stringify(expected)}`,
              );
            }
          });
        });
        await h.api
          .delete(url(`/tables/${tableId}`))
          .set('Authorization', root)
          .expect(200);
      },
    ),
    { numRuns: Number(process.env.FORMULA_API_PROPERTY_RUNS ?? 40) },
  );
}, 300_000);
