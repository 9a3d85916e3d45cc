import type { Readable } from 'node:stream';
import { runImport } from '@recordbase/import-worker/job';
import { DEFAULT_READER_LIMITS } from '@recordbase/import-worker/readers';
import { zip } from '@recordbase/import-worker/test/zip-fixture';
import ExcelJS from 'exceljs';
import { createBase, databaseSnapshot, type Harness, schemaNameOf, startHarness } from './harness';
import { CSV, type ImportFixture, importFixture, XLSX } from './import-fixture';

/**
 * CSV and Excel imports through the API and the import worker: a new table typed from every
 * value, an existing table filled by header name, cells that do not fit, cancels, hostile files,
 * and all or nothing.
 */

let h: Harness;
let f: ImportFixture;
let auth: string;
let baseId: string;

const url = (path = '') => `/api/v1/bases/${baseId}${path}`;

async function start(body: object, expected = 202) {
  const res = await h.api.post(url('/imports')).set('Authorization', auth).send(body);
  expect(res.status).toBe(expected);
  return res.body;
}

async function importFile(body: object) {
  const started = await start(body);
  return f.finished(baseId, started.id);
}

async function listAll(tableId: string) {
  const res = await h.api
    .post(url(`/tables/${tableId}/records/list`))
    .set('Authorization', auth)
    .send({ limit: 1000 })
    .expect(200);
  return res.body.records as { id: string; fields: Record<string, unknown> }[];
}

