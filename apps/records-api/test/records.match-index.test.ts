import { randomBytes } from 'node:crypto';
import {
  MAX_MATCH_INDEXES_PER_TABLE,
  matchIndexBuildLock,
  matchIndexBuildsSettled,
} from '@recordbase/domain/records/match-indexes';
import { matchQuery } from '@recordbase/domain/records/store';
import { buildTableMeta, type FieldMeta } from '@recordbase/domain/records/table-meta';
import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

/**
 * The index the first upsert builds on its matchOn fields: it must take every value the fields
 * accept, serve the match query, and stay one per set of fields and few per table.
 */

interface ApiField {
  id: string;
  name: string;
  type: FieldMeta['type'];
  template: FieldMeta['template'];
}
interface ApiTable {
  id: string;
  name: string;
  primaryFieldId: string;
  fields: ApiField[];
}

let h: Harness;
let auth: string;
let baseId: string;
let schemaName: string;
const tables = new Map<string, ApiTable>();

const textFields = (...names: string[]) => names.map((name) => ({ name, type: 'single_line_text' }));

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Matching',
    tables: [
      { name: 'Long', fields: [...textFields('Key'), { name: 'Count', type: 'number' }] },
      {
        name: 'Converted',
        fields: [...textFields('Name'), { name: 'Ref', type: 'number' }, ...textFields('Code')],
      },
      { name: 'Pairs', fields: textFields('A', 'B') },
      { name: 'Many', fields: textFields('F1', 'F2', 'F3') },
      { name: 'Shared', fields: textFields('Key', 'Other') },
      { name: 'Busy', fields: textFields('Key') },
      { name: 'Big', fields: [...textFields('Key'), { name: 'Num', type: 'number' }] },
    ],
  });
  baseId = base.body.id;
  schemaName = schemaNameOf(baseId);
  for (const table of base.body.tables as ApiTable[]) tables.set(table.name, table);
});
afterAll(() => h.close());

const tableOf = (name: string) => tables.get(name)!;
const fieldId = (table: string, field: string) => tableOf(table).fields.find((f) => f.name === field)!.id;
const recordsUrl = (table: string) => `/api/v1/bases/${baseId}/tables/${table}/records`;

const upsert = (table: string, matchOn: string[], records: object[]) =>
  h.api
    .post(`${recordsUrl(table)}/bulk`)
    .set('Authorization', auth)
    .send({ matchOn: matchOn.map((name) => fieldId(table, name)), records });

const createOne = (table: string, record: object) =>
  h.api.post(recordsUrl(table)).set('Authorization', auth).send({ record });

/** Text that neither TOAST nor an index can compress below a btree row's limit. */
const incompressible = (length: number) => randomBytes(length).toString('base64').slice(0, length);

interface IndexRow {
  name: string;
  valid: boolean;
  definition: string;
}

/** Every index of the table besides the ones it is created with (key, seq, default order). */
async function automaticIndexes(table: string): Promise<IndexRow[]> {
  const result = await h.db.pool.query<IndexRow>(
    `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = to_regclass($1) AND NOT i.indisprimary AND c.relname NOT IN ($2, $3)
      ORDER BY c.relname`,
    [`"${schemaName}"."${tableOf(table).id}"`, `${tableOf(table).id}_seq`, `${tableOf(table).id}_created`],
  );
  return result.rows;
}

/**
 * Waits for this process's queued builds to end, then polls the catalog until the table has
 * `count` valid automatic indexes (at most 20 s).
 */
