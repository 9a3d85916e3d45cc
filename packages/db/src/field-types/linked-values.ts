import type { RollupFunction } from '@recordbase/contracts/fields';
import { FORMULA_COLUMN_TYPE } from '../formula/compile';
import type { FormulaType } from '../formula/types';
import { linkTableName, qualifiedTable } from '../physical/naming';
import { checkbox } from './checkbox';
import { neverWritten, notConvertedInto, unwrittenParts } from './computed';
import { date } from './date';
import { datetime } from './datetime';
import { multipleSelect } from './multiple-select';
import { number } from './number';
import { asArray } from './oracle';
import { singleLineText } from './single-line-text';
import type { AddedColumn, FieldShape, FieldSql, FieldTypeModule, WriteContext } from './types';

/**
 * What count, lookup and rollup share: a value computed from the records a link field of the same
 * record holds, kept in a column of the record table so that filters, sorts and indexes read it
 * like any column. The write that changes a record's links sets it in the same statement (from the
 * links it writes); a change to the linked records refreshes it from the link table in the same
 * transaction (the records service's linked-refresh.ts). Either way the SQL is the one the
 * service compiled when the field was saved (KeptLinkedValues): each linked record's element,
 * gathered over the record's links, `lnk(linked_id, position)`, then the value from them.
 */

/** A count, lookup or rollup template as the service keeps it (the client sees the first three). */
export interface KeptLinkedValues {
  /** The link field of the same table, by id. */
  linkFieldId: string;
  /** The field of the linked table (lookup, rollup), by id. */
  fieldId?: string;
  function?: RollupFunction;
  resultType: FormulaType;
  /** The linked table's id. */
  tableId: string;
  /**
   * Each linked record's part of the value: SQL over its row aliased `r` in `linkedTable`
   * (schema-qualified). A count has none: it reads only the links.
   */
  element?: string;
  linkedTable?: string;
  /**
   * The value from one record's elements: `head`, then a relation `x(v, position)` of them (`v`
   * one linked record's element, `position` its link's rank), then `tail`. Split so that no text
   * is ever searched for a placeholder.
   */
  head: string;
  tail: string;
}

export const keptLinkedValues = (field: Pick<FieldShape, 'template'>) => field.template as KeptLinkedValues;

/**
 * How a write that gives a record its links reads the linked records: locked against a
 * concurrent update until the write's commit. Without it, a write linking a record computed its
 * value from the linked record as it was while another transaction changed that record, whose
 * refresh could not yet see the new link: the value would stay stale. With it, one of the two
 * waits for the other's commit, and then reads (the linked record's new value, or the new link)
 * what the other wrote. A refresh of the records linking to a changed record needs no such lock:
 * it holds the records it refreshes (linked-refresh.ts), so of two refreshes of one record the
 * second reads what the first committed.
 */
const READ_LOCK = 'FOR SHARE';

/**
 * A select of the arrays `a0`, `a1`… of the elements of `fields` (all over one link field), in
 * link order, from a relation of one record's links `links` (`… AS lnk(linked_id, position)`):
 * one pass over the links, each linked record read and locked once for every field.
 */
function gatheredSql(
  fields: readonly KeptLinkedValues[],
  links: string,
  locked = true,
  /** Also the linked ids, in link order, as `ids` (uuid[]; NULL when there are none). */
  withIds = false,
): string {
  const read = fields.flatMap((kept, i) => (kept.element === undefined ? [] : [`${kept.element} AS e${i}`]));
  const arrays = fields.map(
    (kept, i) =>
      `array_agg(${kept.element === undefined ? 'NULL::int' : `lr.e${i}`} ORDER BY lnk.position) AS a${i}`,
  );
  if (withIds) arrays.push('array_agg(lnk.linked_id ORDER BY lnk.position) AS ids');
  const linkedTable = fields.find((kept) => kept.element !== undefined)?.linkedTable;
  const rows =
    read.length > 0
      ? ` CROSS JOIN LATERAL (SELECT ${read.join(', ')} FROM ${linkedTable} r WHERE r.id = lnk.linked_id${locked ? ` ${READ_LOCK}` : ''}) lr`
      : '';
  return `SELECT ${arrays.join(', ')} FROM ${links}${rows}`;
}

