import {
  type ChangeEvent,
  type Database,
  isRecordbaseError,
  type RecordbaseClient,
  type StreamedChange,
} from '../src/index';
import { type Services, startServices } from './services';

/** The change feed through the client, against records-api running as a process. */

let services: Services;
let client: RecordbaseClient;
let base: Database;

beforeAll(async () => {
  services = await startServices();
  client = services.client();
  base = await client.bases.create({
    name: 'Feed',
    tables: [{ name: 'Tasks', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
}, 120_000);
afterAll(async () => {
  await services?.stop();
});

type ListFilter = Parameters<RecordbaseClient['changes']['list']>[1];

/**
 * Follows the cursor from `cursor`, `limit` at a time, until `count` events came: an event is
 * handed out once every older transaction of the PostgreSQL server has ended, so one of another
 * test's may hold it back for a moment.
 */
async function follow(
  cursor: string,
  count: number,
  filter: ListFilter = {},
): Promise<{ changes: ChangeEvent[]; cursor: string; pages: number }> {
  const changes: ChangeEvent[] = [];
  let at = cursor;
  let pages = 0;
  const deadline = Date.now() + 15_000;
  while (changes.length < count && Date.now() < deadline) {
    const page = await client.changes.list(base.id, { ...filter, cursor: at, limit: 2 });
    pages += 1;
    changes.push(...page.changes);
    at = page.cursor;
    if (!page.hasMore && changes.length < count) await new Promise((done) => setTimeout(done, 50));
  }
  return { changes, cursor: at, pages };
}

const recordIdsOf = (event: ChangeEvent) => ('recordIds' in event.data ? event.data.recordIds : []);

it('follows the cursor through changes.list: every write once, in commit order, as webhooks receive it', async () => {
  const start = await client.changes.list(base.id, { cursor: 'latest' });
  expect(start).toEqual({ changes: [], cursor: expect.stringMatching(/^\d+-\d+$/), hasMore: false });

  const one = await client.records.create(base.id, 'Tasks', { Name: 'one' });
  const many = await client.records.createMany(base.id, 'Tasks', [{ Name: 'two' }, { Name: 'three' }]);
  await client.records.update(base.id, 'Tasks', one.id, { Name: 'one!' });
  await client.records.delete(base.id, 'Tasks', many.records[0]!.id);
  const done = await client.fields.create(base.id, 'Tasks', { name: 'Done', type: 'checkbox' });

  const followed = await follow(start.cursor, 5);
  expect(followed.pages).toBeGreaterThanOrEqual(3);
  expect(followed.changes.map((event) => [event.type, recordIdsOf(event)])).toEqual([
    ['record.created', [one.id]],
    ['record.created', many.records.map((record) => record.id)],
    ['record.updated', [one.id]],
    ['record.deleted', [many.records[0]!.id]],
    ['field.created', []],
  ]);
  const [created, , updated, , field] = followed.changes as ChangeEvent[];
  expect(created).toMatchObject({
    id: expect.stringMatching(/^evt_/),
    metadata: { baseId: base.id, source: 'public_api' },
    data: { tableId: base.tables[0]!.id, records: [one] },
  });
  const name = base.tables[0]!.fields.find((candidate) => candidate.name === 'Name')!.id;
  expect(updated!.type === 'record.updated' && updated!.data.changes).toEqual([
    { recordId: one.id, changedFieldIds: [name], previous: { [name]: 'one' } },
  ]);
  expect(field!.type === 'field.created' && field!.data.field).toEqual(done);
  // Read to the end, nothing more comes until something new commits; filters narrow the same events.
  expect(await client.changes.list(base.id, { cursor: followed.cursor })).toMatchObject({
    changes: [],
    hasMore: false,
  });
  const onlyDeletes = await client.changes.list(base.id, { cursor: start.cursor, types: ['record.deleted'] });
  expect(onlyDeletes.changes.map((event) => event.type)).toEqual(['record.deleted']);
});

it('streams the same events from the same cursor, then each write as it commits', async () => {
  const start = (await client.changes.list(base.id, { cursor: 'latest' })).cursor;
  const before = await client.records.createMany(base.id, 'Tasks', [{ Name: 'a' }, { Name: 'b' }]);
  await client.records.update(base.id, 'Tasks', before.records[0]!.id, { Name: 'a!' });
  const listed = await follow(start, 2, { types: ['record.created', 'record.updated'] });

  const stream = client.changes.stream(base.id, {
    cursor: start,
    tableId: 'Tasks',
    types: ['record.created', 'record.updated'],
  });
  const iterator = stream[Symbol.asyncIterator]();
  const next = async (): Promise<StreamedChange> => {
    const result = await iterator.next();
    if (result.done) throw new Error('the stream ended');
    return result.value;
  };
  const caughtUp = [await next(), await next()];
  expect(caughtUp.map((change) => change.event)).toEqual(listed.changes);
  // Each cursor is the one after its event: the feed's own cursor after the last.
  expect(caughtUp[1]!.cursor).toBe(listed.cursor);
  const afterFirst = await client.changes.list(base.id, {
    cursor: caughtUp[0]!.cursor,
    types: ['record.created', 'record.updated'],
  });
  expect(afterFirst.changes[0]).toEqual(caughtUp[1]!.event);

  const live = await client.records.create(base.id, 'Tasks', { Name: 'live' });
  const heard = await next();
  expect(heard.event).toMatchObject({ type: 'record.created', data: { recordIds: [live.id] } });
  await iterator.return?.();
});

it('resumes from the last id when the connection drops, the server going on after that event', async () => {
  const start = (await client.changes.list(base.id, { cursor: 'latest' })).cursor;
  const written = [];
  for (const Name of ['x', 'y', 'z']) written.push(await client.records.create(base.id, 'Tasks', { Name }));
  await follow(start, 3);

  // The first stream is cut right after its first event, as a dropped connection would be.
  const lastEventIds: (string | undefined)[] = [];
  let cut = true;
  const cutting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).includes('/changes/stream')) return response;
    lastEventIds.push((init?.headers as Record<string, string> | undefined)?.['last-event-id']);
    if (!cut) return response;
    cut = false;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let end = -1;
    while (end < 0) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const data = text.indexOf('\ndata: ');
      end = data < 0 ? -1 : text.indexOf('\n\n', data);
    }
    await reader.cancel();
    return new Response(text.slice(0, end + 2), { status: 200, headers: response.headers });
  };
  const received: StreamedChange[] = [];
  for await (const change of services.client({ fetch: cutting }).changes.stream(base.id, { cursor: start })) {
    received.push(change);
    if (received.length === 3) break;
  }
  expect(received.map((change) => recordIdsOf(change.event))).toEqual(written.map((record) => [record.id]));
  expect(lastEventIds).toEqual([undefined, received[0]!.cursor]);
});

