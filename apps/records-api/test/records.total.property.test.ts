import { UUID_PATTERN } from '@recordbase/contracts/common';
import { type FieldTemplate, type FieldType, isComputedFieldType } from '@recordbase/contracts/fields';
import {
  type Filter,
  type FilterCondition,
  filterOperatorSupportsFieldType,
  type RecordValue,
  readFilterCondition,
  type Sort,
  type TableRecord,
} from '@recordbase/contracts/records';
import { compareForSort, matchesFilter } from '@recordbase/domain/records/filter-evaluator';
import {
  buildTableMeta,
  type FieldMeta,
  resolveFieldOrSystem,
  type TableMeta,
} from '@recordbase/domain/records/table-meta';
import fc from 'fast-check';
import {
  COMPARISON_OPERATORS,
  emptinessCondition,
  filterTree,
  listCondition,
  SELECT_OPERATORS,
  scalarCondition,
  TEXT_OPERATORS,
} from './filter-arbitraries';
import { createBase, type Harness, startHarness } from './harness';

/**
 * `total` stays exact while the table changes. Random sequences of list requests (random filters
 * and sorts, offset pages and cursor pages, the same query several times in a row so that a count
 * cache would hit) interleaved with writes (bulk create, PATCH, delete, upsert by matchOn, deleting
 * records of the linked table) and schema changes (number <-> text, a renamed select option, a
 * field deleted and created again; the linked records changed), on two app instances over the same
 * database. The rows' count, lookup and rollup over their links are kept by the model from the
 * linked records it wrote, and every answer's values must agree with it. After every
 * list, `total`, `hasMore`, `nextCursor` and the page are what an in-memory model of the table
 * says at that moment (filter-evaluator.ts is the oracle); a query whose field went away is a 400.
 * Then writers and readers in parallel: every total lies between what the writes acknowledged
 * before the read and the writes begun before its answer allow, and a quiescent read is exact.
 */

let h: Harness;
let other: Harness;
let auth: string;
beforeAll(async () => {
  h = await startHarness();
  other = await startHarness({ sameDatabaseAs: h });
  auth = h.bearer(h.rootKey);
});
afterAll(async () => {
  await other?.close();
  await h?.close();
});

const words = ['', 'ab', 'Ab', 'abc', 'b a', 'ba', 'A', 'c%', 'x_y'];
const numbers = [-1.5, 0, 1, 2, 2.5, 100];
/** What the Count field holds while it is text: numbers PostgreSQL reads back, and one it cannot. */
const numericTexts = ['-1.5', '0', '1', '2', '2.5', '100', ' 7 ', ''];
const NOT_A_NUMBER = 'n/a';
const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9'];
const dates = ['2024-01-01', '2024-01-02', '2024-02-29', '2025-06-30'];

const rowsFields = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Key', type: 'single_line_text' },
  { name: 'Count', type: 'number' },
  {
    name: 'Stage',
    type: 'single_select',
    template: { options: [{ name: 'A' }, { name: 'B' }, { name: 'C' }] },
  },
  {
    name: 'Tags',
    type: 'multiple_select',
    template: { options: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
  },
  { name: 'Due', type: 'date' },
  { name: 'Done', type: 'checkbox' },
  { name: 'Link', type: 'linked_record', template: { tableId: 'Others' } },
  { name: 'Extra', type: 'number' },
];

type TableJson = {
  id: string;
  name: string;
  primaryFieldId: string;
  fields: { id: string; name: string; type: FieldType; template: FieldTemplate }[];
};
type Page = { records: TableRecord[]; total: number; hasMore: boolean; nextCursor: string | null };

const metaOf = (databaseId: string, table: TableJson): TableMeta =>
  buildTableMeta({
    databaseId,
    schemaName: `base_${databaseId.replace(/-/g, '')}`,
    id: table.id,
    name: table.name,
    primaryFieldId: table.primaryFieldId,
    fields: table.fields.map(({ id, name, type, template }) => ({ id, name, type, template })),
  });

/** A record as the model keeps it: what the API answered, and its place in insertion order. */
interface Row {
  seq: number;
  record: TableRecord;
}

/** A query a test has listed; `after` is the last record of its latest page, as it was then. */
interface Query {
  filter: Filter | undefined;
  sort: Sort[];
  limit: number;
  cursor?: { value: string; after: Row };
}

/** Whether the API must accept the filter on the table as it now is (else it must answer 400). */
function filterIsValid(filter: Filter, table: TableMeta): boolean {
  const and = (filter as { and?: Filter[] }).and;
  const or = (filter as { or?: Filter[] }).or;
  if (and !== undefined) return and.every((member) => filterIsValid(member, table));
  if (or !== undefined) return or.every((member) => filterIsValid(member, table));
  const { field: ref, operator, operand } = readFilterCondition(filter as FilterCondition);
  const target = resolveFieldOrSystem(table, ref);
  if (!target) return false;
  if (target.kind === 'system') return false; // not generated
  const { type } = target.field;
  if (!filterOperatorSupportsFieldType(operator, type)) return false;
  if (operator === 'is_empty' || operator === 'is_not_empty') return operand === true;
  const list = operator === 'in' || operator === 'not_in';
  const items = list ? (Array.isArray(operand) ? operand : [null]) : [operand];
  const isString = (value: unknown) => typeof value === 'string';
  const valid: Partial<Record<FieldType, (value: unknown) => boolean>> = {
    single_line_text: isString,
    number: (value) => typeof value === 'number' && Number.isFinite(value),
    count: (value) => typeof value === 'number' && Number.isFinite(value),
    rollup: (value) => typeof value === 'number' && Number.isFinite(value),
    lookup: isString,
    single_select: isString,
    multiple_select: isString,
    date: (value) => typeof value === 'string' && !Number.isNaN(Date.parse(value)),
    checkbox: (value) => typeof value === 'boolean',
    linked_record: (value) => typeof value === 'string' && UUID_PATTERN.test(value),
  };
  return items.every((item) => valid[type]!(item));
}

