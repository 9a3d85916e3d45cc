import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { ApiClient } from '../lib/api';
import { deleteQueueKeys, dropDatabase, recreateDatabase } from '../lib/database';
import { host, loadAverage } from '../lib/machine';
import { rssBytes } from '../lib/proc';
import { writeSuiteSection } from '../lib/readme';
import { newQueuePrefix, startBenchStack } from '../lib/stack';
import { median, percentile } from '../lib/stats';

/**
 * `npm run bench:changes`: the change feed through the stack as `npm start` runs it (every
 * service up, the dispatcher consuming the events), driven from this process over HTTP:
 * 1. records-api's RSS per idle stream, with 1,000 streams open on the one replica;
 * 2. commit to client latency of the stream with 100 streams open, at 100 and 500 events/s;
 * 3. a catch-up read of 1,000,000 events through GET /changes (1,000 a page) against reading the
 *    same rows from the outbox table in raw SQL, page by page, in the same run.
 * Each figure is printed; bench/README.md's `changes` section is rewritten from results.json.
 */

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/recordbase_bench_changes';
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const IDLE_STREAMS = Number(env.BENCH_IDLE_STREAMS ?? 1000);
const LIVE_STREAMS = Number(env.BENCH_LIVE_STREAMS ?? 100);
const RATES = (env.BENCH_RATES ?? '100,500')
  .split(',')
  .map(Number)
  .filter((rate) => rate > 0);
const LOAD_SECONDS = Number(env.BENCH_LOAD_SECONDS ?? 10);
const CATCH_UP_EVENTS = Number(env.BENCH_CATCH_UP_EVENTS ?? 1_000_000);
const PAGE = 1000;
const RESULTS = join(__dirname, 'results.json');

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Stream {
  received: number;
  latencies: number[];
  /** Arrival minus the write's answer, for events whose write this run answered (a lower bound). */
  fromAnswer: number[];
  close(): void;
}

/** When each record's create was answered (ms since the epoch), by record id. */
const answeredAt = new Map<string, number>();

/**
 * Opens a stream on its own connection and takes, for each event, the time since its `timestamp`
 * (the writing transaction's start, which overstates the latency by the transaction's length).
 * Only the timestamp is read of each event: parsing whole bodies for 100 streams would take the
 * cores the services are measured on.
 */
function openStream(origin: string, path: string, authorization: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const stream: Stream = { received: 0, latencies: [], fromAnswer: [], close: () => request.destroy() };
    const request = httpRequest(
      `${origin}${path}`,
      { headers: { authorization }, agent: false },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`stream answered ${response.statusCode}`));
          return;
        }
        readFrames(response, stream);
        resolve(stream);
      },
    );
    request.on('error', (error) => {
      if (stream.received === 0) reject(error);
    });
    request.end();
  });
}

const TIMESTAMP = '"timestamp":"';
const RECORD_IDS = '"recordIds":["';

function readFrames(response: IncomingMessage, stream: Stream): void {
  response.setEncoding('utf8');
  let buffered = '';
  response.on('data', (chunk: string) => {
    const now = Date.now();
    buffered += chunk;
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const at = frame.indexOf(TIMESTAMP);
      if (at >= 0) {
        const stamp = frame.slice(at + TIMESTAMP.length, frame.indexOf('"', at + TIMESTAMP.length));
        stream.received += 1;
        stream.latencies.push(now - Date.parse(stamp));
        const ids = frame.indexOf(RECORD_IDS);
        const answered =
          ids >= 0
            ? answeredAt.get(frame.slice(ids + RECORD_IDS.length, ids + RECORD_IDS.length + 36))
            : undefined;
        if (answered !== undefined) stream.fromAnswer.push(now - answered);
      }
      end = buffered.indexOf('\n\n');
    }
  });
  response.on('error', () => {});
}

/** Open-loop single-record creates at `rate` for `seconds`; returns how many were answered 201. */
async function writeAtRate(
  origin: string,
  authorization: string,
  path: string,
  rate: number,
  seconds: number,
) {
  const pool = new Pool(origin, { connections: 64 });
  const total = rate * seconds;
  const started = performance.now();
  let created = 0;
  let failed = 0;
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(
      pool
        .request({
          method: 'POST',
          path,
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ record: { Name: `event ${i}` } }),
        })
        .then(async (answer) => {
          const body = (await answer.body.json()) as { id?: string };
          if (answer.statusCode === 201 && body.id) {
            answeredAt.set(body.id, Date.now());
            created += 1;
          } else failed += 1;
        })
        .catch(() => {
          failed += 1;
        }),
    );
  }
  await Promise.all(inFlight);
  await pool.close();
  return { created, failed, seconds: (performance.now() - started) / 1000 };
}

