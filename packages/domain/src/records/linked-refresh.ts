import { randomUUID } from 'node:crypto';
import { isComputedFieldType } from '@recordbase/contracts/fields';
import { MAX_RECORDS_PER_REQUEST } from '@recordbase/contracts/records';
import { appendSelectedEventsSql, queryNamed } from '@recordbase/db';
import { keptLinkedValues, linkIdsJsonSql, storedLinkedValuesJoin } from '@recordbase/db/field-types';
import { linkTableName, qualifiedTable, quoteIdent, SqlParams } from '@recordbase/db/physical';
import type { TransactionEvents } from '../events';
import { formulasReading } from '../formula-fields';
import { isLinkedValues } from '../linked-fields';
import { recordJsonSql, valueJsonSql } from './record-json';
import type { Queryable } from './store';
import { loadTableMeta } from './table-loader';
import type { FieldMeta, TableMeta } from './table-meta';
import type { PreparedRecord } from './values';
import { insideOf, recordViewMembers, viewConditionSql, watchedViews } from './view-members';

/**
 * Count, lookup and rollup values kept current, in the transaction of the write that changes
 * them. A write that gives a record's links sets its own values in its statement (their modules'
 * `written`) or, where links are written by a statement of their own, right after it
 * (refreshOwnLinkedValues). A write to records that others link to refreshes the values of those
 * others, table by table, set-based: the records holding links to the written ones are found in
 * the link tables, their values computed again from the link tables and updated where they
 * differ; each table's changed records get one record.updated event with source "dependency";
 * and the values changed go on to the tables reading that table in turn (a rollup of a formula of
 * a lookup). Cycles are refused when fields are saved, so the chain ends; the depth bound is a
 * guard.
 */

/** Longer chains than this (lookups of rollups of lookups…) are not followed further. */
const MAX_CHAIN = 16;

const linkedValueFields = (table: TableMeta) => table.fields.filter(isLinkedValues);

/**
 * Whether a count, lookup or rollup of another table must be computed again after a write that
 * changed `changed` (field ids) of the records it links to; every one when `changed` is undefined
 * (a delete, or a chain whose computed values changed). A count reads only links, which a write to
 * the linked records leaves; a lookup or rollup of a written field reads only that field; one of a
 * computed field (a formula, an author, a time) may move with any write.
 */
function readsChanged(field: FieldMeta, linkedTable: TableMeta, changed: ReadonlySet<string> | undefined) {
  return (
    changed === undefined || readsChangedField(keptLinkedValues(field).fieldId ?? null, linkedTable, changed)
  );
}

function readsChangedField(fieldId: string | null, linkedTable: TableMeta, changed: ReadonlySet<string>) {
  if (fieldId === null) return false;
  const read = linkedTable.fieldsById.get(fieldId);
  return read === undefined || isComputedFieldType(read.type) || changed.has(fieldId);
}

/** The fields a write gives the records it writes, by id. */
export function writtenFieldIds(records: readonly PreparedRecord[]): Set<string> {
  const ids = new Set<string>();
  for (const record of records) {
    for (const map of [record.columns, record.links, record.attachments]) {
      for (const id of map.keys()) ids.add(id);
    }
  }
  return ids;
}

/**
 * Sets the count, lookup and rollup columns `fields` of records `ids` of `table` from their stored
 * links, and returns the ids of those whose values changed, in id order. With `events`, the same
 * statement appends their record.updated event (source "dependency"): the records as they are
 * after it, and per record the fields it may change (the refreshed ones and the formulas reading
 * them) whose rendered value moved, with their previous values. The records never travel to Node
 * and back to become the event. `held`: the caller holds the records `ids` (linkedReadersOf), so
 * the linked records are read as they are now, without locking them.
 */
