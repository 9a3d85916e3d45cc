import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { TableRecord } from '@recordbase/contracts/records';
import { withLiterals } from '@recordbase/domain/records/export/export-records';
import { readCsv, readXlsx } from '@recordbase/import-worker/readers';
import ExcelJS from 'exceljs';
import express from 'express';
import { sendExport } from '../src/http/record-export';
import { baseClient, type FieldBody } from './base-client';
import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

/**
 * POST …/records/export: every record a list of the same body answers, in its order, as CSV,
 * XLSX or NDJSON, streamed from a cursor; refusals before the first byte; a client that leaves
 * takes nothing with it in PostgreSQL.
 */

let h: Harness;
let root: string;
let baseId: string;
let things: { id: string; fields: FieldBody[] };
let server: http.Server;
let port: number;

const { url, newTable, addField, list } = baseClient(
  () => h,
  () => baseId,
  () => root,
);

const file = (name: string) => ({
  url: `https://cdn.example.com/${name}.pdf`,
  fileName: `${name}.pdf`,
  size: 10,
  mimeType: 'application/pdf',
});

/** Sends an export; the answer's bytes whole. */
async function exportOf(tableId: string, body: object, auth = root, via = h) {
  const res = await via.api
    .post(url(`/tables/${tableId}/records/export`))
    .set('Authorization', auth)
    .send(body)
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
  return { status: res.status, headers: res.headers, bytes: res.body as Buffer };
}

const ndjsonOf = (bytes: Buffer) =>
  bytes
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TableRecord);

/** A text as the CSV writes it: a leading formula character guarded with `'`. */
const csvGuarded = (text: string) => (/^[-=+@\t\r]/.test(text) ? `'${text}` : text);

async function csvRows(bytes: Buffer): Promise<string[][]> {
  const rows: string[][] = [];
  for await (const row of readCsv(Readable.from([bytes]))) rows.push(row.cells);
  return rows;
}

beforeAll(async () => {
  h = await startHarness({ dbConnectionsPerKey: 2 });
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Export',
    tables: [
      {
        name: 'Targets',
        fields: [
          { name: 'Label', type: 'single_line_text' },
          { name: 'Score', type: 'number' },
        ],
      },
    ],
  });
  baseId = base.body.id;
  const targets = base.body.tables[0] as { id: string };
  const targetIds: string[] = [];
  for (const [Label, Score] of [
    ['north', 3],
    ['=south', 5],
  ] as const) {
    const res = await h.api
      .post(url(`/tables/${targets.id}/records`))
      .set('Authorization', root)
      .send({ record: { Label, Score } });
    targetIds.push(res.body.id);
  }
  things = await newTable('Things', [
    { name: 'Title', type: 'single_line_text' },
    { name: 'Notes', type: 'long_text' },
    { name: 'Email', type: 'email' },
    { name: 'Site', type: 'url' },
    { name: 'Phone', type: 'phone_number' },
    { name: 'Amount', type: 'number', template: { decimalPlaces: 2 } },
    { name: 'Price', type: 'currency' },
    { name: 'Share', type: 'percent' },
    { name: 'Stars', type: 'rating', template: { max: 5 } },
    { name: 'Took', type: 'duration' },
    { name: 'Day', type: 'date' },
    { name: 'At', type: 'datetime' },
    { name: 'Stage', type: 'single_select', template: { options: [{ name: 'Open' }, { name: '-Void' }] } },
    { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'x' }, { name: 'y' }] } },
    { name: 'Done', type: 'checkbox' },
    { name: 'Files', type: 'attachments' },
    { name: 'Targets', type: 'linked_record', template: { tableId: 'Targets' } },
    { name: 'Twice', type: 'formula', template: { expression: '{Amount} * 2' } },
    { name: 'Shout', type: 'formula', template: { expression: 'UPPER({Title})' } },
    { name: 'Seq', type: 'autonumber' },
    { name: 'Creator', type: 'created_by' },
  ]);
  for (const field of [
    { name: 'Linked', type: 'count', template: { linkFieldId: 'Targets' } },
    { name: 'Labels', type: 'lookup', template: { linkFieldId: 'Targets', fieldId: 'Label' } },
  ]) {
    const res = await addField(things.id, field);
    expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
    things.fields.push(res.body as FieldBody);
  }
  const records = [
    {
      Title: 'alpha, "the first"',
      Notes: 'line one\nline two',
      Email: 'a@example.com',
      Site: 'https://example.com/a',
      Phone: '+1 555 0100',
      Amount: 1.25,
      Price: 10.5,
      Share: 0.25,
      Stars: 3,
      Took: 90,
      Day: '2026-01-31',
      At: '2026-01-31T10:15:00.250Z',
      Stage: '-Void',
      Tags: ['y', 'x'],
      Done: true,
      Files: [file('a'), file('b')],
      Targets: [targetIds[1], targetIds[0]],
    },
    { Title: '=HYPERLINK("http://evil")', Amount: -7.5, Done: false, Tags: [], Targets: [] },
    { Title: '@SUM(A1)', Notes: '\tindented', Amount: 100000000000000000000000, Day: '1899-12-31' },
    { Title: 'Zoë', Amount: 0.1, Stage: 'Open', Targets: [targetIds[0]] },
  ];
  const res = await h.api
    .post(url(`/tables/${things.id}/records/bulk`))
    .set('Authorization', root)
    .send({ records });
  expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
  server = http.createServer(h.app).listen(0);
  port = (server.address() as AddressInfo).port;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
});

