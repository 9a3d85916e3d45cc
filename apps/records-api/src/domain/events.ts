import type { Field } from '@recordbase/contracts/fields';
import type { Table } from '@recordbase/contracts/schema';
import type { WebhookEventType } from '@recordbase/contracts/webhooks';
import { appendOutboxEvent, appendOutboxEventInTx, type Tx } from '@recordbase/db';

/**
 * Domain events, appended to the outbox inside the transaction of the change they describe.
 * One event per API request (per type), as the contract says.
 */

type PgClient = { query(text: string, values: unknown[]): Promise<unknown> };

export function tableEvent(
  tx: Tx,
  databaseId: string,
  type: 'table.created' | 'table.updated' | 'table.deleted',
  table: Table,
) {
  return appendOutboxEventInTx(tx, {
    databaseId,
    tableId: table.id,
    type,
    source: 'public_api',
    dataJson: JSON.stringify({ table }),
  });
}

export function fieldEvent(
  tx: Tx,
  databaseId: string,
  tableId: string,
  type: 'field.created' | 'field.updated' | 'field.deleted',
  field: Field,
) {
  return appendOutboxEventInTx(tx, {
    databaseId,
    tableId,
    type,
    source: 'public_api',
    dataJson: JSON.stringify({ tableId, field }),
  });
}

/** `recordsJson` is the JSON array of the records as the API returns them (for deletes, their last state). */
export async function recordEvent(
  client: PgClient,
  table: { databaseId: string; id: string },
  type: Extract<WebhookEventType, `record.${string}`>,
  recordIds: readonly string[],
  recordsJson: string,
  source: 'public_api' | 'import' = 'public_api',
) {
  if (recordIds.length === 0) return;
  await appendOutboxEvent(client, {
    databaseId: table.databaseId,
    tableId: table.id,
    type,
    source,
    dataJson: `{"tableId":${JSON.stringify(table.id)},"recordIds":${JSON.stringify(recordIds)},"records":${recordsJson}}`,
  });
}
