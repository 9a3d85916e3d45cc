import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TableRecord } from '@recordbase/contracts/records';
import { MAX_VARYING_NAMED_PER_CONNECTION } from '@recordbase/db';
import Airtable, { type FieldSet } from 'airtable';
import { baseClient } from './base-client';
import { createBase, type Harness, startHarness } from './harness';

/**
 * The Airtable-compatible API (/v0) driven by Airtable's official client, airtable.js, pointed at
 * a real listening app: what an existing Airtable program does after changing its endpoint.
 */

let h: Harness;
let root: string;
let baseId: string;
let deals: { id: string };
let server: http.Server;
let endpointUrl: string;
/** The records as /api/v1 lists them, in creation order. */
let listed: TableRecord[];

const { url, newTable, list, create, addField } = baseClient(
  () => h,
  () => baseId,
  () => root,
);

const STAGES = ['Lead', 'Won', 'Lost'] as const;

/**
 * Airtable.js 0.12's types predate performUpsert, which it sends as it sends any option: its
 * records without ids, and the option itself, are cast to what update() is typed to take.
 */
type ByIdRecords = { id: string; fields: Partial<FieldSet> }[];
const upsertOn = (...fieldsToMergeOn: string[]) =>
  ({ performUpsert: { fieldsToMergeOn } }) as unknown as { typecast?: boolean };

/** The official client on a base, with the root key; no retries of 429, so a limit shows as one. */
function airtableBase(apiKey = h.rootKey, options: { noRetryIfRateLimited?: boolean } = {}) {
  return new Airtable({
    apiKey,
    endpointUrl,
    noRetryIfRateLimited: options.noRetryIfRateLimited ?? true,
  }).base(baseId);
}

/** What Airtable answers for a record /api/v1 listed: its non-empty fields by name. */
function asAirtable(record: TableRecord) {
  const fields = Object.fromEntries(
    Object.entries(record.fields).filter(
      ([, value]) =>
        value !== null && value !== false && value !== '' && !(Array.isArray(value) && value.length === 0),
    ),
  );
  return { id: record.id, createdTime: record.createdAt, fields };
}

const shape = (record: { id: string; _rawJson: unknown }) => record._rawJson;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Airtable',
    tables: [{ name: 'Scratch', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
  deals = await newTable('Deals', [
    { name: 'Name', type: 'single_line_text' },
    { name: 'Amount', type: 'number', template: { decimalPlaces: 2 } },
    { name: 'Won', type: 'checkbox' },
    { name: 'Stage', type: 'single_select', template: { options: STAGES.map((name) => ({ name })) } },
    { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'hot' }, { name: 'cold' }] } },
    { name: 'Close', type: 'date' },
    { name: 'Notes', type: 'long_text' },
  ]);
  const records = Array.from({ length: 23 }, (_, i) => ({
    Name: `Deal ${String(i).padStart(2, '0')}`,
    Amount: i % 5 === 0 ? null : i * 10.5,
    Won: i % 3 === 0,
    Stage: STAGES[i % 3],
    Tags: i % 4 === 0 ? ['hot'] : i % 4 === 1 ? ['hot', 'cold'] : [],
    Close: i % 2 === 0 ? `2026-0${1 + (i % 9)}-15` : null,
    Notes: i % 7 === 0 ? '' : `note ${i}`,
  }));
  const res = await h.api
    .post(url(`/tables/${deals.id}/records/bulk`))
    .set('Authorization', root)
    .send({ records });
  expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
  listed = await list(deals.id);
  expect(listed).toHaveLength(23);
  server = http.createServer(h.app).listen(0);
  endpointUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
});