/** The value of field `i` of a gathering `g` (gatheredSql). */
const valueOfGathered = (kept: KeptLinkedValues, i: number) =>
  `${kept.head}unnest(g.a${i}) WITH ORDINALITY AS x(v, position)${kept.tail}`;

/** One field's value from a relation of links (SQL of `... AS lnk(linked_id, position)`). */
const linkedValueSql = (kept: KeptLinkedValues, links: string) =>
  `(SELECT ${valueOfGathered(kept, 0)} FROM (${gatheredSql([kept], links)}) g)`;

/** The links of the record aliased `r`, as stored. */
const storedLinks = (linkFieldId: string, schemaName: string) =>
  `(SELECT l.linked_id, l.position FROM ${qualifiedTable(schemaName, linkTableName(linkFieldId))} l WHERE l.record_id = r.id) AS lnk`;

/**
 * The values of `fields`, all over one link field, of the record aliased `r` from its stored
 * links, in one pass over them: a FROM item to join after `r`, aliased `alias`, with the columns
 * v0, v1… in the order of `fields`. The linked records are read locked (READ_LOCK) unless
 * `lockLinked` is false: a refresh of records the caller already holds.
 */
export function storedLinkedValuesJoin(
  fields: readonly KeptLinkedValues[],
  schemaName: string,
  alias: string,
  lockLinked = true,
  /** Also the column `ids`: the linked ids in link order (uuid[], NULL for none), read in the same pass. */
  withIds = false,
): string {
  const values = fields.map((kept, i) => `${valueOfGathered(kept, i)} AS v${i}`);
  if (withIds) values.push('g.ids AS ids');
  return `CROSS JOIN LATERAL (SELECT ${values.join(', ')}
    FROM (${gatheredSql(fields, storedLinks(fields[0]!.linkFieldId, schemaName), lockLinked, withIds)}) g) ${alias}`;
}

/**
 * A link field's value as JSON text from its linked ids in link order (uuid[], NULL for none), as
 * reads render it from the link table.
 */
export const linkIdsJsonSql = (ids: string) => `COALESCE(array_to_json(${ids})::text, '[]')`;

/**
 * The statements that set the field's column of every record of its table (schema-qualified,
 * `column` quoted) from its stored links: when the field is added, or its template or the field
 * it reads changes. One join grouped by record rather than a lookup of each record's links, and
 * rows left alone where the value stays (a new column's default is the value over no links).
 * Writes to the linked table wait until the field's transaction commits, as a refresh's FOR SHARE
 * makes them wait for a few records: a linked record changed meanwhile would otherwise keep a
 * value the fill read before the change, which the writer, not knowing the field yet, would not
 * refresh.
 */
export function fillLinkedValuesSql(
  kept: KeptLinkedValues,
  schemaName: string,
  table: string,
  column: string,
): string[] {
  const links = qualifiedTable(schemaName, linkTableName(kept.linkFieldId));
  const reads = kept.element !== undefined;
  const gathered = `SELECT lnk.record_id, array_agg(${reads ? kept.element : 'NULL::int'} ORDER BY lnk.position) AS a0
    FROM ${links} lnk${reads ? ` JOIN ${kept.linkedTable} r ON r.id = lnk.linked_id` : ''} GROUP BY lnk.record_id`;
  return [
    ...(reads ? [`LOCK TABLE ${kept.linkedTable} IN SHARE MODE`] : []),
    `UPDATE ${table} AS r SET ${column} = v.value
       FROM (SELECT t.id, ${valueOfGathered(kept, 0)} AS value FROM ${table} t LEFT JOIN (${gathered}) g ON g.record_id = t.id) v
      WHERE v.id = r.id AND r.${column} IS DISTINCT FROM v.value`,
  ];
}

/** The value from a uuid[] of linked ids in order (a write's own links; NULL reads as none). */
export const givenLinkedValueSql = (kept: KeptLinkedValues, ids: string) =>
  linkedValueSql(kept, `unnest(${ids}) WITH ORDINALITY AS lnk(linked_id, position)`);

/** The column of a value that is an array: its JSON, which keeps the linked values' own types. */
const JSON_ARRAY_TYPE = 'jsonb';

/** The value over no linked records, which new records start with (null where the contract says). */
function emptyValue(kept: KeptLinkedValues | undefined): string | undefined {
  if (!kept) return undefined;
  if (kept.resultType === 'array') return "'[]'::jsonb";
  if (kept.function === undefined) return '0'; // count
  return ['sum', 'count_non_empty', 'count_unique'].includes(kept.function) ? '0' : undefined;
}

