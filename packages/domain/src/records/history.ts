import type { Principal } from '@recordbase/contracts/api-keys';
import { UUID_PATTERN } from '@recordbase/contracts/common';
import { invalid, notFound } from '@recordbase/contracts/domain-errors';
import type { EventSource } from '@recordbase/contracts/events';
import { isComputedFieldType } from '@recordbase/contracts/fields';
import type { HistoryPage, HistoryQuery, Revision } from '@recordbase/contracts/history';
import type { RecordValuesInput } from '@recordbase/contracts/records';
import { type RevisionKey, readRevision, readRevisions, type StoredRevision } from '@recordbase/db';
import { qualifiedTable } from '@recordbase/db/physical';
import type pg from 'pg';
import { type RecordsDb, type TableAddress, withTable } from './record-work';
import { updateOne } from './records-service';
import type { TableMeta } from './table-meta';

/**
 * A record's and a table's history, newest first: revisions rendered from the record events of the
 * outbox (db/outbox/revisions.ts). A revision's changes are the written fields it changed, each
 * with its value before and after as the API rendered them; computed fields are left out, their
 * values moving with what they read (the contract: not changes of their own).
 */

interface RecordJson {
  id?: string;
  data?: Record<string, unknown>;
}
interface ChangeJson {
  recordId?: string;
  changedFieldIds?: string[];
  previous?: Record<string, unknown>;
}

/** Values a created or deleted record's revision leaves out: nothing was written there. */
function isBlank(value: unknown): boolean {
  return (
    value === null ||
    value === undefined ||
    value === false ||
    value === '' ||
    (Array.isArray(value) && value.length === 0)
  );
}

const actionOf = (type: string, source: string): Revision['action'] => {
  if (type === 'record.deleted') return 'deleted';
  if (source === 'restore') return 'restored';
  return type === 'record.created' ? 'created' : 'updated';
};

function renderRevision(table: TableMeta, stored: StoredRevision): Revision {
  const written = (fieldId: string) => {
    const field = table.fieldsById.get(fieldId);
    // A field deleted since is shown as it was written: only the table's computed fields are not.
    return !field || !isComputedFieldType(field.type);
  };
  // An event's records, changes and recordIds share one order; each is checked to be this record's
  // all the same, so that a break of that never shows another record's values.
  const own = <T extends { id?: string; recordId?: string }>(json: string | null): T | null => {
    const parsed = json === null ? null : (JSON.parse(json) as T);
    return parsed && (parsed.id ?? parsed.recordId) === stored.recordId ? parsed : null;
  };
  const values = own<RecordJson>(stored.recordJson)?.data ?? {};
  const changes: Revision['changes'] = {};
  if (stored.type === 'record.updated') {
    const change = own<ChangeJson>(stored.changeJson) ?? {};
    for (const fieldId of change.changedFieldIds ?? []) {
      if (!written(fieldId)) continue;
      changes[fieldId] = { before: change.previous?.[fieldId] ?? null, after: values[fieldId] ?? null };
    }
  } else {
    const deleted = stored.type === 'record.deleted';
    for (const [fieldId, value] of Object.entries(values)) {
      if (!written(fieldId) || isBlank(value)) continue;
      changes[fieldId] = deleted ? { before: value, after: null } : { before: null, after: value };
    }
  }
  const by =
    stored.actorJson === null ? null : (JSON.parse(stored.actorJson) as { id: string; name: string });
  return {
    id: `${stored.seq}-${stored.position}`,
    recordId: stored.recordId,
    at: stored.createdAt.toISOString(),
    action: actionOf(stored.type, stored.source),
    by: by === null ? null : { id: by.id, name: by.name },
    source: stored.source as EventSource,
    changes,
  };
}

/**
 * The cursor of a history or trash page: base64url of `<tableId>/<listing>/<seq>-<position>` of the
 * page's last entry, `listing` a record id, `*` (the table's history) or `trash`. Bound to the
 * listing it came from; its numbers reach SQL only as parameters.
 */
export function encodePageCursor(table: TableMeta, listing: string, last: RevisionKey): string {
  return Buffer.from(`${table.id}/${listing}/${last.seq}-${last.position}`, 'utf8').toString('base64url');
}

const CURSOR_PATTERN = /^([^/]+)\/([^/]+)\/([1-9][0-9]{0,17})-([1-9][0-9]{0,5})$/;

export function decodePageCursor(table: TableMeta, listing: string, cursor: string): RevisionKey {
  const match = CURSOR_PATTERN.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || match[1] !== table.id || match[2] !== listing) {
    throw invalid(
      ['cursor'],
      'is not a cursor of this listing; pass back the nextCursor of a page unchanged',
    );
  }
  return { seq: match[3]!, position: Number(match[4]) };
}