describe('CSV', () => {
  it('writes every field type as the contract says, quoted and guarded', async () => {
    const res = await exportOf(things.id, { format: 'csv', sort: [{ field: 'Seq', direction: 'asc' }] });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Things.csv"');
    expect(res.headers['x-accel-buffering']).toBe('no');
    expect(res.headers['content-length']).toBeUndefined();
    // Lines end in LF, as PostgreSQL's COPY writes them; a field is quoted when it holds a quote,
    // a comma or a line break (the first record's Notes), a guarded one only then too.
    expect(res.bytes.toString('utf8')).toBe(
      [
        'Title,Notes,Email,Site,Phone,Amount,Price,Share,Stars,Took,Day,At,Stage,Tags,Done,Files,Targets,Twice,Shout,Seq,Creator,Linked,Labels',
        '"alpha, ""the first""","line one\nline two",a@example.com,https://example.com/a,\'+1 555 0100,1.25,10.5,0.25,3,90,2026-01-31,2026-01-31T10:15:00.250Z,\'-Void,"y, x",true,"https://cdn.example.com/a.pdf, https://cdn.example.com/b.pdf","\'=south, north",2.5,"ALPHA, ""THE FIRST""",1,root,2,"\'=south, north"',
        `"'=HYPERLINK(""http://evil"")",,,,,-7.5,,,,,,,,,false,,,-15,"'=HYPERLINK(""HTTP://EVIL"")",2,root,0,`,
        // 1e23 to 2 decimal places is the double next below it: numbers come in their shortest form.
        `'@SUM(A1),'\tindented,,,,9.999999999999999e+22,,,,,1899-12-31,,,,false,,,1.9999999999999998e+23,'@SUM(A1),3,root,0,`,
        'Zoë,,,,,0.1,,,,,,,Open,,false,,north,0.2,ZOË,4,root,1,north',
        '',
      ].join('\n'),
    );
  });

  it('reads back through the import reader as the values the list answers', async () => {
    const res = await exportOf(things.id, { format: 'csv', fields: ['Title', 'Amount', 'Day'] });
    const rows = await csvRows(res.bytes);
    const listed = await list(things.id, { fields: ['Title', 'Amount', 'Day'] });
    expect(rows[0]).toEqual(['Title', 'Amount', 'Day']);
    expect(rows.slice(1).map((row) => [Number(row[1] || Number.NaN), row[2] || null])).toEqual(
      listed.map((record) => [record.fields.Amount ?? Number.NaN, record.fields.Day ?? null]),
    );
  });

  it("writes dates as the API does whatever the server's DateStyle", async () => {
    // Date cells are the date column's own text, which DateStyle shapes: the export fixes it.
    const database = (await h.db.pool.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
    await h.db.pool.query(`ALTER DATABASE "${database}" SET DateStyle = 'SQL, DMY'`);
    const other = await startHarness({ sameDatabaseAs: h });
    try {
      expect((await other.db.pool.query<{ DateStyle: string }>('SHOW DateStyle')).rows[0]!.DateStyle).toBe(
        'SQL, DMY',
      );
      const body = { format: 'csv', fields: ['Day'], sort: [{ field: 'Seq', direction: 'asc' }] };
      const res = await exportOf(things.id, body, root, other);
      expect(res.bytes.toString('utf8')).toBe('Day\n2026-01-31\n\n1899-12-31\n\n');
    } finally {
      await other.close();
      await h.db.pool.query(`ALTER DATABASE "${database}" RESET DateStyle`);
    }
  });

  it('quotes a semicolon in the header, which the import would otherwise take for the delimiter', async () => {
    const table = await newTable('Semicolons', [{ name: 'a;b', type: 'single_line_text' }]);
    await h.api
      .post(url(`/tables/${table.id}/records`))
      .set('Authorization', root)
      .send({ record: { 'a;b': 'c;d' } })
      .expect(201);
    const res = await exportOf(table.id, { format: 'csv' });
    expect(res.bytes.toString('utf8')).toBe('"a;b"\nc;d\n');
    expect(await csvRows(res.bytes)).toEqual([['a;b'], ['c;d']]);
  });

  it('names the file by the table, with an ASCII fallback for other names', async () => {
    const table = await newTable('Café "Ümlaut"', [{ name: 'Name', type: 'single_line_text' }]);
    const res = await exportOf(table.id, { format: 'csv' });
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Caf_ __mlaut_.csv"; filename*=UTF-8''Caf%C3%A9%20%22%C3%9Cmlaut%22.csv`,
    );
    expect(res.bytes.toString('utf8')).toBe('Name\n');
  });
});

