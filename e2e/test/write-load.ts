import { randomBytes } from 'node:crypto';
import { clientOf } from './client';
import type { Stack } from './stack';

/**
 * Concurrent writers through the API while a test injures the database, and the checks after it:
 * every write answered 2xx or 503 with Retry-After (never a 500), every acknowledged record
 * present exactly once, and each request's records all there or none (no half-written bulk).
 */

export const BATCH_SIZE = 10;

export interface Outcome {
  batch: string;
  status: number;
  retryAfter: string | null;
  /** Ids the API acknowledged (2xx only). */
  ids: string[];
  /** The body of an answer that was neither 2xx nor 503, for the failure message. */
  body?: string;
}

export interface WriteLoad {
  outcomes: Outcome[];
  /** Successes so far. */
  acknowledged(): number;
  /** Resolves once `count` more writes succeed than had when it was called. */
  waitForSuccesses(count: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function newWriteTable(stack: Stack): Promise<string> {
  const client = clientOf(stack);
  const base = await client.bases.create({
    name: 'Faults',
    tables: [
      {
        name: 'Items',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Batch', type: 'single_line_text' },
        ],
      },
    ],
  });
  return base.id;
}

export function startWriteLoad(stack: Stack, baseId: string, writers: number): WriteLoad {
  const outcomes: Outcome[] = [];
  let stopping = false;
  let inFlight = 0;
  const url = `${stack.apiUrl}/bases/${baseId}/tables/Items/records/bulk`;

  const writeOnce = async () => {
    const batch = randomBytes(6).toString('hex');
    const records = Array.from({ length: BATCH_SIZE }, (_, i) => ({ Name: `${batch}-${i}`, Batch: batch }));
    let response: Response;
    inFlight += 1;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.rootKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ records }),
      });
    } catch (error) {
      inFlight -= 1;
      // No answer at all (the service dropped the connection, or died): status 0, never expected.
      outcomes.push({
        batch,
        status: 0,
        retryAfter: null,
        ids: [],
        body: String((error as Error).cause ?? error),
      });
      await new Promise((done) => setTimeout(done, 200));
      return;
    }
    const text = await response.text();
    inFlight -= 1;
    const ok = response.status >= 200 && response.status < 300;
    const outcome: Outcome = {
      batch,
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      ids: ok ? (JSON.parse(text).createdRecordIds as string[]) : [],
      ...(ok || response.status === 503 ? {} : { body: text.slice(0, 500) }),
    };
    outcomes.push(outcome);
    // Refused writes come back at once while the database is away: no busy loop.
    if (!ok) await new Promise((done) => setTimeout(done, 50));
  };

  const loops = Array.from({ length: writers }, async () => {
    while (!stopping) await writeOnce();
  });
  const acknowledged = () => outcomes.filter((o) => o.status >= 200 && o.status < 300).length;

  return {
    outcomes,
    acknowledged,
    async waitForSuccesses(count, timeoutMs) {
      const target = acknowledged() + count;
      const before = outcomes.length;
      const deadline = Date.now() + timeoutMs;
      while (acknowledged() < target) {
        if (Date.now() > deadline) {
          // What the writers met meanwhile: refusals (and which), or answers that never came.
          const statuses = new Map<number, number>();
          for (const outcome of outcomes.slice(before))
            statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
          // No answer at all (status 0) means records-api is gone: its last words say why.
          const unreachable = statuses.has(0)
            ? `; the first failure: ${outcomes.slice(before).find((o) => o.status === 0)?.body}; records-api's output ends:\n${stack.logs('records-api').slice(-4000)}`
            : '';
          throw new Error(
            `expected ${count} more acknowledged writes within ${timeoutMs} ms; answers meanwhile by status: ${JSON.stringify(Object.fromEntries(statuses))}, requests unanswered now: ${inFlight}${unreachable}`,
          );
        }
        await new Promise((done) => setTimeout(done, 50));
      }
    },
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** What the table holds, read back through the API (retrying, as the database may just be back). */
export async function storedBatches(stack: Stack, baseId: string): Promise<Map<string, string[]>> {
  const client = clientOf(stack);
  const batches = new Map<string, string[]>();
  const names = new Set<string>();
  for await (const record of client.records.iterate(baseId, 'Items', { limit: 100 })) {
    const fields = record.fields as Record<string, unknown>;
    const batch = String(fields.Batch);
    const name = String(fields.Name);
    if (names.has(name)) throw new Error(`record ${name} is stored twice`);
    names.add(name);
    batches.set(batch, [...(batches.get(batch) ?? []), record.id]);
  }
  return batches;
}

/** The checks every fault of this kind must pass; returns a summary for the test's own asserts. */
export async function expectNoWriteLostOrHalfWritten(stack: Stack, baseId: string, outcomes: Outcome[]) {
  const unexpected = outcomes.filter((o) => !(o.status >= 200 && o.status < 300) && o.status !== 503);
  expect(unexpected).toEqual([]);
  const refusedWithoutRetryAfter = outcomes.filter((o) => o.status === 503 && !o.retryAfter);
  expect(refusedWithoutRetryAfter).toEqual([]);

  const stored = await storedBatches(stack, baseId);
  const sent = new Set(outcomes.map((o) => o.batch));
  for (const batch of stored.keys()) expect(sent.has(batch)).toBe(true);
  for (const outcome of outcomes) {
    const ids = stored.get(outcome.batch) ?? [];
    if (outcome.status >= 200 && outcome.status < 300) {
      // Acknowledged: all of it, exactly the ids the API answered.
      expect([...ids].sort()).toEqual([...outcome.ids].sort());
      expect(ids).toHaveLength(BATCH_SIZE);
    } else {
      // Refused (or its answer lost with the connection): all of it or none, never a part.
      expect([0, BATCH_SIZE]).toContain(ids.length);
    }
  }
  return {
    acknowledged: outcomes.filter((o) => o.status >= 200 && o.status < 300).length,
    refused: outcomes.filter((o) => o.status === 503).length,
  };
}
