import type pg from 'pg';
import type { Receipt } from '../lib/receiver';
import { type Percentiles, percentiles } from './analyze';

/**
 * Where the time of a delivery goes. The dispatcher sends first and writes afterwards: an attempt
 * row and the event's `dispatched_at` are written together, by one batched statement, after every
 * first attempt of the event ended, so the attempt's `created_at` is its record time, not its send
 * time. The send start is estimated from the receipt: receipt − the attempt's `duration_ms` (the
 * request's start to its answer) is at most the real start, so "to send" is a lower bound and
 * "request" an upper bound of the time on the wire.
 *
 * - to send: outbox created_at (the API's transaction) → estimated send start: the API's commit,
 *   its publish to BullMQ, the event job's wait and claim, reading the event, matching, signing
 * - request: the attempt's duration_ms (send start → answer; the receipt is inside it)
 * - receipt → recorded: receipt → the attempt row's created_at (now() of the record statement:
 *   waiting for the event's other deliveries, then for the record batch)
 * - total (commit → receipt): receipt − outbox created_at
 *
 * Over the first attempts of the measured window's deliveries that arrived.
 */

export const STAGES = ['to send', 'request', 'receipt → recorded', 'total'] as const;
export type Stage = (typeof STAGES)[number];

export type StageFigures = Record<Stage, Percentiles>;

interface Row {
  event_id: string;
  webhook_id: number;
  created_ms: number;
  recorded_ms: number;
  duration_ms: number;
}

export async function stageBreakdown(
  pool: pg.Pool,
  receipts: readonly Receipt[],
  measuredFrom: number,
): Promise<StageFigures> {
  const receivedAt = new Map<string, number>();
  for (const receipt of receipts) {
    const key = `${receipt[0]}|${receipt[1]}`;
    if (!receivedAt.has(key)) receivedAt.set(key, receipt[3]);
  }
  const rows = await pool.query<Row>(
    `SELECT e.id::text AS event_id, d.webhook_id,
            (extract(epoch FROM e.created_at) * 1000)::float8 AS created_ms,
            (extract(epoch FROM a.created_at) * 1000)::float8 AS recorded_ms,
            a.duration_ms
       FROM outbox_events e
       JOIN webhook_deliveries d ON d.event_id = e.id
       JOIN webhook_delivery_attempts a ON a.delivery_id = d.id AND a.attempt = 1
      WHERE e.type = 'record.created' AND e.created_at >= to_timestamp($1::float8 / 1000)`,
    [measuredFrom],
  );
  const values = Object.fromEntries(STAGES.map((stage) => [stage, [] as number[]])) as Record<
    Stage,
    number[]
  >;
  for (const row of rows.rows) {
    const received = receivedAt.get(`evt_${row.event_id}|${row.webhook_id}`);
    if (received === undefined) continue;
    const sendStart = received - row.duration_ms;
    values['to send'].push(sendStart - row.created_ms);
    values.request.push(row.duration_ms);
    values['receipt → recorded'].push(row.recorded_ms - received);
    values.total.push(received - row.created_ms);
  }
  return Object.fromEntries(STAGES.map((stage) => [stage, percentiles(values[stage])])) as StageFigures;
}

/** Work still waiting in PostgreSQL (the truth the dispatcher works from) at one moment. */
export interface Backlog {
  events: number;
  /** Events not yet marked dispatched (their first attempts not yet recorded). */
  undispatched: number;
  deliveries: number;
  /** Pending or retrying (a first attempt put off because its receiver was at its limit, or a retry). */
  openDeliveries: number;
  succeeded: number;
}

export async function backlog(pool: pg.Pool): Promise<Backlog> {
  const result = await pool.query<Record<keyof Backlog, string>>(
    `SELECT (SELECT count(*) FROM outbox_events WHERE type = 'record.created') AS events,
            (SELECT count(*) FROM outbox_events WHERE type = 'record.created' AND dispatched_at IS NULL) AS undispatched,
            (SELECT count(*) FROM webhook_deliveries) AS deliveries,
            (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying')) AS "openDeliveries",
            (SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded') AS succeeded`,
  );
  const row = result.rows[0]!;
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, Number(value)]),
  ) as unknown as Backlog;
}