const texts = (column: string) => `public.rb_f_json_texts(${column})`;

/**
 * A JSON array of values (lookups, array_unique) read as a multiple select reads its options:
 * each value as text (docs/formulas.md), while the API sees the values in their own types.
 */
const jsonArrayReading: FieldTypeModule = {
  ...(multipleSelect as FieldTypeModule),
  json: ({ column }) => `COALESCE(${column}::text, '[]')`,
  sqlValue: ({ column }) => column,
  // A JSON array has no order an index could serve.
  readIndex: undefined,
  filters: Object.fromEntries(
    Object.entries(multipleSelect.filters).map(([operator, sql]) => [
      operator,
      (field: FieldSql, ctx: Parameters<NonNullable<typeof sql>>[1]) =>
        sql!({ ...field, column: texts(field.column) }, ctx),
    ]),
  ),
  sort: (field) => multipleSelect.sort({ ...field, column: texts(field.column) }),
  readings: (column) => multipleSelect.readings(texts(column)),
  oracle: {
    matches: (value, operator, operand) =>
      multipleSelect.oracle.matches(asArray<unknown>(value).map(String), operator, operand),
    sortKey: (value) => asArray<unknown>(value).map(String),
  },
};

const RESULT_MODULES: Readonly<Record<FormulaType, FieldTypeModule>> = {
  text: singleLineText as FieldTypeModule,
  number: number as FieldTypeModule,
  // and/or over no records is null, which a checkbox column never holds.
  checkbox: { ...(checkbox as FieldTypeModule), json: ({ column }) => `COALESCE(${column}::text, 'null')` },
  date: date as FieldTypeModule,
  datetime: datetime as FieldTypeModule,
  array: jsonArrayReading,
};

/**
 * The module of one of the three types: its column by its result type, filled when added and kept
 * by the writes; reads, filters and sorts as its result type's module (forField).
 */
export function linkedValuesModule<T extends 'count' | 'lookup' | 'rollup'>(
  type: T,
  defaultResult: FormulaType,
): FieldTypeModule<T> {
  const columnOf = (field: FieldShape) => {
    const kept = keptLinkedValues(field);
    const resultType = kept?.resultType ?? defaultResult;
    const empty = emptyValue(kept);
    return {
      sqlType: resultType === 'array' ? JSON_ARRAY_TYPE : FORMULA_COLUMN_TYPE[resultType],
      ...(empty ? { notNullDefault: empty } : {}),
    };
  };
  const own = {
    type,
    formula: defaultResult,
    derived: true as const,
    primary: false as const,
    columnOf,
    columnAdded: ({ table, column, field, schemaName }: AddedColumn) =>
      fillLinkedValuesSql(keptLinkedValues(field), schemaName, table, column),
    written: {
      // A record's links given by the write: its value from them, in the same statement.
      inserted: (ctx: WriteContext) => {
        const ids = ctx.links?.(keptLinkedValues(ctx.field).linkFieldId);
        return ids === undefined ? undefined : givenLinkedValueSql(keptLinkedValues(ctx.field), ids);
      },
      updated: (ctx: WriteContext) => {
        const ids = ctx.links?.(keptLinkedValues(ctx.field).linkFieldId);
        return ids === undefined
          ? undefined
          : `CASE WHEN ${ids} IS NULL THEN ${ctx.column} ELSE ${givenLinkedValueSql(keptLinkedValues(ctx.field), ids)} END`;
      },
    },
    coerce: neverWritten,
    convertFrom: notConvertedInto,
  };
  const module: FieldTypeModule<T> = {
    ...(RESULT_MODULES[defaultResult] as unknown as FieldTypeModule<T>),
    ...own,
    ...unwrittenParts,
    forField: (field) => {
      const reading = RESULT_MODULES[keptLinkedValues(field)?.resultType ?? defaultResult];
      return {
        ...reading,
        ...own,
        formula: keptLinkedValues(field)?.resultType ?? defaultResult,
        formulaValue: reading === jsonArrayReading ? texts : undefined,
        ...unwrittenParts,
      } as FieldTypeModule;
    },
  };
  return module;
}