/** A one-sheet workbook zipped by hand: hostile ones are tiny zips exceljs would not write. */
function handmadeWorkbook(rows: string, sharedStrings: string): Buffer {
  const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const relationships = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const rels = (...entries: [string, string, string][]) =>
    `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${entries
      .map(
        ([id, type, target]) =>
          `<Relationship Id="${id}" Type="${relationships}/${type}" Target="${target}"/>`,
      )
      .join('')}</Relationships>`;
  return zip([
    { name: '_rels/.rels', data: rels(['rId1', 'officeDocument', 'xl/workbook.xml']) },
    {
      name: 'xl/workbook.xml',
      data: `<workbook xmlns="${main}" xmlns:r="${relationships}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: rels(
        ['rId1', 'worksheet', 'worksheets/sheet1.xml'],
        ['rId2', 'sharedStrings', 'sharedStrings.xml'],
      ),
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: `<worksheet xmlns="${main}"><sheetData>${rows}</sheetData></worksheet>`,
    },
    { name: 'xl/sharedStrings.xml', data: `<sst xmlns="${main}">${sharedStrings}</sst>` },
  ]);
}

async function xlsx(sheets: Record<string, unknown[][]>): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const sheet = workbook.addWorksheet(name);
    for (const row of rows) sheet.addRow(row);
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

beforeAll(async () => {
  h = await startHarness();
  f = await importFixture(h);
  f.startWorker();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Imports',
    tables: [
      {
        name: 'People',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Age', type: 'number' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Lead' }, { name: 'Won' }] },
          },
          { name: 'Active', type: 'checkbox' },
        ],
      },
    ],
  });
  baseId = base.body.id;
});
afterAll(async () => {
  await f.close();
  await h.close();
});

describe('a CSV into a new table', () => {
  it('types each column from every value, checked through records/list', async () => {
    const csv = [
      'Name,Amount,Paid,Due,At,Email,Site,Notes',
      'Ada,12.5,yes,2024-02-29,2024-02-29 10:00,ada@example.com,https://ada.example,"two',
      'lines"',
      'Grace,-3,no,2023-12-01,2024-03-01T12:30:15Z,grace@example.org,http://grace.example/x,plain',
      ',,,,,,,',
    ].join('\r\n');
    const s3Key = await f.upload('people 2024.csv', csv);
    const status = await importFile({ s3Key });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 3, rowsTotal: 3, errors: [] });
    const table = await h.api
      .get(url(`/tables/${status.tableId}`))
      .set('Authorization', auth)
      .expect(200);
    expect(table.body.name).toBe('people 2024');
    expect(
      table.body.fields.map((field: { name: string; type: string }) => [field.name, field.type]),
    ).toEqual([
      ['Name', 'single_line_text'],
      ['Amount', 'number'],
      ['Paid', 'checkbox'],
      ['Due', 'date'],
      ['At', 'datetime'],
      ['Email', 'email'],
      ['Site', 'url'],
      ['Notes', 'long_text'],
    ]);
    const records = await listAll(status.tableId as string);
    expect(records.map((record) => record.fields)).toEqual([
      {
        Name: 'Ada',
        Amount: 12.5,
        Paid: true,
        Due: '2024-02-29',
        At: '2024-02-29T10:00:00.000Z',
        Email: 'ada@example.com',
        Site: 'https://ada.example',
        Notes: 'two\r\nlines',
      },
      {
        Name: 'Grace',
        Amount: -3,
        Paid: false,
        Due: '2023-12-01',
        At: '2024-03-01T12:30:15.000Z',
        Email: 'grace@example.org',
        Site: 'http://grace.example/x',
        Notes: 'plain',
      },
      { Name: null, Amount: null, Paid: false, Due: null, At: null, Email: null, Site: null, Notes: null },
    ]);
  });

  it('names blank and repeated headers, and takes a semicolon CSV', async () => {
    const s3Key = await f.upload('semi.csv', '\uFEFFName;;name;id\nA;1;x;7\nB;2;y;8\n');
    const status = await importFile({ s3Key, tableName: 'Semicolons' });
    expect(status.status).toBe('succeeded');
    const table = await h.api
      .get(url(`/tables/${status.tableId}`))
      .set('Authorization', auth)
      .expect(200);
    expect(table.body.fields.map((field: { name: string }) => field.name)).toEqual([
      'Name',
      'Column 2',
      'name (2)',
      'id (imported)',
    ]);
    const records = await listAll(status.tableId as string);
    expect(records.map((record) => record.fields['Column 2'])).toEqual([1, 2]);
  });

  it('a header the field API refuses (__proto__) is renamed as the system names are; constructor and prototype stay', async () => {
    const refused = await h.api
      .post(url('/tables/People/fields'))
      .set('Authorization', auth)
      .send({ name: '__proto__', type: 'single_line_text' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/__proto__/);
    const s3Key = await f.upload('proto.csv', 'Name,__proto__,constructor,prototype,id\nA,1,2,3,4\n');
    const status = await importFile({ s3Key, tableName: 'Prototypes' });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 1, errors: [] });
    const table = await h.api
      .get(url(`/tables/${status.tableId}`))
      .set('Authorization', auth)
      .expect(200);
    expect(table.body.fields.map((field: { name: string }) => field.name)).toEqual([
      'Name',
      '__proto__ (imported)',
      'constructor',
      'prototype',
      'id (imported)',
    ]);
    const [record] = await listAll(status.tableId as string);
    expect(Object.entries(record?.fields ?? {})).toEqual([
      ['Name', 'A'],
      ['__proto__ (imported)', 1],
      ['constructor', 2],
      ['prototype', 3],
      ['id (imported)', 4],
    ]);
    // Into an existing table a __proto__ column fills no field (none may have that name): skipped.
    const into = await f.upload('proto-into.csv', 'Name,__proto__,constructor\nB,1,2\n');
    const appended = await importFile({ s3Key: into, tableId: 'People' });
    expect(appended).toMatchObject({
      status: 'succeeded',
      rowsImported: 1,
      skippedColumns: ['__proto__', 'constructor'],
    });
  });

  it('a header with a lone surrogate (an _xD800_ escape) is not a field name', async () => {
    const book = handmadeWorkbook(
      '<row r="1"><c t="inlineStr"><is><t>Name</t></is></c><c t="inlineStr"><is><t>A_xD800_</t></is></c></row>' +
        '<row r="2"><c t="inlineStr"><is><t>x</t></is></c><c><v>1</v></c></row>',
      '',
    );
    const status = await importFile({
      s3Key: await f.upload('surrogate.xlsx', book, XLSX),
      tableName: 'Surrogate',
    });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 1 });
    const table = await h.api
      .get(url(`/tables/${status.tableId}`))
      .set('Authorization', auth)
      .expect(200);
    expect(table.body.fields.map((field: { name: string }) => field.name)).toEqual(['Name', 'Column 2']);
  });

  it('without a header row, names columns and imports the first row too', async () => {
    const s3Key = await f.upload('plain.csv', 'a,1\nb,2\n');
    const status = await importFile({ s3Key, firstRowIsHeader: false, tableName: 'No header' });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 2 });
    const records = await listAll(status.tableId as string);
    expect(records.map((record) => record.fields)).toEqual([
      { 'Column 1': 'a', 'Column 2': 1 },
      { 'Column 1': 'b', 'Column 2': 2 },
    ]);
  });

  it("keeps the file's order, builds the table's indexes, and numbers later records after the file's", async () => {
    const rows = Array.from({ length: 2500 }, (_, index) => `row ${index},${index}`);
    const s3Key = await f.upload('ordered.csv', ['Label,N', ...rows].join('\n'));
    const status = await importFile({ s3Key, tableName: 'Ordered' });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 2500 });
    const tableId = status.tableId as string;
    await h.api
      .post(url(`/tables/${tableId}/records`))
      .set('Authorization', auth)
      .send({ record: { Label: 'typed later', N: -1 } })
      .expect(201);
    const seen: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.api
        .post(url(`/tables/${tableId}/records/list`))
        .set('Authorization', auth)
        .send({ limit: 1000, ...(cursor ? { cursor } : {}) })
        .expect(200);
      for (const record of page.body.records) seen.push(record.fields.N);
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...Array.from({ length: 2500 }, (_, index) => index), -1]);
    const indexes = await h.db.pool.query<{ indexdef: string }>(
      'SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
      [schemaNameOf(baseId), tableId],
    );
    expect(indexes.rows.map((row) => row.indexdef.replace(/^.* USING /, ''))).toEqual([
      'btree (created_at, seq)',
      'btree (id)',
      'btree (seq)',
    ]);
  });

  it('takes the next free name when the table name is taken', async () => {
    const s3Key = await f.upload('People.csv', 'X\n1\n');
    const status = await importFile({ s3Key });
    const table = await h.api
      .get(url(`/tables/${status.tableId}`))
      .set('Authorization', auth)
      .expect(200);
    expect(table.body.name).toBe('People (2)');
  });
});

describe('a new table read once, its rows staged as the types look so far', () => {
  async function fieldsOf(tableId: string) {
    const table = await h.api
      .get(url(`/tables/${tableId}`))
      .set('Authorization', auth)
      .expect(200);
    return Object.fromEntries(
      table.body.fields.map((field: { name: string; type: string }) => [field.name, field.type]),
    );
  }

  it('a column that stops looking like numbers late keeps every text as written', async () => {
    const rows = Array.from(
      { length: 3000 },
      (_, index) => `r${index},${index}.50,${index % 2 ? 'yes' : 'no'}`,
    );
    rows.push('last,n/a,maybe');
    const s3Key = await f.upload('late.csv', ['Label,Amount,Flag', ...rows].join('\n'));
    const status = await importFile({ s3Key, tableName: 'Late change' });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 3001, rowsTotal: 3001, errors: [] });
    expect(await fieldsOf(status.tableId as string)).toEqual({
      Label: 'single_line_text',
      Amount: 'single_line_text',
      Flag: 'single_line_text',
    });
    const records = await listAll(status.tableId as string);
    expect(records.slice(0, 2).map((record) => record.fields)).toEqual([
      { Label: 'r0', Amount: '0.50', Flag: 'no' },
      { Label: 'r1', Amount: '1.50', Flag: 'yes' },
    ]);
  });

  it('emails that turn into text, a late line break, and a checkbox empty at first keep their values', async () => {
    const csv = [
      'Contact,Note,Done',
      'a@example.com,first,',
      ' b@example.com ,second,',
      'call Bob,"two',
      'lines",yes',
      ',,no',
    ].join('\n');
    const s3Key = await f.upload('drift.csv', csv);
    const status = await importFile({ s3Key, tableName: 'Drift' });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 4, errors: [] });
    expect(await fieldsOf(status.tableId as string)).toEqual({
      Contact: 'single_line_text',
      Note: 'long_text',
      Done: 'checkbox',
    });
    expect((await listAll(status.tableId as string)).map((record) => record.fields)).toEqual([
      { Contact: 'a@example.com', Note: 'first', Done: false },
      { Contact: ' b@example.com ', Note: 'second', Done: false },
      { Contact: 'call Bob', Note: 'two\nlines', Done: true },
      { Contact: null, Note: null, Done: false },
    ]);
  });

  it('date-times keep the milliseconds a written value keeps, whatever their zone', async () => {
    const csv = [
      'At',
      '2024-03-05T12:34:56.123456Z',
      '2024-03-05 12:34:56.9999+02:00',
      '2024-03-05T12:34',
    ].join('\n');
    const s3Key = await f.upload('instants.csv', csv);
    const status = await importFile({ s3Key, tableName: 'Instants' });
    expect(status.status).toBe('succeeded');
    expect((await listAll(status.tableId as string)).map((record) => record.fields.At)).toEqual([
      '2024-03-05T12:34:56.123Z',
      '2024-03-05T10:34:56.999Z',
      '2024-03-05T12:34:00.000Z',
    ]);
  });

  it('a row wider than the first adds a column, empty in the rows before it', async () => {
    const s3Key = await f.upload('ragged.csv', 'a,1\nb,2,extra\nc,3\n');
    const status = await importFile({ s3Key, firstRowIsHeader: false, tableName: 'Ragged' });
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 3 });
    expect((await listAll(status.tableId as string)).map((record) => record.fields)).toEqual([
      { 'Column 1': 'a', 'Column 2': 1, 'Column 3': null },
      { 'Column 1': 'b', 'Column 2': 2, 'Column 3': 'extra' },
      { 'Column 1': 'c', 'Column 2': 3, 'Column 3': null },
    ]);
  });
});

describe('into an existing table', () => {
  it('matches columns to fields by header name, any case, and lists the others', async () => {
    const book = await xlsx({
      Notes: [['ignored']],
      Data: [
        ['name', 'AGE', 'Stage', 'Unknown', 'Active'],
        ['Lin', 41, 'Won', 'zzz', true],
        ['Mo', 7, 'Lead', 'yyy', false],
      ],
    });
    const s3Key = await f.upload('people.xlsx', book, XLSX);
    const status = await importFile({ s3Key, tableId: 'People', sheet: 'Data' });
    expect(status).toMatchObject({
      status: 'succeeded',
      rowsImported: 2,
      rowsTotal: 2,
      skippedColumns: ['Unknown'],
    });
    const records = await listAll('People');
    expect(records.map((record) => record.fields)).toEqual(
      expect.arrayContaining([
        { Name: 'Lin', Age: 41, Stage: 'Won', Active: true },
        { Name: 'Mo', Age: 7, Stage: 'Lead', Active: false },
      ]),
    );
  });

  it('reports each cell that does not fit with its row and column, and skips its row', async () => {
    const before = (await listAll('People')).length;
    const csv = [
      'Name,Age,Stage',
      'ok,1,Lead',
      'bad age,abc,Lead',
      'bad stage,3,Nope',
      'both,x,y',
      'fine,5,',
    ].join('\n');
    const s3Key = await f.upload('bad.csv', csv);
    const status = await importFile({ s3Key, tableId: 'People' });
    expect(status.status).toBe('succeeded');
    expect(status.rowsImported).toBe(2);
    expect(status.rowsTotal).toBe(5);
    expect(status.errors).toEqual([
      { row: 3, column: 'Age', message: expect.stringMatching(/"abc" must be a number/) },
      { row: 4, column: 'Stage', message: expect.stringMatching(/"Nope".*unknown option/) },
      { row: 5, column: 'Age', message: expect.any(String) },
      { row: 5, column: 'Stage', message: expect.any(String) },
    ]);
    expect((await listAll('People')).length).toBe(before + 2);
  });
});

describe('all or nothing', () => {
  it('a file that breaks after thousands of good rows leaves the database as it was', async () => {
    const good = Array.from({ length: 3000 }, (_, index) => `name ${index},${index},Lead`);
    const csv = `Name,Age,Stage\n${good.join('\n')}\nbroken,"1,Lead\n`;
    const before = await databaseSnapshot(h.db);
    const count = (await h.db.pool.query('SELECT sum(delta)::int AS n FROM table_row_counts')).rows[0].n;
    for (const body of [{ tableId: 'People' }, { tableName: 'Half made' }]) {
      const s3Key = await f.upload('breaks.csv', csv);
      const status = await importFile({ s3Key, ...body });
      expect(status).toMatchObject({ status: 'failed', rowsImported: 0 });
      expect(status.errors[0]).toMatchObject({
        row: expect.any(Number),
        message: expect.stringMatching(/quot/i),
      });
    }
    const after = await databaseSnapshot(h.db);
    for (const name of ['public.imports', 'public.uploaded_files']) {
      delete before[name];
      delete after[name];
    }
    expect(after).toEqual(before);
    expect((await h.db.pool.query('SELECT sum(delta)::int AS n FROM table_row_counts')).rows[0].n).toBe(
      count,
    );
    const staged = await h.db.pool.query(
      `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'import_staging'`,
    );
    expect(staged.rows[0].n).toBe(0);
  });
});