describe('NDJSON', () => {
  const bodies: [string, object][] = [
    ['no body', {}],
    [
      'a filter and a sort',
      { filter: { field: 'Amount', greater_than: 0 }, sort: [{ field: 'Title', direction: 'desc' }] },
    ],
    ['a projection and a search', { fields: ['Title', 'Targets'], search: 'a' }],
  ];
  it.each(bodies)('answers the records and order of a list with %s', async (_name, body) => {
    const res = await exportOf(things.id, { format: 'ndjson', ...body });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(ndjsonOf(res.bytes)).toEqual(await list(things.id, body));
  });

  it('applies a saved view as the list does', async () => {
    const view = await h.api
      .post(url(`/tables/${things.id}/views`))
      .set('Authorization', root)
      .send({
        name: 'Positive',
        filter: { field: 'Amount', greater_than: 0 },
        sort: [{ field: 'Amount', direction: 'desc' }],
        fields: ['Title', 'Amount'],
      });
    expect(view.status).toBe(201);
    const body = { view: 'Positive', search: 'a' };
    const res = await exportOf(things.id, { format: 'ndjson', ...body });
    const listed = await list(things.id, body);
    expect(listed.length).toBeGreaterThan(0);
    expect(ndjsonOf(res.bytes)).toEqual(listed);
    const csv = await exportOf(things.id, { format: 'csv', ...body });
    expect(csv.bytes.toString('utf8').split('\n')[0]).toBe('Title,Amount');
  });
});

describe('XLSX', () => {
  it('is one sheet of typed cells that exceljs and the import reader read', async () => {
    const res = await exportOf(things.id, { format: 'xlsx', sort: [{ field: 'Seq', direction: 'asc' }] });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(res.headers['content-disposition']).toBe('attachment; filename="Things.xlsx"');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.bytes as unknown as ArrayBuffer);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Things']);
    const sheet = workbook.worksheets[0]!;
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    expect(header).toEqual(things.fields.map((field) => field.name));
    const cell = (row: number, name: string) => sheet.getRow(row).getCell(header.indexOf(name) + 1).value;
    expect(cell(2, 'Title')).toBe('alpha, "the first"');
    expect(cell(2, 'Amount')).toBe(1.25);
    expect(cell(2, 'Done')).toBe(true);
    expect(cell(3, 'Done')).toBe(false);
    expect(cell(2, 'Day')).toEqual(new Date('2026-01-31T00:00:00.000Z'));
    expect((cell(2, 'At') as Date).toISOString()).toBe('2026-01-31T10:15:00.250Z');
    expect(cell(2, 'Tags')).toBe('y, x');
    expect(cell(2, 'Targets')).toBe('=south, north');
    expect(cell(2, 'Creator')).toBe('root');
    expect(cell(3, 'Title')).toBe('=HYPERLINK("http://evil")');
    // Before 1900 Excel has no dates: the text stands.
    expect(cell(4, 'Day')).toBe('1899-12-31');
    expect(cell(3, 'Notes')).toBeNull();

    const rows: string[][] = [];
    for await (const row of readXlsx(Readable.from([res.bytes]))) rows.push(row.cells);
    expect(rows[0]).toEqual(things.fields.map((field) => field.name));
    expect(rows[1]!.slice(0, 16)).toEqual([
      'alpha, "the first"',
      'line one\nline two',
      'a@example.com',
      'https://example.com/a',
      '+1 555 0100',
      '1.25',
      '10.5',
      '0.25',
      '3',
      '90',
      '2026-01-31',
      '2026-01-31T10:15:00.250Z',
      '-Void',
      'y, x',
      'true',
      'https://cdn.example.com/a.pdf, https://cdn.example.com/b.pdf',
    ]);
    expect(rows).toHaveLength(5);
  });

  it('keeps control characters, carriage returns, _xHHHH_ look-alikes and empty records for readers', async () => {
    const table = await newTable('Escapes', [{ name: 'Text', type: 'long_text' }]);
    const values = ['a\u0001b\u001f', 'x\r\ny\rz', '_x0041_ and _x005F_', null, 'last'];
    const res = await h.api
      .post(url(`/tables/${table.id}/records/bulk`))
      .set('Authorization', root)
      .send({ records: values.map((Text) => ({ Text })) });
    expect(res.status).toBe(201);
    const rows: string[][] = [];
    for await (const row of readXlsx(Readable.from([(await exportOf(table.id, { format: 'xlsx' })).bytes])))
      rows.push(row.cells);
    // Before: U+FFFD for the controls, LF for CR, "A" for _x0041_, and the empty record dropped.
    expect(rows).toEqual([['Text'], ...values.map((value) => [value ?? ''])]);
  });

  it("names the sheet within Excel's rules", async () => {
    const table = await newTable('Q1/Q2: [plan]? a very long name indeed', [{ name: 'N', type: 'number' }]);
    const res = await exportOf(table.id, { format: 'xlsx' });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.bytes as unknown as ArrayBuffer);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Q1_Q2_ _plan__ a very long name']);
  });
});

