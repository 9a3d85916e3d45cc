import { randomBytes } from 'node:crypto';
import { AIRTABLE_MAX_PAGE_SIZE, AIRTABLE_MAX_RECORDS_PER_WRITE } from '@recordbase/contracts/airtable';
import { type BenchConfig, selected } from './config';
import { HttpRunner } from './http-runner';
import { type Measurement, measure, mediansOfRounds, type Op } from './measure';
import { dropPeople, indexesOf, loadPeople, type People, resetPeople } from './people';
import { personValues, Q2_AMOUNT, Q2_STATUSES, type Row } from './people-suite';
import type { ListBody } from './queries';
import type { Machine } from './results';
import { fmt, indexBuildsSettled, measureOptions, runOf, type SuiteContext } from './run';

/**
 * Issue 34's benchmark line: the Airtable-compatible API (`/v0`) against `/api/v1` on the people
 * suite's 100,000 People, through the stack as `npm start` runs it. L1 and L2 list the same page
 * through both (the first page of 100, and a filtered page sorted on amount, the filter as
 * filterByFormula in /v0) at each read concurrency; W1 and W2 create and update 10 records per
 * request (Airtable's most) at the write concurrency. Every round measures each case through both
 * APIs back to back, which goes first alternating by round; the writes' rows are removed and the
 * table vacuumed after each measurement, so that both start from the same table.
 */

export const AIRTABLE_APIS = ['v1', 'v0'] as const;
export type AirtableApi = (typeof AIRTABLE_APIS)[number];
export const API_LABELS: Record<AirtableApi, string> = { v1: '/api/v1', v0: '/v0' };

export interface AirtableCaseResult extends Record<AirtableApi, Measurement> {
  id: string;
  title: string;
  concurrency: number;
}

export interface AirtableResults {
  config: BenchConfig;
  machine: Machine;
  serverMode: string;
  startedAt: string;
  data: { rows: number; load: People['load'] };
  /** The reads' check before timing: both APIs answered these many records, the same ids in the same order. */
  checked: { id: string; records: number }[];
  /** People's indexes when the reads ran (L2's filter and sort make the API build some). */
  indexes: string[];
  cases: AirtableCaseResult[];
}

const PER_WRITE = AIRTABLE_MAX_RECORDS_PER_WRITE;

/** L2's filter as a formula: the same as /api/v1's `and` of `status in` and `amount greater_than`. */
export const L2_FORMULA = `AND(OR(${Q2_STATUSES.map((status) => `{status} = '${status}'`).join(', ')}), {amount} > ${Q2_AMOUNT})`;

interface AirtableRead {
  id: string;
  title: string;
  body: ListBody;
  /** The same listing as /v0's query parameters. */
  query: Record<string, string>;
}

const READS: AirtableRead[] = [
  {
    id: 'L1',
    title: `first page of ${AIRTABLE_MAX_PAGE_SIZE}, default order`,
    body: { limit: AIRTABLE_MAX_PAGE_SIZE },
    query: { pageSize: String(AIRTABLE_MAX_PAGE_SIZE) },
  },
  {
    id: 'L2',
    title: `status in [${Q2_STATUSES.join(', ')}] and amount > ${Q2_AMOUNT}, amount desc, first page of ${AIRTABLE_MAX_PAGE_SIZE}`,
    body: {
      filter: {
        and: [
          { field: 'status', in: Q2_STATUSES },
          { field: 'amount', greater_than: Q2_AMOUNT },
        ],
      },
      sort: [{ field: 'amount', direction: 'desc' }],
      limit: AIRTABLE_MAX_PAGE_SIZE,
    },
    query: {
      pageSize: String(AIRTABLE_MAX_PAGE_SIZE),
      filterByFormula: L2_FORMULA,
      'sort[0][field]': 'amount',
      'sort[0][direction]': 'desc',
    },
  },
];

/** Where each API takes the People table's records. */
interface Paths {
  /** `/bases/{id}/tables/{id}/records` under /api/v1. */
  records: string;
  /** `/{baseId}/{tableId}` under /v0. */
  table: string;
}

interface AirtableCase {
  id: string;
  title: string;
  concurrencies: number[];
  /** Each API's operation, on runners of the case's concurrency. */
  ops(http: Record<AirtableApi, HttpRunner>, concurrency: number): Record<AirtableApi, Op>;
  /** Writes: what to undo after each measurement. */
  writes: boolean;
}