describe('a workbook that unpacks past the budget', () => {
  it('fails the import at the budget, writing nothing', async () => {
    await f.stopWorker();
    f.startWorker({ limits: { ...DEFAULT_READER_LIMITS, maxInflatedBytes: 1024 * 1024 } });
    try {
      // 100,000 rows of one repeated cell: a small zip whose sheet XML inflates to several MB.
      const book = await xlsx({ Bomb: Array.from({ length: 100_000 }, () => ['same', 'same']) });
      expect(book.length).toBeLessThan(1024 * 1024);
      const before = await databaseSnapshot(h.db);
      const s3Key = await f.upload('bomb.xlsx', book, XLSX);
      const status = await importFile({ s3Key, tableName: 'Bomb' });
      expect(status).toMatchObject({
        status: 'failed',
        errors: [{ message: expect.stringMatching(/unpacks to more than/) }],
      });
      const after = await databaseSnapshot(h.db);
      for (const name of ['public.imports', 'public.uploaded_files']) {
        delete before[name];
        delete after[name];
      }
      expect(after).toEqual(before);
    } finally {
      await f.stopWorker();
      f.startWorker();
    }
  });
});

/**
 * Storage whose first `stalls` reads never answer, as a run killed in the middle leaves its import
 * (claimed, running, never finished); the reads after them are the fixture's.
 */
