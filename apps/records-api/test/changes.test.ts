import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { changeEventSchema } from '@recordbase/contracts/events';
import { pruneDispatchedEvents } from '@recordbase/db';
import { createBase, type Harness, startHarness } from './harness';

/**
 * The change feed (the contract's "Changes"): pages from a cursor in commit order with the bodies
 * webhooks receive, filters by table and type within what the key's scopes carry, `latest`,
 * expired and foreign cursors; and the SSE stream of the same events, caught up then live,
 * resumed from Last-Event-ID.
 */

let h: Harness;
let root: string;
let baseId: string;
let tasksId: string;
let notesId: string;
let server: Server;
let origin: string;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const feed = (query = '') => `/api/v1/bases/${baseId}/changes${query}`;

interface Change {
  id: string;
  type: string;
  timestamp: string;
  data: { tableId?: string; recordIds?: string[]; table?: { id: string } };
  metadata: { baseId: string; source: string };
}
interface Page {
  changes: Change[];
  cursor: string;
  hasMore: boolean;
}

async function read(query: string, key = root): Promise<Page> {
  const response = await h.api.get(feed(query)).set('Authorization', key);
  expect({ status: response.status, body: response.status === 200 ? 'ok' : response.body }).toEqual({
    status: 200,
    body: 'ok',
  });
  return response.body;
}

/** Every change after `cursor`, following the cursor `limit` at a time. */
async function readAll(cursor: string | undefined, limit: number, key = root, extra = ''): Promise<Page> {
  const changes: Change[] = [];
  let at = cursor;
  for (;;) {
    const page = await read(`?limit=${limit}${at ? `&cursor=${at}` : ''}${extra}`, key);
    changes.push(...page.changes);
    at = page.cursor;
    if (!page.hasMore) return { changes, cursor: at, hasMore: false };
  }
}

async function createRecords(table: string, names: string[]): Promise<string[]> {
  const response = await h.api
    .post(`/api/v1/bases/${baseId}/tables/${table}/records/bulk`)
    .set('Authorization', root)
    .send({ records: names.map((Name) => ({ Name })) })
    .expect(201);
  return response.body.records.map((record: { id: string }) => record.id);
}

async function keyWith(scopes: string[]): Promise<string> {
  const created = await h.api
    .post('/api/v1/api-keys')
    .set('Authorization', root)
    .send({ name: scopes.join(' '), scopes })
    .expect(201);
  return h.bearer(created.body.key);
}

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Feed',
    tables: [
      { name: 'Tasks', fields: [{ name: 'Name', type: 'single_line_text' }] },
      { name: 'Notes', fields: [{ name: 'Name', type: 'single_line_text' }] },
    ],
  });
  baseId = base.body.id;
  tasksId = base.body.tables[0].id;
  notesId = base.body.tables[1].id;
  server = createServer(h.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
});