describe('select', () => {
  it('all() pages through every record, 100 at most a page, in the same order and shape', async () => {
    const pages: number[] = [];
    const records = await airtableBase()
      .table('Deals')
      .select({ pageSize: 5 })
      .eachPage((page, next) => {
        pages.push(page.length);
        next();
      })
      .then(() => airtableBase().table('Deals').select({ pageSize: 5 }).all());
    expect(pages).toEqual([5, 5, 5, 5, 3]);
    expect(records.map(shape)).toEqual(listed.map(asAirtable));
  });

  it('firstPage() answers the first page only, 100 records by default', async () => {
    const first = await airtableBase().table(deals.id).select({ maxRecords: 4 }).firstPage();
    expect(first.map((record) => record.id)).toEqual(listed.slice(0, 4).map((record) => record.id));
  });

  it('stops at maxRecords across pages', async () => {
    const records = await airtableBase().table('Deals').select({ maxRecords: 7, pageSize: 3 }).all();
    expect(records.map((record) => record.id)).toEqual(listed.slice(0, 7).map((record) => record.id));
  });

  it('filters by formula, sorts and projects as asked', async () => {
    const records = await airtableBase()
      .table('Deals')
      .select({
        filterByFormula: "AND({Stage} = 'Won', {Amount} > 50)",
        sort: [{ field: 'Amount', direction: 'desc' }],
        fields: ['Name', 'Amount'],
      })
      .all();
    const expected = listed
      .filter(
        (record) => record.fields.Stage === 'Won' && ((record.fields.Amount as number | null) ?? 0) > 50,
      )
      .sort((a, b) => (b.fields.Amount as number) - (a.fields.Amount as number))
      .map((record) => ({ Name: record.fields.Name, Amount: record.fields.Amount }));
    expect(expected.length).toBeGreaterThan(2);
    expect(records.map((record) => record.fields)).toEqual(expected);
  });

  it('reads a formula as true when it is a non-empty text, a non-zero number or a ticked box', async () => {
    const ids = async (filterByFormula: string) =>
      (await airtableBase().table('Deals').select({ filterByFormula }).all()).map((record) => record.id);
    expect(await ids('{Won}')).toEqual(
      listed.filter((record) => record.fields.Won).map((record) => record.id),
    );
    expect(await ids('{Amount}')).toEqual(
      listed
        .filter((record) => ((record.fields.Amount as number | null) ?? 0) !== 0)
        .map((record) => record.id),
    );
    expect(await ids('{Notes}')).toEqual(
      listed.filter((record) => record.fields.Notes).map((record) => record.id),
    );
  });

  it('pages through a long filter sent as POST …/listRecords', async () => {
    const names = listed.filter((_, i) => i % 2 === 1).map((record) => record.fields.Name as string);
    // Past Airtable.js's 16,000 characters of URL, it posts the parameters instead.
    const filterByFormula = `OR(${names.map((name) => `{Name} = '${name}'`).join(', ')}, ${'LEN({Notes}) > 1000, '.repeat(300)}FALSE())`;
    expect(filterByFormula.length).toBeGreaterThan(6000);
    const records = await airtableBase()
      .table('Deals')
      .select({ filterByFormula, pageSize: 4, method: 'post' })
      .all();
    expect(records.map((record) => record.fields.Name)).toEqual(names);
  });

  it("names at most a few formulas' listings, so varied formulas leave the connection's other names free", async () => {
    // One connection for requests (the other is the table cache's LISTEN): the test's own
    // queries see that connection's named statements.
    const single = await startHarness({ sameDatabaseAs: h, maxConnections: 2 });
    const singleServer = http.createServer(single.app).listen(0);
    try {
      const base = new Airtable({
        apiKey: h.rootKey,
        endpointUrl: `http://127.0.0.1:${(singleServer.address() as AddressInfo).port}`,
      }).base(baseId);
      for (let n = 1; n <= MAX_VARYING_NAMED_PER_CONNECTION + 3; n += 1) {
        await base
          .table('Deals')
          .select({ filterByFormula: `{Name} != 'zq-formula-${n}'`, maxRecords: 1 })
          .firstPage();
      }
      await base.table('Deals').select({ maxRecords: 1 }).firstPage();
      const named = await single.db.pool.query<{ formulas: string; listings: string }>(
        `SELECT count(*) FILTER (WHERE statement LIKE '%zq-formula-%')::text AS formulas,
                count(*) FILTER (WHERE statement LIKE '%string_agg%')::text AS listings
           FROM pg_prepared_statements`,
      );
      expect(named.rows[0]).toEqual({
        formulas: String(MAX_VARYING_NAMED_PER_CONNECTION),
        listings: String(MAX_VARYING_NAMED_PER_CONNECTION + 1),
      });
    } finally {
      await new Promise((resolve) => singleServer.close(resolve));
      await single.close();
    }
  });

  it('lists by formula a table large enough for read indexes, which ask for the sort only', async () => {
    const indexing = await startHarness({ sameDatabaseAs: h, readIndexMinRows: 1 });
    const indexingServer = http.createServer(indexing.app).listen(0);
    try {
      const base = new Airtable({
        apiKey: h.rootKey,
        endpointUrl: `http://127.0.0.1:${(indexingServer.address() as AddressInfo).port}`,
      }).base(baseId);
      const records = await base
        .table('Deals')
        .select({ filterByFormula: "{Stage} = 'Won'", sort: [{ field: 'Amount', direction: 'desc' }] })
        .all();
      expect(records.length).toBe(listed.filter((record) => record.fields.Stage === 'Won').length);
    } finally {
      await new Promise((resolve) => indexingServer.close(resolve));
      await indexing.close();
    }
  });

  it('keys fields by id when asked', async () => {
    const [record] = await airtableBase()
      .table('Deals')
      .select({ maxRecords: 1, returnFieldsByFieldId: true })
      .firstPage();
    expect(record!._rawJson).toEqual({ ...asAirtable(listed[0]!), fields: expect.any(Object) });
    const byId = Object.fromEntries(
      Object.entries(listed[0]!.data).filter(
        ([, value]) =>
          value !== null && value !== false && value !== '' && !(Array.isArray(value) && value.length === 0),
      ),
    );
    expect(record!.fields).toEqual(byId);
  });

  it('renders every field type as Airtable does, from PostgreSQL or, for arrays that may hold files, in Node', async () => {
    const targets = await newTable('Targets', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Hours', type: 'number' },
    ]);
    const [t1, t2] = await Promise.all([
      create(targets.id, { Name: 't1', Hours: 2 }),
      create(targets.id, { Name: 't2', Hours: 3.5 }),
    ]);
    const every = await newTable('Every type', [
      { name: 'Title', type: 'single_line_text' },
      { name: 'Long', type: 'long_text' },
      { name: 'Email', type: 'email' },
      { name: 'Site', type: 'url' },
      { name: 'Phone', type: 'phone_number' },
      { name: 'Number', type: 'number', template: { decimalPlaces: 2 } },
      { name: 'Money', type: 'currency' },
      { name: 'Share', type: 'percent' },
      { name: 'Stars', type: 'rating', template: { max: 5 } },
      { name: 'Took', type: 'duration' },
      { name: 'Day', type: 'date' },
      { name: 'At', type: 'datetime' },
      { name: 'One', type: 'single_select', template: { options: [{ name: 'A' }, { name: 'B' }] } },
      { name: 'Many', type: 'multiple_select', template: { options: [{ name: 'x' }, { name: 'y' }] } },
      { name: 'Done', type: 'checkbox' },
      { name: 'Targets', type: 'linked_record', template: { tableId: targets.id } },
      { name: 'Shout', type: 'formula', template: { expression: 'UPPER({Title})' } },
      { name: 'Twice', type: 'formula', template: { expression: '{Number} * 2' } },
      { name: 'Big', type: 'formula', template: { expression: '{Number} > 5' } },
      { name: 'No', type: 'autonumber' },
      { name: 'Created', type: 'created_time' },
      { name: 'Changed', type: 'last_modified_time' },
      { name: 'Creator', type: 'created_by' },
    ]);
    for (const field of [
      { name: 'Target count', type: 'count', template: { linkFieldId: 'Targets' } },
      {
        name: 'Hours',
        type: 'rollup',
        template: { linkFieldId: 'Targets', fieldId: 'Hours', function: 'sum' },
      },
    ]) {
      await addField(every.id, field).expect(201);
    }
    await create(every.id, {
      Title: 'full',
      Long: 'line one\nline "two" é 🙂',
      Email: 'a@example.com',
      Site: 'https://example.com/a?b=c',
      Phone: '+1 555 0100',
      Number: 7.25,
      Money: 10.5,
      Share: 0.25,
      Stars: 4,
      Took: 90,
      Day: '2026-01-31',
      At: '2026-01-31T10:15:00.000Z',
      One: 'B',
      Many: ['y', 'x'],
      Done: true,
      Targets: [t2!.id, t1!.id],
    });
    // Every writable value empty: Airtable shows none of them.
    await create(every.id, { Title: '', Long: '', Number: null, Many: [], Done: false, Targets: [] });
    await create(every.id, { Title: 'zero', Number: 0, Money: 0, Stars: 1 });
    const expected = (await list(every.id)).map(asAirtable);
    expect(expected).toHaveLength(3);
    const viaAirtable = async () =>
      (await airtableBase().table('Every type').select().all()).map((record) => record._rawJson);
    expect(await viaAirtable()).toEqual(expected);
    // A lookup's array may hold attachments, which Node reshapes: the page is rendered there.
    await addField(every.id, {
      name: 'Target names',
      type: 'lookup',
      template: { linkFieldId: 'Targets', fieldId: 'Name' },
    }).expect(201);
    const withLookup = (await list(every.id)).map(asAirtable);
    expect(withLookup[0]!.fields['Target names']).toEqual(['t2', 't1']);
    expect(await viaAirtable()).toEqual(withLookup);
  });

  it("folds the table's count parts as a listing of /api/v1 does, though it counts no total", async () => {
    const counted = await newTable('Counted', [{ name: 'Name', type: 'single_line_text' }]);
    for (let i = 0; i < 70; i++) await create(counted.id, { Name: `c${i}` });
    const parts = async () =>
      (
        await h.db.pool.query('SELECT count(*)::int AS n FROM table_row_counts WHERE table_id = $1', [
          counted.id,
        ])
      ).rows[0].n as number;
    // A part per write: past the fold's threshold (store.ts), which only listings apply.
    expect(await parts()).toBeGreaterThan(64);
    const page = await airtableBase().table('Counted').select({ pageSize: 10 }).firstPage();
    expect(page).toHaveLength(10);
    expect(await parts()).toBe(1);
  });

  it('applies a saved view', async () => {
    const res = await h.api
      .post(url(`/tables/${deals.id}/views`))
      .set('Authorization', root)
      .send({
        name: 'Lost ones',
        filter: { field: 'Stage', equals: 'Lost' },
        sort: [{ field: 'Name', direction: 'desc' }],
      });
    expect(res.status).toBe(201);
    const records = await airtableBase().table('Deals').select({ view: 'Lost ones' }).all();
    expect(records.map((record) => record.fields.Name)).toEqual(
      listed
        .filter((record) => record.fields.Stage === 'Lost')
        .map((record) => record.fields.Name)
        .sort()
        .reverse(),
    );
  });
});