async function historyPage(
  records: RecordsDb,
  table: TableMeta,
  recordId: string | undefined,
  query: HistoryQuery,
): Promise<HistoryPage & { empty: boolean }> {
  const listing = recordId ?? '*';
  const after = query.cursor === undefined ? undefined : decodePageCursor(table, listing, query.cursor);
  const client = await records.db.connect();
  try {
    // One more than asked says whether there is a next page.
    const stored = await readRevisions(client, {
      tableId: table.id,
      ...(recordId === undefined ? {} : { recordId }),
      ...(after ? { after } : {}),
      limit: query.limit + 1,
    });
    const page = stored.slice(0, query.limit);
    const last = page.at(-1);
    return {
      revisions: page.map((revision) => renderRevision(table, revision)),
      ...(stored.length > query.limit && last ? { nextCursor: encodePageCursor(table, listing, last) } : {}),
      empty: page.length === 0 && after === undefined,
    };
  } finally {
    client.release();
  }
}

/** `GET …/records/{recordId}/history`: 404 for a record that neither exists nor has history. */
export async function recordHistory(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  recordId: string,
  query: HistoryQuery,
): Promise<HistoryPage> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    if (!UUID_PATTERN.test(recordId)) throw notFound(`Record ${recordId} not found`);
    const id = recordId.toLowerCase();
    const { empty, ...page } = await historyPage(records, table, id, query);
    if (empty && !(await recordExists(records, table, id))) throw notFound(`Record ${recordId} not found`);
    return page;
  });
}

/** `GET …/tables/{tableId}/history`: every record's revisions, newest first. */
export async function tableHistory(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  query: HistoryQuery,
): Promise<HistoryPage> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const { empty: _empty, ...page } = await historyPage(records, table, undefined, query);
    return page;
  });
}

async function recordExists(records: RecordsDb, table: TableMeta, id: string): Promise<boolean> {
  const client = await records.db.connect();
  try {
    const result = await client.query(
      `SELECT 1 FROM ${qualifiedTable(table.schemaName, table.id)} WHERE id = $1::uuid`,
      [id],
    );
    return (result.rowCount ?? 0) > 0;
  } finally {
    client.release();
  }
}

const REVISION_ID = /^([1-9][0-9]{0,17})-([1-9][0-9]{0,5})$/;

/**
 * `POST …/records/{recordId}/history/{revisionId}/restore`: writes the record's written fields back
 * to their values after that revision (the fields it had then; one added since keeps its value),
 * as an update whose revision is `restored`. Links to records deleted since are left out; select
 * options deleted since come back (typecast). A deletion has no values to go back to, and a
 * deleted record is restored from the trash instead.
 */
export async function restoreRevision(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  recordId: string,
  revisionId: string,
): Promise<string> {
  const match = REVISION_ID.exec(revisionId);
  if (!match || !UUID_PATTERN.test(recordId))
    throw notFound(`Revision ${revisionId} of record ${recordId} not found`);
  const id = recordId.toLowerCase();
  const values = await withTable(records.tables, records.db, principal, address, async (table) => {
    const client = await records.db.connect();
    try {
      const revision = await readRevision(client, {
        tableId: table.id,
        recordId: id,
        seq: match[1]!,
        position: Number(match[2]),
      });
      if (!revision) throw notFound(`Revision ${revisionId} of record ${recordId} not found`);
      if (revision.type === 'record.deleted' || revision.recordJson === null) {
        throw invalid(
          null,
          revision.type === 'record.deleted'
            ? `revision ${revisionId} deleted the record: it has no values to restore (a deleted record is restored from the trash)`
            : `revision ${revisionId} kept no values of the record (an import's): there is nothing to restore`,
        );
      }
      const data = (JSON.parse(revision.recordJson) as RecordJson).data ?? {};
      const input: Record<string, unknown> = {};
      for (const field of table.fields) {
        if (isComputedFieldType(field.type) || !(field.id in data)) continue;
        input[field.id] = data[field.id];
      }
      await dropDeletedLinks(client, table, input);
      return input;
    } finally {
      client.release();
    }
  });
  return updateOne(records, principal, address, id, values as RecordValuesInput, {
    typecast: true,
    source: 'restore',
  });
}

/** Leaves out of `input`'s link fields the records that no longer exist. */
async function dropDeletedLinks(
  client: Pick<pg.PoolClient, 'query'>,
  table: TableMeta,
  input: Record<string, unknown>,
): Promise<void> {
  for (const field of table.fields) {
    const ids = input[field.id];
    if (field.type !== 'linked_record' || !Array.isArray(ids) || ids.length === 0) continue;
    const linkedTableId = (field.template as { tableId?: string }).tableId;
    if (!linkedTableId) continue;
    const existing = await client.query<{ id: string }>(
      `SELECT id::text FROM ${qualifiedTable(table.schemaName, linkedTableId)} WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const kept = new Set(existing.rows.map((row) => row.id));
    input[field.id] = ids.filter((linked) => kept.has(String(linked)));
  }
}
