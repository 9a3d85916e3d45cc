import fc from 'fast-check';
import { createBase, type Harness, startHarness } from './harness';

/**
 * Keyset paging with `cursor`: a walk by cursor visits exactly the records of a walk by offset,
 * in the same order, for every sortable type in both directions with ties and empty values; it
 * survives writes between pages; and a cursor of another listing, or a damaged one, is a 400.
 */

let h: Harness;
let auth: string;
let baseId: string;
const listUrl = (table: string) => `/api/v1/bases/${baseId}/tables/${table}/records/list`;
const bulkUrl = (table: string) => `/api/v1/bases/${baseId}/tables/${table}/records/bulk`;

const RECORDS = 150;
const attachment = (name: string) => ({
  url: `https://cdn.example.com/${name}.pdf`,
  fileName: `${name}.pdf`,
  size: 10,
  mimeType: 'application/pdf',
});

const fields = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Notes', type: 'long_text' },
  { name: 'Count', type: 'number' },
  { name: 'Price', type: 'currency' },
  { name: 'Stars', type: 'rating' },
  { name: 'Due', type: 'date' },
  { name: 'At', type: 'datetime' },
  {
    name: 'Stage',
    type: 'single_select',
    template: { options: [{ name: 'A' }, { name: 'B' }, { name: 'C' }] },
  },
  { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'a' }, { name: 'b' }] } },
  { name: 'Done', type: 'checkbox' },
  { name: 'Files', type: 'attachments' },
  { name: 'Link', type: 'linked_record', template: { tableId: 'Others' } },
];

/** Few distinct values per field, so ties abound, and empty values throughout. */
function recordAt(i: number, others: string[]) {
  return {
    Name: [null, '', 'a', 'B', 'b', 'a b', 'é'][i % 7],
    Notes: i % 4 === 0 ? null : `note ${i % 3}`,
    // Doubles whose shortest text differs from a 15-digit rounding must come back exactly.
    Count: [null, 0.1, 0.30000000000000004, -2, 1e21, 0.3][i % 6],
    Price: i % 9 === 0 ? null : (i % 4) * 2.5,
    Stars: i % 4 === 0 ? null : i % 3,
    Due: i % 3 === 0 ? null : ['2024-01-01', '2023-12-31'][i % 2],
    // Instants a microsecond apart: a cursor that kept milliseconds only would go wrong here.
    At: i % 4 === 0 ? null : ['2024-01-01T00:00:00.123456Z', '2024-01-01T00:00:00.123457Z'][i % 2],
    Stage: i % 3 === 0 ? null : ['A', 'B', 'C'][i % 3],
    Tags: [[], ['a'], ['a', 'b'], ['b'], ['b', 'a']][i % 5],
    Done: i % 3 === 0,
    Files: i % 4 === 0 ? [attachment(`f${i}`)] : i % 7 === 0 ? [attachment('x'), attachment('y')] : [],
    Link: i % 3 === 0 ? [] : i % 3 === 1 ? [others[0]] : [others[0], others[1]],
  };
}

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Cursor',
    tables: [
      { name: 'Others', fields: [{ name: 'Name', type: 'single_line_text' }] },
      { name: 'Rows', fields },
      {
        name: 'Live',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Count', type: 'number' },
        ],
      },
    ],
  });
  baseId = base.body.id;
  const others = await h.api
    .post(bulkUrl('Others'))
    .set('Authorization', auth)
    .send({ records: [{ Name: 'o1' }, { Name: 'o2' }] })
    .expect(201);
  const otherIds = others.body.records.map((r: { id: string }) => r.id);
  // Three requests: the records of each share createdAt, so the tie-breaker decides within them.
  for (let batch = 0; batch < 3; batch++) {
    const records = Array.from({ length: RECORDS / 3 }, (_, i) => recordAt(batch * 50 + i, otherIds));
    await h.api.post(bulkUrl('Rows')).set('Authorization', auth).send({ records }).expect(201);
  }
});
afterAll(() => h.close());