async function refreshRecords(
  client: Queryable,
  table: TableMeta,
  ids: readonly string[],
  events: TransactionEvents | null,
  held: boolean,
  fields: readonly FieldMeta[] = linkedValueFields(table),
): Promise<string[]> {
  if (fields.length === 0 || ids.length === 0) return [];
  const params = new SqlParams();
  const ref = qualifiedTable(table.schemaName, table.id);
  // The fields over one link field computed together, in one pass over each record's links.
  const byLink = new Map<string, number[]>();
  fields.forEach((field, i) => {
    const linkFieldId = keptLinkedValues(field).linkFieldId;
    byLink.set(linkFieldId, [...(byLink.get(linkFieldId) ?? []), i]);
  });
  const fresh: string[] = [];
  // The event renders each of these link fields from the ids its pass gathered (k0, k1…), not
  // from a second read of the link table per record.
  const linkIds = new Map<string, string>();
  let gatheredIds = '';
  const joins = [...byLink].map(([linkFieldId, indexes], group) => {
    indexes.forEach((i, k) => {
      fresh[i] = `g${group}.v${k} AS v${i}`;
    });
    if (events) {
      linkIds.set(linkFieldId, `k${group}`);
      gatheredIds += `, g${group}.ids AS k${group}`;
    }
    const kept = indexes.map((i) => keptLinkedValues(fields[i]!));
    return storedLinkedValuesJoin(kept, table.schemaName, `g${group}`, !held, events !== null);
  });
  const columns = fields.map((field) => `r.${quoteIdent(field.id)}`);
  const computed = fields.map((_, i) => `f.v${i}`);
  // For the event, only what the refresh can move is compared: the refreshed fields and the
  // formulas reading them, rendered as they are before it (b0, b1…) beside the new values.
  const watched = events ? fieldsMovingWith(table, fields) : new Set<string>();
  const watchedFields = table.fields.filter((field) => watched.has(field.id));
  const before = watchedFields.map((field, i) => `, ${valueJsonSql(table, field)} AS b${i}`).join('');
  // And which records were inside the views webhooks watch (view-members.ts), before the refresh.
  const views = events ? watchedViews(table) : [];
  const inside =
    views.length > 0
      ? `, ARRAY[${views.map((view) => `(${viewConditionSql(table, view, params)}) IS TRUE`).join(', ')}] AS inside`
      : '';
  const ctes = [
    `fresh AS MATERIALIZED (SELECT r.id, ${fresh.join(', ')}${before}${inside}${gatheredIds} FROM ${ref} r ${joins.join(' ')}
       WHERE r.id = ANY(${params.add(ids)}::uuid[]))`,
  ];
  ctes.push(
    `changed AS (UPDATE ${ref} AS r SET ${fields.map((field, i) => `${quoteIdent(field.id)} = f.v${i}`).join(', ')}
       FROM fresh f WHERE r.id = f.id AND ROW(${columns.join(', ')}) IS DISTINCT FROM ROW(${computed.join(', ')})
       RETURNING r.*${watchedFields.map((_, i) => `, f.b${i}`).join('')}${[...linkIds.values()].map((column) => `, f.${column}`).join('')})`,
  );
  if (events) ctes.push(...dependencyEventCtes(table, watchedFields, linkIds, params, events.actor));
  // Named: the same text runs on every update of a record that others link to.
  const result = await queryNamed<{
    ids: string[] | null;
    event: string | null;
    heard: boolean | null;
    inside?: Record<string, boolean[]> | null;
  }>(
    client,
    `WITH ${ctes.join(',\n')}
     SELECT (SELECT array_agg(id::text ORDER BY id) FROM changed) AS ids,
            ${events ? '(SELECT id::text FROM event) AS event, (SELECT heard FROM event) AS heard' : 'NULL::text AS event, NULL::boolean AS heard'}
            ${inside ? ', (SELECT json_object_agg(f.id, f.inside) FROM fresh f JOIN changed c ON c.id = f.id) AS inside' : ''}`,
    params.values,
  );
  const row = result.rows[0]!;
  if (events && row.event) {
    events.appended(row.heard ? [row.event] : [], 1);
    if (inside) {
      await recordViewMembers(client, table, row.event, row.ids ?? [], insideOf(views, row.inside ?? {}));
    }
  }
  return row.ids ?? [];
}

/**
 * The CTEs that append the record.updated event of a refresh's `changed` rows (RETURNING r.* and
 * `fresh`'s b0, b1…: `watchedFields`' values as rendered before), compared as
 * record-changes.ts describes changes: per record, the watched fields whose rendering differs.
 */