/** The computed fields over Link, added once the tables exist, and what each holds for a row. */
const LINKED_VALUE_FIELDS = [
  { name: 'Link count', type: 'count', template: { linkFieldId: 'Link' } },
  { name: 'Link names', type: 'lookup', template: { linkFieldId: 'Link', fieldId: 'Name' } },
  {
    name: 'Link points',
    type: 'rollup',
    template: { linkFieldId: 'Link', fieldId: 'Points', function: 'sum' },
  },
] as const;

/** A linked record as the model keeps it. */
interface OtherValues {
  Name: string;
  Points: number | null;
}

const optionNames = (field: FieldMeta) =>
  (field.template as FieldTemplate<'single_select'>).options.map((o) => o.name);

/** The table's state as the model sees it, and the steps that change it through the API. */
class World {
  readonly rowsUrl: string;
  readonly othersUrl: string;
  readonly tableUrl: string;
  meta!: TableMeta;
  rows = new Map<string, Row>();
  private nextSeq = 0;
  others: string[] = [];
  goneOthers: string[] = [];
  /** What the linked records hold, which the rows' count, lookup and rollup read. */
  otherValues = new Map<string, OtherValues>();
  private othersMade = 0;
  /** What the rollup over the linked records' Points computes (a schema change switches it). */
  pointsFunction: 'sum' | 'max' = 'sum';
  queries: Query[] = [];
  readonly log: string[] = [];
  lists = 0;

  constructor(readonly baseId: string) {
    this.tableUrl = `/api/v1/bases/${baseId}/tables/Rows`;
    this.rowsUrl = `${this.tableUrl}/records`;
    this.othersUrl = `/api/v1/bases/${baseId}/tables/Others/records`;
  }

