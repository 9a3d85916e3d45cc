import {
  RecordbaseApiError,
  RecordbaseClient,
  RecordbaseNetworkError,
  RecordbaseResponseError,
} from '@recordbase/client';
import type { HostileMessage, HostileParentMessage, HostilePlan } from './hostile';
import { AnswerCounter } from './measure';
import { trace } from './trace';
import { importBombs } from './xlsx-bombs';

/**
 * Entry of the hostile tenant's process (hostile.ts starts it): its attacks, each in one or
 * more loops, from `start` until `stop`. Every answer is counted by attack and status. Refusals
 * (400, 403, 404, 413, 429) are what the fixes promise; a 5xx, a dropped connection, a request
 * left unanswered, or a success an attack must never get is a finding, printed at once with the
 * exact request. Like a tenant pushing at its limits rather than a flood of packets, a loop told
 * 429 waits the Retry-After it was given: refusing at line rate is the network's concern.
 */

/** An answer later than this is a hang: every attack's bound ends it within seconds (SQL's at 7 s). */
const HANG_AFTER_MS = 30_000;
/** Waits after a 429, whatever its Retry-After says: at least a breath, at most a moment. */
const RETRY_AFTER_BOUNDS_MS = [10, 2_000] as const;

/** An answer: a success (2xx), a status with the service's message, or none. */
type Answer =
  | { kind: 'success' }
  | { kind: 'status'; status: number; message: string }
  | { kind: 'none'; why: string };

