import { createBase, databaseSnapshot, type Harness, lastOutboxSeq, startHarness } from './harness';

/**
 * `typecast: true`: values given as text are converted to their fields' types, numbers
 * given to text become text, and select options the records name that the field lacks are added
 * to it in the write's own transaction (with a field.updated event). Without typecast the same
 * values are refused; a refused typecast write adds no option.
 */

let h: Harness;
let auth: string;
let baseId: string;
const url = (path = '') => `/api/v1/bases/${baseId}/tables/Deals/records${path}`;
const tableUrl = () => `/api/v1/bases/${baseId}/tables/Deals`;

async function options(field: string): Promise<string[]> {
  const table = await h.api.get(tableUrl()).set('Authorization', auth).expect(200);
  const found = table.body.fields.find((f: { name: string }) => f.name === field);
  return found.template.options.map((option: { name: string }) => option.name);
}

const eventsAfter = async (seq: string) =>
  (
    await h.db.pool.query<{ type: string; data: { field?: { name: string; template: unknown } } }>(
      'SELECT type, data FROM outbox_events WHERE seq > $1 ORDER BY seq',
      [seq],
    )
  ).rows;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Typecast',
    tables: [
      {
        name: 'Deals',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Amount', type: 'number', template: { decimalPlaces: 2 } },
          { name: 'Won', type: 'checkbox' },
          { name: 'Closes', type: 'date' },
          { name: 'Seen', type: 'datetime' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Lead' }, { name: 'Won' }] },
          },
          { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'red' }] } },
          { name: 'Rating', type: 'rating', template: { max: 5 } },
        ],
      },
    ],
  });
  baseId = base.body.id;
});
afterAll(() => h.close());

describe('typecast converts text to each field type', () => {
  it('a single create stores numbers, booleans, dates and options read from text', async () => {
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({
        record: {
          Name: 42,
          Amount: ' 1234.5 ',
          Won: 'yes',
          Closes: '2026-03-01',
          Seen: '2026-03-01 10:30',
          Stage: ' Won ',
          Tags: 'red',
          Rating: '4',
        },
        typecast: true,
      })
      .expect(201);
    expect(response.body.fields).toEqual({
      Name: '42',
      Amount: 1234.5,
      Won: true,
      Closes: '2026-03-01',
      Seen: '2026-03-01T10:30:00.000Z',
      Stage: 'Won',
      Tags: ['red'],
      Rating: 4,
    });
  });

  it('without typecast the same values are refused, naming the field', async () => {
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ record: { Amount: '1234.5' } })
      .expect(400);
    expect(response.body.error.message).toMatch(/body\.record\.Amount: .*number/);
  });

  it('text that is no value of the type is still refused, with the usual words', async () => {
    const response = await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ Amount: '12' }, { Amount: 'twelve' }, { Won: 'perhaps' }], typecast: true })
      .expect(400);
    expect(response.body.error.message).toMatch(/body\.records\[1\]\.Amount: .*number/);
    expect(response.body.error.message).toMatch(/body\.records\[2\]\.Won: /);
    expect(response.body.error.message).not.toMatch(/records\[0\]/);
  });

  it('empty text is an empty value for non-text fields', async () => {
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ record: { Name: 'blank', Amount: '', Closes: ' ', Stage: '' }, typecast: true })
      .expect(201);
    expect(response.body.fields).toMatchObject({ Name: 'blank', Amount: null, Closes: null, Stage: null });
  });
});

