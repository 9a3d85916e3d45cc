import type { FilterOperator } from '@recordbase/contracts/filters';
import { linkTableName, qualifiedTable } from '../physical/naming';
import { needUuid, needUuidList } from './operands';
import { asArray, lower, notSupported } from './oracle';
import type { ConditionContext, FieldSql, FieldTypeModule } from './types';

/**
 * Records of another table, in order. No column: one row per link in the field's junction table
 * (see linkTableName), which the DDL creates and the write statement fills.
 */

const links = (sql: FieldSql) => qualifiedTable(sql.schemaName, linkTableName(sql.field.id));

const someLink = (sql: FieldSql, condition: string) =>
  `EXISTS (SELECT 1 FROM ${links(sql)} AS lnk WHERE lnk.record_id = r.id${condition})`;
const isLinked = (ctx: ConditionContext) => ` AND lnk.linked_id = ${ctx.params.add(needUuid(ctx))}::uuid`;
const isLinkedToAny = (ctx: ConditionContext) =>
  ` AND lnk.linked_id = ANY(${ctx.params.add(needUuidList(ctx))}::uuid[])`;

/** Linked records in the oracle: UUIDs, compared without regard to case as PostgreSQL's uuid type does. */
function matchLinkedRecords(linkedIds: string[], operator: FilterOperator, operand: unknown): boolean {
  const ids = linkedIds.map(lower);
  switch (operator) {
    case 'contains':
      return ids.includes(lower(operand as string));
    case 'does_not_contain':
      return !ids.includes(lower(operand as string));
    case 'is_empty':
      return ids.length === 0;
    case 'is_not_empty':
      return ids.length > 0;
    case 'in':
      return (operand as string[]).some((id) => ids.includes(lower(id)));
    case 'not_in':
      return !(operand as string[]).some((id) => ids.includes(lower(id)));
    default:
      throw notSupported(operator, 'linked records');
  }
}

export const linkedRecord: FieldTypeModule<'linked_record'> = {
  type: 'linked_record',
  formula: 'array',
  primary: false,
  prepared: 'links',
  // Ids in the lower case PostgreSQL answers with, each once.
  coerce: (value) => [...new Set(((value as string[] | null) ?? []).map((id) => id.toLowerCase()))],
  // The linked ids in their order, as the API lists them.
  sqlValue: (sql) =>
    `ARRAY(SELECT l.linked_id FROM ${links(sql)} l WHERE l.record_id = r.id ORDER BY l.position)`,
  json: (sql) =>
    `COALESCE((SELECT json_agg(l.linked_id ORDER BY l.position) FROM ${links(sql)} l WHERE l.record_id = r.id)::text, '[]')`,
  filters: {
    contains: (sql, ctx) => someLink(sql, isLinked(ctx)),
    does_not_contain: (sql, ctx) => `NOT ${someLink(sql, isLinked(ctx))}`,
    is_empty: (sql) => `NOT ${someLink(sql, '')}`,
    is_not_empty: (sql) => someLink(sql, ''),
    in: (sql, ctx) => someLink(sql, isLinkedToAny(ctx)),
    not_in: (sql, ctx) => `NOT ${someLink(sql, isLinkedToAny(ctx))}`,
  },
  // By how many there are.
  sort: (sql) => ({
    expression: `(SELECT count(*) FROM ${links(sql)} AS lnk WHERE lnk.record_id = r.id)`,
    kind: 'bigint',
  }),
  readings: () => ({}),
  convertFrom: () => null,
  oracle: {
    matches: (value, operator, operand) => matchLinkedRecords(asArray<string>(value), operator, operand),
    sortKey: (value) => asArray(value).length,
  },
};