  static async create(): Promise<World> {
    const base = await createBase(h, {
      name: 'Totals',
      tables: [
        {
          name: 'Others',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Points', type: 'number' },
          ],
        },
        { name: 'Rows', fields: rowsFields },
      ],
    });
    const world = new World(base.body.id);
    for (const field of LINKED_VALUE_FIELDS) {
      const added = await h.api.post(`${world.tableUrl}/fields`).set('Authorization', auth).send(field);
      world.expectStatus(`add ${field.type} field`, added, 201);
    }
    const table = await h.api.get(world.tableUrl).set('Authorization', auth);
    world.meta = metaOf(base.body.id, table.body);
    return world;
  }

  /** The count, lookup and rollup a record with these links holds, by field id. */
  linkedValues(links: readonly string[]): Record<string, RecordValue> {
    const linked = links.map((id) => this.otherValues.get(id)!);
    const [count, names, points] = LINKED_VALUE_FIELDS.map((field) => this.field(field.name)!.id);
    return {
      [count!]: links.length,
      [names!]: linked.map((other) => other.Name),
      [points!]:
        this.pointsFunction === 'sum'
          ? linked.reduce((sum, other) => sum + (other.Points ?? 0), 0)
          : linked.reduce<number | null>(
              (max, other) =>
                other.Points !== null && (max === null || other.Points > max) ? other.Points : max,
              null,
            ),
    };
  }

  /** A record the API answered holds the count, lookup and rollup of its links. */
  checkLinkedValues(record: TableRecord) {
    const links = record.data[this.field('Link')!.id] as string[];
    const expected = this.linkedValues(links);
    this.verify(`count, lookup and rollup of ${record.id}`, () =>
      expect(Object.fromEntries(Object.keys(expected).map((id) => [id, record.data[id]]))).toEqual(expected),
    );
  }

  /** The linked records changed: each row's count, lookup and rollup as the service must now hold them. */
  recomputeLinkedValues() {
    const link = this.field('Link')!;
    for (const row of this.rows.values()) {
      const values = this.linkedValues(row.record.data[link.id] as string[]);
      const byName = Object.fromEntries(
        Object.entries(values).map(([id, value]) => [this.meta.fieldsById.get(id)!.name, value]),
      );
      row.record = {
        ...row.record,
        data: { ...row.record.data, ...values },
        fields: { ...row.record.fields, ...byName },
      };
    }
  }

  field(name: string): FieldMeta | undefined {
    return this.meta.fieldsByNameKey.get(name.toLowerCase());
  }

  note(line: string) {
    this.log.push(line.length > 600 ? `${line.slice(0, 600)}...` : line);
  }

  /** Runs `check`, adding what led here to its failure. */
  verify(what: string, check: () => void) {
    try {
      check();
    } catch (error) {
      throw new Error(
        `${what}: ${(error as Error).message}\n--- steps (latest last) ---\n${this.log.slice(-30).join('\n')}`,
      );
    }
  }

  expectStatus(what: string, response: { status: number; body: unknown }, status: number) {
    this.verify(what, () => {
      if (response.status !== status) {
        throw new Error(
          `expected ${status}, got ${response.status} ${JSON.stringify(response.body).slice(0, 400)}`,
        );
      }
    });
  }

  add(records: TableRecord[]) {
    for (const record of records) {
      this.checkLinkedValues(record);
      this.rows.set(record.id, { seq: this.nextSeq++, record });
    }
  }

  replace(record: TableRecord) {
    this.checkLinkedValues(record);
    const row = this.rows.get(record.id);
    this.verify('an updated record is known', () => expect(row).toBeDefined());
    this.rows.set(record.id, { seq: row!.seq, record });
  }

  // --- Random input for the table as it now is -------------------------------------------------

  valueOf(field: FieldMeta): fc.Arbitrary<unknown> {
    switch (field.type) {
      case 'single_line_text':
        if (field.name === 'Count')
          return fc.oneof(
            { weight: 12, arbitrary: fc.constantFrom(...numericTexts, null) },
            { weight: 1, arbitrary: fc.constant(NOT_A_NUMBER) },
          );
        if (field.name === 'Key') return fc.constantFrom(...keys, null);
        return fc.constantFrom(...words, null);
      case 'number':
        return fc.constantFrom(...numbers, null);
      case 'single_select':
        return fc.constantFrom(...optionNames(field), null);
      case 'multiple_select':
        return fc.subarray(optionNames(field));
      case 'date':
        return fc.constantFrom(...dates, null);
      case 'checkbox':
        return fc.boolean();
      case 'linked_record':
        return fc.subarray(this.others, { maxLength: Math.min(2, this.others.length) });
      default:
        throw new Error(`no values for ${field.type}`);
    }
  }

  recordArbitrary(): fc.Arbitrary<Record<string, unknown>> {
    const fields = this.meta.fields.filter((field) => !isComputedFieldType(field.type));
    return fc.record(Object.fromEntries(fields.map((field) => [field.name, this.valueOf(field)])), {
      requiredKeys: [],
    });
  }

  conditionOf(field: FieldMeta): fc.Arbitrary<Filter> {
    const ref = fc.constantFrom(field.name, field.id);
    const empties = emptinessCondition(ref);
    switch (field.type) {
      case 'single_line_text': {
        const operands =
          field.name === 'Key'
            ? keys
            : field.name === 'Count'
              ? ['1', '2.5', '-', '0', NOT_A_NUMBER]
              : [...words.filter(Boolean), 'a', 'B', '%'];
        return fc.oneof(
          scalarCondition(ref, TEXT_OPERATORS, fc.constantFrom(...operands)),
          listCondition(ref, fc.constantFrom(...operands)),
          empties,
        );
      }
      case 'number':
      case 'count':
      case 'rollup':
        return fc.oneof(
          scalarCondition(ref, COMPARISON_OPERATORS, fc.constantFrom(...numbers, 1.25, 3.5)),
          listCondition(ref, fc.constantFrom(...numbers)),
          empties,
        );
      case 'lookup': {
        const names = ['o0', 'o1', 'o2', 'o3', 'o5'];
        return fc.oneof(
          scalarCondition(ref, SELECT_OPERATORS, fc.constantFrom(...names)),
          listCondition(ref, fc.constantFrom(...names)),
          empties,
        );
      }
      case 'single_select':
      case 'multiple_select': {
        const operands = [
          ...optionNames(field),
          ...(field.type === 'single_select' ? ['A', 'a', 'Z'] : ['a']),
        ];
        return fc.oneof(
          scalarCondition(ref, SELECT_OPERATORS, fc.constantFrom(...operands)),
          listCondition(ref, fc.constantFrom(...operands)),
          empties,
        );
      }
      case 'date':
        return fc.oneof(
          scalarCondition(ref, COMPARISON_OPERATORS, fc.constantFrom(...dates, '2024-01-01T12:00:00Z')),
          empties,
        );
      case 'checkbox':
        return scalarCondition(ref, ['equals', 'does_not_equal'], fc.boolean());
      case 'linked_record': {
        const ids = [...this.others, ...this.goneOthers];
        if (ids.length === 0) return empties;
        return fc.oneof(
          scalarCondition(ref, ['contains', 'does_not_contain'], fc.constantFrom(...ids)),
          listCondition(ref, fc.constantFrom(...ids)),
          empties,
        );
      }
      default:
        throw new Error(`no conditions for ${field.type}`);
    }
  }

  filterArbitrary(): fc.Arbitrary<Filter> {
    return filterTree(fc.oneof(...this.meta.fields.map((field) => this.conditionOf(field))));
  }

  sortArbitrary(): fc.Arbitrary<Sort[]> {
    return fc.array(
      fc.record({
        field: fc.constantFrom(...this.meta.fields.map((f) => f.name), 'createdAt', 'id'),
        direction: fc.constantFrom('asc' as const, 'desc' as const),
      }),
      { maxLength: 2 },
    );
  }

  // --- The oracle -------------------------------------------------------------------------------

  /** The rows that match, in the listing's order (the sort, then insertion order). */
  expectedOrder(query: Query): Row[] {
    const sort = query.sort.length > 0 ? query.sort : undefined;
    return [...this.rows.values()]
      .filter((row) => query.filter === undefined || matchesFilter(row.record, query.filter, this.meta))
      .sort((a, b) => compareForSort(a.record, b.record, sort, this.meta) || a.seq - b.seq);
  }

  /** One page of `query` through `app` (offset, or the query's cursor), checked against the model. */
  async list(app: Harness, query: Query, paging: { offset: number } | 'cursor') {
    const useCursor = paging === 'cursor' && query.cursor !== undefined;
    const body = {
      limit: query.limit,
      sort: query.sort,
      ...(query.filter === undefined ? {} : { filter: query.filter }),
      ...(useCursor ? { cursor: query.cursor!.value } : { offset: paging === 'cursor' ? 0 : paging.offset }),
    };
    const where = app === h ? 'A' : 'B';
    const response = await app.api.post(`${this.rowsUrl}/list`).set('Authorization', auth).send(body);
    this.lists += 1;
    this.note(`list@${where} ${JSON.stringify(body)} -> ${response.status} total=${response.body?.total}`);
    const valid =
      (query.filter === undefined || filterIsValid(query.filter, this.meta)) &&
      query.sort.every((entry) => resolveFieldOrSystem(this.meta, entry.field) !== undefined);
    if (!valid) {
      this.expectStatus('a query on a field that is gone or of another type is refused', response, 400);
      query.cursor = undefined;
      return;
    }
    this.expectStatus('list', response, 200);
    const page = response.body as Page;
    const ordered = this.expectedOrder(query);
    let rest = ordered;
    if (useCursor) {
      const after = query.cursor!.after;
      const sort = query.sort.length > 0 ? query.sort : undefined;
      rest = ordered.filter(
        (row) => (compareForSort(after.record, row.record, sort, this.meta) || after.seq - row.seq) < 0,
      );
    } else {
      rest = ordered.slice((paging as { offset: number }).offset);
    }
    const expected = rest.slice(0, query.limit);
    this.verify(`total of ${JSON.stringify(body)}`, () => expect(page.total).toBe(ordered.length));
    this.verify(`page of ${JSON.stringify(body)}`, () => {
      expect(page.records.map((record) => record.id)).toEqual(expected.map((row) => row.record.id));
      expect(page.records.map((record) => record.data)).toEqual(expected.map((row) => row.record.data));
      expect(page.hasMore).toBe(rest.length > query.limit);
      expect(page.nextCursor !== null).toBe(page.hasMore);
    });
    const last = expected.at(-1);
    query.cursor =
      page.nextCursor !== null && last ? { value: page.nextCursor, after: structuredClone(last) } : undefined;
  }

  // --- Writes -----------------------------------------------------------------------------------

  async bulkCreate(app: Harness, records: Record<string, unknown>[]) {
    const response = await app.api.post(`${this.rowsUrl}/bulk`).set('Authorization', auth).send({ records });
    this.note(`create ${records.length} ${JSON.stringify(records)} -> ${response.status}`);
    this.expectStatus('bulk create', response, 201);
    this.verify('a bulk create says it created every record', () =>
      expect([response.body.createdRecordIds, response.body.updatedRecordIds]).toEqual([
        response.body.records.map((record: TableRecord) => record.id),
        [],
      ]),
    );
    this.add(response.body.records);
  }

  async patch(app: Harness, id: string, record: Record<string, unknown>) {
    const response = await app.api.patch(`${this.rowsUrl}/${id}`).set('Authorization', auth).send({ record });
    this.note(`patch ${id} ${JSON.stringify(record)} -> ${response.status}`);
    this.expectStatus('patch', response, 200);
    this.replace(response.body);
  }

  async delete(app: Harness, ids: string[]) {
    if (ids.length === 1) {
      const response = await app.api.delete(`${this.rowsUrl}/${ids[0]}`).set('Authorization', auth);
      this.note(`delete ${ids[0]} -> ${response.status}`);
      this.expectStatus('delete', response, 200);
    } else {
      const response = await app.api
        .post(`${this.rowsUrl}/bulk-delete`)
        .set('Authorization', auth)
        .send({ ids });
      this.note(`bulk-delete ${ids.join(',')} -> ${response.status}`);
      this.expectStatus('bulk delete', response, 200);
      this.verify('deleted ids', () => expect([...response.body.deletedIds].sort()).toEqual([...ids].sort()));
    }
    for (const id of ids) this.rows.delete(id);
  }

  /** Upsert on Key: an incoming key that matches two records refuses the whole request. */
  async upsert(app: Harness, records: Record<string, unknown>[]) {
    const keyField = this.field('Key')!;
    const response = await app.api
      .post(`${this.rowsUrl}/bulk`)
      .set('Authorization', auth)
      .send({ records, matchOn: [keyField.id] });
    this.note(`upsert ${JSON.stringify(records)} -> ${response.status}`);
    const matches = records.map((incoming) =>
      [...this.rows.values()].filter((row) => row.record.data[keyField.id] === incoming.Key),
    );
    if (matches.some((found) => found.length > 1)) {
      this.expectStatus('an upsert matching two records', response, 400);
      return;
    }
    this.expectStatus('upsert', response, 200);
    const answered = response.body.records as TableRecord[];
    const matchedAt = (index: number) => matches[index]![0] !== undefined;
    this.verify('an upsert says which records it created and which it updated', () =>
      expect([response.body.createdRecordIds, response.body.updatedRecordIds]).toEqual([
        answered.filter((_, index) => !matchedAt(index)).map((record) => record.id),
        answered.filter((_, index) => matchedAt(index)).map((record) => record.id),
      ]),
    );
    answered.forEach((record, index) => {
      const matched = matches[index]![0];
      if (matched) {
        this.verify('an upsert updates the record it matches', () =>
          expect(record.id).toBe(matched.record.id),
        );
        this.replace(record);
      } else {
        this.add([record]);
      }
    });
  }

  async createOthers(app: Harness, count: number) {
    const records = Array.from({ length: count }, () => {
      const n = this.othersMade++;
      return { Name: `o${n % 6}`, Points: n % 5 === 4 ? null : numbers[n % numbers.length]! };
    });
    const response = await app.api
      .post(`${this.othersUrl}/bulk`)
      .set('Authorization', auth)
      .send({ records });
    this.note(`create ${count} linked records -> ${response.status}`);
    this.expectStatus('create linked records', response, 201);
    (response.body.records as TableRecord[]).forEach((record, i) => {
      this.others.push(record.id);
      this.otherValues.set(record.id, records[i]!);
    });
  }

  /** A linked record changed: the rows linking to it follow, in the same transaction. */
  async patchOther(app: Harness, id: string, values: Partial<OtherValues>) {
    const response = await app.api
      .patch(`${this.othersUrl}/${id}`)
      .set('Authorization', auth)
      .send({ record: values });
    this.note(`patch linked record ${id} ${JSON.stringify(values)} -> ${response.status}`);
    this.expectStatus('patch linked record', response, 200);
    this.otherValues.set(id, { ...this.otherValues.get(id)!, ...values });
    this.recomputeLinkedValues();
  }

  /** Deleting records of the linked table takes them out of every Link value. */
  async deleteOthers(app: Harness, ids: string[]) {
    const response = await app.api
      .post(`${this.othersUrl}/bulk-delete`)
      .set('Authorization', auth)
      .send({ ids });
    this.note(`delete linked records ${ids.join(',')} -> ${response.status}`);
    this.expectStatus('delete linked records', response, 200);
    this.others = this.others.filter((id) => !ids.includes(id));
    this.goneOthers.push(...ids);
    for (const id of ids) this.otherValues.delete(id);
    const link = this.field('Link')!;
    for (const row of this.rows.values()) {
      const links = row.record.data[link.id] as string[];
      if (links.some((id) => ids.includes(id))) {
        const kept = links.filter((id) => !ids.includes(id));
        row.record = {
          ...row.record,
          data: { ...row.record.data, [link.id]: kept },
          fields: { ...row.record.fields, [link.name]: kept },
        };
      }
    }
    this.recomputeLinkedValues();
  }

  // --- Schema changes ---------------------------------------------------------------------------

  /** Reads the table's fields and every record again after a schema change (values converted). */
  async refresh(unchanged: boolean) {
    const table = await h.api.get(this.tableUrl).set('Authorization', auth);
    this.expectStatus('read the table', table, 200);
    this.meta = metaOf(this.baseId, table.body);
    const all = await h.api.post(`${this.rowsUrl}/list`).set('Authorization', auth).send({ limit: 2000 });
    this.expectStatus('read every record', all, 200);
    const records = all.body.records as TableRecord[];
    this.verify('a schema change neither adds nor removes records', () =>
      expect(records.map((record) => record.id).sort()).toEqual([...this.rows.keys()].sort()),
    );
    if (unchanged) {
      this.verify('a refused schema change changes no value', () =>
        expect(records.map((record) => record.data)).toEqual(
          records.map((record) => this.rows.get(record.id)!.record.data),
        ),
      );
    }
    for (const record of records) this.replace(record);
    // A cursor keeps the sort keys of the old types: new walks start from here.
    for (const query of this.queries) query.cursor = undefined;
  }

  async changeField(
    app: Harness,
    method: 'patch' | 'delete' | 'post',
    path: string,
    body: object,
    status: number,
  ) {
    const response = await app.api[method](`${this.tableUrl}/fields${path}`)
      .set('Authorization', auth)
      .send(body);
    this.note(`schema ${method} fields${path} ${JSON.stringify(body)} -> ${response.status}`);
    this.expectStatus(`schema ${method} ${JSON.stringify(body)}`, response, status);
    await this.refresh(status >= 400);
  }

  /** Count: number to text, or text back to number (refused while a value is not a number). */
  async toggleCount(app: Harness) {
    const count = this.field('Count')!;
    if (count.type === 'number') {
      await this.changeField(app, 'patch', `/${count.id}`, { type: 'single_line_text' }, 200);
      return;
    }
    const convertible = [...this.rows.values()].every((row) => {
      const value = row.record.data[count.id];
      return (
        value === null || (value as string).trim() === '' || /^-?\d+(\.\d+)?$/.test((value as string).trim())
      );
    });
    await this.changeField(app, 'patch', `/${count.id}`, { type: 'number' }, convertible ? 200 : 400);
  }

  /** Renames one option of Stage or Tags (the values of the old name are cleared). */
  async renameOption(app: Harness, fieldName: 'Stage' | 'Tags', index: number) {
    const field = this.field(fieldName)!;
    const options = optionNames(field);
    const old = options[index % options.length]!;
    const renamed = old.length < 6 ? `${old}x` : old.slice(0, 1);
    const next = options.map((name) => ({ name: name === old ? renamed : name }));
    if (new Set(next.map((option) => option.name)).size !== next.length) return;
    await this.changeField(app, 'patch', `/${field.id}`, { template: { options: next } }, 200);
  }

  /**
   * The rollup switches between sum and max, every row computed again in the schema change; and
   * the field it reads may not become text while it does (refused, nothing changes).
   */
  async toggleRollup(app: Harness) {
    const next = this.pointsFunction === 'sum' ? 'max' : 'sum';
    const points = this.field('Link points')!;
    const template = { linkFieldId: 'Link', fieldId: 'Points', function: next };
    const retype = await app.api
      .patch(`/api/v1/bases/${this.baseId}/tables/Others/fields/Points`)
      .set('Authorization', auth)
      .send({ type: 'single_line_text' });
    this.note(`retype the rolled-up field -> ${retype.status}`);
    this.expectStatus('a rolled-up number becoming text', retype, 400);
    this.pointsFunction = next;
    await this.changeField(app, 'patch', `/${points.id}`, { template }, 200);
  }

  /** Deletes Extra, or creates it again (a new field of the same name). */
  async toggleExtra(app: Harness) {
    const extra = this.field('Extra');
    if (extra) await this.changeField(app, 'delete', `/${extra.id}`, {}, 200);
    else await this.changeField(app, 'post', '', { name: 'Extra', type: 'number' }, 201);
  }
}

