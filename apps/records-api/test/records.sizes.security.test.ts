import { MAX_PAGE_BYTES } from '@recordbase/domain/records/store';
import { createBase, type Harness, startHarness } from './harness';

/**
 * A page of records is one value, read whole by PostgreSQL and then by Node: pages of long texts
 * must be refused with a way forward, not built to gigabytes (past V8's longest string, which
 * ended the process).
 */

const TEXT = 45_000;
const RECORDS = 400;

let h: Harness;
let auth: string;
let baseId: string;

const list = (table: string, body: object) =>
  h.api.post(`/api/v1/bases/${baseId}/tables/${table}/records/list`).set('Authorization', auth).send(body);

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Long texts',
    tables: [
      {
        name: 'Essays',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Body', type: 'long_text' },
          { name: 'Notes', type: 'long_text' },
        ],
      },
      {
        name: 'Wide',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          ...Array.from({ length: 170 }, (_, i) => ({ name: `Chapter ${i}`, type: 'long_text' as const })),
        ],
      },
    ],
  });
  baseId = base.body.id;
  for (let start = 0; start < RECORDS; start += 100) {
    const records = Array.from({ length: 100 }, (_, i) => ({
      Title: `Essay ${start + i}`,
      Body: 'b'.repeat(TEXT),
      Notes: 'n'.repeat(TEXT),
    }));
    await h.api
      .post(`/api/v1/bases/${baseId}/tables/Essays/records/bulk`)
      .set('Authorization', auth)
      .send({ records })
      .expect(201);
  }
  // One record of 17 MB of text: 34 MB of JSON, shown in `data` and in `fields`.
  const created = await h.api
    .post(`/api/v1/bases/${baseId}/tables/Wide/records`)
    .set('Authorization', auth)
    .send({ record: { Title: 'Tome' } })
    .expect(201);
  for (let part = 0; part < 170; part += 85) {
    const record = Object.fromEntries(
      Array.from({ length: 85 }, (_, i) => [`Chapter ${part + i}`, 'c'.repeat(100_000)]),
    );
    await h.api
      .patch(`/api/v1/bases/${baseId}/tables/Wide/records/${created.body.id}`)
      .set('Authorization', auth)
      .send({ record })
      .expect(200);
  }
}, 120_000);
afterAll(() => h.close());

describe('a page of records larger than one page may be', () => {
  it('is 400 naming how many records fit, and that many are served', async () => {
    const refused = await list('Essays', { limit: RECORDS });
    expect(refused.status).toBe(400);
    const fitting = Number(/only the first (\d+) fit/.exec(refused.body.error.message)?.[1]);
    expect(refused.body.error.message).toBe(
      `body.limit: the page's records come to more than 32 MB of JSON, and only the first ${fitting} fit; ask for at most ${fitting} records, or for fewer fields (body.fields)`,
    );
    // Each record is its two texts twice (data and fields) and a little more.
    const perRecord = 4 * TEXT;
    expect(fitting).toBeGreaterThan(Math.floor(MAX_PAGE_BYTES / (perRecord + 1000)));
    expect(fitting).toBeLessThanOrEqual(Math.floor(MAX_PAGE_BYTES / perRecord));

    const served = await list('Essays', { limit: fitting }).expect(200);
    expect(served.body.records).toHaveLength(fitting);
    expect(served.body.hasMore).toBe(true);
    expect(served.text.length).toBeLessThan(MAX_PAGE_BYTES + 1024);
    await list('Essays', { limit: fitting + 1 }).expect(400);
  });

  it('fits with fewer fields', async () => {
    const served = await list('Essays', { limit: RECORDS, fields: ['Title'] }).expect(200);
    expect(served.body.records).toHaveLength(RECORDS);
    expect(served.body.total).toBe(RECORDS);
  });

  it('is 400 pointing to the fields when a single record is larger than a page', async () => {
    const refused = await list('Wide', { limit: 10 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe(
      'body.fields: the first record of the page alone comes to more than 32 MB of JSON; ask for fewer fields (body.fields)',
    );
    const served = await list('Wide', { limit: 10, fields: ['Title', 'Chapter 0'] }).expect(200);
    expect(served.body.records[0].fields['Chapter 0']).toHaveLength(100_000);
  });
});