const listingOf = (read: AirtableRead, paths: Paths) => ({
  body: JSON.stringify(read.body),
  query: `${paths.table}?${new URLSearchParams(read.query)}`,
});

/**
 * The ids W2 updates: every loaded person's, worker w taking every concurrency-th from the w-th,
 * in batches of PER_WRITE; each worker runs through its own batches in turn, so no two concurrent
 * requests update the same record.
 */
function idBatches(ids: string[], concurrency: number): string[][][] {
  return Array.from({ length: concurrency }, (_, worker) => {
    const own = ids.filter((_, i) => i % concurrency === worker);
    return Array.from({ length: Math.floor(own.length / PER_WRITE) }, (_, b) =>
      own.slice(b * PER_WRITE, (b + 1) * PER_WRITE),
    );
  });
}

function airtableCases(config: BenchConfig, paths: Paths, loadedIds: string[]): AirtableCase[] {
  const reads = READS.map(
    (read): AirtableCase => ({
      id: read.id,
      title: read.title,
      concurrencies: config.readConcurrencies,
      writes: false,
      ops(http) {
        const { body, query } = listingOf(read, paths);
        return { v1: http.v1.post(`${paths.records}/list`, 200, () => body), v0: http.v0.get(query, 200) };
      },
    }),
  );
  const runId = randomBytes(4).toString('hex');
  // Each API's operation draws its values from a generator of its own: both send the same ones.
  const creates = (api: AirtableApi) => {
    const { person } = personValues(34);
    let request = 0;
    return (): Row[] => {
      request += 1;
      return Array.from({ length: PER_WRITE }, (_, i) => person(`airtable.${api}.${runId}.${request}.${i}`));
    };
  };
  const updates = (concurrency: number) => {
    const batches = idBatches(loadedIds, concurrency);
    const taken = new Array<number>(concurrency).fill(0);
    const { day, tags, next } = personValues(35);
    // tags, due and active: no field L1 or L2 orders or filters on.
    return (worker: number) => {
      const own = batches[worker]!;
      const batch = taken[worker]!;
      taken[worker] = batch + 1;
      const ids = own[batch % own.length]!;
      return JSON.stringify({
        records: ids.map((id) => ({ id, fields: { tags: tags(), due: day(), active: next() < 0.6 } })),
      });
    };
  };
  const writes: AirtableCase[] = [
    {
      id: 'W1',
      title: `create ${PER_WRITE} records per request, every field set`,
      concurrencies: [config.writeConcurrency],
      writes: true,
      ops(http) {
        const v1 = creates('v1');
        const v0 = creates('v0');
        return {
          v1: http.v1.post(`${paths.records}/bulk`, 201, () => JSON.stringify({ records: v1() }), PER_WRITE),
          v0: http.v0.post(
            paths.table,
            200,
            () => JSON.stringify({ records: v0().map((fields) => ({ fields })) }),
            PER_WRITE,
          ),
        };
      },
    },
    {
      id: 'W2',
      title: `update ${PER_WRITE} loaded records per request by id (tags, due, active), each worker its own records`,
      concurrencies: [config.writeConcurrency],
      writes: true,
      ops(http, concurrency) {
        const v1 = updates(concurrency);
        const v0 = updates(concurrency);
        return {
          v1: http.v1.send('PATCH', `${paths.records}/bulk`, 200, (worker) => v1(worker), PER_WRITE),
          v0: http.v0.send('PATCH', paths.table, 200, (worker) => v0(worker), PER_WRITE),
        };
      },
    },
  ];
  return [...reads, ...writes].filter((c) => selected(config, c.id));
}

/**
 * Both APIs must list the same records in the same order before they are timed; and the read
 * indexes the listings make the API build in the background (L2's sort on amount and, asked by
 * /api/v1's filter only, its `in` on status) must all be built. A process of records-api skips a
 * build while another holds the table's build lock (the next listing asks again), so the listings
 * are repeated, each time once no build runs, until they add no index: People's indexes, answered.
 */