type StepKind =
  | 'newQuery'
  | 'repeat'
  | 'create'
  | 'patch'
  | 'delete'
  | 'upsert'
  | 'createOthers'
  | 'patchOther'
  | 'deleteOthers'
  | 'schema';

const stepKind: fc.Arbitrary<StepKind> = fc.oneof(
  { weight: 4, arbitrary: fc.constant('newQuery' as const) },
  { weight: 6, arbitrary: fc.constant('repeat' as const) },
  { weight: 2, arbitrary: fc.constant('create' as const) },
  { weight: 2, arbitrary: fc.constant('patch' as const) },
  { weight: 1, arbitrary: fc.constant('delete' as const) },
  { weight: 1, arbitrary: fc.constant('upsert' as const) },
  { weight: 1, arbitrary: fc.constant('createOthers' as const) },
  { weight: 2, arbitrary: fc.constant('patchOther' as const) },
  { weight: 1, arbitrary: fc.constant('deleteOthers' as const) },
  { weight: 2, arbitrary: fc.constant('schema' as const) },
);

type Gen = fc.GeneratorValue;

async function runStep(world: World, g: Gen, kind: StepKind) {
  const app = g(() => fc.boolean()) ? h : other;
  const ids = [...world.rows.keys()];
  // Mostly pages shorter than the result, whose total only a count can give.
  const limit = () =>
    g(() =>
      fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 1, max: 6 }) },
        { weight: 1, arbitrary: fc.integer({ min: 7, max: 30 }) },
      ),
    );
  switch (kind) {
    case 'newQuery': {
      const query: Query = {
        filter: g(() => fc.option(world.filterArbitrary(), { freq: 6, nil: undefined })),
        sort: g(() => world.sortArbitrary()),
        limit: limit(),
      };
      const offset = g(() => fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 })));
      await world.list(app, query, { offset });
      world.queries = [query, ...world.queries].slice(0, 5);
      return;
    }
    case 'repeat': {
      if (world.queries.length === 0) return;
      const query = world.queries[g(() => fc.nat({ max: world.queries.length - 1 }))]!;
      const times = g(() => fc.integer({ min: 1, max: 3 }));
      for (let i = 0; i < times; i++) {
        const paging = g(() => fc.constantFrom('cursor', 'first', 'offset'));
        const at = g(() => fc.boolean()) ? h : other;
        if (paging === 'cursor') await world.list(at, query, 'cursor');
        else await world.list(at, query, { offset: paging === 'first' ? 0 : g(() => fc.nat({ max: 40 })) });
      }
      return;
    }
    case 'create':
      await world.bulkCreate(
        app,
        g(() => fc.array(world.recordArbitrary(), { minLength: 1, maxLength: 8 })),
      );
      return;
    case 'patch': {
      if (ids.length === 0) return;
      const id = g(() => fc.constantFrom(...ids));
      const record = g(() => world.recordArbitrary().filter((r) => Object.keys(r).length > 0));
      await world.patch(app, id, record);
      return;
    }
    case 'delete':
      if (ids.length === 0) return;
      await world.delete(
        app,
        g(() => fc.subarray(ids, { minLength: 1, maxLength: Math.min(4, ids.length) })),
      );
      return;
    case 'upsert': {
      const incoming = g(() =>
        fc
          .uniqueArray(fc.constantFrom(...keys), { minLength: 1, maxLength: 4 })
          .chain((chosen) =>
            fc.tuple(
              ...chosen.map((key) => world.recordArbitrary().map((record) => ({ ...record, Key: key }))),
            ),
          ),
      );
      await world.upsert(app, incoming);
      return;
    }
    case 'createOthers':
      await world.createOthers(
        app,
        g(() => fc.integer({ min: 1, max: 3 })),
      );
      return;
    case 'patchOther': {
      if (world.others.length === 0) return;
      const id = g(() => fc.constantFrom(...world.others));
      const values = g(() =>
        fc.record(
          {
            Name: fc.constantFrom('o0', 'o1', 'o2', 'o3', 'o4', 'o5'),
            Points: fc.constantFrom(...numbers, null),
          },
          { requiredKeys: [] },
        ),
      );
      await world.patchOther(app, id, values);
      return;
    }
    case 'deleteOthers':
      if (world.others.length === 0) return;
      await world.deleteOthers(
        app,
        g(() => fc.subarray(world.others, { minLength: 1, maxLength: Math.min(2, world.others.length) })),
      );
      return;
    case 'schema': {
      const change = g(() => fc.constantFrom('count', 'option', 'extra', 'rollup'));
      if (change === 'count') await world.toggleCount(app);
      else if (change === 'rollup') await world.toggleRollup(app);
      else if (change === 'option')
        await world.renameOption(
          app,
          g(() => fc.constantFrom('Stage' as const, 'Tags' as const)),
          g(() => fc.nat()),
        );
      else await world.toggleExtra(app);
      // The queries just listed (perhaps counted and cached) again, on both instances.
      for (const query of world.queries.slice(0, 2)) {
        await world.list(h, query, { offset: 0 });
        await world.list(other, query, { offset: 0 });
      }
      return;
    }
  }
}

