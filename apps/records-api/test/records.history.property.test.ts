import fc from 'fast-check';
import { createBase, type Harness, startHarness } from './harness';

/**
 * History replays to the present: after random creates, updates, upserts, deletes and restores
 * from the trash (with and without suppressWebhooks), every record's history, applied from its
 * creation, gives its current written values, or its deletion.
 */

let h: Harness;
let auth: string;
let baseId: string;
let fieldIds: Record<string, string>;
let projectIds: string[];

const names = ['a', 'b', 'c'];

const valuesArbitrary = fc.record(
  {
    Name: fc.constantFrom(...names, null),
    Count: fc.constantFrom(-1.5, 0, 2, 7.25, null),
    Done: fc.boolean(),
    Due: fc.constantFrom('2024-01-01', '2025-06-30', null),
    Stage: fc.constantFrom('Open', 'Won', null),
    Tags: fc.subarray(['x', 'y', 'z']),
    Note: fc.constantFrom('', 'line one\nline two', 'é ü 🙂', null),
  },
  { requiredKeys: [] },
);

type Values = Partial<Record<string, unknown>>;

type Step =
  | { kind: 'create'; values: Values[]; quiet: boolean }
  | { kind: 'update'; pick: number[]; values: Values; links: number[] | null; quiet: boolean }
  | { kind: 'upsert'; name: string; values: Values }
  | { kind: 'delete'; pick: number[]; quiet: boolean }
  | { kind: 'restore'; pick: number[] }
  | { kind: 'rollback'; record: number; revision: number };

const pick = fc.array(fc.nat(50), { minLength: 1, maxLength: 3 });
const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('create' as const),
    values: fc.array(valuesArbitrary, { minLength: 1, maxLength: 3 }),
    quiet: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('update' as const),
    pick,
    values: valuesArbitrary,
    links: fc.option(fc.subarray([0, 1, 2]), { nil: null }),
    quiet: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('upsert' as const),
    name: fc.constantFrom(...names),
    values: valuesArbitrary,
  }),
  fc.record({ kind: fc.constant('delete' as const), pick, quiet: fc.boolean() }),
  fc.record({ kind: fc.constant('restore' as const), pick }),
  fc.record({ kind: fc.constant('rollback' as const), record: fc.nat(50), revision: fc.nat(10) }),
);

const url = (path: string) => `/api/v1/bases/${baseId}/tables/Rows${path}`;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'History replay',
    tables: [
      { name: 'Projects', fields: [{ name: 'Title', type: 'single_line_text' }] },
      {
        name: 'Rows',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Count', type: 'number', template: { decimalPlaces: 2 } },
          { name: 'Done', type: 'checkbox' },
          { name: 'Due', type: 'date' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Open' }, { name: 'Won' }] },
          },
          {
            name: 'Tags',
            type: 'multiple_select',
            template: { options: [{ name: 'x' }, { name: 'y' }, { name: 'z' }] },
          },
          { name: 'Note', type: 'long_text' },
          { name: 'Project', type: 'linked_record', template: { tableId: 'Projects' } },
          { name: 'Twice', type: 'formula', template: { expression: '{Count} * 2' } },
        ],
      },
    ],
  });
  baseId = base.body.id;
  const rows = base.body.tables.find((table: { name: string }) => table.name === 'Rows');
  fieldIds = Object.fromEntries(
    rows.fields.map((field: { id: string; name: string }) => [field.name, field.id]),
  );
  const projects = await h.api
    .post(`/api/v1/bases/${baseId}/tables/Projects/records/bulk`)
    .set('Authorization', auth)
    .send({ records: [{ Title: 'p0' }, { Title: 'p1' }, { Title: 'p2' }] })
    .expect(201);
  projectIds = projects.body.records.map((record: { id: string }) => record.id);
});
afterAll(() => h.close());

const isBlank = (value: unknown) =>
  value === null ||
  value === undefined ||
  value === false ||
  value === '' ||
  (Array.isArray(value) && value.length === 0);

/** A record's written fields with a value, by field id (what a replay of its history builds). */
function writtenValues(fields: Record<string, unknown>): Record<string, unknown> {
  const written: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'Twice' || isBlank(value)) continue;
    written[fieldIds[name]!] = value;
  }
  return written;
}