describe('refusals', () => {
  it.each([
    ['an unknown field', { format: 'csv', fields: ['Nope'] }, 'body.fields[0]'],
    ['a bad format', { format: 'pdf' }, 'body.format'],
    ['an unknown view', { format: 'csv', view: 'Nope' }, 'body.view'],
    ['a list-only key', { format: 'csv', limit: 5 }, 'limit'],
  ])('answers 400 for %s before any byte of a file', async (_name, body, where) => {
    const res = await h.api
      .post(url(`/tables/${things.id}/records/export`))
      .set('Authorization', root)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.body.error.message).toContain(where);
  });

  it('needs records:read', async () => {
    const created = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'schema only', scopes: ['schema:read'] });
    expect(created.status).toBe(201);
    const res = await h.api
      .post(url(`/tables/${things.id}/records/export`))
      .set('Authorization', h.bearer(created.body.key))
      .send({ format: 'csv' });
    expect([res.status, res.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    expect(res.body.error.message).toContain('records:read');
  });
});

describe('CSV through COPY, whose statement takes no parameters', () => {
  it('inlines every parameter as the literal PostgreSQL reads as the same value', async () => {
    const values = [
      'it\'s \\ a "quote" $1 $10',
      ['a', 'b"c', 'd\\e', null, "f'g", ''],
      -1.5e-7,
      true,
      '{"k": ["v\'"]}',
      null,
    ];
    const typed = '$1::text, $2::text[], $3::float8, $4::boolean, $5::jsonb, $6::text';
    const sent = await h.db.pool.query({ text: `SELECT ${typed}`, values, rowMode: 'array' });
    const inlined = await h.db.pool.query({
      text: `SELECT ${withLiterals(typed, values)}`,
      rowMode: 'array',
    });
    expect(inlined.rows).toEqual(sent.rows);
  });

  it('exports what the list answers for a filter of hostile text', async () => {
    const body = {
      filter: {
        or: [
          { field: 'Title', in: ['alpha, "the first"', "o'neil \\ $1"] },
          { field: 'Title', starts_with: '=' },
          { field: 'Title', contains: '%_' },
        ],
      },
      fields: ['Title'],
    };
    const listed = await list(things.id, body);
    const res = await exportOf(things.id, { format: 'csv', ...body });
    expect(res.status).toBe(200);
    const rows = await csvRows(res.bytes);
    expect(rows.slice(1).map((row) => row[0])).toEqual(
      listed.map((record) => csvGuarded(String(record.fields.Title))),
    );
    expect(rows.length).toBeGreaterThan(1);
  });
});