it('refuses before streaming what the key may not read, naming the scope it lacks', async () => {
  const schemaOnly = await client.apiKeys.create({ name: 'schema reader', scopes: ['schema:read'] });
  const schemaClient = services.client({ apiKey: schemaOnly.key });
  const refused = await (async () => {
    for await (const change of schemaClient.changes.stream(base.id, { types: ['record.created'] }))
      return change;
  })().catch((e: unknown) => e);
  expect(isRecordbaseError(refused, 'FORBIDDEN')).toBe(true);
  expect(refused).toMatchObject({ status: 403, message: expect.stringContaining('records:read') });
  // Without types, the key reads the events its scopes carry: here table and field events only.
  const { changes } = await schemaClient.changes.list(base.id, { limit: 1000 });
  expect(changes.length).toBeGreaterThan(0);
  expect(changes.every((event) => !event.type.startsWith('record.'))).toBe(true);
});

it("runs the README's example: pages from the cursor kept, then live until stopped", async () => {
  await client.tables.create(base.id, {
    name: 'Deals',
    fields: [{ name: 'Title', type: 'single_line_text' }],
  });
  const baseId = base.id;
  let kept: string | undefined = (await client.changes.list(baseId, { cursor: 'latest' })).cursor;
  const loadCursor = () => kept;
  const saveCursor = (cursor: string) => {
    kept = cursor;
  };
  const earlier = await client.records.createMany(baseId, 'Deals', [{ Title: 'a' }, { Title: 'b' }]);
  await client.records.update(baseId, 'Deals', earlier.records[0]!.id, { Title: 'a!' });
  await client.records.create(baseId, 'Tasks', { Name: 'not a deal' });
  const applied: ChangeEvent[] = [];
  let live: string | undefined;
  const apply = (event: ChangeEvent) => {
    applied.push(event);
    if (live !== undefined && recordIdsOf(event).includes(live)) stop.abort();
  };

  // As the README writes it, the types aside.
  const deals = { tableId: 'Deals', types: ['record.created', 'record.updated', 'record.deleted'] as const };
  let cursor = loadCursor();
  for (;;) {
    const page = await client.changes.list(baseId, { ...deals, cursor, limit: 500 });
    for (const event of page.changes) apply(event);
    cursor = page.cursor;
    saveCursor(cursor);
    if (!page.hasMore) break;
  }
  setTimeout(async () => {
    live = (await client.records.create(baseId, 'Deals', { Title: 'live' })).id;
  }, 200);
  const stop = new AbortController();
  const following = (async () => {
    try {
      for await (const change of client.changes.stream(baseId, { ...deals, cursor, signal: stop.signal })) {
        apply(change.event);
        saveCursor(change.cursor);
      }
    } catch (error) {
      if (!isRecordbaseError(error, 'CURSOR_EXPIRED')) throw error;
    }
  })();

  await expect(following).rejects.toMatchObject({ name: 'AbortError' });
  expect(applied.map((event) => [event.type, recordIdsOf(event)])).toEqual([
    ['record.created', earlier.records.map((record) => record.id)],
    ['record.updated', [earlier.records[0]!.id]],
    ['record.created', [live]],
  ]);
  expect(kept).toMatch(/^\d+-\d+$/);
});
