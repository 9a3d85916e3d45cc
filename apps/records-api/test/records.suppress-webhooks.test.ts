import { createBase, type Harness, lastOutboxSeq, startHarness } from './harness';

/**
 * `suppressWebhooks: true`: every write route writes its records and appends its event for history
 * only (suppressed, dispatched as written: no webhook hears of it); without it, the same write
 * appends its event for webhooks. A DELETE, which has no body, takes it as a query parameter.
 */

let h: Harness;
let auth: string;
let baseId: string;
const url = (path = '') => `/api/v1/bases/${baseId}/tables/Items/records${path}`;

const lastSeq = () => lastOutboxSeq(h.db);
/** The types of the events appended after `seq`: for webhooks, or (suppressed) for history only and already dispatched. */
const eventsAfter = async (seq: string, suppressed = false) =>
  (
    await h.db.pool.query<{ type: string }>(
      `SELECT type FROM outbox_events WHERE seq > $1 AND suppressed = $2 AND (dispatched_at IS NOT NULL OR NOT suppressed)
        ORDER BY seq`,
      [seq, suppressed],
    )
  ).rows.map((row) => row.type);

async function create(names: string[]): Promise<string[]> {
  const response = await h.api
    .post(url('/bulk'))
    .set('Authorization', auth)
    .send({ records: names.map((Name) => ({ Name })), suppressWebhooks: true })
    .expect(201);
  return response.body.records.map((record: { id: string }) => record.id);
}

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Quiet writes',
    tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
});
afterAll(() => h.close());

type Write = (suppress: boolean) => Promise<unknown>;

const writes: [string, string, Write][] = [
  [
    'bulk create',
    'record.created',
    (suppress) =>
      h.api
        .post(url('/bulk'))
        .set('Authorization', auth)
        .send({ records: [{ Name: 'a' }], ...(suppress ? { suppressWebhooks: true } : {}) })
        .expect(201),
  ],
  [
    'an upsert',
    'record.updated',
    async (suppress) => {
      const name = `up ${suppress}`;
      await create([name]);
      const fieldId = (await h.api.get(`/api/v1/bases/${baseId}/tables/Items`).set('Authorization', auth))
        .body.fields[0].id;
      return h.api
        .post(url('/bulk'))
        .set('Authorization', auth)
        .send({
          records: [{ Name: name }],
          matchOn: [fieldId],
          ...(suppress ? { suppressWebhooks: true } : {}),
        })
        .expect(200);
    },
  ],
  [
    'a single create',
    'record.created',
    (suppress) =>
      h.api
        .post(url())
        .set('Authorization', auth)
        .send({ record: { Name: 'one' }, ...(suppress ? { suppressWebhooks: true } : {}) })
        .expect(201),
  ],
  [
    'a single update',
    'record.updated',
    async (suppress) => {
      const [id] = await create(['before']);
      return h.api
        .patch(url(`/${id}`))
        .set('Authorization', auth)
        .send({ record: { Name: 'after' }, ...(suppress ? { suppressWebhooks: true } : {}) })
        .expect(200);
    },
  ],
  [
    'a bulk update',
    'record.updated',
    async (suppress) => {
      const [id] = await create(['before']);
      return h.api
        .patch(url('/bulk'))
        .set('Authorization', auth)
        .send({
          records: [{ id, fields: { Name: 'after' } }],
          ...(suppress ? { suppressWebhooks: true } : {}),
        })
        .expect(200);
    },
  ],
  [
    'a bulk delete',
    'record.deleted',
    async (suppress) => {
      const ids = await create(['x', 'y']);
      return h.api
        .post(url('/bulk-delete'))
        .set('Authorization', auth)
        .send({ ids, ...(suppress ? { suppressWebhooks: true } : {}) })
        .expect(200);
    },
  ],
  [
    'a single delete',
    'record.deleted',
    async (suppress) => {
      const [id] = await create(['gone']);
      return h.api
        .delete(url(`/${id}${suppress ? '?suppressWebhooks=true' : ''}`))
        .set('Authorization', auth)
        .expect(200);
    },
  ],
];

describe('suppressWebhooks', () => {
  it.each(writes)(
    '%s with it appends its %s for history only; without it, for webhooks',
    async (_name, type, write) => {
      const before = await lastSeq();
      await write(true);
      expect(await eventsAfter(before)).toEqual([]);
      expect(await eventsAfter(before, true)).toContain(type);
      const between = await lastSeq();
      await write(false);
      expect(await eventsAfter(between)).toContain(type);
    },
  );

  it('refuses a value that is not a boolean, naming it', async () => {
    const body = await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ Name: 'a' }], suppressWebhooks: 'yes' })
      .expect(400);
    expect(body.body.error.message).toBe('body.suppressWebhooks: must be true or false');
    const query = await h.api
      .delete(url(`/${crypto.randomUUID()}?suppressWebhooks=1`))
      .set('Authorization', auth)
      .expect(400);
    expect(query.body.error.message).toBe('query.suppressWebhooks: must be true or false');
  });
});