describe('GET /changes', () => {
  test('gives every event once, in commit order, as webhooks receive them, page after page', async () => {
    const start = await read('?cursor=latest');
    expect(start.changes).toEqual([]);
    expect(start.hasMore).toBe(false);
    const written: string[] = [];
    for (let i = 0; i < 5; i++) written.push(...(await createRecords('Tasks', [`t${i}a`, `t${i}b`])));
    await h.api
      .patch(`/api/v1/bases/${baseId}/tables/Tasks/records/${written[0]}`)
      .set('Authorization', root)
      .send({ record: { Name: 'renamed' } })
      .expect(200);

    const followed = await readAll(start.cursor, 2);
    expect(followed.changes.map((change) => change.type)).toEqual([
      ...Array(5).fill('record.created'),
      'record.updated',
    ]);
    expect(followed.changes.slice(0, 5).flatMap((change) => change.data.recordIds)).toEqual(written);
    for (const change of followed.changes) {
      expect(changeEventSchema.parse(change)).toEqual(change);
      expect(change.metadata).toEqual({ baseId, source: 'public_api' });
    }
    // The body is the outbox's event as a delivery carries it: same id, same data.
    const stored = await h.db.pool.query<{ id: string; data: unknown }>(
      'SELECT id::text, data FROM outbox_events WHERE id = $1::uuid',
      [followed.changes[5]!.id.slice('evt_'.length)],
    );
    expect(followed.changes[5]!.data).toEqual(stored.rows[0]!.data);
    // Read to the end, the cursor stays put until something new commits, then goes on from there.
    expect((await read(`?cursor=${followed.cursor}`)).changes).toEqual([]);
    const [later] = await createRecords('Tasks', ['later']);
    const next = await read(`?cursor=${followed.cursor}`);
    expect(next.changes.map((change) => change.data.recordIds)).toEqual([[later]]);
  });

  test('starts at the oldest event kept without a cursor: the schema, then the records', async () => {
    const all = await readAll(undefined, 1000);
    expect(all.changes[0]!.type).toBe('table.created');
    expect(all.changes.filter((change) => change.type === 'table.created')).toHaveLength(2);
    expect(new Set(all.changes.map((change) => change.id)).size).toBe(all.changes.length);
  });

  test('filters by table (id or name) and by types', async () => {
    const start = (await read('?cursor=latest')).cursor;
    const [task] = await createRecords('Tasks', ['filtered']);
    const [note] = await createRecords('Notes', ['note']);
    await h.api
      .patch(`/api/v1/bases/${baseId}/tables/Notes/fields/Name`)
      .set('Authorization', root)
      .send({ name: 'Title' })
      .expect(200);
    const byId = await readAll(start, 10, root, `&tableId=${notesId}`);
    expect(byId.changes.map((change) => change.type)).toEqual(['record.created', 'field.updated']);
    expect(byId.changes[0]!.data.recordIds).toEqual([note]);
    const byName = await readAll(start, 10, root, '&tableId=Tasks');
    expect(byName.changes.map((change) => change.data.recordIds)).toEqual([[task]]);
    const byType = await readAll(start, 10, root, '&types=field.updated,table.deleted');
    expect(byType.changes.map((change) => [change.type, change.data.tableId])).toEqual([
      ['field.updated', notesId],
    ]);
    expect(tasksId).not.toBe(notesId);
  });

  test('gives a key only the events its scopes carry, and refuses types it may not read', async () => {
    const start = (await read('?cursor=latest')).cursor;
    await createRecords('Tasks', ['scoped']);
    await h.api
      .post(`/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .set('Authorization', root)
      .send({ name: 'Scoped', type: 'number' })
      .expect(201);
    const recordsOnly = await readAll(start, 10, await keyWith(['records:read']));
    expect(recordsOnly.changes.map((change) => change.type)).toEqual(['record.created']);
    const schemaKey = await keyWith(['schema:read']);
    const schemaOnly = await readAll(start, 10, schemaKey);
    expect(schemaOnly.changes.map((change) => change.type)).toEqual(['field.created']);
    const refused = await h.api.get(feed('?types=record.created')).set('Authorization', schemaKey);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(refused.body.error.message).toContain('records:read');
    const neither = await h.api.get(feed()).set('Authorization', await keyWith(['webhooks:manage']));
    expect([neither.status, neither.body.error.message]).toEqual([
      403,
      'This API key lacks the "records:read" scope or the "schema:read" scope',
    ]);
  });

  test('refuses a cursor it never handed out, an unknown type or table, and an out-of-range limit', async () => {
    const cases: [string, number, string][] = [
      ['?cursor=abc', 400, 'query.cursor: is not a change cursor'],
      ['?cursor=99999999999999-1', 400, 'query.cursor: is past the end of the feed'],
      ['?types=record.created,record.exploded', 400, '"record.exploded" is not an event type'],
      ['?tableId=Taks', 404, 'Table "Taks" not found (did you mean "Tasks"?)'],
      ['?limit=1001', 400, 'query.limit: must be an integer from 1 to 1000'],
      ['?limit=0', 400, 'query.limit: must be an integer from 1 to 1000'],
      ['?since=1', 400, 'since'],
    ];
    for (const [query, status, message] of cases) {
      const response = await h.api.get(feed(query)).set('Authorization', root);
      expect({ query, status: response.status, message: response.body.error?.message }).toEqual({
        query,
        status,
        message: expect.stringContaining(message),
      });
    }
  });

  test('answers 404 for a database that does not exist, whatever the cursor, and for its stream', async () => {
    const missing = '0b5e3a52-7c1d-4f0e-9a3b-2f6d8c4e1a90';
    for (const path of ['', '?cursor=latest', '?limit=5', '/stream', '/stream?cursor=latest']) {
      const response = await h.api.get(`/api/v1/bases/${missing}/changes${path}`).set('Authorization', root);
      expect({ path, status: response.status, message: response.body.error?.message }).toEqual({
        path,
        status: 404,
        message: `Database ${missing} not found`,
      });
    }
    const token = await h.api
      .post(`/api/v1/bases/${missing}/changes/stream-tokens`)
      .set('Authorization', root);
    expect(token.status).toBe(404);
  });

  test('answers 410 CURSOR_EXPIRED to a cursor before what retention deleted', async () => {
    const before = (await read('?cursor=latest')).cursor;
    await h.api
      .post(`/api/v1/bases/${baseId}/tables`)
      .set('Authorization', root)
      .send({ name: 'Short-lived', fields: [{ name: 'Name', type: 'single_line_text' }] })
      .expect(201);
    const [after] = (await readAll(before, 10)).changes;
    expect(after?.type).toBe('table.created');
    await h.db.pool.query('UPDATE outbox_events SET dispatched_at = now() WHERE id = $1::uuid', [
      after!.id.slice('evt_'.length),
    ]);
    expect(await pruneDispatchedEvents(h.db.pool, 0, 100_000)).toBeGreaterThanOrEqual(1);
    const response = await h.api.get(feed(`?cursor=${before}`)).set('Authorization', root);
    expect([response.status, response.body.error.code]).toEqual([410, 'CURSOR_EXPIRED']);
    expect(response.body.error.message).toContain('CHANGES_RETENTION');
    // Without a cursor, the feed now starts after what was deleted.
    const rest = await readAll(undefined, 1000);
    expect(rest.changes.map((change) => change.id)).not.toContain(after!.id);
  });
});

/** The frames of an SSE stream as they arrive. */
async function* frames(response: Response): AsyncGenerator<{ id?: string; event?: string; data?: string }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const frame: Record<string, string> = {};
      for (const line of buffered.slice(0, end).split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        frame[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      buffered = buffered.slice(end + 2);
      if (frame.data !== undefined) yield frame;
      end = buffered.indexOf('\n\n');
    }
  }
}

async function take(
  stream: AsyncGenerator<{ id?: string; event?: string; data?: string }>,
  count: number,
): Promise<{ id: string; event: string; change: Change }[]> {
  const taken = [];
  while (taken.length < count) {
    const { value, done } = await stream.next();
    if (done) throw new Error(`the stream ended after ${taken.length} events`);
    taken.push({ id: value.id!, event: value.event!, change: JSON.parse(value.data!) as Change });
  }
  return taken;
}

describe('GET /changes/stream', () => {
  const open = (query: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${origin}${feed(`/stream${query}`)}`, {
      headers: { Authorization: root, Accept: 'text/event-stream', ...headers },
      ...(signal ? { signal } : {}),
    });

  test('catches up from a cursor, then sends each event as it commits; Last-Event-ID resumes', async () => {
    const start = (await read('?cursor=latest')).cursor;
    const earlier = await createRecords('Tasks', ['before the stream']);
    const abort = new AbortController();
    // `limit` as on the feed: it bounds a catch-up read, and the stream goes on past it.
    const response = await open(`?cursor=${start}&types=record.created&limit=1`, {}, abort.signal);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const stream = frames(response);
    const [caughtUp] = await take(stream, 1);
    expect(caughtUp!.change.data.recordIds).toEqual(earlier);
    expect(caughtUp!.event).toBe('record.created');
    const live: string[] = [];
    for (let i = 0; i < 3; i++) live.push(...(await createRecords('Tasks', [`live ${i}`])));
    const received = await take(stream, 3);
    expect(received.map((frame) => frame.change.data.recordIds![0])).toEqual(live);
    // Each id is the cursor after its event: the feed read from it goes on after that event.
    const fromId = await read(`?cursor=${received[0]!.id}&types=record.created`);
    expect(fromId.changes.map((change) => change.data.recordIds![0])).toEqual(live.slice(1));
    abort.abort();

    const resumed = new AbortController();
    const again = await open(
      `?cursor=${start}&types=record.created`,
      { 'Last-Event-ID': received[1]!.id },
      resumed.signal,
    );
    const [next] = await take(frames(again), 1);
    expect(next!.change.data.recordIds).toEqual([live[2]]);
    resumed.abort();
  });

  test('refuses before streaming: a cursor past the end, a bad Last-Event-ID, a key without the scope', async () => {
    const badId = await open('', { 'Last-Event-ID': 'not-a-cursor' });
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { error: { message: string } }).error.message).toContain('Last-Event-ID');
    const ahead = await open('?cursor=99999999999999-1');
    expect(ahead.status).toBe(400);
    const key = await keyWith(['webhooks:manage']);
    const refused = await fetch(`${origin}${feed('/stream')}`, { headers: { Authorization: key } });
    expect(refused.status).toBe(403);
  });

  test('opens to a stream token without an Authorization header, for its database and key only', async () => {
    const readerKey = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'stream reader', scopes: ['records:read'] })
      .expect(201);
    const reader = h.bearer(readerKey.body.key);
    const issued = await h.api.post(feed('/stream-tokens')).set('Authorization', reader);
    expect(issued.status).toBe(201);
    expect(Date.parse(issued.body.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    const start = (await read('?cursor=latest')).cursor;
    const abort = new AbortController();
    const response = await fetch(`${origin}${feed(`/stream?cursor=${start}&token=${issued.body.token}`)}`, {
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    const stream = frames(response);
    const [created] = await createRecords('Tasks', ['by token']);
    // The key reads record events only: a field added meanwhile is not sent.
    await h.api
      .post(`/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .set('Authorization', root)
      .send({ name: 'Unseen', type: 'number' })
      .expect(201);
    const [second] = await createRecords('Tasks', ['after the field']);
    const received = await take(stream, 2);
    expect(received.map((frame) => [frame.event, frame.change.data.recordIds![0]])).toEqual([
      ['record.created', created],
      ['record.created', second],
    ]);
    abort.abort();

    const other = await createBase(h, { name: 'Other feed' });
    const refusals: [string, string][] = [
      [`/api/v1/bases/${other.body.id}/changes/stream?token=${issued.body.token}`, 'another database'],
      [`${feed('/stream')}?token=${issued.body.token.slice(0, -2)}xx`, 'not valid'],
      // A token opens the stream only: no other route takes it.
      [`${feed()}?token=${issued.body.token}`, 'Authorization'],
    ];
    for (const [path, message] of refusals) {
      const refused = await fetch(`${origin}${path}`);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect({ path, status: refused.status, code: body.error.code }).toEqual({
        path,
        status: 401,
        code: 'UNAUTHORIZED',
      });
      expect(body.error.message).toContain(message);
    }
    // A revoked key's tokens open nothing from then on.
    await h.api.delete(`/api/v1/api-keys/${readerKey.body.id}`).set('Authorization', root).expect(200);
    const revoked = await fetch(`${origin}${feed(`/stream?token=${issued.body.token}`)}`);
    expect(revoked.status).toBe(401);
    // A key that may read no event gets no token.
    const refusedToken = await h.api
      .post(feed('/stream-tokens'))
      .set('Authorization', await keyWith(['webhooks:manage']));
    expect(refusedToken.status).toBe(403);
  });

  test("holds a place among the key's streams, not among its requests in flight", async () => {
    const bounded = await startHarness({
      sameDatabaseAs: h,
      changeStreamsPerKey: 2,
      requestsInFlightPerKey: 1,
    });
    const boundedServer = createServer(bounded.app);
    await new Promise<void>((resolve) => boundedServer.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(boundedServer.address() as AddressInfo).port}${feed('/stream?cursor=latest')}`;
    const aborts = [new AbortController(), new AbortController()];
    try {
      const key = await keyWith(['records:read']);
      for (const abort of aborts) {
        const opened = await fetch(at, { headers: { Authorization: key }, signal: abort.signal });
        expect(opened.status).toBe(200);
      }
      // Two streams open, one request in flight allowed: a request still goes through.
      const listed = await bounded.api.get(feed('?cursor=latest')).set('Authorization', key);
      expect(listed.status).toBe(200);
      const third = await fetch(at, { headers: { Authorization: key } });
      expect(third.status).toBe(429);
      expect(((await third.json()) as { error: { message: string } }).error.message).toContain(
        'change streams of this API key',
      );
      // A stream closed gives its place back.
      aborts[0]!.abort();
      let reopened = 0;
      for (let attempt = 0; attempt < 50 && reopened !== 200; attempt += 1) {
        await sleep(20);
        const again = await fetch(at, { headers: { Authorization: key }, signal: aborts[1]!.signal }).catch(
          () => null,
        );
        reopened = again?.status ?? 0;
        if (again && again.status !== 200) await again.body?.cancel();
      }
      expect(reopened).toBe(200);
    } finally {
      for (const abort of aborts) abort.abort();
      boundedServer.closeAllConnections();
      await new Promise((resolve) => boundedServer.close(resolve));
      await bounded.close();
    }
  });
});