describe('find', () => {
  it('answers one record in Airtable shape', async () => {
    const record = await airtableBase().table('Deals').find(listed[1]!.id);
    expect(record._rawJson).toEqual(asAirtable(listed[1]!));
  });

  it('is a 404 NOT_FOUND for a record that is not there, or an id that cannot be one', async () => {
    for (const id of ['0190a5e4-0000-7000-8000-000000000000', 'recNotARecordAtAll']) {
      await expect(airtableBase().table('Deals').find(id)).rejects.toMatchObject({
        error: 'NOT_FOUND',
        statusCode: 404,
      });
    }
  });
});

describe('errors Airtable.js turns into an AirtableError', () => {
  it('422 INVALID_FILTER_BY_FORMULA for a formula that does not parse or names no field', async () => {
    for (const filterByFormula of ['AND({Stage} = ', '{Nope} = 1']) {
      await expect(
        airtableBase().table('Deals').select({ filterByFormula }).firstPage(),
      ).rejects.toMatchObject({
        error: 'INVALID_FILTER_BY_FORMULA',
        statusCode: 422,
        message: expect.stringContaining('filterByFormula'),
      });
    }
  });

  it('422 UNKNOWN_FIELD_NAME for an unknown field in fields or sort', async () => {
    await expect(
      airtableBase()
        .table('Deals')
        .select({ fields: ['Nmae'] })
        .firstPage(),
    ).rejects.toMatchObject({
      error: 'UNKNOWN_FIELD_NAME',
      statusCode: 422,
      message: expect.stringContaining('"Nmae"'),
    });
    await expect(
      airtableBase()
        .table('Deals')
        .select({ sort: [{ field: 'Nope' }] })
        .firstPage(),
    ).rejects.toMatchObject({ error: 'UNKNOWN_FIELD_NAME', statusCode: 422 });
  });

  it('422 VIEW_NAME_NOT_FOUND and INVALID_OFFSET_VALUE', async () => {
    await expect(airtableBase().table('Deals').select({ view: 'Nope' }).firstPage()).rejects.toMatchObject({
      error: 'VIEW_NAME_NOT_FOUND',
      statusCode: 422,
    });
    const res = await fetch(`${endpointUrl}/v0/${baseId}/Deals?offset=3%2Fnot-a-cursor`, {
      headers: { authorization: root },
    });
    expect([res.status, ((await res.json()) as { error: { type: string } }).error.type]).toEqual([
      422,
      'INVALID_OFFSET_VALUE',
    ]);
  });

  it('422 INVALID_REQUEST_UNKNOWN for a parameter out of range or unknown, naming it', async () => {
    const res = await fetch(`${endpointUrl}/v0/${baseId}/Deals?pageSize=101&colour=red`, {
      headers: { authorization: root },
    });
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect([res.status, body.error.type]).toEqual([422, 'INVALID_REQUEST_UNKNOWN']);
    expect(body.error.message).toMatch(/pageSize/);
    expect(body.error.message).toMatch(/colour/);
  });

  it('401 AUTHENTICATION_REQUIRED for a wrong key, 404 NOT_FOUND for a table or base that is not there', async () => {
    await expect(airtableBase('not-a-key').table('Deals').select().firstPage()).rejects.toMatchObject({
      error: 'AUTHENTICATION_REQUIRED',
      statusCode: 401,
    });
    await expect(airtableBase().table('Nope').select().firstPage()).rejects.toMatchObject({
      error: 'NOT_FOUND',
      statusCode: 404,
    });
    const other = new Airtable({ apiKey: h.rootKey, endpointUrl }).base(
      '0190a5e4-0000-7000-8000-000000000000',
    );
    await expect(other.table('Deals').select().firstPage()).rejects.toMatchObject({
      error: 'NOT_FOUND',
      statusCode: 404,
    });
  });

  it('403 for a key without records:read, 404 for a base outside its reach', async () => {
    const created = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'schema only', scopes: ['schema:read'] });
    expect(created.status).toBe(201);
    await expect(airtableBase(created.body.key).table('Deals').select().firstPage()).rejects.toMatchObject({
      error: 'NOT_AUTHORIZED',
      statusCode: 403,
    });
    const other = await createBase(h, { name: 'Other' });
    const elsewhere = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'elsewhere', scopes: ['records:read'], databaseIds: [other.body.id] });
    expect(elsewhere.status).toBe(201);
    await expect(airtableBase(elsewhere.body.key).table('Deals').select().firstPage()).rejects.toMatchObject({
      error: 'NOT_FOUND',
      statusCode: 404,
    });
  });

  it('413 REQUEST_TOO_LARGE for a body past the write limit', async () => {
    // The harness's JSON_BODY_LIMIT is 10 MB.
    await expect(
      airtableBase()
        .table('Deals')
        .create({ Name: 'x'.repeat(11 * 1024 * 1024) }),
    ).rejects.toMatchObject({
      error: 'REQUEST_TOO_LARGE',
      statusCode: 413,
    });
  });

  it("429 TOO_MANY_REQUESTS past the key's rate limit, which /v0 and /api/v1 share", async () => {
    const limited = await startHarness({ sameDatabaseAs: h, ratePerSecond: 1, rateBurst: 2 });
    const limitedServer = http.createServer(limited.app).listen(0);
    try {
      const key = await h.api
        .post('/api/v1/api-keys')
        .set('Authorization', root)
        .send({ name: 'limited', scopes: ['records:read'] });
      expect(key.status).toBe(201);
      // One token spent through /api/v1, one through /v0: the third request finds the bucket empty.
      await limited.api
        .post(url(`/tables/${deals.id}/records/list`))
        .set('Authorization', `Bearer ${key.body.key}`)
        .send({})
        .expect(200);
      const base = new Airtable({
        apiKey: key.body.key,
        endpointUrl: `http://127.0.0.1:${(limitedServer.address() as AddressInfo).port}`,
        noRetryIfRateLimited: true,
      }).base(baseId);
      await base.table('Deals').select({ maxRecords: 1 }).firstPage();
      await expect(base.table('Deals').select({ maxRecords: 1 }).firstPage()).rejects.toMatchObject({
        error: 'TOO_MANY_REQUESTS',
        statusCode: 429,
      });
    } finally {
      await new Promise((resolve) => limitedServer.close(resolve));
      await limited.close();
    }
  });

  it('answers an unknown route under /v0 in Airtable shape', async () => {
    const res = await fetch(`${endpointUrl}/v0/${baseId}/Deals/a/b/c`, { headers: { authorization: root } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('NOT_FOUND');
  });
});

