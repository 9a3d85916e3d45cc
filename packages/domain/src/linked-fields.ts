import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import type { FieldTemplate, FieldType, RollupFunction } from '@recordbase/contracts/fields';
import type { Tx } from '@recordbase/db';
import {
  type KeptLinkedValues,
  keptFormula,
  keptLinkedValues,
  moduleOfField,
} from '@recordbase/db/field-types';
import { type FormulaType, formulaResultSql, formulaTextSql, formulaTruthySql } from '@recordbase/db/formula';
import { fieldValueSql, qualifiedTable } from '@recordbase/db/physical';
import { nameKey } from './access';
import { fieldReader, type TableField } from './formula-fields';

/**
 * Count, lookup and rollup fields as a table's schema keeps them: a template a client writes
 * (fields by id or name) checked against the link field and the linked table, and compiled to the
 * SQL that computes the value from a record's links (KeptLinkedValues,
 * packages/db/src/field-types/linked-values.ts); compiled again when the field it reads changes;
 * and what stands in the way of a change (a cycle, a field they still read).
 */

export const LINKED_VALUE_TYPES: readonly FieldType[] = ['count', 'lookup', 'rollup'];

export const isLinkedValues = (field: { type: string }) =>
  LINKED_VALUE_TYPES.includes(field.type as FieldType);

/** A field of the database, with its table. */
export interface DatabaseField extends TableField {
  tableId: string;
}

type WrittenTemplate = { linkFieldId: string; fieldId?: string; function?: RollupFunction };

const byRef = <F extends { id: string; name: string }>(fields: readonly F[], ref: string) =>
  fields.find((field) => field.id === ref) ?? fields.find((field) => nameKey(field.name) === nameKey(ref));

/** What a rollup function gives, for values of `type`; null when it does not apply to them. */
function rollupResult(fn: RollupFunction, type: FormulaType): FormulaType | null {
  switch (fn) {
    case 'sum':
    case 'average':
      return type === 'number' ? 'number' : null;
    case 'min':
    case 'max':
      return type === 'number' || type === 'date' || type === 'datetime' ? type : null;
    case 'count_non_empty':
    case 'count_unique':
      return 'number';
    case 'array_join':
      return 'text';
    case 'array_unique':
      return 'array';
    case 'and':
    case 'or':
      return 'checkbox';
  }
}

/** Whether a value (of a formula kind, an array's item being text) counts as filled. */
function filled(value: string, type: FormulaType): string {
  if (type === 'text' || type === 'array') return `(public.rb_f_nonempty(${value}) IS NOT NULL)`;
  if (type === 'checkbox') return `(${value} IS TRUE)`;
  return `(${value} IS NOT NULL)`;
}

/**
 * A rollup's reading of each linked record: the element kept (`reading.sql`, or an array's JSON),
 * and what its aggregate runs over, from the elements `x(v, position)`: each value in order, an
 * array's items one by one.
 */
function valuesFrom(reading: { sql: string; type: FormulaType }) {
  if (reading.type !== 'array') {
    return { element: reading.sql, from: '', value: 'x.v', type: reading.type, order: 'x.position' };
  }
  // As JSON, since arrays of arrays of different lengths cannot be gathered in one array.
  return {
    element: `to_jsonb(${reading.sql})`,
    from: 'CROSS JOIN LATERAL jsonb_array_elements_text(x.v) WITH ORDINALITY AS e(v, n)',
    value: 'e.v',
    type: 'text' as FormulaType,
    order: 'x.position, e.n',
  };
}

/** The items of the elements `x(v, position)` (JSON as the API renders values), arrays' one by one, empty ones left out. */
const JSON_ITEMS = `CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(x.v) WHEN 'array' THEN x.v ELSE jsonb_build_array(x.v) END)
      WITH ORDINALITY AS e(v, n) WHERE jsonb_typeof(e.v) <> 'null'`;