function dependencyEventCtes(
  table: TableMeta,
  watchedFields: readonly FieldMeta[],
  /** Link fields by id whose ids `changed` carries, by column (fresh's k0, k1…). */
  linkIds: ReadonlyMap<string, string>,
  params: SqlParams,
  /** The key whose write moved them (TransactionEvents' actor). */
  actor: string | null,
): string[] {
  const record = recordJsonSql(table, params, (field, asRead) => {
    const ids = linkIds.get(field.id);
    return ids === undefined ? asRead : linkIdsJsonSql(`r.${ids}`);
  });
  // The rendered record's own value of each watched field (recordJsonSql's v0, v1… by position).
  const after = watchedFields.map((field) => `v.v${table.fields.indexOf(field)}`);
  const moved = watchedFields.map((_, i) => `(r.b${i} IS DISTINCT FROM ${after[i]}) AS c${i}`);
  const key = (field: FieldMeta) => JSON.stringify(field.id);
  const changedIds = watchedFields.map(
    (field, i) => `CASE WHEN c${i} THEN ${params.add(key(field))}::text END`,
  );
  const previous = watchedFields.map(
    (field, i) => `CASE WHEN c${i} THEN ${params.add(`${key(field)}:`)}::text || b${i} END`,
  );
  // array_to_string leaves the NULLs (fields that did not move) out.
  const change = `'{"recordId":"' || id || '","changedFieldIds":[' || array_to_string(ARRAY[${changedIds.join(', ')}], ',')
    || '],"previous":{' || array_to_string(ARRAY[${previous.join(', ')}], ',') || '}}'`;
  const anyMoved = watchedFields.map(
    (field, i) => `CASE WHEN bool_or(c${i}) THEN ${params.add(field.id)}::text END`,
  );
  // The event's rows are sorted once, for the three aggregates, which take them in the same order
  // whatever it is: recordIds, records and changes always correspond.
  return [
    // The previous values come along in `changed`'s RETURNING, so no join back to fresh.
    `rendered AS (SELECT r.id::text AS id, ${record.text} AS j, ${watchedFields.map((_, i) => `r.b${i}`).join(', ')}, ${moved.join(', ')}
       FROM changed r ${record.join})`,
    `event AS (${appendSelectedEventsSql(
      `SELECT ${params.add(randomUUID())}::uuid, ${params.add(table.databaseId)}::uuid, ${params.add(table.id)}::text,
          'record.updated', 'dependency',
          (${params.add(`{"tableId":${JSON.stringify(table.id)},"recordIds":[`)}::text
            || string_agg('"' || id || '"', ',') || '],"records":['
            || string_agg(j, ',') || '],"changes":['
            || string_agg(${change}, ',') || ']}')::json,
          array_remove(ARRAY[${anyMoved.join(', ')}]::text[], NULL), ${params.add(actor)}::json
       FROM (SELECT * FROM rendered ORDER BY id::uuid) rendered HAVING count(*) > 0`,
      'id',
      { changedFieldIds: true, actor: true },
    )})`,
  ];
}

/** The fields a refresh of `fields` may change: those, and the formulas reading any of them. */
function fieldsMovingWith(table: TableMeta, fields: readonly FieldMeta[]): ReadonlySet<string> {
  const moving = new Set(fields.map((field) => field.id));
  for (const field of fields) {
    for (const reader of formulasReading(table.fields, field.id)) moving.add(reader.id);
  }
  return moving;
}

/**
 * Before a write that gives records which may exist already new links: the records those links
 * lead to, where a lookup or rollup of `table` reads them, locked FOR SHARE in id order, ahead of
 * the written records. The write then reads them (FOR SHARE again, a no-op) after taking its
 * records, while an update of one of them takes it first and the records linking to it after
 * (linkedReadersOf): both take a linked record before a linking one, so neither can hold what the
 * other waits for. Nonexistent ids lock nothing; the write refuses them as before.
 */
export async function lockLinkedRead(
  client: Queryable,
  table: TableMeta,
  records: readonly PreparedRecord[],
): Promise<void> {
  const idsByTable = new Map<string, Set<string>>();
  for (const field of linkedValueFields(table)) {
    const kept = keptLinkedValues(field);
    if (kept.element === undefined || kept.linkedTable === undefined) continue;
    for (const record of records) {
      const ids = record.links.get(kept.linkFieldId);
      if (!ids || ids.length === 0) continue;
      const set = idsByTable.get(kept.linkedTable) ?? new Set<string>();
      for (const id of ids) set.add(id);
      idsByTable.set(kept.linkedTable, set);
    }
  }
  for (const [linkedTable, ids] of idsByTable) {
    await client.query(`SELECT 1 FROM ${linkedTable} WHERE id = ANY($1::uuid[]) ORDER BY id FOR SHARE`, [
      [...ids],
    ]);
  }
}

/**
 * After a write that gave records their links through statements of their own (the records
 * service's single-record writes): their count, lookup and rollup values from those links. The
 * write's own event, rendered after, carries them.
 */
export async function refreshOwnLinkedValues(
  client: Queryable,
  table: TableMeta,
  ids: readonly string[],
): Promise<void> {
  await refreshRecords(client, table, ids, null, false);
}

/**
 * The metadata of the tables reading a table, kept beside that table's own (cached) metadata while
 * both are of one schema version: a write to a table others read costs no metadata query.
 */
const readerMetas = new WeakMap<TableMeta, Map<string, TableMeta>>();

