import {
  decryptSecret,
  hearsEvent,
  subscriptionOf,
  type ViewMembers,
  type WebhookSubscription,
} from '@recordbase/db';
import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';
import { signingKey } from './signing';

/**
 * The active webhooks, held in memory so that matching an event costs no query. Every change to
 * webhooks that can alter a match bumps `webhook_subscriptions_version` (a trigger, in the
 * changing transaction), and each batch of events is read together with that version: an event
 * is matched only against subscriptions at least as new as the snapshot it was read in. Secrets
 * are decrypted once per load.
 */

/** An active webhook: its filters (`WebhookSubscription`), address and signing key. */
export interface Subscription extends WebhookSubscription {
  webhookId: number;
  databaseId: string;
  url: string;
  createdAtMs: number;
  /** Null when the stored secret cannot be decrypted (wrong WEBHOOK_SECRET_KEY). */
  signingKey: Buffer | null;
}

export interface MatchableEvent {
  databaseId: string;
  tableId: string | null;
  type: string;
  createdAt: Date;
  /** record.updated: the fields its records changed. */
  changedFieldIds: readonly string[];
  /** Record events: the records inside each watched view, before and after. */
  viewMembers: ViewMembers | null;
}

interface WebhookRow {
  version: string;
  id: number | null;
  database_id: string | null;
  table_id: string | null;
  url: string | null;
  events: string[] | null;
  field_ids: string[] | null;
  view_id: string | null;
  secret_ciphertext: string | null;
  created_at: Date | null;
}

export class SubscriptionCache {
  private version = -1n;
  private byDatabase = new Map<string, Subscription[]>();
  private loading: Promise<void> | undefined;

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    private readonly secretKey: Buffer,
    private readonly logger: Logger,
  ) {}

  /** Reloads unless the cache already reflects `version` (or a later one). */
  async ensure(version: bigint): Promise<void> {
    // A load already running may predate the version asked for: then one more, and no more (the
    // version only grows, so a load started now reads at least `version`).
    for (let loads = 0; this.version < version && loads < 2; loads++) {
      this.loading ??= this.load().finally(() => {
        this.loading = undefined;
      });
      await this.loading;
    }
  }

  /**
   * The webhooks an event goes to: same database, its type, its table or every table, created no
   * later, and for record.updated one of the fields it watches changed (when it names fields).
   */
  match(event: MatchableEvent): Subscription[] {
    const createdAtMs = event.createdAt.getTime();
    return (this.byDatabase.get(event.databaseId) ?? []).filter(
      (subscription) =>
        // A webhook hears what happens after it exists, however late the event is dispatched.
        subscription.createdAtMs <= createdAtMs && hearsEvent(subscription, event),
    );
  }

  private async load(): Promise<void> {
    // One statement, one snapshot: the version read is the one these rows reflect.
    const result = await this.pool.query<WebhookRow>(
      `SELECT v.version::text AS version, w.id, w.database_id, w.table_id, w.url, w.events, w.field_ids, w.view_id,
              w.secret_ciphertext, w.created_at
         FROM webhook_subscriptions_version v
         LEFT JOIN webhooks w ON w.active`,
    );
    const byDatabase = new Map<string, Subscription[]>();
    for (const row of result.rows) {
      if (row.id === null || row.database_id === null) continue;
      const subscription: Subscription = {
        webhookId: row.id,
        databaseId: row.database_id,
        url: row.url ?? '',
        ...subscriptionOf({
          events: row.events ?? [],
          tableId: row.table_id,
          fieldIds: row.field_ids,
          viewId: row.view_id,
        }),
        createdAtMs: row.created_at?.getTime() ?? 0,
        signingKey: this.keyOf(row.id, row.secret_ciphertext ?? ''),
      };
      const list = byDatabase.get(subscription.databaseId);
      if (list) list.push(subscription);
      else byDatabase.set(subscription.databaseId, [subscription]);
    }
    this.byDatabase = byDatabase;
    this.version = BigInt(result.rows[0]?.version ?? '0');
  }

  private keyOf(webhookId: number, ciphertext: string): Buffer | null {
    try {
      return signingKey(decryptSecret(this.secretKey, ciphertext));
    } catch {
      this.logger.error(
        { webhookId },
        'cannot decrypt the webhook secret: is WEBHOOK_SECRET_KEY the key it was stored with?',
      );
      return null;
    }
  }
}

/** Decrypted signing keys by ciphertext, for deliveries claimed by id (retries). */
export class SigningKeys {
  private readonly keys = new Map<string, Buffer | null>();

  constructor(
    private readonly secretKey: Buffer,
    private readonly logger: Logger,
    private readonly maxEntries = 10_000,
  ) {}

  of(webhookId: number, ciphertext: string): Buffer | null {
    const known = this.keys.get(ciphertext);
    if (known !== undefined) return known;
    let key: Buffer | null;
    try {
      key = signingKey(decryptSecret(this.secretKey, ciphertext));
    } catch {
      this.logger.error(
        { webhookId },
        'cannot decrypt the webhook secret: is WEBHOOK_SECRET_KEY the key it was stored with?',
      );
      key = null;
    }
    if (this.keys.size >= this.maxEntries) this.keys.clear();
    this.keys.set(ciphertext, key);
    return key;
  }
}
