import type { Principal } from '@recordbase/contracts/api-keys';
import { invalid, notFound } from '@recordbase/contracts/domain-errors';
import type { RestoreTrashRequest, TrashPage, TrashQuery } from '@recordbase/contracts/history';
import { isDataException, lockTrashed, readTrash, restoreTrashed, writableColumnsOf } from '@recordbase/db';
import { actorOf } from '../events';
import { decodePageCursor, encodePageCursor } from './history';
import { linkedReadersOf, refreshLinkedReaders, refreshOwnLinkedValues } from './linked-refresh';
import { presentRecords } from './presentation';
import { inTransaction, type RecordsDb, type TableAddress, withTable } from './record-work';
import { recordsInOrder } from './store';
import { insideNone, recordViewMembers } from './view-members';

/**
 * A table's record trash: what a delete put there (db/record-trash.ts), listed most recently
 * deleted first, and brought back all or none, exactly as stored: the same ids, createdAt and
 * values, and the links to and from records that still exist. A restore is announced as the
 * records' creation with source "restore", which history shows as `restored`.
 */

/** `GET …/tables/{tableId}/trash`. */
export async function listTrash(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  query: TrashQuery,
): Promise<TrashPage> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const after = query.cursor === undefined ? undefined : decodePageCursor(table, 'trash', query.cursor);
    const client = await records.db.connect();
    let rows: Awaited<ReturnType<typeof readTrash>>;
    try {
      rows = await readTrash(client, {
        tableId: table.id,
        ...(after ? { after } : {}),
        limit: query.limit + 1,
      });
    } finally {
      client.release();
    }
    const page = rows.slice(0, query.limit);
    const rendered = JSON.parse(
      presentRecords(
        `[${page.map((row) => row.recordJson ?? 'null').join(',')}]`,
        table,
        principal,
        records.fileLinks,
      ),
    ) as unknown[];
    const last = page.at(-1);
    return {
      records: page.map((row, i) => {
        const by =
          row.actorJson === null ? null : (JSON.parse(row.actorJson) as { id: string; name: string });
        return {
          record: rendered[i],
          deletedAt: row.deletedAt.toISOString(),
          deletedBy: by === null ? null : { id: by.id, name: by.name },
        };
      }),
      ...(rows.length > query.limit && last ? { nextCursor: encodePageCursor(table, 'trash', last) } : {}),
    };
  });
}

/** `POST …/tables/{tableId}/trash/restore`: the records as they read now, restored, in the order asked. */
export async function restoreFromTrash(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  body: RestoreTrashRequest,
): Promise<string> {
  const ids = [...new Set(body.ids.map((id) => id.toLowerCase()))];
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const actor = actorOf(principal);
    const json = await inTransaction(records, { actor }, async (client, events) => {
      const trashed = await lockTrashed(client, table.id, ids);
      const missing = ids.filter((id) => !trashed.has(id));
      if (missing.length > 0) {
        throw notFound(
          `Record ${missing.join(', ')} is not in the trash of this table; nothing was restored`,
        );
      }
      // A field added since a record was deleted takes its default: each record is written with
      // the columns it stored that the table still has, those storing the same ones together.
      const writable = await writableColumnsOf(client, table.schemaName, table.id);
      const groups = new Map<string, { ids: string[]; columns: string[] }>();
      for (const id of ids) {
        const stored = new Set(trashed.get(id)!.columns);
        const columns = writable.filter((column) => stored.has(column));
        const key = columns.join('\u0000');
        const group = groups.get(key) ?? { ids: [], columns };
        group.ids.push(id);
        groups.set(key, group);
      }
      try {
        await restoreTrashed(client, table, ids, [...groups.values()]);
      } catch (error) {
        // A field retyped since holds values of another type than those the record stored.
        if (!isDataException(error)) throw error;
        throw invalid(
          ['ids'],
          'cannot be restored as they were: a field they had values in changed type since they were deleted',
        );
      }
      await refreshOwnLinkedValues(client, table, ids);
      // The records linking to them count, look up and roll them up again.
      await refreshLinkedReaders(client, events, await linkedReadersOf(client, table, ids));
      const json = await recordsInOrder(client, table, ids);
      const eventId = await events.records(table, 'record.created', ids, json, { source: 'restore' });
      if (!events.quiet) await recordViewMembers(client, table, eventId, ids, insideNone(table));
      return json;
    });
    return presentRecords(json, table, principal, records.fileLinks);
  });
}
