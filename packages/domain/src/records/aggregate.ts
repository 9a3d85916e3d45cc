import { invalid } from '@recordbase/contracts/domain-errors';
import { type FieldType, groupOfField } from '@recordbase/contracts/fields';
import { type AggregateRecordsRequest, MAX_AGGREGATE_GROUPS } from '@recordbase/contracts/records';
import { moduleOfField } from '@recordbase/db/field-types';
import { qualifiedTable, SqlParams } from '@recordbase/db/physical';
import { compileFilter } from './query-compiler';
import type { Queryable } from './store';
import { fieldSql, requireField, type TableMeta } from './table-meta';
import { readFilter } from './view-reads';

/**
 * Aggregation in one statement: the matching records grouped by the groupBy fields' values, each
 * group rendered as JSON by PostgreSQL ({key, values}), in the order a sort on those fields gives,
 * one past the cap fetched to tell whether groups were left out.
 */

/** Values with no single scalar to group by. */
const UNGROUPABLE: ReadonlySet<FieldType> = new Set(['multiple_select', 'attachments', 'linked_record']);
const ORDERED_TYPES: ReadonlySet<string> = new Set(['number', 'date']);

/** One aggregation as SQL giving its JSON text (never SQL NULL). */
function aggregationSql(
  table: TableMeta,
  aggregation: AggregateRecordsRequest['aggregations'][number],
  index: number,
  params: SqlParams,
): string {
  if (aggregation.fn === 'count') return 'count(*)::text';
  const where = ['aggregations', index];
  const field = requireField(table, aggregation.field as string, [...where, 'field']);
  const module = moduleOfField(field);
  const group = groupOfField(field);
  const sql = fieldSql(table, field);
  if (aggregation.fn === 'count_empty' || aggregation.fn === 'count_not_empty') {
    const operator = aggregation.fn === 'count_empty' ? 'is_empty' : 'is_not_empty';
    const condition = module.filters[operator]?.(sql, {
      operator,
      operand: true,
      params,
      needs: (what) => invalid(where, `needs ${what}`),
    });
    if (condition === undefined) throw invalid([...where, 'fn'], `a ${field.type} field is never empty`);
    return `(count(*) FILTER (WHERE ${condition}))::text`;
  }
  const refuse = () =>
    invalid(
      [...where, 'fn'],
      `"${aggregation.fn}" does not apply to the ${field.type} field ${JSON.stringify(field.name)}`,
    );
  if (aggregation.fn === 'sum' || aggregation.fn === 'avg') {
    if (group !== 'number') throw refuse();
    return `COALESCE(to_json(${aggregation.fn}(${sql.column}::double precision))::text, 'null')`;
  }
  // min and max keep the field's own type, rendered as its values are.
  if (!ORDERED_TYPES.has(group)) throw refuse();
  return module.json({ ...sql, column: `${aggregation.fn}(${sql.column})` });
}

export async function aggregateRecords(
  client: Queryable,
  table: TableMeta,
  request: AggregateRecordsRequest,
): Promise<string> {
  const params = new SqlParams();
  const groupFields = (request.groupBy ?? []).map((ref, index) => {
    const field = requireField(table, ref, ['groupBy', index]);
    if (UNGROUPABLE.has(field.type)) {
      throw invalid(['groupBy', index], `a ${field.type} field holds no single value to group by`);
    }
    return field;
  });
  const values = request.aggregations.map((aggregation, index) =>
    aggregationSql(table, aggregation, index, params),
  );
  const filter = readFilter(table, request);
  const where = filter ? compileFilter(filter, table, params) : 'TRUE';
  const key = groupFields.map(
    (field) =>
      `${params.add(field.name)}::text, (${moduleOfField(field).json(fieldSql(table, field))})::json`,
  );
  const row = `json_build_object('key', json_build_object(${key.join(', ')}), 'values', json_build_array(${values.map((value) => `(${value})::json`).join(', ')}))::text`;
  const columns = groupFields.map((field) => fieldSql(table, field).column);
  // Empty values first, as an ascending sort on the fields puts them.
  const order = groupFields.map((field) => {
    const { expression } = moduleOfField(field).sort(fieldSql(table, field));
    return `${expression} ASC NULLS FIRST`;
  });
  const grouping = columns.length > 0 ? `GROUP BY ${columns.join(', ')} ORDER BY ${order.join(', ')}` : '';
  const limit = params.add(MAX_AGGREGATE_GROUPS + 1);
  const result = await client.query<{ j: string }>(
    `SELECT ${row} AS j FROM ${qualifiedTable(table.schemaName, table.id)} r WHERE ${where} ${grouping} LIMIT ${limit}`,
    params.values,
  );
  const truncated = result.rows.length > MAX_AGGREGATE_GROUPS;
  const groups = result.rows.slice(0, MAX_AGGREGATE_GROUPS).map((group) => group.j);
  return `{"groups":[${groups.join(',')}],"truncated":${truncated}}`;
}
