import { attachViewMembers, createdViewMembersSql, type ViewMembers } from '@recordbase/db';
import { qualifiedTable, SqlParams } from '@recordbase/db/physical';
import { compileFilter } from './query-compiler';
import type { Queryable } from './store';
import type { TableMeta, ViewMeta } from './table-meta';
import { readFilter } from './view-reads';

/**
 * Which records of a write are inside the views webhooks watch (api-contract "Views": a webhook's
 * `viewId`), before and after it. Worked out in the write's transaction by each view's own
 * filter and search, compiled as a listing through the view would be, so a webhook hears a record
 * enter or leave a view exactly when a read of the view would start or stop listing it. Only the
 * views some webhook names are watched (TableMeta's `watched`): other writes pay nothing.
 */

/** Per watched view, the ids inside it at one moment. */
export type Inside = ReadonlyMap<string, ReadonlySet<string>>;

export function watchedViews(table: TableMeta): readonly ViewMeta[] {
  return (table.views ?? []).filter((view) => view.watched);
}

/** A view's condition on the table's row `r`: its filter and search; TRUE when it has neither. */
export function viewConditionSql(table: TableMeta, view: ViewMeta, params: SqlParams): string {
  const filter = readFilter(table, { view: view.id });
  return filter === undefined ? 'TRUE' : compileFilter(filter, table, params, ['view', 'filter']);
}

/** The ids among `ids` inside each watched view now, in the caller's snapshot; undefined: none watched. */
export async function insideNow(
  client: Queryable,
  table: TableMeta,
  ids: readonly string[],
): Promise<Inside | undefined> {
  const views = watchedViews(table);
  if (views.length === 0) return undefined;
  const inside = new Map(views.map((view) => [view.id, new Set<string>()]));
  if (ids.length === 0) return inside;
  const params = new SqlParams();
  const idsParam = params.add(ids);
  const conditions = views.map((view) => `(${viewConditionSql(table, view, params)}) IS TRUE`);
  const result = await client.query<{ id: string; inside: boolean[] }>(
    `SELECT r.id::text AS id, ARRAY[${conditions.join(', ')}] AS inside
       FROM ${qualifiedTable(table.schemaName, table.id)} r WHERE r.id = ANY(${idsParam}::uuid[])`,
    params.values,
  );
  for (const row of result.rows) {
    views.forEach((view, index) => {
      if (row.inside[index]) inside.get(view.id)!.add(row.id);
    });
  }
  return inside;
}

/** A statement's flags (per record id, one per view of `views`, in order) as members. */
export function insideOf(views: readonly { id: string }[], flags: Record<string, boolean[]>): Inside {
  return new Map(
    views.map((view, index) => [
      view.id,
      new Set(Object.keys(flags).filter((id) => flags[id]?.[index] === true)),
    ]),
  );
}

/** Nobody inside any watched view: before a create, after a delete. */
export function insideNone(table: TableMeta): Inside | undefined {
  const views = watchedViews(table);
  return views.length === 0 ? undefined : new Map(views.map((view) => [view.id, new Set<string>()]));
}

/**
 * Gives record event `eventId` (of records `ids`) the members of each watched view before and
 * after its write; `before` as worked out before the write, `after` (or, when not given, the
 * records' state now). A quiet write's events are heard by no webhook and need none.
 */
export async function recordViewMembers(
  client: Queryable,
  table: TableMeta,
  eventId: string,
  ids: readonly string[],
  before: Inside | undefined,
  after?: Inside,
): Promise<void> {
  if (before === undefined) return;
  const now = after ?? (await insideNow(client, table, ids));
  if (now === undefined) return;
  const members: ViewMembers = {};
  for (const [viewId, was] of before) {
    const is = now.get(viewId) ?? new Set<string>();
    members[viewId] = {
      before: ids.filter((id) => was.has(id)),
      after: ids.filter((id) => is.has(id)),
    };
  }
  await attachViewMembers(client, eventId, members);
}

/**
 * Gives record.created events `eventIds` of `table`, which name their records in
 * `data.recordIds` only (an import's batches), the members of each watched view: none before,
 * and after those inside it now. One statement for all the events, in the writer's transaction.
 */
export async function recordCreatedViewMembers(
  client: Queryable,
  table: TableMeta,
  eventIds: readonly string[],
): Promise<void> {
  const views = watchedViews(table);
  if (views.length === 0 || eventIds.length === 0) return;
  const params = new SqlParams();
  const statement = createdViewMembersSql(
    qualifiedTable(table.schemaName, table.id),
    views.map((view) => ({ viewId: params.add(view.id), condition: viewConditionSql(table, view, params) })),
    params.add(eventIds),
  );
  await client.query(statement, params.values);
}
