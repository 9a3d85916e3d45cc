import type { Principal } from '@recordbase/contracts/api-keys';
import { type ChangesQuery, LATEST_CURSOR } from '@recordbase/contracts/changes';
import { TABLE_ID_PATTERN } from '@recordbase/contracts/common';
import { expired, forbidden, invalid } from '@recordbase/contracts/domain-errors';
import { type WebhookEventType, webhookEventTypes } from '@recordbase/contracts/webhooks';
import {
  type ChangePosition,
  type ChangesRead,
  latestChangePosition,
  type PrismaClient,
  readChanges,
  type StoredChange,
} from '@recordbase/db';
import type pg from 'pg';
import { findAccessibleDatabase, findTableByRef } from './access';
import { accessibleDatabaseId, canReadEvent, databaseNotFound, EVENT_READ_SCOPES } from './access-policy';

/**
 * The change feed (the contract's "Changes"): a database's events in commit order, read from a
 * cursor (listChanges) or followed live (the stream, fed by one tailer per process). Both read
 * through a ChangesFilter, which also holds what the key may read: record events need
 * `records:read`, table and field events `schema:read`, as for webhooks.
 */

type Queryable = Pick<pg.Pool, 'query'>;

/** What one reader of the feed hears. */
export interface ChangesFilter {
  databaseId: string;
  tableId?: string;
  /** Left out: every type (the key may read them all). */
  types?: readonly WebhookEventType[];
}

/** A cursor is a feed position, `<xid>-<seq>` (contracts/changes.ts's CHANGE_CURSOR_PATTERN). */
export function cursorOf(position: ChangePosition): string {
  return `${position.xid}-${position.seq}`;
}

function positionOf(cursor: string): ChangePosition {
  const [xid, seq] = cursor.split('-') as [string, string];
  return { xid, seq };
}

/**
 * The filter of a reader of the database's feed: the database if the key may reach it, the table
 * named (by id, kept even once the table is deleted so its `table.deleted` is heard; or by name,
 * while it exists), and the types asked for within those the key may read. Asking for a type the
 * key may not read is refused, naming the scope it lacks.
 */
export async function changesFilter(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  query: { tableId?: string | undefined; types?: readonly WebhookEventType[] | undefined },
): Promise<ChangesFilter> {
  // Whether the database exists is asked by the read itself (a round trip less on every page);
  // only a table named by name needs the metadata first.
  const filter: ChangesFilter = { databaseId: accessibleDatabaseId(principal, databaseId) };
  if (query.tableId !== undefined) {
    filter.tableId = TABLE_ID_PATTERN.test(query.tableId)
      ? query.tableId
      : (
          await findTableByRef(
            prisma,
            (
              await findAccessibleDatabase(prisma, principal, databaseId)
            ).id,
            query.tableId,
          )
        ).id;
  }
  if (query.types !== undefined) {
    for (const type of query.types) {
      if (!canReadEvent(principal, type)) {
        const { scope, why } = EVENT_READ_SCOPES.find((entry) => entry.carries(type))!;
        throw forbidden(`This API key lacks the "${scope}" scope to read ${type} events: ${why}`);
      }
    }
    filter.types = query.types;
  } else if (!webhookEventTypes.every((type) => canReadEvent(principal, type))) {
    filter.types = webhookEventTypes.filter((type) => canReadEvent(principal, type));
  }
  return filter;
}

/** Whether a change of the filter's database is one its reader hears. */
export function changeMatches(
  filter: ChangesFilter,
  change: Pick<StoredChange, 'tableId' | 'type'>,
): boolean {
  if (filter.tableId !== undefined && change.tableId !== filter.tableId) return false;
  return filter.types === undefined || (filter.types as readonly string[]).includes(change.type);
}

const EXPIRED_MESSAGE =
  'events after this cursor were deleted by retention (the CHANGES_RETENTION setting, 7 days by default); read again without a cursor, from the oldest event kept, or with cursor=latest';

/**
 * Where a reader starts: after `cursor`, where the feed ends now for `latest`, or undefined for
 * the oldest event kept.
 */
export async function startOfChanges(
  pool: Queryable,
  cursor: string | undefined,
): Promise<ChangePosition | undefined> {
  if (cursor === undefined) return undefined;
  return cursor === LATEST_CURSOR ? latestChangePosition(pool) : positionOf(cursor);
}

/**
 * Up to `limit` changes after `after` through `filter`: 410 CURSOR_EXPIRED (kind `expired`) when
 * retention deleted events after it, 400 for a cursor the feed never handed out.
 */
export async function readChangesAfter(
  pool: Queryable,
  filter: ChangesFilter,
  after: ChangePosition | undefined,
  limit: number,
): Promise<ChangesRead> {
  const page = await readChanges(pool, {
    databaseId: filter.databaseId,
    limit,
    ...(after ? { after } : {}),
    ...(filter.tableId !== undefined ? { tableId: filter.tableId } : {}),
    ...(filter.types !== undefined ? { types: filter.types } : {}),
  });
  if (page.outcome === 'missing') throw databaseNotFound(filter.databaseId);
  if (page.outcome === 'expired') throw expired(['cursor'], EXPIRED_MESSAGE);
  if (page.outcome === 'ahead') {
    throw invalid(['cursor'], 'is past the end of the feed: pass back a cursor the feed handed out');
  }
  return page;
}

export interface ChangesAnswer {
  /** Each change's JSON body, in commit order. */
  changesJson: string[];
  cursor: string;
  hasMore: boolean;
}

/** `GET /bases/{databaseId}/changes`. */
export async function listChanges(
  deps: { pool: Queryable; prisma: PrismaClient },
  principal: Principal,
  databaseId: string,
  query: ChangesQuery,
): Promise<ChangesAnswer> {
  const filter = await changesFilter(deps.prisma, principal, databaseId, query);
  if (query.cursor === LATEST_CURSOR) {
    const position = await latestChangePosition(deps.pool, filter.databaseId);
    if (!position) throw databaseNotFound(databaseId);
    return { changesJson: [], cursor: cursorOf(position), hasMore: false };
  }
  const after = await startOfChanges(deps.pool, query.cursor);
  const page = await readChangesAfter(deps.pool, filter, after, query.limit);
  return {
    changesJson: page.changes.map((change) => change.bodyJson),
    cursor: cursorOf(page.position),
    hasMore: page.hasMore,
  };
}