/** 1,000,000 record.updated events of realistic size in the outbox, dispatched already (no work for the sweep). */
async function seedEvents(
  client: pg.Client,
  databaseId: string,
  tableId: string,
  count: number,
): Promise<void> {
  // source 'dependency': the history trigger leaves those out, so seeding writes only the outbox.
  await client.query(
    `INSERT INTO outbox_events (id, database_id, table_id, type, source, data, dispatched_at)
     SELECT gen_random_uuid(), $1::uuid, $2, 'record.updated', 'dependency',
            jsonb_build_object('tableId', $2::text, 'recordIds', jsonb_build_array(r.id),
              'records', jsonb_build_array(jsonb_build_object('id', r.id, 'data', jsonb_build_object('fldName00000000001', 'event ' || g),
                'fields', jsonb_build_object('Name', 'event ' || g), 'createdAt', now(), 'updatedAt', now())),
              'changes', jsonb_build_array(jsonb_build_object('recordId', r.id, 'changedFieldIds', jsonb_build_array('fldName00000000001'),
                'previous', jsonb_build_object('fldName00000000001', 'before ' || g)))),
            now()
       FROM generate_series(1, $3::int) g, LATERAL (SELECT gen_random_uuid()::text AS id) r`,
    [databaseId, tableId, count],
  );
  await client.query('ANALYZE outbox_events');
}

/** The least-squares slope of y over x. */
function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return covariance / variance;
}

