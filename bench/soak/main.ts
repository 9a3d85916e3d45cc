import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { RecordbaseApiError, RecordbaseClient } from '@recordbase/client';
import { serviceNames } from '@recordbase/launcher';
import pg from 'pg';
import { startReceiver } from '../lib/receiver';
import { isFullRun, loadConfig } from './config';
import { type HeapFigures, heapOfAll } from './heap';
import {
  type HostileFigures,
  type RunningHostileTenant,
  setUpHostileTenant,
  startHostileTenant,
} from './hostile';
import { percentile, SoakRecorder } from './measure';
import { postgresFigures, queryRoleBackends } from './postgres';
import { quietReference, renderReport, type SoakResults, verdicts, writeResults } from './report';
import { startSoakStack } from './stack';
import { dealRecord, knownEmail, operationSchedule, type SoakTarget, STATUSES, soakRandom } from './workload';

/**
 * The soak: a steady mixed load through the gateway for SOAK_MINUTES, then a wait for
 * every record event to reach the receiver and every import to finish. Prints the figures and
 * the verdicts; a full-length run also writes them to bench/README.md and soak/results.json.
 * With SOAK_HOSTILE=1 a hostile tenant attacks beside the load (hostile.ts), and the
 * figures go to soak/results-hostile.json.
 */

/** Requests in flight past which the load generator stops starting more (counted as errors). */
const MAX_IN_FLIGHT = 1_000;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
/**
 * After the load (and the hostile tenant's last answer), how long before the query roles' backends
 * are counted: each query was answered by its hard end at the latest, and the terminate the
 * service sent then takes moments.
 */
const BACKENDS_SETTLE_MS = 10_000;