function stallingStorage(stalls: number) {
  const stalled: ((error: Error) => void)[] = [];
  return {
    stalled,
    storage: {
      get(key: string): Promise<Readable> {
        if (stalled.length < stalls) return new Promise((_resolve, reject) => stalled.push(reject));
        return f.storage.get(key);
      },
    },
  };
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const importRow = async (id: string) =>
  (
    await h.db.pool.query<{ status: string; attempts: number }>(
      'SELECT status, attempts FROM imports WHERE id = $1',
      [id],
    )
  ).rows[0];

describe('an import that stops the worker', () => {
  const stoppedMessage =
    'the import stopped the worker 3 times (it ran out of memory or was killed); it is not tried again: split the file into smaller ones';

  it('ends failed at its fourth run instead of being taken up forever, writing nothing', async () => {
    await f.stopWorker();
    try {
      const s3Key = await f.upload('killer.csv', 'Name\nx\n');
      const before = await databaseSnapshot(h.db);
      const started = await start({ s3Key, tableName: 'Killer' });
      // Three runs take the import and die with it (as BullMQ's stalled jobs or the sweep would
      // start them again); the fourth would read the file.
      const { stalled, storage } = stallingStorage(3);
      const ctx = f.context({ storage });
      const dead: Promise<unknown>[] = [];
      for (let run = 1; run <= 3; run += 1) {
        dead.push(runImport(ctx, started.id));
        await until(async () => stalled.length === run, `run ${run} to read the file`);
      }
      expect(await runImport(ctx, started.id)).toBe('failed');
      const status = await f.finished(baseId, started.id);
      expect(status).toMatchObject({
        status: 'failed',
        rowsImported: 0,
        errors: [{ row: null, column: null, message: stoppedMessage }],
      });
      expect(await importRow(started.id)).toEqual({ status: 'failed', attempts: 3 });
      for (const reject of stalled) reject(new Error('the worker is gone'));
      await Promise.all(dead);
      expect((await importRow(started.id))?.status).toBe('failed');
      const after = await databaseSnapshot(h.db);
      for (const name of ['public.imports', 'public.uploaded_files']) {
        delete before[name];
        delete after[name];
      }
      expect(after).toEqual(before);
    } finally {
      f.startWorker();
    }
  });

  it("the worker's sweep of lost runs ends an import that used its runs failed", async () => {
    const s3Key = await f.upload('lost.csv', 'Name\nx\n');
    // What three killed runs leave when Redis lost the job too: running, under a run that reports
    // nothing any more, and known to PostgreSQL alone, so only the sweep takes it up.
    const { rows } = await h.db.pool.query<{ id: string }>(
      `INSERT INTO imports (id, database_id, s3_key, table_name, status, attempt, attempts, updated_at)
       VALUES (gen_random_uuid(), $1, $2, 'Lost', 'running', gen_random_uuid(), 3, now() - interval '1 hour')
       RETURNING id`,
      [baseId, s3Key],
    );
    const status = await f.finished(baseId, rows[0]?.id as string);
    expect(status).toMatchObject({ status: 'failed', tableId: null, errors: [{ message: stoppedMessage }] });
  });

  it('a worker shut down in the middle hands its import back, not counting that run', async () => {
    await f.stopWorker();
    const { stalled, storage } = stallingStorage(1);
    f.startWorker({ storage });
    const s3Key = await f.upload('handed-back.csv', 'Name\nx\n');
    const started = await start({ s3Key, tableName: 'Handed back' });
    await until(async () => stalled.length === 1, 'the run to read the file');
    expect(await importRow(started.id)).toEqual({ status: 'running', attempts: 1 });
    await f.stopWorker();
    expect(await importRow(started.id)).toEqual({ status: 'queued', attempts: 0 });
    // A worker takes it up once the closed worker's lock expires; cancelled here instead.
    await h.api
      .delete(url(`/imports/${started.id}`))
      .set('Authorization', auth)
      .expect(200);
    stalled[0]?.(new Error('the worker is gone'));
    f.startWorker();
  });
});

describe('an upload gone from storage', () => {
  it('fails the import saying so', async () => {
    const s3Key = await f.upload('gone.csv', 'A\n1\n');
    await f.storage.delete(s3Key);
    const status = await importFile({ s3Key, tableName: 'Gone' });
    expect(status).toMatchObject({
      status: 'failed',
      errors: [{ row: null, message: 'the uploaded file is gone' }],
    });
  });
});

describe('the API', () => {
  it('lists imports newest first and refuses what it cannot start', async () => {
    const listed = await h.api.get(url('/imports')).set('Authorization', auth).expect(200);
    expect(listed.body.imports.length).toBeGreaterThan(0);
    const times = listed.body.imports.map((item: { createdAt: string }) => item.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    await start({ s3Key: 'imports/00000000-0000-4000-8000-000000000000/none.csv' }, 404);
    const s3Key = await f.upload('x.csv', 'A\n1\n');
    expect((await start({ s3Key, sheet: 'One' }, 400)).error.message).toMatch(/sheet/);
    await start({ s3Key, tableId: 'Nothing' }, 404);
    await start({ s3Key, tableId: 'People', tableName: 'Both' }, 400);
    await h.api
      .get(url('/imports/00000000-0000-4000-8000-000000000000'))
      .set('Authorization', auth)
      .expect(404);
  });

  it("refuses another key's upload as unknown, and a new table without schema:write", async () => {
    const writer = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', auth)
      .send({ name: 'writer', scopes: ['records:write'] })
      .expect(201);
    const theirs = await f.upload('theirs.csv', 'A\n1\n');
    const mine = await f.upload('mine.csv', 'Name\nx\n', CSV, writer.body.id);
    const as = (body: object) =>
      h.api.post(url('/imports')).set('Authorization', h.bearer(writer.body.key)).send(body);
    expect((await as({ s3Key: theirs, tableId: 'People' })).status).toBe(404);
    expect((await as({ s3Key: mine })).status).toBe(403);
    const started = await as({ s3Key: mine, tableId: 'People' });
    expect(started.status).toBe(202);
    expect((await f.finished(baseId, started.body.id)).status).toBe('succeeded');
  });
});

describe("who sees an import's status", () => {
  const keyWith = async (name: string, scopes: string[]) =>
    (await h.api.post('/api/v1/api-keys').set('Authorization', auth).send({ name, scopes }).expect(201))
      .body as { id: string; key: string };

  it("a key without records:read sees only the imports it started; another key's is the same 404 as none", async () => {
    const starter = await keyWith('import starter', ['records:write']);
    const other = await keyWith('other writer', ['records:write']);
    const reader = await keyWith('reader and writer', ['records:write', 'records:read']);
    // The status of a cell that does not fit quotes the cell: record data.
    const s3Key = await f.upload('quoted.csv', 'Name,Age\nsecret,very private\n', CSV, starter.id);
    const started = await h.api
      .post(url('/imports'))
      .set('Authorization', h.bearer(starter.key))
      .send({ s3Key, tableId: 'People' })
      .expect(202);
    const id = started.body.id as string;
    const status = await f.finished(baseId, id);
    expect(status.errors).toEqual([
      { row: 2, column: 'Age', message: expect.stringContaining('very private') },
    ]);
    const as = (key: { key: string }) => ({
      get: (path: string) => h.api.get(url(path)).set('Authorization', h.bearer(key.key)),
      cancel: (path: string) => h.api.delete(url(path)).set('Authorization', h.bearer(key.key)),
    });
    const listed = async (key: { key: string }) =>
      ((await as(key).get('/imports').expect(200)).body.imports as { id: string }[]).map((item) => item.id);

    // Its own import, with the cells it quotes: the starter's own data.
    expect((await as(starter).get(`/imports/${id}`).expect(200)).body.errors).toEqual(status.errors);
    expect(await listed(starter)).toEqual([id]);
    // Another records:write key: not there, as an import that never was.
    const missing = '00000000-0000-4000-8000-000000000000';
    const none = await as(other).get(`/imports/${missing}`).expect(404);
    const theirs = await as(other).get(`/imports/${id}`).expect(404);
    expect(theirs.body).toEqual({
      error: { ...none.body.error, message: none.body.error.message.replace(missing, id) },
    });
    await as(other).cancel(`/imports/${id}`).expect(404);
    expect(await listed(other)).not.toContain(id);
    // A key that reads records reads the status of every import of the database.
    expect((await as(reader).get(`/imports/${id}`).expect(200)).body.errors).toEqual(status.errors);
    expect(await listed(reader)).toContain(id);
  });
});

describe('cancel', () => {
  it('a queued import never runs', async () => {
    await f.stopWorker();
    try {
      const s3Key = await f.upload('later.csv', 'A\n1\n');
      const started = await start({ s3Key, tableName: 'Never' });
      const cancelled = await h.api
        .delete(url(`/imports/${started.id}`))
        .set('Authorization', auth)
        .expect(200);
      expect(cancelled.body).toMatchObject({
        status: 'failed',
        errors: [{ row: null, column: null, message: 'Cancelled' }],
      });
      await h.api
        .delete(url(`/imports/${started.id}`))
        .set('Authorization', auth)
        .expect(400);
    } finally {
      f.startWorker();
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const tables = await h.api.get(url('/tables')).set('Authorization', auth).expect(200);
    expect(tables.body.tables.map((table: { name: string }) => table.name)).not.toContain('Never');
  });

  it('a running import stops and writes nothing', async () => {
    await f.stopWorker();
    f.startWorker({ progressEveryRows: 100 });
    const rows = Array.from({ length: 200_000 }, (_, index) => `row ${index},${index}`);
    const s3Key = await f.upload('big.csv', `Name,N\n${rows.join('\n')}\n`);
    const before = await databaseSnapshot(h.db);
    const started = await start({ s3Key, tableName: 'Cancelled big' });
    for (;;) {
      const res = await h.api
        .get(url(`/imports/${started.id}`))
        .set('Authorization', auth)
        .expect(200);
      if (res.body.status === 'running' && res.body.rowsTotal === null) break;
      if (res.body.status !== 'queued')
        throw new Error(`import went ${res.body.status} before it could be cancelled`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await h.api
      .delete(url(`/imports/${started.id}`))
      .set('Authorization', auth)
      .expect(200);
    const status = await f.finished(baseId, started.id);
    expect(status.status).toBe('failed');
    // Give the run time to notice, then nothing but the import's own row changed.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await databaseSnapshot(h.db);
    for (const name of ['public.imports', 'public.uploaded_files']) {
      delete before[name];
      delete after[name];
    }
    expect(after).toEqual(before);
    await f.stopWorker();
    f.startWorker();
  });
});

describe('hostile and broken files end in failed with a clear message, writing nothing', () => {
  const cases: [string, () => Promise<Buffer | string>, string, RegExp][] = [
    ['broken quoting', async () => 'A,B\n1,"unclosed\n2,3\n', CSV, /quot/i],
    [
      'binary junk named .csv',
      async () => Buffer.from([0x00, 0xff, 0xfe, 0x01, 0x02, 0x00, 0x9f]),
      CSV,
      /UTF-8|text/i,
    ],
    ['a 10 MB cell', async () => `A\n${'x'.repeat(10 * 1024 * 1024)}\n`, CSV, /characters/],
    [
      'a million columns',
      async () => `${Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(',')}\n`,
      CSV,
      /columns/,
    ],
    [
      'a zip that is not a workbook',
      async () => zip([{ name: 'hello.txt', data: 'hi' }]),
      XLSX,
      /workbook|Excel/i,
    ],
    [
      // A zip of some 20 KB that would put 400 million characters into staging.
      'one 100,000-character shared string in 4,000 cells',
      async () =>
        handmadeWorkbook(
          Array.from(
            { length: 1_000 },
            (_, index) => `<row r="${index + 1}">${'<c t="s"><v>0</v></c>'.repeat(4)}</row>`,
          ).join(''),
          `<si><t>${'y'.repeat(100_000)}</t></si>`,
        ),
      XLSX,
      /^row 168: the file's cells hold more than 67,108,864 characters, .*; split it into smaller files$/,
    ],
    [
      '3,000,000 empty shared strings',
      async () => handmadeWorkbook('<row r="1"><c><v>1</v></c></row>', '<si/>'.repeat(3_000_000)),
      XLSX,
      /^the workbook has more than 1,048,576 shared strings, .*; save it again in Excel/,
    ],
  ];

  it.each(cases)('%s', async (_name, content, mimeType, message) => {
    const before = await databaseSnapshot(h.db);
    const s3Key = await f.upload('hostile.bin', await content(), mimeType);
    const status = await importFile({ s3Key, tableName: 'Hostile' });
    expect(status.status).toBe('failed');
    expect(status.errors[0]?.message).toMatch(message);
    const after = await databaseSnapshot(h.db);
    for (const name of ['public.imports', 'public.uploaded_files']) {
      delete before[name];
      delete after[name];
    }
    expect(after).toEqual(before);
  });
});

describe('events', () => {
  it('records created by an import go to webhooks as record.created, source import, a batch of ids each', async () => {
    const rows = Array.from({ length: 2500 }, (_, index) => `p${index}`);
    const s3Key = await f.upload('events.csv', `Name\n${rows.join('\n')}\n`);
    const status = await importFile({ s3Key, tableName: 'Evented' });
    expect(status.status).toBe('succeeded');
    const { rows: events } = await h.db.pool.query<{
      type: string;
      source: string;
      data: { recordIds: string[] };
    }>(`SELECT type, source, data FROM outbox_events WHERE table_id = $1 ORDER BY seq`, [status.tableId]);
    const created = events.filter((event) => event.type === 'record.created');
    expect(created.map((event) => event.source)).toEqual(['import', 'import', 'import']);
    const ids = created.flatMap((event) => event.data.recordIds);
    const records = await h.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE table_id = $1 AND type = 'table.created'`,
      [status.tableId],
    );
    expect(records.rows[0]?.n).toBe(1);
    expect(new Set(ids).size).toBe(2500);
    // One revision per record, written with the events, by the key that started the import.
    const revisions = await h.db.pool.query<{ n: number; records: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT record_id)::int AS records FROM record_revisions WHERE table_id = $1`,
      [status.tableId],
    );
    expect(revisions.rows[0]).toEqual({ n: 2500, records: 2500 });
    const actors = await h.db.pool.query<{ actor: { id: string; name: string } }>(
      `SELECT DISTINCT actor::text::jsonb AS actor FROM outbox_events WHERE table_id = $1 AND type = 'record.created'`,
      [status.tableId],
    );
    expect(actors.rows.map((row) => row.actor)).toEqual([{ id: 'root', name: 'root' }]);
  });

  it('records imported into a table whose view a webhook watches carry their members of the view', async () => {
    const table = await h.api
      .post(url('/tables'))
      .set('Authorization', auth)
      .send({
        name: 'Watched',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Open' }, { name: 'Paid' }] },
          },
        ],
      });
    expect(table.status).toBe(201);
    const view = await h.api
      .post(url('/tables/Watched/views'))
      .set('Authorization', auth)
      .send({ name: 'Paid', filter: { field: 'Stage', equals: 'Paid' } });
    expect(view.status).toBe(201);
    const hook = await h.api
      .post(url('/webhooks'))
      .set('Authorization', auth)
      .send({
        url: 'https://hooks.example.com/i',
        events: ['record.created'],
        tableId: 'Watched',
        viewId: 'Paid',
      });
    expect(hook.status).toBe(201);
    const s3Key = await f.upload('watched.csv', 'Name,Stage\na,Open\nb,Paid\nc,Paid\n');
    const status = await importFile({ s3Key, tableId: 'Watched' });
    expect(status.status).toBe('succeeded');
    const records = await listAll(table.body.id);
    const paid = records.filter((record) => record.fields.Stage === 'Paid').map((record) => record.id);
    const { rows } = await h.db.pool.query<{ view_members: unknown }>(
      `SELECT view_members FROM outbox_events WHERE table_id = $1 AND type = 'record.created'`,
      [table.body.id],
    );
    expect(rows).toEqual([{ view_members: { [view.body.id]: { before: [], after: expect.any(Array) } } }]);
    expect(
      new Set((rows[0]!.view_members as Record<string, { after: string[] }>)[view.body.id]!.after),
    ).toEqual(new Set(paid));
  });
});