async function main(): Promise<void> {
  if (process.argv.includes('--report-only')) {
    const results = JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>;
    console.log(`wrote ${writeSuiteSection('changes', __dirname, report(results))}`);
    return;
  }
  const machine = { ...host(), loadAverage: loadAverage(), startedAt: new Date().toISOString() };
  console.log(
    `changes benchmark on ${machine.cpus} cores (${machine.cpuModel}), load ${machine.loadAverage}`,
  );
  await recreateDatabase(DATABASE_URL);
  const queuePrefix = newQueuePrefix('changes');
  const stack = await startBenchStack({
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    queuePrefix,
    logLevel: 'warn',
    tuning: {},
    execArgv: {},
    services: ['records-api', 'upload-service', 'webhook-dispatcher', 'import-worker'],
  });
  const api = stack.service('records-api');
  const origin = `http://127.0.0.1:${api.port}`;
  const client = new ApiClient(origin, stack.rootKey);
  const authorization = client.authorization;
  const results: Record<string, unknown> = { machine };
  try {
    const base = await client.expect<{ id: string; tables: { id: string }[] }>(201, 'POST', '/bases', {
      name: 'Changes',
      tables: [{ name: 'Events', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    });
    const feed = `/api/v1/bases/${base.id}/changes`;

    // 1. Idle streams, opened a quarter at a time with records-api's RSS taken after each quarter:
    // the slope of RSS over streams (least squares) is the cost of one, which a single before and
    // after cannot tell from the garbage collector returning memory meanwhile.
    const idle: Stream[] = [];
    const samples: { streams: number; rss: number }[] = [];
    const STEPS = 4;
    await sleep(3000);
    samples.push({ streams: 0, rss: rssBytes(api.pid) });
    for (let step = 1; step <= STEPS; step += 1) {
      while (idle.length < Math.round((IDLE_STREAMS * step) / STEPS)) {
        idle.push(await openStream(origin, `${feed}/stream?cursor=latest`, authorization));
      }
      await sleep(3000);
      samples.push({ streams: idle.length, rss: rssBytes(api.pid) });
    }
    // From the first quarter on: the sample before any stream still holds the setup's garbage,
    // which the collector hands back while the first quarter opens.
    const perStream = slope(samples.slice(1).map((sample) => [sample.streams, sample.rss]));
    const [rssBefore, rssOpen] = [samples[0]!.rss, samples.at(-1)!.rss];
    results.idle = {
      streams: IDLE_STREAMS,
      rssBeforeMiB: rssBefore / 2 ** 20,
      rssOpenMiB: rssOpen / 2 ** 20,
      perStreamKiB: perStream / 1024,
      samplesMiB: samples.map((sample) => [sample.streams, Number((sample.rss / 2 ** 20).toFixed(1))]),
    };
    console.log(
      `${IDLE_STREAMS} idle streams: records-api RSS ${samples.map((sample) => `${sample.streams}: ${(sample.rss / 2 ** 20).toFixed(1)} MiB`).join(', ')}; ${(perStream / 1024).toFixed(1)} KiB per stream (slope)`,
    );
    for (const stream of idle.splice(LIVE_STREAMS)) stream.close();

    // 2. Latency with LIVE_STREAMS streams.
    const latency: Record<string, unknown>[] = [];
    for (const rate of RATES) {
      // Two seconds at the rate first, not measured: the first writes of a rate open connections
      // and warm the code paths, and would otherwise be the 1 % the p99 reports.
      await writeAtRate(origin, authorization, `/api/v1/bases/${base.id}/tables/Events/records`, rate, 2);
      await sleep(1000);
      for (const stream of idle) {
        stream.received = 0;
        stream.latencies = [];
        stream.fromAnswer = [];
      }
      const written = await writeAtRate(
        origin,
        authorization,
        `/api/v1/bases/${base.id}/tables/Events/records`,
        rate,
        LOAD_SECONDS,
      );
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && idle.some((stream) => stream.received < written.created))
        await sleep(100);
      const all = idle.flatMap((stream) => stream.latencies).sort((a, b) => a - b);
      const fromAnswer = idle.flatMap((stream) => stream.fromAnswer).sort((a, b) => a - b);
      const missing = idle.reduce((sum, stream) => sum + Math.max(0, written.created - stream.received), 0);
      const figures = {
        rate,
        streams: idle.length,
        written: written.created,
        writeErrors: written.failed,
        achievedRate: written.created / written.seconds,
        p50: percentile(all, 50),
        p99: percentile(all, 99),
        max: all.at(-1) ?? Number.NaN,
        fromAnswerP50: percentile(fromAnswer, 50),
        fromAnswerP99: percentile(fromAnswer, 99),
        missing,
      };
      latency.push(figures);
      console.log(
        `${rate} events/s, ${idle.length} streams: written ${written.created} (errors ${written.failed}); commit → client p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms; answer → client p50 ${figures.fromAnswerP50} ms, p99 ${figures.fromAnswerP99} ms; missing ${missing}`,
      );
    }
    results.latency = latency;
    for (const stream of idle) stream.close();

    // 3. Catch-up of CATCH_UP_EVENTS events: the API against raw SQL, each twice, alternating.
    const sql = new pg.Client({ connectionString: DATABASE_URL, application_name: 'bench-changes' });
    // The run's database is dropped WITH (FORCE) at the end, whatever happened before.
    sql.on('error', () => {});
    await sql.connect();
    const latest = await client.expect<{ cursor: string }>(
      200,
      'GET',
      `/bases/${base.id}/changes?cursor=latest`,
    );
    const seeding = performance.now();
    await seedEvents(sql, base.id, base.tables[0]!.id, CATCH_UP_EVENTS);
    console.log(`seeded ${CATCH_UP_EVENTS} events in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
    // The seeding transaction must be behind the horizon before the feed hands its events out.
    await sleep(500);
    const readApi = async () => {
      const pool = new Pool(origin, { connections: 1 });
      let cursor = latest.cursor;
      let events = 0;
      const started = performance.now();
      for (;;) {
        const answer = await pool.request({
          method: 'GET',
          path: `${feed}?limit=${PAGE}&cursor=${cursor}`,
          headers: { authorization },
        });
        const page = (await answer.body.json()) as { changes: unknown[]; cursor: string; hasMore: boolean };
        events += page.changes.length;
        cursor = page.cursor;
        if (!page.hasMore) break;
      }
      await pool.close();
      return { events, seconds: (performance.now() - started) / 1000 };
    };
    const readRaw = async () => {
      const [xid, seq] = latest.cursor.split('-');
      let after = { xid: xid!, seq: seq! };
      let events = 0;
      const started = performance.now();
      for (;;) {
        const page = await sql.query<{
          id: string;
          type: string;
          created_at: Date;
          data: string;
          xid: string;
          seq: string;
        }>(
          `SELECT id, type, created_at, data, COALESCE(xid, '0'::xid8)::text AS xid_text, seq::text AS seq_text
             FROM outbox_events
            WHERE database_id = $1::uuid AND NOT suppressed AND (COALESCE(xid, '0'::xid8), seq) > ($2::xid8, $3::bigint)
            ORDER BY COALESCE(xid, '0'::xid8), seq LIMIT ${PAGE}`,
          [base.id, after.xid, after.seq],
        );
        events += page.rows.length;
        const last = page.rows.at(-1);
        if (!last || page.rows.length < PAGE) break;
        after = { xid: last.xid_text, seq: last.seq_text };
      }
      return { events, seconds: (performance.now() - started) / 1000 };
    };
    const runs: { api: number[]; raw: number[]; events: number } = { api: [], raw: [], events: 0 };
    for (let round = 0; round < 2; round += 1) {
      const raw = await readRaw();
      const read = await readApi();
      if (read.events !== raw.events)
        throw new Error(`the API read ${read.events} events, raw SQL ${raw.events}`);
      runs.events = read.events;
      runs.api.push(read.events / read.seconds);
      runs.raw.push(raw.events / raw.seconds);
      console.log(
        `catch-up of ${read.events} events: API ${(read.events / read.seconds).toFixed(0)} events/s (${read.seconds.toFixed(1)} s), raw SQL ${(raw.events / raw.seconds).toFixed(0)} events/s (${raw.seconds.toFixed(1)} s): ${(raw.seconds / read.seconds).toFixed(2)}x`,
      );
    }
    await sql.end();
    results.catchUp = {
      events: runs.events,
      apiEventsPerSecond: median(runs.api),
      rawEventsPerSecond: median(runs.raw),
      ratio: median(runs.api) / median(runs.raw),
    };
    writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`wrote ${writeSuiteSection('changes', __dirname, report(results))}`);
  } finally {
    await stack.stop();
    await deleteQueueKeys(REDIS_URL, queuePrefix);
    await dropDatabase(DATABASE_URL);
  }
}

function report(results: Record<string, unknown>): string {
  const machine = results.machine as ReturnType<typeof host> & { loadAverage: string; startedAt: string };
  const idle = results.idle as {
    streams: number;
    rssBeforeMiB: number;
    rssOpenMiB: number;
    perStreamKiB: number;
    samplesMiB: [number, number][];
  };
  const latency = results.latency as {
    rate: number;
    streams: number;
    written: number;
    writeErrors: number;
    p50: number;
    p99: number;
    max: number;
    missing: number;
  }[];
  const catchUp = results.catchUp as {
    events: number;
    apiEventsPerSecond: number;
    rawEventsPerSecond: number;
    ratio: number;
  };
  const target = (rate: number) => (rate <= 100 ? 100 : 250);
  return [
    `Run of ${machine.startedAt} on ${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}; load average before ${machine.loadAverage}.`,
    '',
    '| case | figure | target |',
    '|---|--:|--:|',
    `| records-api RSS per idle stream (slope from 250 on; RSS at ${idle.samplesMiB.map(([streams, mib]) => `${streams}: ${mib} MiB`).join(', ')}) | ${idle.perStreamKiB.toFixed(1)} KiB | (reported) |`,
    ...latency.map(
      (row) =>
        `| commit → client at ${row.rate} events/s, ${row.streams} streams (${row.written} written, ${row.writeErrors} errors, ${row.missing} missing) | p50 ${row.p50} ms, p99 **${row.p99} ms**, max ${row.max} ms (from the write's answer: p50 ${row.fromAnswerP50}, p99 ${row.fromAnswerP99} ms) | p99 < ${target(row.rate)} ms |`,
    ),
    `| catch-up of ${catchUp.events.toLocaleString('en')} events, ${PAGE} a page: GET /changes / raw SQL keyset pages | ${catchUp.apiEventsPerSecond.toFixed(0)} / ${catchUp.rawEventsPerSecond.toFixed(0)} events/s = **${catchUp.ratio.toFixed(2)}x** | ≥ 0.5x |`,
  ].join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