interface Revision {
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

async function replay(id: string): Promise<Record<string, unknown> | 'deleted'> {
  const revisions: Revision[] = [];
  let cursor: string | undefined;
  do {
    const page = await h.api
      .get(url(`/records/${id}/history?limit=7${cursor ? `&cursor=${cursor}` : ''}`))
      .set('Authorization', auth)
      .expect(200);
    revisions.push(...page.body.revisions);
    cursor = page.body.nextCursor;
  } while (cursor);
  let state: Record<string, unknown> | 'deleted' = 'deleted';
  for (const revision of revisions.reverse()) {
    if (revision.action === 'deleted') {
      state = 'deleted';
      continue;
    }
    // A creation starts afresh; an update, or a restore (to a revision: what it changed; from the
    // trash, after the deletion: every value), applies its changes.
    const base: Record<string, unknown> =
      revision.action === 'created' || state === 'deleted' ? {} : { ...state };
    for (const [fieldId, change] of Object.entries(revision.changes)) {
      if (isBlank(change.after)) delete base[fieldId];
      else base[fieldId] = change.after;
    }
    state = base;
  }
  return state;
}

it('replays every record’s history from its creation to its current values', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArbitrary, { minLength: 4, maxLength: 14 }), async (steps) => {
      const known: string[] = [];
      const deleted = new Set<string>();
      const chosen = (indexes: number[], among: string[]) => [
        ...new Set(indexes.map((i) => among[i % among.length]!)),
      ];
      for (const step of steps) {
        const live = known.filter((id) => !deleted.has(id));
        const gone = known.filter((id) => deleted.has(id));
        if (step.kind === 'create') {
          const created = await h.api
            .post(url('/records/bulk'))
            .set('Authorization', auth)
            .send({ records: step.values, suppressWebhooks: step.quiet })
            .expect(201);
          known.push(...created.body.records.map((record: { id: string }) => record.id));
        } else if (step.kind === 'update' && live.length > 0) {
          const ids = chosen(step.pick, live);
          const fields = {
            ...step.values,
            ...(step.links ? { Project: step.links.map((i) => projectIds[i]) } : {}),
          };
          await h.api
            .patch(url('/records/bulk'))
            .set('Authorization', auth)
            .send({ records: ids.map((id) => ({ id, fields })), suppressWebhooks: step.quiet })
            .expect(200);
        } else if (step.kind === 'upsert') {
          // Only when at most one live record has the name: a key matching several is refused.
          const listed = await h.api
            .post(url('/records/list'))
            .set('Authorization', auth)
            .send({ filter: { field: 'Name', equals: step.name }, limit: 10 })
            .expect(200);
          if (listed.body.records.length > 1) continue;
          const upserted = await h.api
            .post(url('/records/bulk'))
            .set('Authorization', auth)
            .send({ records: [{ ...step.values, Name: step.name }], matchOn: [fieldIds.Name] })
            .expect(200);
          const id: string = upserted.body.records[0].id;
          if (!known.includes(id)) known.push(id);
        } else if (step.kind === 'delete' && live.length > 0) {
          const ids = chosen(step.pick, live);
          await h.api
            .post(url('/records/bulk-delete'))
            .set('Authorization', auth)
            .send({ ids, suppressWebhooks: step.quiet })
            .expect(200);
          for (const id of ids) deleted.add(id);
        } else if (step.kind === 'rollback' && live.length > 0) {
          const id = live[step.record % live.length]!;
          const history = await h.api
            .get(url(`/records/${id}/history?limit=100`))
            .set('Authorization', auth)
            .expect(200);
          const revisions = (history.body.revisions as { id: string; action: string }[]).filter(
            (revision) => revision.action !== 'deleted',
          );
          const revision = revisions[step.revision % revisions.length]!;
          await h.api
            .post(url(`/records/${id}/history/${revision.id}/restore`))
            .set('Authorization', auth)
            .expect(200);
        } else if (step.kind === 'restore' && gone.length > 0) {
          const ids = chosen(step.pick, gone);
          await h.api.post(url('/trash/restore')).set('Authorization', auth).send({ ids }).expect(200);
          for (const id of ids) deleted.delete(id);
        }
      }
      for (const id of known) {
        const replayed = await replay(id);
        if (deleted.has(id)) {
          expect(replayed).toBe('deleted');
          continue;
        }
        const current = await h.api
          .get(url(`/records/${id}`))
          .set('Authorization', auth)
          .expect(200);
        expect(replayed).toEqual(writtenValues(current.body.fields));
      }
    }),
    { numRuns: 25 },
  );
}, 120_000);