describe('writes', () => {
  let contacts: { id: string };
  const table = () => airtableBase().table('Contacts');
  /** The table's records as /api/v1 lists them, by name. */
  const stored = async () =>
    Object.fromEntries(
      (await list(contacts.id)).map((record) => [record.fields.Name as string, record.fields]),
    );

  beforeAll(async () => {
    contacts = await newTable('Contacts', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Email', type: 'email' },
      { name: 'Score', type: 'number' },
      { name: 'Active', type: 'checkbox' },
      { name: 'Stage', type: 'single_select', template: { options: [{ name: 'New' }, { name: 'Old' }] } },
      { name: 'Files', type: 'attachments' },
    ]);
  });

  it('create() takes records in Airtable shape and answers them so, in order', async () => {
    const created = await table().create([
      { fields: { Name: 'Ada', Email: 'ada@example.com', Score: 3, Active: true, Stage: 'New' } },
      {
        fields: {
          Name: 'Bob',
          // Airtable.js's type wants an attachment read back (with its id); a new one is written so.
          Files: [
            { url: 'https://cdn.example.com/cv.pdf', filename: 'cv.pdf', size: 10, type: 'application/pdf' },
          ] as never,
        },
      },
    ]);
    expect(created.map(shape)).toEqual([
      {
        id: expect.any(String),
        createdTime: expect.any(String),
        fields: { Name: 'Ada', Email: 'ada@example.com', Score: 3, Active: true, Stage: 'New' },
      },
      {
        id: expect.any(String),
        createdTime: expect.any(String),
        fields: {
          Name: 'Bob',
          Files: [
            {
              id: expect.stringMatching(/^att[0-9A-Za-z]{14}$/),
              url: 'https://cdn.example.com/cv.pdf',
              filename: 'cv.pdf',
              size: 10,
              type: 'application/pdf',
            },
          ],
        },
      },
    ]);
    const single = await table().create({ Name: 'Cy', Score: 1 });
    expect(single.fields).toEqual({ Name: 'Cy', Score: 1 });
    expect(Object.keys(await stored()).sort()).toEqual(['Ada', 'Bob', 'Cy']);
  });

  it('update() changes the fields given, replace() clears the others, by id, one or many', async () => {
    const byName = Object.fromEntries(
      (await table().select().all()).map((record) => [record.fields.Name as string, record.id]),
    );
    const updated = await table().update([
      { id: byName.Ada!, fields: { Score: 4 } },
      { id: byName.Cy!, fields: { Active: true } },
    ]);
    expect(updated.map((record) => record.fields)).toEqual([
      { Name: 'Ada', Email: 'ada@example.com', Score: 4, Active: true, Stage: 'New' },
      { Name: 'Cy', Score: 1, Active: true },
    ]);
    const replaced = await table().replace([{ id: byName.Ada!, fields: { Name: 'Ada', Score: 5 } }]);
    expect(replaced[0]!.fields).toEqual({ Name: 'Ada', Score: 5 });
    const one = await table().update(byName.Bob!, { Stage: 'Old' });
    expect(one.fields).toMatchObject({
      Name: 'Bob',
      Stage: 'Old',
      Files: [expect.objectContaining({ filename: 'cv.pdf' })],
    });
    const oneReplaced = await table().replace(byName.Bob!, { Name: 'Bob' });
    expect(oneReplaced.fields).toEqual({ Name: 'Bob' });
    const now = await stored();
    expect(now.Ada).toMatchObject({ Email: null, Score: 5, Active: false, Stage: null });
    expect(now.Bob).toMatchObject({ Stage: null, Files: [] });
  });

  it('update() with performUpsert updates the records that match and creates the others', async () => {
    // Airtable.js's types predate performUpsert, whose records have no id.
    const upserted = await table().update(
      [
        { fields: { Name: 'Ada', Score: 9 } },
        { fields: { Name: 'Dee', Score: 2 } },
      ] as unknown as ByIdRecords,
      upsertOn('Name'),
    );
    expect(upserted.map((record) => record.fields)).toEqual([
      { Name: 'Ada', Score: 9 },
      { Name: 'Dee', Score: 2 },
    ]);
    const now = await stored();
    expect(Object.keys(now).sort()).toEqual(['Ada', 'Bob', 'Cy', 'Dee']);
    expect(now.Ada!.Score).toBe(9);
    // The raw answer says which were created and which updated.
    const res = await fetch(`${endpointUrl}/v0/${baseId}/Contacts`, {
      method: 'PATCH',
      headers: { authorization: root, 'content-type': 'application/json' },
      body: JSON.stringify({
        records: [{ fields: { Name: 'Dee', Score: 3 } }, { fields: { Name: 'Eve' } }],
        performUpsert: { fieldsToMergeOn: ['name'] },
      }),
    });
    const body = (await res.json()) as {
      records: { id: string }[];
      createdRecords: string[];
      updatedRecords: string[];
    };
    expect(res.status).toBe(200);
    expect([body.updatedRecords, body.createdRecords]).toEqual([
      [body.records[0]!.id],
      [body.records[1]!.id],
    ]);
  });

  it('typecast converts text to the field types', async () => {
    const [record] = await table().create([{ fields: { Name: 'Fay', Score: '42', Active: 'yes' } }], {
      typecast: true,
    });
    expect(record!.fields).toEqual({ Name: 'Fay', Score: 42, Active: true });
  });

  it('destroy() deletes one or many, all or none', async () => {
    const byName = Object.fromEntries(
      (await table().select().all()).map((record) => [record.fields.Name as string, record.id]),
    );
    const deleted = await table().destroy([byName.Eve!, byName.Fay!]);
    expect(deleted.map((record) => record.id)).toEqual([byName.Eve, byName.Fay]);
    const one = await table().destroy(byName.Dee!);
    expect(one.id).toBe(byName.Dee);
    await expect(table().destroy([byName.Cy!, byName.Dee!])).rejects.toMatchObject({
      error: 'NOT_FOUND',
      statusCode: 404,
    });
    expect(Object.keys(await stored()).sort()).toEqual(['Ada', 'Bob', 'Cy']);
  });

  it('refuses a bad value, an unknown field or more than 10 records with 422, writing nothing', async () => {
    const before = await stored();
    await expect(
      table().create([{ fields: { Name: 'Gus' } }, { fields: { Name: 'Hal', Email: 'not an email' } }]),
    ).rejects.toMatchObject({
      error: 'INVALID_VALUE_FOR_COLUMN',
      statusCode: 422,
      message: expect.stringContaining('body.records[1].fields.Email'),
    });
    await expect(table().create({ Name: 'Gus', Nmae: 'x' })).rejects.toMatchObject({
      error: 'UNKNOWN_FIELD_NAME',
      statusCode: 422,
      message: expect.stringContaining('body.fields: unknown field "Nmae"'),
    });
    await expect(
      table().create(Array.from({ length: 11 }, (_, i) => ({ fields: { Name: `N${i}` } }))),
    ).rejects.toMatchObject({
      error: 'INVALID_REQUEST_UNKNOWN',
      statusCode: 422,
      message: expect.stringContaining('at most 10'),
    });
    await expect(
      table().update([{ fields: { Name: 'Ada' } }] as unknown as ByIdRecords, upsertOn('Nope')),
    ).rejects.toMatchObject({ error: 'UNKNOWN_FIELD_NAME', statusCode: 422 });
    expect(await stored()).toEqual(before);
  });
});