describe('a large table', () => {
  const COUNT = 12_000;
  let bulk: { id: string; fields: FieldBody[] };

  beforeAll(async () => {
    bulk = await newTable('Bulk', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'N', type: 'number' },
    ]);
    const [name, n] = bulk.fields.map((field) => field.id);
    // Straight into the table: 12,000 records through the API would take most of the test's time.
    await h.db.pool.query(
      `INSERT INTO "${schemaNameOf(baseId)}"."${bulk.id}" (id, "${name}", "${n}")
       SELECT gen_random_uuid(), 'row ' || g, g FROM generate_series(1, ${COUNT}) g`,
    );
  });

  it('arrives whole and in order, past many batches', async () => {
    const res = await exportOf(bulk.id, { format: 'csv', sort: [{ field: 'N', direction: 'desc' }] });
    expect(res.status).toBe(200);
    const lines = res.bytes.toString('utf8').split('\n');
    expect(lines).toHaveLength(COUNT + 2);
    expect(lines[0]).toBe('Name,N');
    expect(lines.slice(1, -1)).toEqual(
      Array.from({ length: COUNT }, (_, i) => `row ${COUNT - i},${COUNT - i}`),
    );
    const ndjson = await exportOf(bulk.id, { format: 'ndjson', filter: { field: 'N', less_than: 5001 } });
    const ids = ndjsonOf(ndjson.bytes).map((record) => record.id);
    expect(ids).toHaveLength(5000);
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.api
        .post(url(`/tables/${bulk.id}/records/list`))
        .set('Authorization', root)
        .send({ limit: 1000, filter: { field: 'N', less_than: 5001 }, ...(cursor ? { cursor } : {}) });
      listed.push(...page.body.records.map((record: TableRecord) => record.id));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(ids).toEqual(listed);
  });

  it('leaves nothing in PostgreSQL when the client leaves mid-stream', async () => {
    const received = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: url(`/tables/${bulk.id}/records/export`),
          headers: { authorization: root, 'content-type': 'application/json' },
        },
        (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            // One batch in, the client goes away.
            if (bytes > 1000) {
              req.destroy();
              resolve(bytes);
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', () => {});
      req.on('close', () => resolve(0));
      req.setTimeout(10_000, () => reject(new Error('no answer')));
      req.end(JSON.stringify({ format: 'ndjson' }));
    });
    expect(received).toBeGreaterThan(1000);
    const database = (await h.db.pool.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
    const leftovers = async () =>
      (
        await h.db.pool.query<{ state: string; query: string }>(
          `SELECT state, query FROM pg_stat_activity
            WHERE datname = $1 AND pid <> pg_backend_pid()
              AND (state LIKE 'idle in transaction%' OR query ILIKE '%rb_export%')`,
          [database],
        )
      ).rows;
    const deadline = Date.now() + 5000;
    while ((await leftovers()).length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(await leftovers()).toEqual([]);
    // The key's connections are free again: two exports at once (its whole share) both complete.
    const both = await Promise.all([
      exportOf(bulk.id, { format: 'csv', fields: ['N'] }),
      exportOf(bulk.id, { format: 'csv', fields: ['N'] }),
    ]);
    expect(both.map((res) => [res.status, res.bytes.toString('utf8').split('\n').length])).toEqual([
      [200, COUNT + 2],
      [200, COUNT + 2],
    ]);
  });
});

describe('a failure once the file has started', () => {
  it('cuts the transfer short and logs it, instead of ending a file that looks complete', async () => {
    const logged: unknown[] = [];
    const logger = { error: (context: unknown) => logged.push(context) } as unknown as Parameters<
      typeof sendExport
    >[2];
    let closed = 0;
    const app = express();
    app.post('/export', (_req, res) => {
      void sendExport(
        res,
        {
          table: { id: 'tblFailing', name: 'Failing' },
          format: 'csv',
          async *chunks() {
            yield 'Name\r\nfirst\r\n';
            throw new Error('the cursor failed');
          },
          close: async () => {
            closed += 1;
          },
        },
        logger,
      );
    });
    const failing = app.listen(0);
    try {
      const outcome = await new Promise<{ status: number; body: string; complete: boolean }>((resolve) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: (failing.address() as AddressInfo).port,
            method: 'POST',
            path: '/export',
          },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => {
              body += chunk.toString('utf8');
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body, complete: res.complete }));
            res.on('error', () => {});
            res.on('close', () => resolve({ status: res.statusCode ?? 0, body, complete: res.complete }));
          },
        );
        // The cut may come before the headers leave the socket: the request fails then.
        req.on('error', () => resolve({ status: 0, body: '', complete: false }));
        req.end();
      });
      expect(outcome.complete).toBe(false);
      expect([0, 200]).toContain(outcome.status);
      expect(logged).toEqual([expect.objectContaining({ tableId: 'tblFailing', format: 'csv' })]);
      expect(closed).toBe(1);
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  });
});