async function seed(target: SoakTarget, count: number, rand: () => number): Promise<void> {
  for (let done = 0; done < count; done += 100) {
    const records = Array.from({ length: Math.min(100, count - done) }, (_, i) =>
      // The first 2,000 carry the emails upserts match on.
      dealRecord(rand, done + i < 2_000 ? knownEmail(done + i) : undefined),
    );
    const answer = await target.client.records.createMany(target.baseId, target.tableId, records, {
      suppressWebhooks: true,
    });
    for (const record of answer.records) target.recordIds.push(record.id);
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  console.log(
    `soak: ${config.ratePerSecond} requests/s for ${config.warmUpMinutes} minutes of warm-up, then ${config.minutes} measured${config.hostile ? ', with a hostile tenant' : ''}`,
  );
  const stack = await startSoakStack({ storageQuotaBytes: config.storageQuotaBytes });
  const processesAtStart = stack.processes();
  const receiver = await startReceiver('crypto');
  const db = new pg.Client({ connectionString: stack.database.url });
  await db.connect();
  try {
    const clientOf = (apiKey: string) =>
      new RecordbaseClient({
        apiUrl: `${stack.gatewayUrl}/api/v1`,
        uploadUrl: stack.gatewayUrl,
        apiKey,
        retry: { maxAttempts: 1 },
      });
    const client = clientOf(stack.rootKey);
    const base = await client.bases.create({
      name: 'Soak',
      tables: [
        {
          name: 'Deals',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Amount', type: 'currency' },
            {
              name: 'Status',
              type: 'single_select',
              template: { options: STATUSES.map((name) => ({ name })) },
            },
            { name: 'Email', type: 'email' },
            { name: 'Files', type: 'attachments' },
          ],
        },
      ],
    });
    const table = base.tables[0]!;
    const target: SoakTarget = {
      client,
      baseId: base.id,
      tableId: table.id,
      emailFieldId: table.fields.find((field) => field.name === 'Email')!.id,
      recordIds: [],
      importIds: [],
      deleted: new Set(),
    };
    const rand = soakRandom();
    await seed(target, config.seedRecords, rand);
    const hook = await client.webhooks.create(base.id, {
      url: receiver.urlFor(0),
      events: ['record.created', 'record.updated', 'record.deleted'],
      tableId: table.id,
    });
    await receiver.register([{ index: 0, webhookId: hook.id, secret: hook.secret }]);
    // The other tenants: keys of every scope on the base, each taking its turn of the requests.
    const tenants: RecordbaseClient[] = [];
    for (let n = 0; n < config.tenants; n += 1) {
      const key = await client.apiKeys.create({
        name: `tenant ${n + 1}`,
        scopes: ['records:read', 'records:write', 'schema:read', 'schema:write', 'sql:read', 'files:write'],
        databaseIds: [base.id],
      });
      tenants.push(clientOf(key.key));
    }
    const hostilePlan = config.hostile
      ? await setUpHostileTenant(
          client,
          clientOf,
          stack.gatewayUrl,
          { baseId: base.id, webhookId: hook.id },
          config,
        )
      : undefined;
    let hostile: RunningHostileTenant | undefined;
    if (hostilePlan) {
      hostile = await startHostileTenant(hostilePlan);
      console.log('soak: the hostile tenant is attacking');
    }

    const startedAt = performance.now();
    const recorder = new SoakRecorder(startedAt);
    const next = operationSchedule(rand);
    const inFlight = new Set<Promise<void>>();
    const loadMinutes = config.warmUpMinutes + config.minutes;
    const total = Math.round(loadMinutes * 60 * config.ratePerSecond);
    const warmUpEndsAt = startedAt + config.warmUpMinutes * 60_000;
    let heapAfterWarmUp: Promise<Record<string, HeapFigures>> | undefined;
    const intervalMs = 1000 / config.ratePerSecond;
    const rssEveryMs = 60_000 / config.rssSamplesPerMinute;
    let nextRssAt = startedAt;
    for (let i = 0; i < total; i += 1) {
      const due = startedAt + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (performance.now() >= nextRssAt) {
        recorder.sampleRss(stack.pids);
        nextRssAt += rssEveryMs;
      }
      if (!heapAfterWarmUp && performance.now() >= warmUpEndsAt) {
        heapAfterWarmUp = heapOfAll(stack.metricsUrls);
      }
      const op = next();
      if (inFlight.size >= MAX_IN_FLIGHT) {
        recorder.record(op.name, due, 0, new Error(`${MAX_IN_FLIGHT} requests already in flight`));
        continue;
      }
      const began = performance.now();
      const running = op.run({ ...target, client: tenants[i % tenants.length]! }, rand).then(
        () => recorder.record(op.name, began, performance.now() - began),
        (error: unknown) => recorder.record(op.name, began, performance.now() - began, error),
      );
      inFlight.add(running);
      void running.finally(() => inFlight.delete(running));
    }
    // The attacks span the load's window: they stop when its last request is started.
    const hostileFigures: HostileFigures | undefined = await hostile?.stop();
    const hostileStoppedAt = Date.now();
    await Promise.all(inFlight);
    recorder.sampleRss(stack.pids, startedAt + loadMinutes * 60_000 - 1);
    const heap = { afterWarmUp: await heapAfterWarmUp!, atEnd: await heapOfAll(stack.metricsUrls) };
    const postgres = await postgresFigures(db, table.id);
    console.log('soak: load done; waiting for imports and events');

    // Imports and events finish after the load: both must, within the drain time.
    const drainUntil = Date.now() + config.drainSeconds * 1000;
    const finalStates = async (baseId: string, ids: readonly string[]) => {
      const states = new Map<string, string>();
      for (const id of ids) {
        for (;;) {
          // Hundreds of statuses read in a row pass the root key's rate limit: it waits its turn.
          const status = await client.imports.get(baseId, id).then(
            (answer) => answer.status,
            async (error: unknown) => {
              if (!(error instanceof RecordbaseApiError) || error.status !== 429) throw error;
              await sleep(error.retryAfterMs ?? 1000);
              return 'queued';
            },
          );
          states.set(id, status);
          if (status === 'succeeded' || status === 'failed' || Date.now() > drainUntil) break;
          await sleep(500);
        }
      }
      return [...states.values()];
    };
    const countStates = (states: readonly string[]) => ({
      started: states.length,
      succeeded: states.filter((s) => s === 'succeeded').length,
      failed: states.filter((s) => s === 'failed').length,
      unfinished: states.filter((s) => s !== 'succeeded' && s !== 'failed').length,
    });
    const states = await finalStates(base.id, target.importIds);
    const hostileImports =
      hostilePlan && (await finalStates(hostilePlan.baseId, hostileFigures?.importIds ?? []));
    const appended = async () =>
      Number(
        (
          await db.query<{ count: string }>(
            "SELECT count(*) FROM outbox_events WHERE database_id = $1 AND type LIKE 'record.%'",
            [base.id],
          )
        ).rows[0]!.count,
      );
    const delivered = () => new Set(receiver.receipts.map((receipt) => receipt[0])).size;
    let events = await appended();
    while (delivered() < events && Date.now() < drainUntil) {
      await sleep(1000);
      events = await appended();
    }
    await receiver.flush();
    await sleep(Math.max(0, hostileStoppedAt + BACKENDS_SETTLE_MS - Date.now()));
    const backends = await queryRoleBackends(db);
    const processesAtEnd = stack.processes();

    const results: SoakResults = {
      date: new Date().toISOString(),
      machine: `${cpus().length} CPUs (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
      postgres,
      minutes: config.minutes,
      warmUpMinutes: config.warmUpMinutes,
      ratePerSecond: config.ratePerSecond,
      seedRecords: config.seedRecords,
      tenants: config.tenants,
      storageQuotaBytes: config.storageQuotaBytes,
      perMinute: recorder.minutes(Math.ceil(loadMinutes), Math.ceil(config.warmUpMinutes)),
      heap,
      operations: [...recorder.byOperation].map(([name, op]) => {
        const sorted = [...op.latencies].sort((a, b) => a - b);
        return {
          name,
          requests: op.requests,
          errors: op.errors,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
        };
      }),
      events: { appended: events, delivered: delivered(), drainSeconds: config.drainSeconds },
      imports: countStates(states),
      processes: Object.entries(processesAtStart).map(([name, start]) => {
        const end = processesAtEnd[name]!;
        return {
          name,
          pidAtStart: start.pid,
          pidAtEnd: end.pid,
          restarts: end.restarts,
          aliveAtEnd: end.alive,
        };
      }),
      queryRoleBackends: backends,
      errorSamples: recorder.errorSamples,
      ...(hostilePlan && hostileFigures && hostileImports
        ? {
            hostile: {
              listings: hostilePlan.listings,
              uploadBytes: hostilePlan.uploadBytes,
              answers: hostileFigures.answers,
              imports: countStates(hostileImports),
              quiet: quietReference(),
            },
          }
        : {}),
    };
    console.log(`\n${renderReport(results)}\n`);
    if (isFullRun(config)) console.log(`wrote ${writeResults(results)}`);
    else console.log('(a run shorter than 10 minutes: bench/README.md and soak/results.json left alone)');
    if (!verdicts(results).every((verdict) => verdict.met)) {
      process.exitCode = 1;
      // What the services said is what explains a target missed; they go with the stack.
      const dir = mkdtempSync(join(tmpdir(), 'recordbase-soak-'));
      for (const name of [...serviceNames, 'gateway'] as const) {
        writeFileSync(join(dir, `${name}.log`), stack.logs(name));
      }
      console.log(`the services' output: ${dir}`);
    }
  } catch (error) {
    console.error(stack.logs('records-api').slice(-5_000));
    throw error;
  } finally {
    await db.end();
    await receiver.close();
    await stack.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