type Page<R = { id: string }> = { records: R[]; total: number; hasMore: boolean; nextCursor: string | null };

async function page(table: string, body: object, status = 200) {
  const response = await h.api.post(listUrl(table)).set('Authorization', auth).send(body);
  if (response.status !== status)
    throw new Error(`${response.status}: ${JSON.stringify(response.body).slice(0, 500)}`);
  return response;
}

/** Every page by cursor from the first on; checks what each page says about the walk. */
async function walkByCursor(table: string, body: object, limit: number, total: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const { body: answer } = (await page(table, { ...body, limit, ...(cursor ? { cursor } : {}) })) as {
      body: Page;
    };
    expect(answer.total).toBe(total);
    ids.push(...answer.records.map((r) => r.id));
    expect(answer.hasMore).toBe(answer.nextCursor !== null);
    if (answer.nextCursor === null) return ids;
    expect(answer.records).toHaveLength(limit);
    cursor = answer.nextCursor;
  }
  throw new Error('the cursor walk does not end');
}

async function walkByOffset(table: string, body: object, limit: number): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += limit) {
    const { body: answer } = (await page(table, { ...body, limit, offset })) as { body: Page };
    ids.push(...answer.records.map((r) => r.id));
    if (!answer.hasMore) return ids;
  }
}

const sortedFields = fields.map((field) => field.name);
const singleSorts = [...sortedFields, 'createdAt', 'updatedAt', 'id'].flatMap((field) =>
  (['asc', 'desc'] as const).map((direction) => [`${field} ${direction}`, { sort: [{ field, direction }] }]),
) as [string, object][];

describe('a walk by cursor equals a walk by offset', () => {
  it.each([
    ['default order', {}] as [string, object],
    ...singleSorts,
    ['Done asc, Count desc', { sort: [{ field: 'Done' }, { field: 'Count', direction: 'desc' }] }],
    [
      'Stage desc, Tags asc, At desc',
      {
        sort: [{ field: 'Stage', direction: 'desc' }, { field: 'Tags' }, { field: 'At', direction: 'desc' }],
      },
    ],
    ['a filter and a sort', { filter: { field: 'Done', equals: false }, sort: [{ field: 'Name' }] }],
  ])('for %s', async (_name, body) => {
    const everything = (await page('Rows', { ...body, limit: 2000 })).body as Page;
    const all = everything.records.map((r) => r.id);
    expect(everything.nextCursor).toBeNull();
    for (const limit of [7, 50]) {
      const byCursor = await walkByCursor('Rows', body, limit, all.length);
      expect(byCursor).toEqual(all);
      expect(byCursor).toEqual(await walkByOffset('Rows', body, limit));
    }
  });

  it('gives a cursor with an offset page, which continues where that page ends', async () => {
    const first = (await page('Rows', { limit: 10, offset: 20 })).body as Page;
    const next = (await page('Rows', { limit: 10, cursor: first.nextCursor })).body as Page;
    const byOffset = (await page('Rows', { limit: 10, offset: 30 })).body as Page;
    expect(next.records.map((r) => r.id)).toEqual(byOffset.records.map((r) => r.id));
    expect(next.total).toBe(RECORDS);
  });

  it('answers nextCursor null on the last page and on an empty one', async () => {
    const last = (await page('Rows', { limit: 10, offset: RECORDS - 10 })).body as Page;
    expect(last).toMatchObject({ hasMore: false, nextCursor: null });
    const beyond = (await page('Rows', { limit: 10, offset: RECORDS + 5 })).body as Page;
    expect(beyond).toMatchObject({ records: [], hasMore: false, nextCursor: null, total: RECORDS });
  });

  it('accepts offset 0 beside a cursor', async () => {
    const first = (await page('Rows', { limit: 5 })).body as Page;
    await page('Rows', { limit: 5, offset: 0, cursor: first.nextCursor });
  });
});

