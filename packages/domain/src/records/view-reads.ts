import { invalid } from '@recordbase/contracts/domain-errors';
import type { Filter } from '@recordbase/contracts/filters';
import type { ListRecordsRequest } from '@recordbase/contracts/records';
import { VIEW_ID_PATTERN } from '@recordbase/contracts/views';
import { didYouMean } from '@recordbase/db/field-types';
import { SqlParams } from '@recordbase/db/physical';
import { nameKey } from '../access';
import { compileFilter } from './query-compiler';
import { searchFilter } from './search';
import type { TableMeta, ViewMeta } from './table-meta';

/**
 * A read naming a saved view (api-contract "Views"): the view's filter and search are ANDed with
 * the body's, its sort and projection stand in for those the body leaves out. Views come with the
 * table's metadata (table-loader.ts), so applying one costs no round trip.
 */

/** The view `ref` names (id, else name case aside), or the 400 at `body.view` naming the table's views. */
export function requireView(table: TableMeta, ref: string): ViewMeta {
  const views = table.views ?? [];
  const byId = VIEW_ID_PATTERN.test(ref) ? views.find((view) => view.id === ref) : undefined;
  const key = nameKey(ref);
  const view = byId ?? views.find((view) => nameKey(view.name) === key);
  if (view) return view;
  const names = views.map((candidate) => candidate.name);
  throw invalid(
    ['view'],
    names.length === 0
      ? `unknown view ${JSON.stringify(ref)}: table ${JSON.stringify(table.name)} has no views`
      : `unknown view ${JSON.stringify(ref)}${didYouMean(ref, names)}`,
  );
}

/** What a read filters on: its own filter and search, and those of the view it names. */
export interface FilterParts {
  filter?: Filter | undefined;
  search?: string | undefined;
  view?: string | undefined;
}

/**
 * The one filter a read applies: the body's filter, its search, the view's filter and the view's
 * search, all of them ANDed; undefined when there is none. With one part alone it is that part
 * itself, so a read without a view compiles (and binds its cursors) as it did before views.
 */
export function readFilter(table: TableMeta, parts: FilterParts): Filter | undefined {
  return filterOf(table, parts, parts.view === undefined ? undefined : requireView(table, parts.view));
}

function filterOf(table: TableMeta, parts: FilterParts, view: ViewMeta | undefined): Filter | undefined {
  const members: Filter[] = [];
  if (parts.filter !== undefined) members.push(parts.filter);
  if (parts.search !== undefined) members.push(searchFilter(table, parts.search));
  if (view?.filter) {
    // Checked at the view's place, so that a view no longer holding (which the schema changes
    // refuse to bring about) is not reported as the body's own filter.
    compileFilter(view.filter, table, new SqlParams(), ['view', 'filter']);
    members.push(view.filter);
  }
  if (view?.search) members.push(searchFilter(table, view.search));
  if (members.length <= 1) return members[0];
  // The body's own filter keeps its own paths in any refusal (`filter.and[0]`, not `filter.and[0].and[0]`).
  if (parts.filter !== undefined) compileFilter(parts.filter, table, new SqlParams(), ['filter']);
  return { and: members };
}

/** What a read selects by: the parts of a list body that an export body takes too. */
export type Selection = Pick<ListRecordsRequest, 'filter' | 'sort' | 'fields' | 'search' | 'view'>;

/**
 * A list (or export) request with the view it names applied: filter and search as one filter, sort
 * and fields filled in.
 */
export function listingOf<R extends Selection>(table: TableMeta, request: R): Omit<R, 'search' | 'view'> {
  const { search: _search, view: viewRef, ...listing } = request;
  const view = viewRef === undefined ? undefined : requireView(table, viewRef);
  const filter = filterOf(table, request, view);
  return {
    ...listing,
    filter,
    ...(listing.sort === undefined && view && view.sort.length > 0 ? { sort: [...view.sort] } : {}),
    ...(listing.fields === undefined && view && view.fieldIds.length > 0
      ? { fields: [...view.fieldIds] }
      : {}),
  };
}