describe('meta', () => {
  const get = async (path: string, authorization = root) => {
    const res = await fetch(`${endpointUrl}/v0${path}`, { headers: { authorization } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('lists the bases a key reaches, with what it may do there', async () => {
    const all = await get('/meta/bases');
    expect(all.status).toBe(200);
    expect(all.body.bases).toContainEqual({ id: baseId, name: 'Airtable', permissionLevel: 'create' });
    const reader = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'reader', scopes: ['schema:read', 'records:read'], databaseIds: [baseId] });
    expect(reader.status).toBe(201);
    expect(await get('/meta/bases', `Bearer ${reader.body.key}`)).toEqual({
      status: 200,
      body: { bases: [{ id: baseId, name: 'Airtable', permissionLevel: 'read' }] },
    });
  });

  it("lists a base's tables with Airtable's field types and the tables' views", async () => {
    const { status, body } = await get(`/meta/bases/${baseId}/tables`);
    expect(status).toBe(200);
    const tables = body.tables as {
      name: string;
      primaryFieldId: string;
      fields: { id: string; name: string; type: string; options?: unknown }[];
      views: unknown[];
    }[];
    // In creation order: the select tests add three tables before the writes add Contacts.
    expect(tables.map((table) => table.name)).toEqual([
      'Scratch',
      'Deals',
      'Targets',
      'Every type',
      'Counted',
      'Contacts',
    ]);
    const dealsMeta = tables[1]!;
    expect(dealsMeta.fields.map((field) => [field.name, field.type])).toEqual([
      ['Name', 'singleLineText'],
      ['Amount', 'number'],
      ['Won', 'checkbox'],
      ['Stage', 'singleSelect'],
      ['Tags', 'multipleSelects'],
      ['Close', 'date'],
      ['Notes', 'multilineText'],
    ]);
    expect(dealsMeta.primaryFieldId).toBe(dealsMeta.fields[0]!.id);
    expect(dealsMeta.fields[3]!.options).toEqual({ choices: STAGES.map((name) => ({ name })) });
    expect(dealsMeta.views).toEqual([{ id: expect.stringMatching(/^viw/), name: 'Lost ones', type: 'grid' }]);
    const contactsMeta = tables.find((table) => table.name === 'Contacts')!;
    expect(contactsMeta.fields.find((field) => field.name === 'Files')?.type).toBe('multipleAttachments');
  });

  it('is a 404 for a base outside the key, a 403 without schema:read', async () => {
    const other = await createBase(h, { name: 'Elsewhere' });
    const limited = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'limited', scopes: ['schema:read'], databaseIds: [other.body.id] });
    const outside = await get(`/meta/bases/${baseId}/tables`, `Bearer ${limited.body.key}`);
    expect([outside.status, (outside.body.error as { type: string }).type]).toEqual([404, 'NOT_FOUND']);
    const recordsOnly = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'records only', scopes: ['records:read'] });
    const refused = await get('/meta/bases', `Bearer ${recordsOnly.body.key}`);
    expect([refused.status, (refused.body.error as { type: string }).type]).toEqual([
      403,
      'INVALID_PERMISSIONS',
    ]);
  });
});