async function waitForValidIndexes(table: string, count: number): Promise<IndexRow[]> {
  await matchIndexBuildsSettled();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const indexes = await automaticIndexes(table);
    if (indexes.filter((index) => index.valid).length >= count || Date.now() > deadline) return indexes;
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe('the matchOn index of a text field', () => {
  it('takes 6,000- and 100,000-character values, and upserts match on them', async () => {
    await upsert('Long', ['Key'], [{ Key: 'short', Count: 1 }]).expect(200);
    const [index] = await waitForValidIndexes('Long', 1);
    expect(index?.valid).toBe(true);

    const medium = incompressible(6_000);
    const longest = incompressible(100_000);
    await createOne('Long', { Key: medium }).expect(201);
    const created = await createOne('Long', { Key: longest, Count: 1 }).expect(201);

    const updated = await upsert('Long', ['Key'], [{ Key: longest, Count: 2 }]).expect(200);
    expect(updated.body.records).toHaveLength(1);
    expect(updated.body.records[0].id).toBe(created.body.id);
    expect(updated.body.records[0].fields).toMatchObject({ Key: longest, Count: 2 });
    const again = await upsert('Long', ['Key', 'Count'], [{ Key: medium, Count: 3 }]).expect(200);
    expect(again.body.records).toHaveLength(1);
  });

  it('is dropped when its field changes type, so the converted column takes any value', async () => {
    await upsert('Converted', ['Ref'], [{ Ref: 1 }]).expect(200);
    await waitForValidIndexes('Converted', 1);
    await upsert('Converted', ['Code'], [{ Code: '42' }]).expect(200);
    const codeIndex = (await waitForValidIndexes('Converted', 2)).find((index) =>
      index.definition.includes(fieldId('Converted', 'Code')),
    );
    const patchType = (field: string, type: string) =>
      h.api
        .patch(`/api/v1/bases/${baseId}/tables/Converted/fields/${fieldId('Converted', field)}`)
        .set('Authorization', auth)
        .send({ type })
        .expect(200);

    await patchType('Ref', 'single_line_text');
    await createOne('Converted', { Ref: incompressible(6_000) }).expect(201);
    expect(await automaticIndexes('Converted')).toEqual([codeIndex]);
    // A text hash cannot index a number: without the drop, this change would fail.
    await patchType('Code', 'number');
    expect(await automaticIndexes('Converted')).toEqual([]);
  });
});

describe('matchOn indexes of a table', () => {
  it('are one index for the same fields in any order', async () => {
    const first = await upsert('Pairs', ['A', 'B'], [{ A: 'a', B: 'b' }]).expect(200);
    await waitForValidIndexes('Pairs', 1);
    const second = await upsert('Pairs', ['B', 'A'], [{ A: 'a', B: 'b' }]).expect(200);
    expect(second.body.records.map((r: { id: string }) => r.id)).toEqual([first.body.records[0].id]);
    await matchIndexBuildsSettled();

    const indexes = await automaticIndexes('Pairs');
    expect(indexes).toHaveLength(1);
    const [a, b] = [fieldId('Pairs', 'A'), fieldId('Pairs', 'B')].sort();
    expect(indexes[0]!.definition).toContain(
      `(hashtextextended("${a}", (0)::bigint), hashtextextended("${b}", (0)::bigint))`,
    );
  });

  it(`are at most ${MAX_MATCH_INDEXES_PER_TABLE}, and upserts past the bound still match`, async () => {
    const sets = [['F1'], ['F2'], ['F3'], ['F1', 'F2'], ['F1', 'F3'], ['F2', 'F3'], ['F1', 'F2', 'F3']];
    expect(sets.length).toBeGreaterThan(MAX_MATCH_INDEXES_PER_TABLE);
    const record = { F1: 'one', F2: 'two', F3: 'three' };
    const first = await upsert('Many', sets[0]!, [record]).expect(200);
    for (const [position, set] of sets.entries()) {
      const response = await upsert('Many', set, [record]).expect(200);
      expect(response.body.records.map((r: { id: string }) => r.id)).toEqual([first.body.records[0].id]);
      await waitForValidIndexes('Many', Math.min(position + 1, MAX_MATCH_INDEXES_PER_TABLE));
    }
    const indexes = await automaticIndexes('Many');
    expect(indexes).toHaveLength(MAX_MATCH_INDEXES_PER_TABLE);
    expect(indexes.every((index) => index.valid)).toBe(true);
  });
});

describe('matchOn indexes built by other replicas', () => {
  it('count toward the bound, as the catalog has them', async () => {
    const shared = tableOf('Shared');
    const other = fieldId('Shared', 'Other');
    for (let i = 0; i < MAX_MATCH_INDEXES_PER_TABLE; i++) {
      await h.db.pool.query(
        `CREATE INDEX "${shared.id}_mx_00000000000${i}" ON "${schemaName}"."${shared.id}" ("${other}")`,
      );
    }
    await upsert('Shared', ['Key'], [{ Key: 'k' }]).expect(200);
    await matchIndexBuildsSettled();
    const indexes = await automaticIndexes('Shared');
    expect(indexes).toHaveLength(MAX_MATCH_INDEXES_PER_TABLE);
    expect(indexes.some((index) => index.definition.includes(fieldId('Shared', 'Key')))).toBe(false);
  });

  it('are not built twice at once: a set asked for meanwhile is built on a later upsert', async () => {
    const lockKey = matchIndexBuildLock({ schemaName, id: tableOf('Busy').id });
    const replica = await h.db.pool.connect();
    try {
      await replica.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey]);
      await upsert('Busy', ['Key'], [{ Key: 'k' }]).expect(200);
      await matchIndexBuildsSettled();
      expect(await automaticIndexes('Busy')).toEqual([]);
      await replica.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey]);
    } finally {
      replica.release();
    }
    await upsert('Busy', ['Key'], [{ Key: 'k' }]).expect(200);
    expect(await waitForValidIndexes('Busy', 1)).toHaveLength(1);
  });
});

describe('the match query', () => {
  it('is served by the index (EXPLAIN on an analysed table of 20,000 records)', async () => {
    const big = tableOf('Big');
    const [key, num] = [fieldId('Big', 'Key'), fieldId('Big', 'Num')];
    await h.db.pool.query(
      `INSERT INTO "${schemaName}"."${big.id}" ("${key}", "${num}")
       SELECT 'key-' || g, g FROM generate_series(1, 20000) AS g`,
    );
    await upsert('Big', ['Num', 'Key'], [{ Key: 'key-7', Num: 7 }]).expect(200);
    const [index] = await waitForValidIndexes('Big', 1);
    expect(index?.valid).toBe(true);
    await h.db.pool.query(`ANALYZE "${schemaName}"."${big.id}"`);

    const table = buildTableMeta({ ...big, databaseId: baseId, schemaName });
    const matchOn = [table.fieldsById.get(num)!, table.fieldsById.get(key)!];
    for (const keys of [[[7, 'key-7']], Array.from({ length: 20 }, (_, i) => [i, `key-${i}`])]) {
      const query = matchQuery(table, matchOn, keys);
      const plan = await h.db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query.text}`, query.values);
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain(index!.name);
    }
  });
});
