import type { Field } from '@recordbase/contracts/fields';
import type { Table } from '@recordbase/contracts/schema';
import type { WebhookEventType } from '@recordbase/contracts/webhooks';
import { appendOutboxEvent, appendOutboxEventInTx, type Tx } from '@recordbase/db';
import type { EventPublisher } from '@recordbase/queues';
import type { RecordChanges } from './records/record-changes';

/**
 * Domain events, appended to the outbox inside the transaction of the change they describe, and
 * published once that transaction commits. One event per API request (per type), as the contract
 * says.
 */

type PgClient = { query(text: string, values: unknown[]): Promise<unknown> };

/** Ids of the events appended in each open transaction (keyed by its handle), to publish on commit. */
const appendedIn = new WeakMap<object, string[]>();

function appended(transaction: object, id: string): string {
  appendedIn.get(transaction)?.push(id);
  return id;
}

/** Events a statement of `transaction`'s appended itself (record writes append theirs in SQL). */
export function noteAppended(transaction: object, ids: readonly string[]): void {
  for (const id of ids) appended(transaction, id);
}

/**
 * Runs `work` in the transaction `begin` opens, then publishes the events it appended: only
 * after `begin` returned, i.e. after the commit. A rolled-back transaction publishes nothing.
 */
export async function publishingEvents<T, Handle extends object>(
  events: EventPublisher,
  begin: (work: (transaction: Handle) => Promise<T>) => Promise<T>,
  work: (transaction: Handle) => Promise<T>,
): Promise<T> {
  const ids: string[] = [];
  const result = await begin(async (transaction) => {
    appendedIn.set(transaction, ids);
    try {
      return await work(transaction);
    } finally {
      appendedIn.delete(transaction);
    }
  });
  if (ids.length > 0) events.publish(ids);
  return result;
}

export async function tableEvent(
  tx: Tx,
  databaseId: string,
  type: 'table.created' | 'table.updated' | 'table.deleted',
  table: Table,
) {
  const id = await appendOutboxEventInTx(tx, {
    databaseId,
    tableId: table.id,
    type,
    source: 'public_api',
    dataJson: JSON.stringify({ table }),
  });
  return appended(tx, id);
}

/** `transaction` is a schema change's (Prisma), or a record write's (a write with typecast adds options). */
export async function fieldEvent(
  transaction: Tx | PgClient,
  databaseId: string,
  tableId: string,
  type: 'field.created' | 'field.updated' | 'field.deleted',
  field: Field,
) {
  const event = {
    databaseId,
    tableId,
    type,
    source: 'public_api',
    dataJson: JSON.stringify({ tableId, field }),
  } as const;
  const id =
    '$executeRawUnsafe' in transaction
      ? await appendOutboxEventInTx(transaction, event)
      : await appendOutboxEvent(transaction, event);
  return appended(transaction, id);
}

/**
 * `recordsJson` is the JSON array of the records as the API returns them (for deletes, their last
 * state); an update's event also says what changed in each (`changes`, record-changes.ts).
 */
export async function recordEvent(
  client: PgClient,
  table: { databaseId: string; id: string },
  type: Extract<WebhookEventType, `record.${string}`>,
  recordIds: readonly string[],
  recordsJson: string,
  options: { source?: 'public_api' | 'import'; changes?: RecordChanges } = {},
) {
  if (recordIds.length === 0) return;
  const changes = options.changes ? `,"changes":${JSON.stringify(options.changes.changes)}` : '';
  const id = await appendOutboxEvent(client, {
    databaseId: table.databaseId,
    tableId: table.id,
    type,
    source: options.source ?? 'public_api',
    dataJson: `{"tableId":${JSON.stringify(table.id)},"recordIds":${JSON.stringify(recordIds)},"records":${recordsJson}${changes}}`,
    ...(options.changes ? { changedFieldIds: options.changes.changedFieldIds } : {}),
  });
  appended(client, id);
}