/** The aggregate of a rollup over the values, in its column's form. */
function rollupAggregate(fn: RollupFunction, values: ReturnType<typeof valuesFrom>, result: FormulaType) {
  const { value, type, order } = values;
  const nonEmpty = filled(value, type);
  switch (fn) {
    case 'sum':
      return formulaResultSql({ sql: `COALESCE(sum(${value}), 0)`, type: 'number' });
    case 'average':
      return formulaResultSql({ sql: `avg(${value})`, type: 'number' });
    case 'min':
    case 'max':
      return formulaResultSql({ sql: `${fn}(${value})`, type: result });
    case 'count_non_empty':
      return `(count(*) FILTER (WHERE ${nonEmpty}))::float8`;
    case 'count_unique':
      return `(count(DISTINCT ${value}) FILTER (WHERE ${nonEmpty}))::float8`;
    case 'array_join':
      return `public.rb_f_nonempty(string_agg(${formulaTextSql({ sql: value, type })}, ', ' ORDER BY ${order}) FILTER (WHERE ${nonEmpty}))`;
    case 'and':
      return `bool_and(${formulaTruthySql({ sql: value, type })})`;
    case 'or':
      return `bool_or(${formulaTruthySql({ sql: value, type })})`;
    case 'array_unique':
      throw new Error('array_unique is built from the values as JSON');
  }
}

/** The fields a field reads (same table, or the linked table's `fieldId`), by id. */
function readsAcross(field: DatabaseField): string[] {
  if (field.type === 'formula') return keptFormula(field)?.fieldIds ?? [];
  if (isLinkedValues(field)) {
    const kept = keptLinkedValues(field);
    return kept.fieldId ? [kept.linkFieldId, kept.fieldId] : [kept.linkFieldId];
  }
  return [];
}

/** Whether `from` reads `target`, directly or through any chain of computed fields of the database. */
export function readsThrough(fields: readonly DatabaseField[], from: string, target: string): boolean {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const seen = new Set<string>();
  const pending = [from];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (id === target) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    const field = byId.get(id);
    if (field) pending.push(...readsAcross(field));
  }
  return false;
}

/** Whether a field reads itself through any chain of computed fields of the database. */
export function readsItself(fields: readonly DatabaseField[], id: string): boolean {
  const field = fields.find((candidate) => candidate.id === id);
  return field !== undefined && readsAcross(field).some((read) => readsThrough(fields, read, id));
}

/** Every field of the database, as dependencies between tables are checked against. */
export async function databaseFields(tx: Tx, databaseId: string): Promise<DatabaseField[]> {
  return (await tx.field.findMany({ where: { table: { databaseId } } })) as DatabaseField[];
}

/**
 * A count, lookup or rollup written by a client for the field `self` of `table` (whose fields are
 * `siblings`, `self` as it was among them or not), checked and compiled: the template the service
 * keeps. A 400 at `where` naming what is wrong otherwise. `known` is every field of the database,
 * when the caller has already read them.
 */