async function readerMetaOf(client: Queryable, table: TableMeta, readerId: string): Promise<TableMeta> {
  let known = readerMetas.get(table);
  if (!known) {
    known = new Map();
    readerMetas.set(table, known);
  }
  const kept = known.get(readerId);
  if (kept && table.schemaVersion !== undefined && kept.schemaVersion === table.schemaVersion) return kept;
  const loaded = await loadTableMeta(client, table.databaseId, readerId);
  if (table.schemaVersion !== undefined && loaded.schemaVersion === table.schemaVersion) {
    known.set(readerId, loaded);
  }
  return loaded;
}

/** Records of a table whose values read records just written, as found before they change. */
export interface AffectedReaders {
  table: TableMeta;
  ids: string[];
  /** Its count, lookup and rollup fields that read what changed. */
  fields: FieldMeta[];
}

/**
 * The records, in the tables reading `table` through links, that hold links to records `ids` of
 * it, locked in id order until the commit. Asked before a delete too, whose cascade takes the link
 * rows with the records. Holding them is what keeps two refreshes of one record apart: the second
 * waits here, and its refresh, a later statement, reads what the first committed (the linked
 * records a refresh reads are not locked, so neither waits for the other's). The lock does not
 * block inserts of link rows that reference them (FOR NO KEY UPDATE, as the update itself takes).
 */
export async function linkedReadersOf(
  client: Queryable,
  table: TableMeta,
  ids: readonly string[],
  /** The fields the write changed (writtenFieldIds); undefined: any may have. */
  changed?: ReadonlySet<string>,
): Promise<AffectedReaders[]> {
  if (!table.linkedReaders || ids.length === 0) return [];
  const affected: AffectedReaders[] = [];
  // The tables with a field reading what changed; the others' metadata is not even loaded.
  const readerIds = new Set(
    table.linkedReaders
      .filter((reader) => changed === undefined || readsChangedField(reader.fieldId, table, changed))
      .map((reader) => reader.tableId),
  );
  for (const readerId of readerIds) {
    const reader = readerId === table.id ? table : await readerMetaOf(client, table, readerId);
    const fields = linkedValueFields(reader).filter(
      (field) => keptLinkedValues(field).tableId === table.id && readsChanged(field, table, changed),
    );
    const linkFieldIds = [...new Set(fields.map((field) => keptLinkedValues(field).linkFieldId))];
    if (linkFieldIds.length === 0) continue;
    const union = linkFieldIds
      .map(
        (linkFieldId) =>
          `SELECT record_id FROM ${qualifiedTable(reader.schemaName, linkTableName(linkFieldId))} WHERE linked_id = ANY($1::uuid[])`,
      )
      .join(' UNION ');
    const result = await client.query<{ id: string }>(
      `SELECT r.id::text AS id FROM ${qualifiedTable(reader.schemaName, reader.id)} r
        WHERE r.id IN (${union}) ORDER BY r.id FOR NO KEY UPDATE OF r`,
      [ids],
    );
    if (result.rows.length > 0)
      affected.push({ table: reader, ids: result.rows.map((row) => row.id), fields });
  }
  return affected;
}

/**
 * Refreshes the records found by linkedReadersOf (after the write), announces those that changed
 * (unless `events` is null: the write asked that webhooks not hear of it), and follows the chain.
 */
export async function refreshLinkedReaders(
  client: Queryable,
  events: TransactionEvents | null,
  affected: readonly AffectedReaders[],
  depth = 0,
): Promise<void> {
  for (const { table, ids, fields } of affected) {
    // In batches the size of a request's, like the events of any other write: a record linked by
    // a hundred thousand others costs a thousand statements, never one event or string that large.
    for (let start = 0; start < ids.length; start += MAX_RECORDS_PER_REQUEST) {
      const batch = ids.slice(start, start + MAX_RECORDS_PER_REQUEST);
      const refreshed = await refreshRecords(client, table, batch, events, true, fields);
      if (refreshed.length === 0) continue;
      if (depth + 1 < MAX_CHAIN) {
        await refreshLinkedReaders(
          client,
          events,
          await linkedReadersOf(client, table, refreshed),
          depth + 1,
        );
      }
    }
  }
}

/** After a write to records `ids` of `table`: the records linking to them refreshed and announced. */
export async function refreshAfterWrite(
  client: Queryable,
  events: TransactionEvents | null,
  table: TableMeta,
  ids: readonly string[],
  changed: ReadonlySet<string>,
): Promise<void> {
  if (!table.linkedReaders || ids.length === 0) return;
  await refreshLinkedReaders(client, events, await linkedReadersOf(client, table, ids, changed));
}
