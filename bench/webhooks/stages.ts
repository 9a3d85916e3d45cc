import type pg from 'pg';
import { type Percentiles, percentiles } from './analyze';
import type { Receipt } from './receiver';

/**
 * Where the time of a delivery goes, from the dispatcher's own bookkeeping in PostgreSQL
 * (millisecond timestamps) and the receipt time:
 *
 * - relay: outbox created_at → relayed_at (now() of the relay's transaction: the row was picked)
 * - fan-out: relayed_at → fanned_out_at (now() of the fan-out transaction: the job started)
 * - to send: fanned_out_at → start of the attempt's HTTP request (the attempt row's created_at,
 *   now() of the bookkeeping transaction after the request, minus its duration_ms): fan-out
 *   insert and enqueue, waiting in the delivery queue, the claim, building and signing
 * - send → receipt: start of the request (as above) → receipt (DNS/SSRF check, a new connection, the
 *   request); "receipt → recorded" shows how long the bookkeeping waited after it (a long wait
 *   there, e.g. for a pool connection, moves the estimated send start later)
 *
 * Over the first attempts of the measured window's deliveries that arrived.
 */

export const STAGES = [
  'relay',
  'fan-out',
  'to send',
  'send → receipt',
  'receipt → recorded',
  'total',
] as const;
export type Stage = (typeof STAGES)[number];

export type StageFigures = Record<Stage, Percentiles>;

interface Row {
  event_id: string;
  webhook_id: number;
  created_ms: number;
  relayed_ms: number;
  fanned_ms: number;
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
            (extract(epoch FROM e.relayed_at) * 1000)::float8 AS relayed_ms,
            (extract(epoch FROM e.fanned_out_at) * 1000)::float8 AS fanned_ms,
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
    const sendStart = row.recorded_ms - row.duration_ms;
    values.relay.push(row.relayed_ms - row.created_ms);
    values['fan-out'].push(row.fanned_ms - row.relayed_ms);
    values['to send'].push(sendStart - row.fanned_ms);
    values['send → receipt'].push(received - sendStart);
    values['receipt → recorded'].push(row.recorded_ms - received);
    values.total.push(received - row.created_ms);
  }
  return Object.fromEntries(STAGES.map((stage) => [stage, percentiles(values[stage])])) as StageFigures;
}

/** Work still waiting in PostgreSQL (the truth the dispatcher works from) at one moment. */
export interface Backlog {
  events: number;
  unrelayed: number;
  relayedNotFannedOut: number;
  deliveries: number;
  openDeliveries: number;
  succeeded: number;
}

export async function backlog(pool: pg.Pool): Promise<Backlog> {
  const result = await pool.query<Record<keyof Backlog, string>>(
    `SELECT (SELECT count(*) FROM outbox_events WHERE type = 'record.created') AS events,
            (SELECT count(*) FROM outbox_events WHERE type = 'record.created' AND relayed_at IS NULL) AS unrelayed,
            (SELECT count(*) FROM outbox_events
              WHERE type = 'record.created' AND relayed_at IS NOT NULL AND fanned_out_at IS NULL) AS "relayedNotFannedOut",
            (SELECT count(*) FROM webhook_deliveries) AS deliveries,
            (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying')) AS "openDeliveries",
            (SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded') AS succeeded`,
  );
  const row = result.rows[0]!;
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, Number(value)]),
  ) as unknown as Backlog;
}