describe('writes between pages', () => {
  async function reset(count: number) {
    const existing = (await page('Live', { limit: 2000 })).body as Page;
    if (existing.records.length > 0) {
      await h.api
        .post(`/api/v1/bases/${baseId}/tables/Live/records/bulk-delete`)
        .set('Authorization', auth)
        .send({ ids: existing.records.map((r) => r.id).slice(0, 100) })
        .expect(200);
      return reset(count);
    }
    const records = Array.from({ length: count }, (_, i) => ({
      Name: `orig ${i}`,
      Count: i % 7 === 0 ? null : i % 5,
    }));
    const created = await h.api
      .post(bulkUrl('Live'))
      .set('Authorization', auth)
      .send({ records })
      .expect(201);
    return created.body.records as { id: string; fields: { Count: number | null } }[];
  }

  /** Whether a new record with `value` sorts after the cursor's record, whose value is `at`. */
  type Placement = (value: number | null, at: number | null) => boolean;
  const always: Placement = () => true;
  // Empty values first ascending, last descending; a tie comes after (a later insertion).
  const ascending: Placement = (value, at) => (at === null ? true : value !== null && value >= at);
  const descending: Placement = (value, at) => (value === null ? true : at !== null && value <= at);

  it.each([
    ['default order', {}, always],
    ['Count asc', { sort: [{ field: 'Count' }] }, ascending],
    ['Count desc', { sort: [{ field: 'Count', direction: 'desc' }] }, descending],
  ] as [string, object, Placement][])(
    'never skip or repeat a record that existed throughout, with %s',
    async (_name, body, isAfter) => {
      const originals = await reset(60);
      const originalIds = new Set(originals.map((r) => r.id));
      const insertedAfter = new Set<string>();
      const insertedBefore = new Set<string>();
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let round = 0; round < 100; round++) {
        const answer = (await page('Live', { ...body, limit: 7, ...(cursor ? { cursor } : {}) }))
          .body as Page<{ id: string; fields: { Count: number | null } }>;
        seen.push(...answer.records.map((r) => r.id));
        if (answer.nextCursor === null) break;
        cursor = answer.nextCursor;
        // Before the next page: records that sort before the cursor's record, after it and equal
        // to it; and, every other page, the cursor's own record goes away.
        const last = answer.records.at(-1)!;
        const at = last.fields.Count;
        const news = [-1000, 1000, null, at].map((Count) => ({ Name: 'new', Count }));
        const created = await h.api
          .post(bulkUrl('Live'))
          .set('Authorization', auth)
          .send({ records: news })
          .expect(201);
        for (const record of created.body.records as { id: string; fields: { Count: number | null } }[]) {
          (isAfter(record.fields.Count, at) ? insertedAfter : insertedBefore).add(record.id);
        }
        if (round % 2 === 1) {
          await h.api
            .delete(`/api/v1/bases/${baseId}/tables/Live/records/${last.id}`)
            .set('Authorization', auth)
            .expect(200);
        }
      }
      // In creation order nothing new can come before; in the others, some did.
      if (isAfter !== always) expect(insertedBefore.size).toBeGreaterThan(0);
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of originalIds) expect(seen).toContain(id);
      for (const id of insertedAfter) expect(seen).toContain(id);
      for (const id of insertedBefore) expect(seen).not.toContain(id);
    },
  );
});