export async function keepLinkedValues(
  tx: Tx,
  self: { id: string; name: string; type: FieldType },
  written: WrittenTemplate,
  table: { id: string; databaseId: string; schemaName: string },
  siblings: readonly TableField[],
  where: InputPath,
  known?: readonly DatabaseField[],
): Promise<KeptLinkedValues> {
  const at = (key: string) => [...where, 'template', key];
  const link = byRef(
    siblings.filter((field) => field.id !== self.id),
    written.linkFieldId,
  );
  if (!link)
    throw invalid(at('linkFieldId'), `no field ${JSON.stringify(written.linkFieldId)} in this table`);
  if (link.type !== 'linked_record') {
    throw invalid(
      at('linkFieldId'),
      `field ${JSON.stringify(link.name)} is a ${link.type} field; a ${self.type} field reads a linked_record field`,
    );
  }
  const linkedTableId = (link.template as FieldTemplate<'linked_record'>).tableId;
  const linkedTable = qualifiedTable(table.schemaName, linkedTableId);
  const base = { linkFieldId: link.id, tableId: linkedTableId };
  if (self.type === 'count') {
    return { ...base, resultType: 'number', head: '(SELECT count(*)::float8 FROM ', tail: ')' };
  }
  const all = known ?? (await databaseFields(tx, table.databaseId));
  const linkedFields =
    linkedTableId === table.id
      ? siblings.filter((field) => field.id !== self.id)
      : all.filter((field) => field.tableId === linkedTableId);
  const read = byRef(linkedFields, written.fieldId ?? '');
  if (!read) {
    throw invalid(at('fieldId'), `no field ${JSON.stringify(written.fieldId)} in the linked table`);
  }
  if (read.id === self.id || readsThrough(all, read.id, self.id)) {
    throw invalid(at('fieldId'), `field ${JSON.stringify(read.name)} reads this field: it would read itself`);
  }
  const kept = { ...base, fieldId: read.id, linkedTable };
  const asJson = self.type === 'lookup' || written.function === 'array_unique';
  if (asJson) {
    if (read.type === 'attachments') {
      throw invalid(
        at('fieldId'),
        `field ${JSON.stringify(read.name)} holds attachments, whose links are signed for each reader: a ${self.type} cannot show them; roll them up with count_non_empty or array_join (their file names)`,
      );
    }
    const json = moduleOfField(read).json({
      field: read,
      schemaName: table.schemaName,
      column: fieldValueSql(read),
    });
    const element = `(${json})::jsonb`;
    if (self.type === 'lookup' && moduleOfField(read).formula !== 'array') {
      // A value that is never an array is its own item: no array to take apart per element.
      return {
        ...kept,
        resultType: 'array',
        element,
        head: "(SELECT COALESCE(jsonb_agg(x.v ORDER BY x.position) FILTER (WHERE jsonb_typeof(x.v) <> 'null'), '[]'::jsonb) FROM ",
        tail: ')',
      };
    }
    if (self.type === 'lookup') {
      return {
        ...kept,
        resultType: 'array',
        element,
        head: "(SELECT COALESCE(jsonb_agg(e.v ORDER BY x.position, e.n), '[]'::jsonb) FROM ",
        tail: ` ${JSON_ITEMS})`,
      };
    }
    return {
      ...kept,
      function: 'array_unique',
      resultType: 'array',
      element,
      head: "(SELECT COALESCE(jsonb_agg(u.v ORDER BY u.first), '[]'::jsonb) FROM (SELECT e.v, min(ARRAY[x.position, e.n]) AS first FROM ",
      tail: ` ${JSON_ITEMS} GROUP BY e.v) u)`,
    };
  }
  const fn = written.function!;
  const reading = fieldReader(
    table.schemaName,
    new Map(linkedFields.map((field) => [field.id, field])),
    'r.',
  )(read.id);
  const values = valuesFrom(reading);
  const resultType = rollupResult(fn, values.type);
  if (!resultType) {
    throw invalid(
      at('function'),
      `${fn} needs ${fn === 'sum' || fn === 'average' ? 'numbers' : 'numbers or dates'}; field ${JSON.stringify(read.name)} holds ${reading.type} values`,
    );
  }
  return {
    ...kept,
    function: fn,
    resultType,
    element: values.element,
    head: `(SELECT ${rollupAggregate(fn, values, resultType)} FROM `,
    tail: ` ${values.from})`,
  };
}

/** A count, lookup or rollup template as a client reads it: what it wrote, fields by id. */
export function shownLinkedTemplate(template: unknown) {
  const kept = keptLinkedValues({ template });
  return {
    linkFieldId: kept.linkFieldId,
    ...(kept.fieldId !== undefined ? { fieldId: kept.fieldId } : {}),
    ...(kept.function !== undefined ? { function: kept.function } : {}),
  };
}

/** The count, lookup and rollup fields of the database that read `fieldId` (as their link or their field). */
export function linkedReadersOf(fields: readonly DatabaseField[], fieldId: string): DatabaseField[] {
  return fields.filter((field) => {
    if (!isLinkedValues(field)) return false;
    const kept = keptLinkedValues(field);
    return kept.linkFieldId === fieldId || kept.fieldId === fieldId;
  });
}