describe('every total is exact', () => {
  it('through random writes and schema changes between pages', async () => {
    let lists = 0;
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        const world = await World.create();
        await world.createOthers(h, 4);
        await world.bulkCreate(
          h,
          g(() => fc.array(world.recordArbitrary(), { minLength: 10, maxLength: 25 })),
        );
        const steps = g(() => fc.integer({ min: 20, max: 40 }));
        for (let i = 0; i < steps; i++) {
          const kind = g(() => stepKind);
          await runStep(world, g, kind);
          // Every write is followed by the queries listed before it, so a cached count would be served.
          if (kind !== 'newQuery' && kind !== 'repeat') {
            for (const query of world.queries.slice(0, 3)) {
              await world.list(g(() => fc.boolean()) ? h : other, query, 'cursor');
            }
          }
        }
        lists += world.lists;
      }),
      { numRuns: 10, interruptAfterTimeLimit: 60_000 },
    );
    expect(lists).toBeGreaterThan(100);
  }, 120_000);
});

describe('each kind of change between the same queries', () => {
  /** Twelve records over two linked records; every query asked twice on both instances before the change and after. */
  async function seeded(): Promise<World> {
    const world = await World.create();
    await world.createOthers(h, 2);
    await world.bulkCreate(
      h,
      Array.from({ length: 12 }, (_, i) => ({
        Name: `n${i}`,
        Key: `k${i}`,
        Count: i % 4,
        Stage: ['A', 'B', 'C'][i % 3],
        Tags: i % 2 === 0 ? ['a'] : ['b'],
        Link: i % 3 === 0 ? [] : [world.others[i % 2]],
        Extra: i % 2 === 0 ? 1 : null,
      })),
    );
    return world;
  }
  const field = (world: World, name: string) => world.field(name)!.id;

  it.each<[string, (world: World) => Filter[], (world: World) => Promise<void>]>([
    [
      'a PATCH',
      () => [{ field: 'Count', greater_than: 1 }],
      (world) => world.patch(other, [...world.rows.keys()][0]!, { Count: 3 }),
    ],
    [
      'an upsert that updates',
      () => [{ field: 'Stage', equals: 'A' }],
      (world) => world.upsert(h, [{ Key: 'k1', Stage: 'A' }]),
    ],
    [
      'a delete of a linked record',
      (world) => [
        { field: 'Link', is_empty: true },
        { field: field(world, 'Link'), contains: world.others[0]! },
      ],
      (world) => world.deleteOthers(other, [world.others[0]!]),
    ],
    [
      'a linked record changed, which rows look up and roll up',
      () => [
        { field: 'Link points', greater_than: 1 },
        { field: 'Link names', contains: 'o5' },
        { field: 'Link count', equals: 1 },
      ],
      (world) => world.patchOther(other, world.others[0]!, { Name: 'o5', Points: 100 }),
    ],
    [
      'a renamed option',
      () => [
        { field: 'Stage', is_empty: true },
        { field: 'Stage', in: ['A', 'B'] },
      ],
      (world) => world.renameOption(h, 'Stage', 0),
    ],
    [
      'a number field becoming text',
      () => [
        { field: 'Count', greater_than: 1 },
        { field: 'Count', is_empty: true },
      ],
      (world) => world.toggleCount(other),
    ],
    [
      'a field deleted',
      (world) => [
        { field: 'Extra', is_not_empty: true },
        { field: field(world, 'Extra'), is_empty: true },
      ],
      (world) => world.toggleExtra(h),
    ],
    [
      'a field deleted and created again under its name',
      (world) => [
        { field: 'Extra', is_not_empty: true },
        { field: 'Extra', is_empty: true },
        { field: field(world, 'Extra'), is_empty: true },
      ],
      async (world) => {
        await world.toggleExtra(h);
        await world.toggleExtra(other);
      },
    ],
  ])('%s', async (_name, filters, change) => {
    const world = await seeded();
    const queries: Query[] = filters(world).map((filter) => ({ filter, sort: [], limit: 1 }));
    for (const app of [h, other, h, other]) {
      for (const query of queries) await world.list(app, query, { offset: 0 });
    }
    await change(world);
    for (const app of [h, other, h, other]) {
      for (const query of queries) await world.list(app, query, { offset: 0 });
    }
  });
});