describe('a cursor of another listing, or a damaged one', () => {
  let cursor: string;
  const decoded = () => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  const encode = (body: unknown) => Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');

  beforeAll(async () => {
    const first = (
      await page('Rows', { limit: 5, sort: [{ field: 'Count' }], filter: { field: 'Done', equals: false } })
    ).body as Page;
    cursor = first.nextCursor!;
    expect(typeof cursor).toBe('string');
  });

  const refused = async (body: object, pattern: RegExp) => {
    const response = await page('Rows', body, 400);
    expect(response.body.error.code).toBe('BAD_REQUEST');
    expect(response.body.error.message).toMatch(pattern);
  };
  const same = { sort: [{ field: 'Count' }], filter: { field: 'Done', equals: false } };

  it('continues the listing it came from, with the field by id or by name', async () => {
    await page('Rows', { ...same, cursor });
    const tables = await h.api.get(`/api/v1/bases/${baseId}/tables`).set('Authorization', auth).expect(200);
    const rows = tables.body.tables.find((t: { name: string }) => t.name === 'Rows');
    const countId = rows.fields.find((f: { name: string }) => f.name === 'Count').id;
    await page('Rows', { ...same, sort: [{ fieldId: countId }], cursor });
  });

  it('refuses another sort', async () => {
    await refused(
      { ...same, sort: [{ field: 'Count', direction: 'desc' }], cursor },
      /body\.cursor: .*another sort/,
    );
    await refused({ ...same, sort: [{ field: 'Price' }], cursor }, /body\.cursor: .*another sort/);
    await refused({ filter: same.filter, cursor }, /body\.cursor: .*another sort/);
  });

  it('refuses another filter or table', async () => {
    await refused({ sort: same.sort, cursor }, /body\.cursor: .*another filter/);
    await refused(
      { sort: same.sort, filter: { field: 'Done', equals: true }, cursor },
      /body\.cursor: .*another filter/,
    );
    const other = await h.api
      .post(listUrl('Live'))
      .set('Authorization', auth)
      .send({ ...same, cursor });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toMatch(/body\.cursor/);
  });

  it('refuses a cursor with a non-zero offset, naming both', async () => {
    await refused({ ...same, cursor, offset: 5 }, /body\.cursor.*body\.offset/);
  });

  it('refuses damaged cursors with a 400', async () => {
    const body = decoded();
    const damaged = [
      `${cursor}x`,
      cursor.slice(0, -3),
      'not a cursor!',
      encode('just a string'),
      encode({ ...body, v: 2 }),
      encode({ ...body, k: body.k.slice(1) }),
      encode({ ...body, k: [...body.k.slice(0, -1), null] }),
      encode({ ...body, k: [...body.k.slice(0, -1), '1e3'] }),
      encode({ ...body, k: [...body.k.slice(0, -1), '99999999999999999999'] }),
      encode({ ...body, k: ['1e400', body.k[1]] }),
      encode({ ...body, k: ['1e-400', body.k[1]] }),
      encode({ ...body, k: ['abc', body.k[1]] }),
      encode({ ...body, k: [1.5, body.k[1]] }),
      encode({ ...body, k: [['x'], body.k[1]] }),
      encode({ ...body, o: 'x' }),
      encode([]),
      Buffer.from('{"v":1,', 'utf8').toString('base64url'),
    ];
    for (const text of damaged) await refused({ ...same, cursor: text }, /body\.cursor/);
    await refused({ ...same, cursor: '' }, /body\.cursor/);
    await refused({ ...same, cursor: 5 }, /body\.cursor/);
  });

  it('takes any value a cursor can hold for its keys, including an empty one', async () => {
    const body = decoded();
    for (const value of [null, 'NaN', '-Infinity', '0', '-0', '1.7976931348623157e308', '5e-324']) {
      await page('Rows', { ...same, cursor: encode({ ...body, k: [value, body.k[1]] }) });
    }
  });

  it('answers 200 or 400, never 500, to random key values of every kind', async () => {
    const sorts = [...sortedFields, 'createdAt', 'id'];
    const cursors = new Map<string, { o: unknown; f: string; k: unknown[] }>();
    for (const field of sorts) {
      const first = (await page('Rows', { limit: 3, sort: [{ field }] })).body as Page;
      cursors.set(field, JSON.parse(Buffer.from(first.nextCursor!, 'base64url').toString('utf8')));
    }
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...sorts),
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.string(),
          fc.constantFrom('2024-13-01', '2024-02-30T00:00:00Z'),
        ),
        fc.jsonValue({ maxDepth: 1 }),
        async (field, value, seq) => {
          const body = cursors.get(field)!;
          const response = await h.api
            .post(listUrl('Rows'))
            .set('Authorization', auth)
            .send({ limit: 3, sort: [{ field }], cursor: encode({ ...body, k: [value, seq] }) });
          expect([200, 400]).toContain(response.status);
        },
      ),
      { numRuns: 300 },
    );
  });
});
