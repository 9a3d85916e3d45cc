import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jobQueues } from '@recordbase/contracts/jobs';
import type { WebhookEventType } from '@recordbase/contracts/webhooks';
import { appendOutboxEvent, type Db, encryptSecret } from '@recordbase/db';
import { createLogger } from '@recordbase/server-kit/logger';
import { createMetrics } from '@recordbase/server-kit/metrics';
import { deleteKeysUnder } from '@recordbase/server-kit/redis-keys';
import { parseCidrList } from '@recordbase/server-kit/ssrf';
import { Queue } from 'bullmq';
import { Dispatcher, type DispatcherOptions } from '../src/dispatcher';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SECRET_KEY = randomBytes(32);
export const silentLogger = createLogger('webhook-dispatcher-test', process.env.TEST_LOG_LEVEL ?? 'silent');

export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function newPrefix(): string {
  return `test-${randomBytes(6).toString('hex')}`;
}

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 15_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function insertDatabase(db: Db): Promise<string> {
  const id = randomUUID();
  await db.pool.query('INSERT INTO databases (id, name, schema_name) VALUES ($1, $2, $3)', [
    id,
    'Test base',
    `base_${id.replaceAll('-', '')}`,
  ]);
  return id;
}

export async function insertTable(db: Db, databaseId: string, name: string): Promise<string> {
  const id = `tbl${randomBytes(7).toString('hex')}`;
  await db.pool.query('INSERT INTO tables (id, database_id, name, name_key) VALUES ($1, $2, $3, $4)', [
    id,
    databaseId,
    name,
    name.toLowerCase(),
  ]);
  return id;
}

export interface TestWebhook {
  id: number;
  secret: string;
}

export async function insertWebhook(
  db: Db,
  options: {
    databaseId: string;
    url: string;
    events: WebhookEventType[];
    tableId?: string | null;
    active?: boolean;
    fieldIds?: string[];
  },
): Promise<TestWebhook> {
  const secret = newSecret();
  const result = await db.pool.query<{ id: number }>(
    `INSERT INTO webhooks (database_id, table_id, url, events, secret_ciphertext, active, field_ids)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [
      options.databaseId,
      options.tableId ?? null,
      options.url,
      options.events,
      encryptSecret(SECRET_KEY, secret),
      options.active ?? true,
      options.fieldIds ?? [],
    ],
  );
  return { id: result.rows[0]!.id, secret };
}

const publishers = new Map<string, Queue>();

/** What records-api does after its commit: the event's job on the events queue under `prefix`. */
export async function publishEvent(prefix: string, eventId: string, redisUrl = REDIS_URL): Promise<void> {
  let queue = publishers.get(`${redisUrl} ${prefix}`);
  if (!queue) {
    queue = new Queue(jobQueues.events.queueName, { connection: { url: redisUrl }, prefix });
    publishers.set(`${redisUrl} ${prefix}`, queue);
  }
  const { jobName, retry } = jobQueues.events;
  await queue.add(jobName, { eventId }, { jobId: eventId, attempts: retry.attempts, backoff: retry.backoff });
}

export async function closePublishers(): Promise<void> {
  const queues = [...publishers.values()];
  publishers.clear();
  await Promise.all(queues.map((queue) => queue.close()));
}

/**
 * Appends an event to the outbox, committed, and publishes it to `publishTo` as records-api would;
 * without `publishTo` the publish is "lost" and only the sweep finds the event.
 */
export async function insertEvent(
  db: Db,
  options: {
    databaseId: string;
    tableId: string | null;
    type: WebhookEventType;
    data?: unknown;
    changedFieldIds?: string[];
    source?: 'public_api' | 'import';
    publishTo?: string;
    publishToRedis?: string;
  },
): Promise<string> {
  const { id: eventId } = await appendOutboxEvent(db.pool, {
    databaseId: options.databaseId,
    tableId: options.tableId,
    type: options.type,
    source: options.source ?? 'public_api',
    dataJson: JSON.stringify(options.data ?? { tableId: options.tableId, recordIds: [], records: [] }),
    ...(options.changedFieldIds ? { changedFieldIds: options.changedFieldIds } : {}),
  });
  if (options.publishTo) await publishEvent(options.publishTo, eventId, options.publishToRedis);
  return eventId;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: the parsed body of whatever was sent; tests assert its shape
  json: any;
}

export type Responder = (request: ReceivedRequest, response: ServerResponse, index: number) => void;

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  respond(responder: Responder): void;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 (or another loopback address); answers 200 unless told otherwise. */
export async function startReceiver(host = '127.0.0.1', responder?: Responder): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let current: Responder = responder ?? ((_request, response) => response.end('ok'));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json };
      requests.push(received);
      current(received, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/hook`,
    port,
    requests,
    respond(next) {
      current = next;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export function testDispatcher(db: Db, overrides: Partial<DispatcherOptions> = {}): Dispatcher {
  return new Dispatcher({
    db,
    redisUrl: REDIS_URL,
    logger: silentLogger,
    metrics: createMetrics('webhook-dispatcher'),
    secretKey: SECRET_KEY,
    queuePrefix: newPrefix(),
    retryScheduleMs: [1000, 1000],
    disableAfterMs: 5 * 86_400_000,
    timeoutMs: 3000,
    concurrency: 20,
    receiverConcurrency: 8,
    eventConcurrency: 20,
    allowedCidrs: parseCidrList('127.0.0.1/32'),
    sweepIntervalMs: 500,
    // Long by default, so a test passes through the normal path, not because the sweep rescued it.
    sweepGraceMs: 60_000,
    attemptRetentionMs: 30 * 86_400_000,
    eventRetentionMs: 7 * 86_400_000,
    historyRetentionMs: 30 * 86_400_000,
    trashRetentionMs: 7 * 86_400_000,
    pruneIntervalMs: 60_000,
    ...overrides,
  });
}

/** Removes every Redis key under a BullMQ prefix. */
export async function dropPrefix(prefix: string, redisUrl = REDIS_URL): Promise<void> {
  await deleteKeysUnder(redisUrl, prefix);
}

export async function deliveryRows(db: Db, eventId: string) {
  const result = await db.pool.query<{
    id: string;
    webhook_id: number;
    status: string;
    attempts: number;
    last_status_code: number | null;
    next_attempt_at: Date | null;
  }>(
    'SELECT id::text, webhook_id, status, attempts, last_status_code, next_attempt_at FROM webhook_deliveries WHERE event_id = $1 ORDER BY webhook_id',
    [eventId],
  );
  return result.rows;
}

export async function attemptRows(db: Db, deliveryId: string) {
  const result = await db.pool.query<{
    attempt: number;
    status_code: number | null;
    duration_ms: number;
    error_kind: string | null;
    error: string | null;
    response_excerpt: string | null;
  }>(
    'SELECT attempt, status_code, duration_ms, error_kind, error, response_excerpt FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt',
    [deliveryId],
  );
  return result.rows;
}
