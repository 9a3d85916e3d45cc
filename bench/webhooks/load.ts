import { Pool } from 'undici';

/**
 * The load: record creates through records-api, one outbox event per request.
 *
 * - Steady: open loop. Request i is due at start + i / rate, whatever happened to earlier ones
 *   (so a slow API does not lower the offered load); requests beyond `maxInFlight` are not sent
 *   and counted as skipped. `POST …/records` with one record.
 * - Burst: closed loop. `concurrency` writers send `POST …/records/bulk` with `records` records
 *   back to back until `events` requests succeeded.
 *
 * Every successful write is kept with its first record id (which the delivered event carries in
 * `data.recordIds`), so receipts can be matched to writes, and the time its answer arrived.
 */

export interface Write {
  /** First record id of the request: the key of its event. */
  recordId: string;
  /** Wall-clock ms: when the request was due (steady) or sent (burst), and when it was answered. */
  scheduledAt: number;
  ackAt: number;
}

export interface LoadResult {
  writes: Write[];
  errors: number;
  firstError?: string;
  /** Steady only: due requests not sent because `maxInFlight` were outstanding. */
  skipped: number;
  /** Wall-clock ms. */
  startedAt: number;
  /** Events written before this are warm-up: delivered and counted, not timed. */
  measuredFrom: number;
  /** When the last request was due (steady) or sent (burst). */
  sendEndedAt: number;
  /** When the last answer arrived. */
  endedAt: number;
  /** Answer times in ms, from due time (steady: includes waiting to be sent), measured window. */
  apiLatencies: number[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class WriteClient {
  private readonly pool: Pool;
  private readonly headers: Record<string, string>;

  constructor(
    apiUrl: string,
    apiKey: string,
    connections: number,
    private readonly recordsPath: string,
  ) {
    this.pool = new Pool(apiUrl, { connections, pipelining: 1 });
    this.headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  }

  /** Creates records; answers the first record id. */
  async create(fields: Array<Record<string, unknown>>, bulk: boolean): Promise<string> {
    const response = await this.pool.request({
      method: 'POST',
      path: bulk ? `${this.recordsPath}/bulk` : this.recordsPath,
      headers: this.headers,
      body: JSON.stringify(bulk ? { records: fields } : { record: fields[0] }),
    });
    const text = await response.body.text();
    if (response.statusCode !== 201) throw new Error(`status ${response.statusCode}: ${text.slice(0, 300)}`);
    const json = JSON.parse(text) as { id?: string; records?: { id: string }[] };
    const id = bulk ? json.records?.[0]?.id : json.id;
    if (!id) throw new Error(`no record id in the answer: ${text.slice(0, 200)}`);
    return id;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

const recordFields = (sequence: number) => ({ Name: `event ${sequence}`, Seq: sequence });

export async function steadyLoad(
  client: WriteClient,
  options: { rate: number; warmupMs: number; durationMs: number; maxInFlight: number },
): Promise<LoadResult> {
  const total = Math.round((options.rate * (options.warmupMs + options.durationMs)) / 1000);
  const intervalMs = 1000 / options.rate;
  const start = performance.now();
  const wallStart = Date.now();
  const wall = (perf: number) => wallStart + (perf - start);
  const result: LoadResult = {
    writes: [],
    errors: 0,
    skipped: 0,
    startedAt: wallStart,
    measuredFrom: wallStart + options.warmupMs,
    sendEndedAt: 0,
    endedAt: 0,
    apiLatencies: [],
  };
  const inFlight = new Set<Promise<void>>();
  const fire = (sequence: number, duePerf: number) => {
    if (inFlight.size >= options.maxInFlight) {
      result.skipped += 1;
      return;
    }
    const request = (async () => {
      try {
        const recordId = await client.create([recordFields(sequence)], false);
        const ackPerf = performance.now();
        const scheduledAt = wall(duePerf);
        result.writes.push({ recordId, scheduledAt, ackAt: wall(ackPerf) });
        if (scheduledAt >= result.measuredFrom) result.apiLatencies.push(ackPerf - duePerf);
      } catch (error) {
        result.errors += 1;
        result.firstError ??= error instanceof Error ? error.message : String(error);
      }
    })();
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  };
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - start) / intervalMs) + 1);
    while (sent < due) {
      fire(sent, start + sent * intervalMs);
      sent += 1;
    }
    const nextDue = start + sent * intervalMs;
    await sleep(Math.max(1, nextDue - performance.now()));
  }
  result.sendEndedAt = wall(start + (total - 1) * intervalMs);
  await Promise.all([...inFlight]);
  result.endedAt = Date.now();
  return result;
}

export async function burstLoad(
  client: WriteClient,
  options: { events: number; concurrency: number; records: number },
): Promise<LoadResult> {
  const wallStart = Date.now();
  const result: LoadResult = {
    writes: [],
    errors: 0,
    skipped: 0,
    startedAt: wallStart,
    measuredFrom: wallStart,
    sendEndedAt: 0,
    endedAt: 0,
    apiLatencies: [],
  };
  let next = 0;
  const worker = async () => {
    // Started minus failed = succeeded or in flight.
    while (next - result.errors < options.events) {
      const sequence = next++;
      const sentPerf = performance.now();
      const sentAt = Date.now();
      try {
        const fields = Array.from({ length: options.records }, (_, i) =>
          recordFields(sequence * options.records + i),
        );
        const recordId = await client.create(fields, true);
        result.writes.push({ recordId, scheduledAt: sentAt, ackAt: Date.now() });
        result.apiLatencies.push(performance.now() - sentPerf);
      } catch (error) {
        result.errors += 1;
        result.firstError ??= error instanceof Error ? error.message : String(error);
        if (result.errors > 100) throw new Error(`burst: too many errors, first: ${result.firstError}`);
        await sleep(10);
      }
      result.sendEndedAt = Math.max(result.sendEndedAt, sentAt);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
  result.endedAt = Date.now();
  return result;
}

/**
 * Closed loop of single-record creates: `concurrency` writers, each sending its next request when
 * the previous one is answered, for `warmupMs` then `durationMs`. The most the API takes at that
 * concurrency: the write ceiling, with the latency it costs.
 */
export async function closedLoad(
  client: WriteClient,
  options: { concurrency: number; warmupMs: number; durationMs: number },
): Promise<LoadResult> {
  const wallStart = Date.now();
  const stopAt = wallStart + options.warmupMs + options.durationMs;
  const result: LoadResult = {
    writes: [],
    errors: 0,
    skipped: 0,
    startedAt: wallStart,
    measuredFrom: wallStart + options.warmupMs,
    sendEndedAt: stopAt,
    endedAt: 0,
    apiLatencies: [],
  };
  let sequence = 0;
  const worker = async () => {
    while (Date.now() < stopAt) {
      const current = sequence++;
      const sentPerf = performance.now();
      const sentAt = Date.now();
      try {
        const recordId = await client.create([recordFields(current)], false);
        const ackAt = Date.now();
        result.writes.push({ recordId, scheduledAt: sentAt, ackAt });
        if (sentAt >= result.measuredFrom && ackAt <= stopAt)
          result.apiLatencies.push(performance.now() - sentPerf);
      } catch (error) {
        result.errors += 1;
        result.firstError ??= error instanceof Error ? error.message : String(error);
        if (result.errors > 100) throw new Error(`closed loop: too many errors, first: ${result.firstError}`);
        await sleep(10);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
  result.endedAt = Date.now();
  return result;
}
