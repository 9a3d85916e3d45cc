import type { Receipt } from '../lib/receiver';
import { percentile } from '../lib/stats';
import type { LoadResult } from './load';

/**
 * Turns the writes and the verified receipts of one case into its figures. A delivery is one
 * (event, webhook) pair; the event is named by the first record id its write answered, which the
 * delivered body carries in `data.recordIds`.
 *
 * Latency "commit to receipt" is the receipt time minus the event's `timestamp` (the outbox row's
 * created_at: now() of the API's writing transaction, so it slightly precedes the commit and
 * slightly overstates the latency, by the transaction's duration). Percentiles are nearest-rank
 * over every expected delivery of the measured window; a delivery that never arrived counts as
 * infinitely late, so a p99 is only finite when at least 99% arrived.
 */

export interface Percentiles {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export interface DeliveryFigures {
  /** Successful writes (= events), all and in the measured window. */
  events: number;
  measuredEvents: number;
  /** Writes answered per second in the measured window. */
  eventsPerSecond: number;
  writeErrors: number;
  firstWriteError?: string;
  skipped: number;
  api: Percentiles;
  expected: number;
  received: number;
  missing: number;
  duplicates: number;
  /** Verified receipts of events the load generator does not know (e.g. a write whose answer failed). */
  unexpected: number;
  /**
   * Steady: receipts per second within the measured window. Burst: receipts per second between
   * the 10th and the 90th percentile of the receipt times (ramp-up and tail left out).
   */
  deliveriesPerSecond: number;
  /** Burst: all receipts over (last receipt - first write). Steady: same as above. */
  deliveriesPerSecondOverall: number;
  /** Commit (event timestamp) to receipt, ms. */
  latency: Percentiles;
  /** API answer (client side) to receipt, ms: a lower bound, the answer follows the commit. */
  latencyFromAnswer: Percentiles;
  /** Last receipt after the last request was sent, s. */
  tailSeconds: number;
}

export function percentiles(values: number[]): Percentiles {
  const sorted = values.sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

export const deliveryKey = (recordId: string, webhookId: number) => `${recordId}|${webhookId}`;

export function analyze(
  kind: 'steady' | 'burst',
  load: LoadResult,
  receipts: readonly Receipt[],
  webhookIds: readonly number[],
): DeliveryFigures {
  const first = new Map<string, Receipt>();
  let duplicates = 0;
  for (const receipt of receipts) {
    const key = deliveryKey(receipt[2], receipt[1]);
    if (first.has(key)) duplicates += 1;
    else first.set(key, receipt);
  }
  const measured = load.writes.filter((write) => write.scheduledAt >= load.measuredFrom);
  const latency: number[] = [];
  const fromAnswer: number[] = [];
  let received = 0;
  for (const write of load.writes) {
    const inWindow = write.scheduledAt >= load.measuredFrom;
    for (const webhookId of webhookIds) {
      const receipt = first.get(deliveryKey(write.recordId, webhookId));
      if (receipt) received += 1;
      if (!inWindow) continue;
      latency.push(receipt ? receipt[3] - receipt[4] : Number.POSITIVE_INFINITY);
      fromAnswer.push(receipt ? receipt[3] - write.ackAt : Number.POSITIVE_INFINITY);
    }
  }
  const expected = load.writes.length * webhookIds.length;

  const times = [...first.values()].map((receipt) => receipt[3]).sort((a, b) => a - b);
  let deliveriesPerSecond: number;
  let overall: number;
  if (kind === 'steady') {
    const from = load.measuredFrom;
    const to = load.sendEndedAt;
    const inWindow = times.filter((t) => t >= from && t <= to).length;
    deliveriesPerSecond = to > from ? inWindow / ((to - from) / 1000) : Number.NaN;
    overall = deliveriesPerSecond;
  } else {
    const t10 = percentile(times, 10);
    const t90 = percentile(times, 90);
    const middle = times.filter((t) => t >= t10 && t <= t90).length;
    deliveriesPerSecond = t90 > t10 ? middle / ((t90 - t10) / 1000) : Number.NaN;
    const last = times[times.length - 1] ?? Number.NaN;
    overall = times.length / ((last - load.startedAt) / 1000);
  }
  const windowSeconds = (load.sendEndedAt - load.measuredFrom) / 1000;
  const answeredInWindow = measured.filter((write) => write.ackAt <= load.sendEndedAt).length;
  return {
    events: load.writes.length,
    measuredEvents: measured.length,
    eventsPerSecond:
      kind === 'steady'
        ? answeredInWindow / windowSeconds
        : load.writes.length / ((load.endedAt - load.startedAt) / 1000),
    writeErrors: load.errors,
    ...(load.firstError ? { firstWriteError: load.firstError } : {}),
    skipped: load.skipped,
    api: percentiles(load.apiLatencies),
    expected,
    received,
    missing: expected - received,
    duplicates,
    unexpected: first.size - received,
    deliveriesPerSecond,
    deliveriesPerSecondOverall: overall,
    latency: percentiles(latency),
    latencyFromAnswer: percentiles(fromAnswer),
    tailSeconds: times.length ? (times[times.length - 1]! - load.sendEndedAt) / 1000 : Number.NaN,
  };
}