interface Attack {
  name: string;
  /** Loops running it at once. */
  loops: number;
  /** The request, for a finding: method, path and what matters of the body. */
  request: string;
  /** Whether an answer of this status (2xx as 200) is one the attack may get. */
  allows(status: number): boolean;
  send(signal: AbortSignal): Promise<unknown>;
  /** Pause after each answer but a 429 (which waits its Retry-After). */
  pauseMs?: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Findings of one attack and answer printed as they happen. */
const PRINTED_PER_KIND = 3;
const printed = new Map<string, number>();

/** Set by `stop`: no loop starts another request. */
let stopping = false;

/** Why a request got no answer: the socket error's code when there is one. */
function noAnswer(error: RecordbaseNetworkError): string {
  let cause: unknown = error.cause;
  while (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cause = cause.cause;
  }
  return error.message;
}

function answerOf(error: unknown, signal: AbortSignal): Answer {
  if (error instanceof RecordbaseApiError || error instanceof RecordbaseResponseError) {
    return { kind: 'status', status: error.status, message: error.message };
  }
  if (signal.aborted) return { kind: 'none', why: `no answer in ${HANG_AFTER_MS / 1000} s` };
  if (error instanceof RecordbaseNetworkError) return { kind: 'none', why: `no answer: ${noAnswer(error)}` };
  return {
    kind: 'none',
    why: `failed in the client: ${error instanceof Error ? error.message : String(error)}`,
  };
}

/** `429` split by which bound refused: a key's requests or SQL queries in flight, or its rate. */
function labelOf(answer: Answer): string {
  if (answer.kind === 'success') return '2xx';
  if (answer.kind === 'none') return answer.why;
  if (answer.status === 429) return /in flight/.test(answer.message) ? '429 in flight' : '429 rate limited';
  return String(answer.status);
}

const refusal =
  (...statuses: number[]) =>
  (status: number) =>
    statuses.includes(status);

function attacks(
  plan: HostilePlan,
  tenant: RecordbaseClient,
  webhooksKey: RecordbaseClient,
  importIds: string[],
) {
  const { baseId, tableId } = plan;
  const sql = (name: string, query: string): Attack => ({
    name: `SQL: ${name}`,
    loops: 1,
    request: `POST /api/v1/bases/${baseId}/sql ${JSON.stringify({ query })}`,
    allows: refusal(400, 429),
    send: (signal) => tenant.sql.query(baseId, { query }, { signal }),
  });
  const listing = {
    filter: { field: 'Body', contains: 'needle' },
    sort: [{ field: 'Notes', direction: 'desc' as const }],
    fields: ['Title'],
    limit: 50,
  };
  const upload = new File([Buffer.alloc(plan.uploadBytes, 'a')], 'essay.txt', { type: 'text/plain' });
  const bombs = importBombs();
  let bombIndex = 0;
  return [
    sql(
      'a DO block trapping the cancel',
      'DO $$BEGIN LOOP BEGIN PERFORM count(*) FROM generate_series(1,50000000); EXCEPTION WHEN query_canceled THEN NULL; END; END LOOP; END$$',
    ),
    sql("repeat('x', 600000000)", "SELECT repeat('x', 600000000)"),
    sql("repeat('x', 600000000)::int", "SELECT repeat('x', 600000000)::int"),
    sql('pg_sleep(60)', 'SELECT pg_sleep(60)'),
    sql(
      'a cross join of 10^10 rows',
      'SELECT count(*) FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b',
    ),
    {
      name: `slow listings (${plan.listings} at once)`,
      loops: plan.listings,
      request: `POST /api/v1/bases/${baseId}/tables/${tableId}/records/list ${JSON.stringify(listing)}`,
      allows: refusal(200, 429),
      send: (signal) => tenant.records.list(baseId, tableId, listing, { signal }),
    },
    {
      name: 'records/list of 2,000 long texts',
      loops: 1,
      request: `POST /api/v1/bases/${baseId}/tables/${tableId}/records/list {"limit":2000}`,
      allows: refusal(400, 429),
      send: (signal) => tenant.records.list(baseId, tableId, { limit: 2000 }, { signal }),
    },
    {
      name: `uploads of ${(plan.uploadBytes / 1024).toLocaleString('en-US')} KiB`,
      // Two, so one is sending while the other is answered: as fast as the rate limit lets them.
      loops: 2,
      request: `POST /fileupload (${plan.uploadBytes} bytes of text/plain, to ${baseId}/${tableId}/Files)`,
      allows: refusal(200, 413, 429),
      send: (signal) => tenant.uploads.attachment(upload, { baseId, tableId, fieldId: 'Files' }, { signal }),
    },
    {
      name: 'xlsx import bombs (an upload, then its import)',
      loops: 1,
      request: `POST /xlsxupload (xlsx-bombs.ts), then POST /api/v1/bases/${baseId}/imports {"s3Key":"<its>","tableName":"Bomb"}`,
      allows: refusal(200, 429),
      // One bomb at a time, the next once this one has ended: the worker's budget is the subject.
      async send(signal) {
        const bomb = bombs[bombIndex % bombs.length]!;
        const { s3Key } = await tenant.uploads.xlsx(new File([bomb.file], 'bomb.xlsx'), { signal });
        const started = await tenant.imports.start(baseId, { s3Key, tableName: 'Bomb' }, { signal });
        importIds.push(started.id);
        bombIndex += 1;
        for (const giveUpAt = Date.now() + 60_000; Date.now() < giveUpAt && !stopping; ) {
          await sleep(1000);
          const status = await tenant.imports.get(baseId, started.id).then(
            (answer) => answer.status,
            () => 'unknown',
          );
          if (status === 'succeeded' || status === 'failed') break;
        }
      },
      pauseMs: 200,
    },
    {
      name: 'retarget its own webhook with a key without records:read',
      loops: 1,
      request: `PATCH /api/v1/bases/${baseId}/webhooks/${plan.webhookId} ${JSON.stringify({ url: plan.stealUrl, events: ['table.created'] })} (webhooks:manage, schema:read)`,
      allows: refusal(403, 429),
      send: (signal) =>
        webhooksKey.webhooks.update(
          baseId,
          plan.webhookId,
          { url: plan.stealUrl, events: ['table.created'] },
          { signal },
        ),
      pauseMs: 1000,
    },
    {
      name: "retarget the other tenants' webhook",
      loops: 1,
      request: `PATCH /api/v1/bases/${plan.victim.baseId}/webhooks/${plan.victim.webhookId} ${JSON.stringify({ url: plan.stealUrl })}`,
      allows: refusal(403, 404, 429),
      send: (signal) =>
        tenant.webhooks.update(plan.victim.baseId, plan.victim.webhookId, { url: plan.stealUrl }, { signal }),
      pauseMs: 1000,
    },
  ] satisfies Attack[];
}

async function loop(attack: Attack, counter: AnswerCounter): Promise<void> {
  while (!stopping) {
    const signal = AbortSignal.timeout(HANG_AFTER_MS);
    const began = performance.now();
    let answer: Answer;
    let retryAfterMs: number | undefined;
    try {
      await attack.send(signal);
      answer = { kind: 'success' };
    } catch (error) {
      answer = answerOf(error, signal);
      if (error instanceof RecordbaseApiError) retryAfterMs = error.retryAfterMs;
    }
    const label = labelOf(answer);
    trace('hostile', attack.name, performance.timeOrigin + began, performance.now() - began, label);
    counter.count(attack.name, label, answer.kind === 'status' ? answer.message : undefined);
    const allowed = answer.kind !== 'none' && attack.allows(answer.kind === 'success' ? 200 : answer.status);
    if (!allowed) {
      const finding = counter.finding({
        attack: attack.name,
        request: attack.request,
        answer: label,
        message:
          answer.kind === 'status' ? answer.message : answer.kind === 'none' ? answer.why : 'a success',
      });
      // The first few of each kind as they happen; the report counts them all.
      const kind = `${attack.name}\n${label}`;
      const seen = (printed.get(kind) ?? 0) + 1;
      printed.set(kind, seen);
      if (seen <= PRINTED_PER_KIND) {
        console.error(
          `soak: hostile finding at ${finding.atSecond} s: ${finding.attack}: ${finding.request} -> ${finding.answer}${answer.kind === 'status' ? `: ${finding.message}` : ''}${seen === PRINTED_PER_KIND ? ' (more of these only in the report)' : ''}`,
        );
      }
    }
    if (answer.kind === 'status' && answer.status === 429) {
      const [least, most] = RETRY_AFTER_BOUNDS_MS;
      await sleep(Math.min(most, Math.max(least, retryAfterMs ?? most)));
    } else if (attack.pauseMs) {
      await sleep(attack.pauseMs);
    }
  }
}

let running: Promise<unknown> | undefined;
let counter: AnswerCounter | undefined;
const importIds: string[] = [];

const send = (message: HostileMessage) => process.send?.(message);

process.on('message', async (message: HostileParentMessage) => {
  if (message.type === 'start') {
    const { plan } = message;
    const client = (apiKey: string) =>
      new RecordbaseClient({
        apiUrl: `${plan.gatewayUrl}/api/v1`,
        uploadUrl: plan.gatewayUrl,
        apiKey,
        retry: { maxAttempts: 1 },
      });
    counter = new AnswerCounter(performance.now());
    const list = attacks(plan, client(plan.key), client(plan.webhooksKey), importIds).filter(
      (attack) =>
        plan.attacks.length === 0 || plan.attacks.some((part) => attack.name.toLowerCase().includes(part)),
    );
    if (list.length === 0) throw new Error(`no attack's name contains any of ${plan.attacks.join(', ')}`);
    for (const attack of list) counter.expect(attack.name);
    const answers = counter;
    running = Promise.all(
      list.flatMap((attack) => Array.from({ length: attack.loops }, () => loop(attack, answers))),
    );
    send({ type: 'ready' });
  } else if (message.type === 'stop') {
    stopping = true;
    await running;
    send({ type: 'done', figures: { answers: counter!.figures(), importIds } });
  }
});
process.on('disconnect', () => process.exit(0));