describe('parallel writers and readers', () => {
  it('never answer a total outside what the writes allow, and a quiet read is exact', async () => {
    const world = await World.create();
    const url = world.rowsUrl;
    const match = (Key: string) => ({ Key, Count: 5, Stage: 'A', Name: 'm' });
    const miss = (Key: string) => ({ Key, Count: 0, Stage: 'C', Name: 'x' });
    const filter: Filter = {
      and: [
        { field: 'Count', greater_than: 1 },
        { field: 'Stage', in: ['A', 'B'] },
      ],
    };
    // 30 matching records and 30 that do not, in pairs owned by the writers below.
    const seeded = await h.api
      .post(`${url}/bulk`)
      .set('Authorization', auth)
      .send({
        records: Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? match(`seed${i}`) : miss(`seed${i}`))),
      })
      .expect(201);
    const seededIds = (seeded.body.records as TableRecord[]).map((record) => record.id);
    const matching = seededIds.filter((_, i) => i % 2 === 0);
    const missing = seededIds.filter((_, i) => i % 2 === 1);
    const initial = matching.length;

    /** Each write, with its effect on the count of the filter and when it began and was answered. */
    const writes: { start: number; end: number; delta: number }[] = [];
    const reads: { start: number; end: number; total: number; where: string }[] = [];
    let writing = true;
    const timed = async (
      delta: number,
      request: () => PromiseLike<{ status: number; body: unknown }>,
      status: number,
    ) => {
      const start = performance.now();
      const response = await request();
      const end = performance.now();
      if (response.status !== status)
        throw new Error(`write: ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
      writes.push({ start, end, delta });
    };
    const via = (i: number) => (i % 2 === 0 ? h : other);
    const writers = [
      // Creates: three that match and two that do not, each time.
      async () => {
        for (let i = 0; i < 8; i++) {
          await timed(
            3,
            () =>
              via(i)
                .api.post(`${url}/bulk`)
                .set('Authorization', auth)
                .send({
                  records: [
                    match(`c${i}a`),
                    miss(`c${i}b`),
                    match(`c${i}c`),
                    miss(`c${i}d`),
                    match(`c${i}e`),
                  ],
                }),
            201,
          );
        }
      },
      // Updates that take a record out of the filter, and others that bring one in.
      async () => {
        for (let i = 0; i < 8; i++) {
          await timed(
            -1,
            () =>
              via(i)
                .api.patch(`${url}/${matching[i]}`)
                .set('Authorization', auth)
                .send({ record: { Count: 0 } }),
            200,
          );
          await timed(
            1,
            () =>
              via(i + 1)
                .api.patch(`${url}/${missing[i]}`)
                .set('Authorization', auth)
                .send({ record: { Count: 3, Stage: 'B' } }),
            200,
          );
        }
      },
      // Deletes: two matching records and one that does not match, each time.
      async () => {
        for (let i = 0; i < 6; i++) {
          const ids = [matching[10 + 2 * i]!, matching[11 + 2 * i]!, missing[10 + i]!];
          await timed(
            -2,
            () => via(i).api.post(`${url}/bulk-delete`).set('Authorization', auth).send({ ids }),
            200,
          );
        }
      },
      // Upserts on Key: a new matching record and a seeded miss turned into a match.
      async () => {
        const keyId = world.field('Key')!.id;
        for (let i = 0; i < 6; i++) {
          const seedIndex = 2 * (20 + i) + 1; // a record of `missing` no other writer touches
          await timed(
            2,
            () =>
              via(i + 1)
                .api.post(`${url}/bulk`)
                .set('Authorization', auth)
                .send({ matchOn: [keyId], records: [match(`u${i}`), match(`seed${seedIndex}`)] }),
            200,
          );
        }
      },
    ];
    const reader = (app: Harness, where: string) => async () => {
      let cursor: string | null = null;
      for (let i = 0; writing || i < 3; i++) {
        const limit = [1, 4, 10][i % 3]!;
        const body: object = cursor
          ? { filter, limit, cursor }
          : { filter, limit, offset: i % 4 === 3 ? 5 : 0 };
        const start = performance.now();
        const response: { status: number; body: Page } = await app.api
          .post(`${url}/list`)
          .set('Authorization', auth)
          .send(body);
        const end = performance.now();
        if (response.status !== 200)
          throw new Error(`read: ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
        reads.push({ start, end, total: response.body.total, where });
        cursor = i % 2 === 0 ? response.body.nextCursor : null;
      }
    };
    await Promise.all([
      Promise.all(writers.map((writer) => writer())).finally(() => {
        writing = false;
      }),
      reader(h, 'A')(),
      reader(h, 'A')(),
      reader(other, 'B')(),
      reader(other, 'B')(),
    ]);

    expect(reads.length).toBeGreaterThan(20);
    for (const read of reads) {
      // Visible for sure: what was answered before the read began. Perhaps visible: what began before it ended.
      let low = initial;
      let high = initial;
      for (const write of writes) {
        const acknowledged = write.end <= read.start;
        const begun = write.start < read.end;
        if (write.delta > 0) {
          if (acknowledged) low += write.delta;
          if (begun) high += write.delta;
        } else {
          if (begun) low += write.delta;
          if (acknowledged) high += write.delta;
        }
      }
      if (read.total < low || read.total > high) {
        throw new Error(
          `a read on instance ${read.where} answered total ${read.total}, outside [${low}, ${high}] that the writes allow`,
        );
      }
    }

    // Quiet now: every instance, every kind of page, the exact count.
    const all = await h.api.post(`${url}/list`).set('Authorization', auth).send({ limit: 2000 }).expect(200);
    const expected = (all.body.records as TableRecord[]).filter((record) =>
      matchesFilter(record, filter, world.meta),
    );
    const net = writes.reduce((sum, write) => sum + write.delta, initial);
    expect(expected).toHaveLength(net);
    for (const app of [h, other]) {
      for (const body of [{ limit: 1 }, { limit: 7, offset: 3 }, { limit: 2000 }, { offset: 5000 }]) {
        const page = await app.api
          .post(`${url}/list`)
          .set('Authorization', auth)
          .send({ filter, ...body })
          .expect(200);
        expect(page.body.total).toBe(net);
      }
      const first = await app.api
        .post(`${url}/list`)
        .set('Authorization', auth)
        .send({ filter, limit: 5 })
        .expect(200);
      const next = await app.api
        .post(`${url}/list`)
        .set('Authorization', auth)
        .send({ filter, limit: 5, cursor: first.body.nextCursor })
        .expect(200);
      expect(next.body.total).toBe(net);
      expect(next.body.records.map((record: TableRecord) => record.id)).toEqual(
        expected.slice(5, 10).map((record) => record.id),
      );
    }
  }, 60_000);
});