async function checkSameListings(
  context: SuiteContext,
  paths: Paths,
  table: string,
): Promise<Pick<AirtableResults, 'checked' | 'indexes'>> {
  const v1 = new HttpRunner(context.server.baseUrl, context.apiKey, 1);
  const v0 = new HttpRunner(context.server.baseUrl, context.apiKey, 1, '/v0');
  const reads = READS.filter((r) => selected(context.config, r.id));
  const checked = reads.map((read) => ({ id: read.id, records: AIRTABLE_MAX_PAGE_SIZE }));
  let indexes: string[] = [];
  try {
    for (let pass = 1; pass <= 5; pass++) {
      for (const read of reads) {
        const byV1 = await v1.once<{ records: { id: string }[] }>(`${paths.records}/list`, read.body);
        const byV0 = await v0.once<{ records: { id: string }[] }>(listingOf(read, paths).query);
        const ids = byV1.records.map((r) => r.id);
        if (ids.length !== AIRTABLE_MAX_PAGE_SIZE)
          throw new Error(`${read.id}: /api/v1 listed ${ids.length} records, not a full page`);
        if (ids.join() !== byV0.records.map((r) => r.id).join())
          throw new Error(`${read.id}: /api/v1 and /v0 list different records or in another order`);
        if (pass === 1)
          console.log(`${read.id} check: the same ${ids.length} records in the same order through both`);
      }
      await indexBuildsSettled(context.admin, table);
      const now = await indexesOf(context.admin, table);
      if (now.join() === indexes.join()) return { checked, indexes };
      indexes = now;
    }
    console.warn('  the listings still added indexes after 5 passes; measuring anyway');
    return { checked, indexes };
  } finally {
    await v1.close();
    await v0.close();
  }
}

async function runRound(
  context: SuiteContext,
  people: People,
  cases: AirtableCase[],
  order: readonly AirtableApi[],
): Promise<AirtableCaseResult[]> {
  const { config, server, apiKey, admin } = context;
  const results: AirtableCaseResult[] = [];
  for (const airtableCase of cases) {
    for (const concurrency of airtableCase.concurrencies) {
      console.log(`${airtableCase.id} c=${concurrency}: ${airtableCase.title}`);
      const http = {
        v1: new HttpRunner(server.baseUrl, apiKey, concurrency),
        v0: new HttpRunner(server.baseUrl, apiKey, concurrency, '/v0'),
      };
      const options = measureOptions(config, server, concurrency);
      try {
        const ops = airtableCase.ops(http, concurrency);
        const measured = {} as Record<AirtableApi, Measurement>;
        for (const api of order) {
          measured[api] = await measure(ops[api], options);
          console.log(`  ${API_LABELS[api].padEnd(8)} ${fmt(measured[api])}`);
          if (airtableCase.writes) {
            const removed = await resetPeople(admin, people);
            console.log(`  removed the ${removed} records it created; vacuumed`);
          }
        }
        results.push({ id: airtableCase.id, title: airtableCase.title, concurrency, ...measured });
      } finally {
        await http.v1.close();
        await http.v0.close();
      }
    }
  }
  return results;
}

/** People loaded once, checked, then BENCH_REPEATS rounds of the cases; medians. */
export async function runAirtableSuite(context: SuiteContext): Promise<AirtableResults> {
  const { config, admin, api } = context;
  console.log(`--- airtable: loading ${config.peopleRows} People ...`);
  const people = await loadPeople(admin, api, config.peopleRows);
  const paths: Paths = {
    records: `/bases/${people.databaseId}/tables/${people.tableId}/records`,
    table: `/${people.databaseId}/${people.tableId}`,
  };
  const listings = await checkSameListings(context, paths, people.table);
  const loadedIds = (
    await admin.query<{ id: string }>(`SELECT id FROM ${people.table} WHERE seq <= $1 ORDER BY seq`, [
      people.loadedMaxSeq,
    ])
  ).rows.map((row) => row.id);
  const cases = airtableCases(config, paths, loadedIds);
  const rounds: AirtableCaseResult[][] = [];
  for (let round = 1; round <= config.repeats; round++) {
    const order = round % 2 === 1 ? AIRTABLE_APIS : [...AIRTABLE_APIS].reverse();
    console.log(
      `--- airtable round ${round} of ${config.repeats}: ${order.map((a) => API_LABELS[a]).join(' then ')}`,
    );
    rounds.push(await runRound(context, people, cases, order));
  }
  await dropPeople(admin, api);
  return {
    ...runOf(context),
    data: { rows: people.rows, load: people.load },
    ...listings,
    cases: mediansOfRounds(rounds, AIRTABLE_APIS),
  };
}
