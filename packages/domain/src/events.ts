import { type Principal, recordAuthor } from '@recordbase/contracts/api-keys';
import type { EventSource } from '@recordbase/contracts/events';
import type { Field } from '@recordbase/contracts/fields';
import type { Table } from '@recordbase/contracts/schema';
import type { WebhookEventType } from '@recordbase/contracts/webhooks';
import { appendOutboxEvent, appendOutboxEventInTx, type OutboxEventInput, type Tx } from '@recordbase/db';
import type { RecordChanges } from './records/record-changes';

/**
 * Domain events, appended to the outbox inside the transaction of the change they describe, and
 * published once that transaction commits. One event per API request (per type), as the contract
 * says.
 */

type PgClient = { query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> };

/**
 * Where committed events go (@recordbase/queues' publisher hands them to the dispatcher). Fire and
 * forget: the outbox row is the guarantee, and a publish lost is found by the dispatcher's sweep.
 */
export interface EventPublisher {
  /** After every commit that appended events; `eventIds` (maybe none) are those for the dispatcher. */
  publish(eventIds: readonly string[]): void;
}

/**
 * The events one transaction appends, bound to it: whatever appends an event in the transaction is
 * handed this, and `publishingEvents` publishes what it collected once the transaction commits.
 * `transaction` is a schema change's (Prisma) or a record write's (pg); a record write with
 * typecast appends field events too.
 */
export class TransactionEvents {
  readonly #ids: string[] = [];
  #appendedAny = false;
  /** Who makes the change: the key's `{id, name}` as JSON, kept on every event (history's `by`). */
  readonly actor: string | null;
  /**
   * The write asked that integrations not hear of it (suppressWebhooks): its record events are
   * appended for history only, suppressed and already dispatched, and not published.
   */
  readonly quiet: boolean;

  constructor(
    private readonly transaction: Tx | PgClient,
    context: EventContext = NO_CONTEXT,
  ) {
    this.actor = context.actor;
    this.quiet = context.quiet === true;
  }

  /**
   * The ids to publish once the transaction commits, in append order: those of the events the
   * dispatcher is to match (the outbox's `heard`); the others are dispatched already.
   */
  get ids(): readonly string[] {
    return this.#ids;
  }

  /** Whether the transaction appended any event integrations hear of (the change feed's too). */
  get appendedAny(): boolean {
    return this.#appendedAny;
  }

  /**
   * Record events a statement of the transaction appended in its own SQL (record writes, imports):
   * the ids of those heard, and how many it appended in all.
   */
  appended(heardIds: readonly string[], count = heardIds.length): void {
    if (this.quiet) return;
    this.#ids.push(...heardIds);
    if (count > 0) this.#appendedAny = true;
  }

  async table(databaseId: string, type: 'table.created' | 'table.updated' | 'table.deleted', table: Table) {
    return this.append({
      databaseId,
      tableId: table.id,
      type,
      source: 'public_api',
      dataJson: JSON.stringify({ table }),
    });
  }

  async field(
    databaseId: string,
    tableId: string,
    type: 'field.created' | 'field.updated' | 'field.deleted',
    field: Field,
  ) {
    return this.append({
      databaseId,
      tableId,
      type,
      source: 'public_api',
      dataJson: JSON.stringify({ tableId, field }),
    });
  }

  /**
   * `recordsJson` is the JSON array of the records as the API returns them (for deletes, their last
   * state); an update's event also says what changed in each (`changes`, record-changes.ts).
   */
  async records(
    table: { databaseId: string; id: string },
    type: Extract<WebhookEventType, `record.${string}`>,
    recordIds: readonly string[],
    recordsJson: string,
    options: { source?: EventSource; changes?: RecordChanges } = {},
  ): Promise<string> {
    if (recordIds.length === 0) throw new Error('a record event names at least one record');
    const changes = options.changes ? `,"changes":${JSON.stringify(options.changes.changes)}` : '';
    return this.append({
      databaseId: table.databaseId,
      tableId: table.id,
      type,
      source: options.source ?? 'public_api',
      dataJson: `{"tableId":${JSON.stringify(table.id)},"recordIds":${JSON.stringify(recordIds)},"records":${recordsJson}${changes}}`,
      ...(options.changes ? { changedFieldIds: options.changes.changedFieldIds } : {}),
      suppressed: this.quiet,
    });
  }

  private async append(input: OutboxEventInput): Promise<string> {
    const event = { ...input, actor: this.actor };
    const appended =
      '$queryRawUnsafe' in this.transaction
        ? await appendOutboxEventInTx(this.transaction, event)
        : await appendOutboxEvent(this.transaction, event);
    if (!event.suppressed) this.appended(appended.heard ? [appended.id] : [], 1);
    return appended.id;
  }
}

/** The key making a change as events name it: its `{id, name}` as JSON. */
export const actorOf = (principal: Principal): string =>
  JSON.stringify(recordAuthor(principal.keyId, principal.keyName));

/** Who makes a transaction's changes, and whether integrations hear of its record events. */
export interface EventContext {
  /** The key's `{id, name}` as JSON (actorOf); null for the system. */
  actor: string | null;
  /** suppressWebhooks: record events for history only (TransactionEvents' `quiet`). */
  quiet?: boolean;
}

const NO_CONTEXT: EventContext = { actor: null };

/**
 * Runs `work` in the transaction `begin` opens, handing it the transaction's events, then
 * publishes them: only after `begin` returned, i.e. after the commit. A rolled-back transaction
 * publishes nothing.
 */
export async function publishingEvents<T, Handle extends Tx | PgClient>(
  publisher: EventPublisher,
  begin: (work: (transaction: Handle) => Promise<T>) => Promise<T>,
  work: (transaction: Handle, events: TransactionEvents) => Promise<T>,
  context: EventContext = NO_CONTEXT,
): Promise<T> {
  let events: TransactionEvents | undefined;
  const result = await begin((transaction) => {
    events = new TransactionEvents(transaction, context);
    return work(transaction, events);
  });
  // Also with no id to hand over: the publisher's other listeners (the change feed) hear of a commit.
  if (events?.appendedAny) publisher.publish(events.ids);
  return result;
}