describe('typecast adds missing select options', () => {
  it('a bulk create adds each new option once, in the order named, and announces the field change', async () => {
    const seq = await lastOutboxSeq(h.db);
    const response = await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({
        records: [
          { Name: 'a', Stage: 'Proposal', Tags: ['blue', 'red'] },
          { Name: 'b', Stage: 'Proposal', Tags: 'green, blue' },
          { Name: 'c', Stage: 'Lost' },
        ],
        typecast: true,
      })
      .expect(201);
    expect(response.body.records.map((r: { fields: unknown }) => r.fields)).toMatchObject([
      { Name: 'a', Stage: 'Proposal', Tags: ['blue', 'red'] },
      { Name: 'b', Stage: 'Proposal', Tags: ['green', 'blue'] },
      { Name: 'c', Stage: 'Lost', Tags: [] },
    ]);
    expect(await options('Stage')).toEqual(['Lead', 'Won', 'Proposal', 'Lost']);
    expect(await options('Tags')).toEqual(['red', 'blue', 'green']);
    const events = await eventsAfter(seq);
    const fieldEvents = events.filter((event) => event.type === 'field.updated');
    expect(fieldEvents.map((event) => event.data.field?.name).sort()).toEqual(['Stage', 'Tags']);
    expect(events.map((event) => event.type)).toContain('record.created');
    // The new options are there for a write without typecast, on this process at once.
    await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ record: { Stage: 'Lost' } })
      .expect(201);
  });

  it('an update and a bulk update by id add options too', async () => {
    const created = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ record: { Name: 'u' } });
    const id = created.body.id;
    await h.api
      .patch(url(`/${id}`))
      .set('Authorization', auth)
      .send({ record: { Stage: 'Negotiation' }, typecast: true })
      .expect(200);
    await h.api
      .patch(url('/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ id, fields: { Tags: ['purple'], Amount: '7' } }], typecast: true })
      .expect(200);
    const record = await h.api
      .get(url(`/${id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(record.body.fields).toMatchObject({ Stage: 'Negotiation', Tags: ['purple'], Amount: 7 });
    expect(await options('Stage')).toContain('Negotiation');
  });

  it('an upsert adds options and matches on typecast values', async () => {
    const table = await h.api.get(tableUrl()).set('Authorization', auth).expect(200);
    const amount = table.body.fields.find((f: { name: string }) => f.name === 'Amount').id;
    await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ Name: 'up', Amount: 99 }] })
      .expect(201);
    const response = await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ Amount: '99.00', Stage: 'Renewal' }], matchOn: [amount], typecast: true })
      .expect(200);
    expect(response.body.updatedRecordIds).toHaveLength(1);
    expect(response.body.records[0].fields).toMatchObject({ Name: 'up', Stage: 'Renewal' });
  });

  it('a refused write adds no option and writes nothing', async () => {
    const before = await databaseSnapshot(h.db);
    const response = await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ Stage: 'Never added' }, { Amount: 'not a number' }], typecast: true })
      .expect(400);
    expect(response.body.error.message).toMatch(/body\.records\[1\]\.Amount/);
    expect(await options('Stage')).not.toContain('Never added');
    expect(await databaseSnapshot(h.db)).toEqual(before);
  });

  it('a write refused after its options were added (no such record) rolls the options back', async () => {
    // The option is added in the write's transaction: a failure after it rolls it back.
    const before = await options('Stage');
    const response = await h.api
      .patch(url('/00000000-0000-4000-8000-000000000000'))
      .set('Authorization', auth)
      .send({ record: { Stage: 'Rolled back' }, typecast: true })
      .expect(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
    expect(await options('Stage')).toEqual(before);
  });

  it('a "__proto__" key is refused as an unknown field, not dropped', async () => {
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .set('content-type', 'application/json')
      .send('{"record":{"Name":"x","__proto__":{"Stage":"Hacked"}},"typecast":true}')
      .expect(400);
    expect(response.body.error.message).toMatch(/unknown field "__proto__"/);
  });

  it('an option name that cannot be one is refused by name', async () => {
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ record: { Stage: 'x'.repeat(300) }, typecast: true })
      .expect(400);
    expect(response.body.error.message).toMatch(/body\.record\.Stage: "x+" cannot be an option name/);
  });

  it('a key without schema:write may typecast values but not add options', async () => {
    const created = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', auth)
      .send({ name: 'writer', scopes: ['records:read', 'records:write'] })
      .expect(201);
    const writer = h.bearer(created.body.key);
    await h.api
      .post(url())
      .set('Authorization', writer)
      .send({ record: { Amount: '5', Stage: 'Lead' }, typecast: true })
      .expect(201);
    const refused = await h.api
      .post(url())
      .set('Authorization', writer)
      .send({ record: { Stage: 'Brand new' }, typecast: true })
      .expect(403);
    expect(refused.body.error.message).toMatch(/"Brand new".*Stage.*schema/);
    expect(await options('Stage')).not.toContain('Brand new');
  });

  it('concurrent writes adding the same option add it once', async () => {
    const writes = Array.from({ length: 6 }, (_, i) =>
      h.api
        .post(url())
        .set('Authorization', auth)
        .send({ record: { Name: `c${i}`, Tags: ['shared', `own ${i}`] }, typecast: true }),
    );
    const answers = await Promise.all(writes);
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201, 201]);
    const tags = await options('Tags');
    expect(tags.filter((name) => name === 'shared')).toHaveLength(1);
    for (let i = 0; i < 6; i++) expect(tags).toContain(`own ${i}`);
  });
});
