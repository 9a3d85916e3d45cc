import { randomUUID } from 'node:crypto';
import type { EventSource } from '@recordbase/contracts/events';
import type { WebhookEventType } from '@recordbase/contracts/webhooks';

/**
 * Channel the dispatcher LISTENs on for deliveries made due outside it (a retry asked through
 * the API); the payload is the delivery id. Its periodic sweep of due deliveries is the fallback.
 */
export const DELIVERIES_CHANNEL = 'recordbase_deliveries';

/** The outbox's table: named here only, and in the other statements of this folder. */
export const OUTBOX_TABLE = 'outbox_events';

export interface OutboxEventInput {
  databaseId: string;
  tableId: string | null;
  type: WebhookEventType;
  source: EventSource;
  /** The event's `data`, as JSON text (record events reuse the JSON PostgreSQL rendered). */
  dataJson: string;
  /** record.updated: the fields its records changed, which webhooks' field filters match. */
  changedFieldIds?: readonly string[];
  /** The key that made the change, `{id, name}` as JSON text (history's `by`); none for the system. */
  actor?: string | null;
  /** For history only (suppressWebhooks): appended already dispatched, so no webhook hears of it. */
  suppressed?: boolean;
}

/** The columns an appended event sets, in the order of `outboxInsert`'s values. */
const outboxInsertColumns = ['id', 'database_id', 'table_id', 'type', 'source', 'data'] as const;

/**
 * An appended event's `dispatched_at`: null (for the dispatcher) while its database has an active
 * webhook in the appending statement's snapshot, else now(), as the dispatcher would have marked
 * it after matching it against no webhook. So an event nobody can hear costs no queue job, no
 * read and no update. A webhook whose creation commits after that snapshot does not hear it: it
 * hears the writes made once it exists, not one racing its creation.
 */
const dispatchedAtSql = (databaseId: string) =>
  `CASE WHEN EXISTS (SELECT 1 FROM webhooks w WHERE w.database_id = ${databaseId} AND w.active) THEN NULL ELSE now() END`;

/**
 * An INSERT appending the events `select` yields, for writers that build their events in SQL (a
 * bulk write's statement, an import's final move, a refresh of linked values): `select` yields the
 * columns `id` (uuid), `database_id`, `table_id`, `type`, `source`, `data` (json), in that order,
 * then `changed_field_ids` (text[]) when `extra.changedFieldIds`, then `actor` (json) when
 * `extra.actor`. `extra.suppressed` appends them for history only (OutboxEventInput's
 * `suppressed`). It can stand as the body of a CTE (`events AS (…)`), and returns `returning`
 * and `heard`: whether the event is for the dispatcher, the only ones handed to it
 * (TransactionEvents.appended).
 */
export function appendSelectedEventsSql(
  select: string,
  returning: string,
  extra: { changedFieldIds?: boolean; actor?: boolean; suppressed?: boolean } = {},
): string {
  const columns: string[] = [...outboxInsertColumns];
  if (extra.changedFieldIds) columns.push('changed_field_ids');
  if (extra.actor) columns.push('actor');
  const rows = extra.suppressed
    ? `SELECT q.*, true, now() FROM (${select}) q`
    : `SELECT q.*, ${dispatchedAtSql('q.database_id')} FROM (${select}) AS q(${columns.join(', ')})`;
  columns.push(...(extra.suppressed ? ['suppressed', 'dispatched_at'] : ['dispatched_at']));
  return `INSERT INTO ${OUTBOX_TABLE} (${columns.join(', ')})
       ${rows}
       RETURNING ${returning}, dispatched_at IS NULL AS heard`;
}

/** An event appended: its id, and whether it is for the dispatcher (see dispatchedAtSql). */
export interface AppendedEvent {
  id: string;
  heard: boolean;
}

/**
 * The statement that appends an event to the outbox, returning `heard`. Run it in the same
 * transaction as the change it describes: the event commits with the change, or neither does.
 * Once committed, the writer hands the id of an event that is heard to the events queue
 * (records-api's event publisher); the dispatcher's sweep sends any event whose hand-over was lost.
 */
export function outboxInsert(event: OutboxEventInput): { text: string; values: unknown[]; id: string } {
  const id = randomUUID();
  return {
    id,
    text: `INSERT INTO ${OUTBOX_TABLE} (${outboxInsertColumns.join(', ')}, changed_field_ids, actor, suppressed, dispatched_at)
           VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::json, $7::text[], $8::json, $9,
                   CASE WHEN $9 THEN now() ELSE ${dispatchedAtSql('$2::uuid')} END)
           RETURNING dispatched_at IS NULL AS heard`,
    values: [
      id,
      event.databaseId,
      event.tableId,
      event.type,
      event.source,
      event.dataJson,
      event.changedFieldIds ?? [],
      event.actor ?? null,
      event.suppressed === true,
    ],
  };
}

/** For hand-written SQL paths (pg clients). */
export async function appendOutboxEvent(
  client: { query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> },
  event: OutboxEventInput,
): Promise<AppendedEvent> {
  const statement = outboxInsert(event);
  const result = await client.query(statement.text, statement.values);
  return { id: statement.id, heard: (result.rows[0] as { heard?: boolean } | undefined)?.heard === true };
}

/** For Prisma transactions (schema changes). */
export async function appendOutboxEventInTx(
  tx: { $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T> },
  event: OutboxEventInput,
): Promise<AppendedEvent> {
  const statement = outboxInsert(event);
  const rows = await tx.$queryRawUnsafe<{ heard: boolean }[]>(statement.text, ...statement.values);
  return { id: statement.id, heard: rows[0]?.heard === true };
}

/**
 * A record event's records inside each view a webhook watches, before and after its write, by
 * view id (subscription.ts reads them); the write works them out with the views' filters.
 */
export type ViewMembers = Record<string, { before: string[]; after: string[] }>;

/** Sets an appended record event's view members, in the transaction that appended it. */
export async function attachViewMembers(
  client: { query(text: string, values: unknown[]): Promise<unknown> },
  eventId: string,
  members: ViewMembers,
): Promise<void> {
  await client.query(`UPDATE ${OUTBOX_TABLE} SET view_members = $2::jsonb WHERE id = $1::uuid`, [
    eventId,
    JSON.stringify(members),
  ]);
}

/**
 * The statement setting the view members of record.created events `eventIds` (SQL of a uuid[]),
 * which name their records in `data.recordIds` only: per view (`viewId` the SQL of its id), none
 * before, and after those of `tableRef` (aliased `r`) meeting its `condition` now.
 */
export function createdViewMembersSql(
  tableRef: string,
  views: readonly { viewId: string; condition: string }[],
  eventIds: string,
): string {
  const members = views.map(
    ({ viewId, condition }) =>
      `${viewId}::text, jsonb_build_object('before', '[]'::jsonb, 'after',
         (SELECT coalesce(jsonb_agg(r.id::text ORDER BY x.o), '[]'::jsonb)
            FROM json_array_elements_text(e.data -> 'recordIds') WITH ORDINALITY AS x(id, o)
            JOIN ${tableRef} r ON r.id = x.id::uuid
           WHERE (${condition}) IS TRUE))`,
  );
  return `UPDATE ${OUTBOX_TABLE} e SET view_members = jsonb_build_object(${members.join(', ')})
           WHERE e.id = ANY(${eventIds}::uuid[])`;
}
