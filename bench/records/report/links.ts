import { median } from '../../lib/stats';
import { LINKED_FIELDS } from '../links';
import type { LinksResults } from '../links-suite';
import type { Measurement } from '../measure';
import {
  cores,
  errorsOf,
  n1,
  readsTable,
  rps,
  runSummary,
  targetsTable,
  totalsTable,
  type Verdict,
} from './format';

/** The links suite's figures as markdown: count, lookup and rollup fields against their twins without them. */

/** The acceptance lines: a case with computed fields against the same without, and the most it may cost. */
const PAIRS = [
  {
    with: 'L1',
    without: 'L1-plain',
    limit: 1.5,
    what: 'page of 100 with 3 lookups and 2 rollups vs Items plain',
  },
  {
    with: 'L1',
    without: 'L1p',
    limit: null,
    what: 'the same page vs the same rows with the 5 values left out (fields)',
  },
  {
    with: 'L2-rollup',
    without: 'L2-plain',
    limit: 2,
    what: 'filter and sort on the rollup Hours total vs on the number Hours plain',
  },
  {
    with: 'L3-hot',
    without: 'L3-cold',
    limit: 3,
    what: 'PATCH of an Other linked by 100 Items vs of an Other linked by none, each worker its own',
  },
  {
    with: 'L3s-hot',
    without: 'L3s-cold',
    limit: null,
    what: 'the same with every worker updating the one hot (cold) Other, whose row lock queues them',
  },
  {
    with: 'L3q-hot',
    without: 'L3q-cold',
    limit: null,
    what: 'the same two PATCHes with suppressWebhooks: true (no events)',
  },
  {
    with: 'L3-hot',
    without: 'L3q-hot',
    limit: null,
    what: 'the hot PATCH with its events vs without',
  },
] as const;

type Pair = (typeof PAIRS)[number];

interface Row {
  id: string;
  concurrency: number;
  api: Measurement;
  raw?: Measurement;
}

/** The API's cost of the computed fields: how many times slower (req/s) and how many times the p50 and p99. */
function pairRows(results: LinksResults) {
  const rows: Row[] = [...results.reads, ...results.writes];
  return PAIRS.flatMap((pair) =>
    [...new Set(rows.filter((r) => r.id === pair.with).map((r) => r.concurrency))].flatMap((concurrency) => {
      const find = (id: string) => rows.find((r) => r.id === id && r.concurrency === concurrency);
      const withL = find(pair.with);
      const without = find(pair.without);
      if (!withL || !without) return [];
      return [
        {
          pair: pair as Pair,
          concurrency,
          withL,
          without,
          slowdown: without.api.requestsPerSecond / withL.api.requestsPerSecond,
          p50: withL.api.p50Ms / without.api.p50Ms,
          p99: withL.api.p99Ms / without.api.p99Ms,
          rawSlowdown:
            withL.raw && without.raw
              ? without.raw.requestsPerSecond / withL.raw.requestsPerSecond
              : Number.NaN,
        },
      ];
    }),
  );
}

function pairsTable(results: LinksResults): string {
  const lines = [
    '| Case (with / without) | Conc. | API req/s with / without | with ÷ without req/s | API p50 ms with / without | p50 ratio | API p99 ms with / without | p99 ratio | slowdown (req/s) | target | same ratio in raw SQL |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const row of pairRows(results)) {
    const { withL, without } = row;
    lines.push(
      `| ${row.pair.with} / ${row.pair.without}: ${row.pair.what} | ${row.concurrency} | ${rps(withL.api.requestsPerSecond)}${errorsOf(withL.api)} / ${rps(without.api.requestsPerSecond)}${errorsOf(without.api)} | ${(1 / row.slowdown).toFixed(2)} | ${n1(withL.api.p50Ms)} / ${n1(without.api.p50Ms)} | ${row.p50.toFixed(2)} | ${n1(withL.api.p99Ms)} / ${n1(without.api.p99Ms)} | ${row.p99.toFixed(2)} | ${row.slowdown.toFixed(2)} x | ${row.pair.limit === null ? 'information' : `<= ${row.pair.limit} x`} | ${Number.isNaN(row.rawSlowdown) ? 'n/a' : `${row.rawSlowdown.toFixed(2)} x`} |`,
    );
  }
  return lines.join('\n');
}

function writesTable(results: LinksResults): string {
  const lines = [
    '| Case | Conc. | API req/s | API p50 ms | API p99 ms | Raw SQL req/s | Raw p50 ms | Raw p99 ms | API/raw | Other load API / raw |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const w of results.writes) {
    const raw = w.raw;
    const rawCells = raw
      ? `${rps(raw.requestsPerSecond)}${errorsOf(raw)} | ${n1(raw.p50Ms)} | ${n1(raw.p99Ms)} | ${(w.api.requestsPerSecond / raw.requestsPerSecond).toFixed(2)} | ${cores(w.api)} / ${cores(raw)}`
      : `(API only) | | | | ${cores(w.api)}`;
    lines.push(
      `| ${w.id} | ${w.concurrency} | ${rps(w.api.requestsPerSecond)}${errorsOf(w.api)} | ${n1(w.api.p50Ms)} | ${n1(w.api.p99Ms)} | ${rawCells} |`,
    );
  }
  return lines.join('\n');
}

function fieldAddTable(fieldAdd: NonNullable<LinksResults['fieldAdd']>): string {
  const lines = [
    "| Round | API (POST …/fields) s | hand-written `UPDATE … FROM (… GROUP BY)` s | the service's `UPDATE` by hand s | API / hand-written |",
    '|--:|--:|--:|--:|--:|',
  ];
  fieldAdd.api.forEach((api, i) => {
    const raw = fieldAdd.raw[i]!;
    lines.push(
      `| ${i + 1} | ${api.toFixed(2)} | ${raw.toFixed(2)} | ${fieldAdd.service[i]!.toFixed(2)} | ${(api / raw).toFixed(2)} |`,
    );
  });
  const api = median(fieldAdd.api);
  const raw = median(fieldAdd.raw);
  lines.push(
    `| median | ${api.toFixed(2)} | ${raw.toFixed(2)} | ${median(fieldAdd.service).toFixed(2)} | ${(api / raw).toFixed(2)} |`,
  );
  return lines.join('\n');
}

function verdicts(results: LinksResults): Verdict[] {
  return pairRows(results).flatMap((row) =>
    row.pair.limit === null
      ? []
      : [
          {
            target: `${row.pair.with} at concurrency ${row.concurrency}: within ${row.pair.limit} x of ${row.pair.without} (req/s and p50)`,
            measured: `${row.slowdown.toFixed(2)} x slower (${rps(row.withL.api.requestsPerSecond)} vs ${rps(row.without.api.requestsPerSecond)} req/s), p50 ${row.p50.toFixed(2)} x, p99 ${row.p99.toFixed(2)} x`,
            met:
              row.slowdown <= row.pair.limit &&
              row.p50 <= row.pair.limit &&
              row.withL.api.errors === 0 &&
              row.without.api.errors === 0,
          },
        ],
  );
}

export function renderLinksReport(results: LinksResults): string {
  const { data } = results;
  const steps = data.load.steps.map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`).join('; ');
  const templateOf = (name: string) => {
    const template = LINKED_FIELDS.find((f) => f.name === name)?.template as
      | { fieldId: string; function?: string }
      | undefined;
    return template ? `Others → ${template.fieldId}${template.function ? `, ${template.function}` : ''}` : '';
  };
  const fields = [
    '| Field of Items | Type | Reads | resultType | Filled on the loaded Items (POST …/fields) |',
    '|---|---|---|---|--:|',
    ...data.linked.map(
      (f) =>
        `| ${f.name} | ${f.type} | ${templateOf(f.name)} | ${f.resultType} | ${f.seconds.toFixed(1)} s |`,
    ),
  ].join('\n');
  const list = (defs: string[]) => defs.map((d) => `\`${d}\``).join('; ');
  const n = (value: number) => value.toLocaleString('en-US');
  return [
    runSummary(results),
    `- ${n(data.rows)} records in each of Items and Items plain, ${n(data.others)} Others, ${n(data.links)} links in each (${(data.links / data.rows).toFixed(2)} per Item); ${data.hotOthers} hot Others each linked by ${data.hotLinks} Items, as many cold ones linked by none; ${n(data.matching)} Items with Hours total > 100; ${results.config.durationMs / 1000} s per case after ${results.config.warmupMs / 1000} s warm-up; ${results.config.repeats} round(s)${results.config.repeats > 1 ? ', medians shown' : ''}`,
    '',
    `Load: ${data.load.seconds.toFixed(1)} s (${steps}); the read indexes of the filter and sort were built ${results.indexWaitSeconds.toFixed(1)} s after their first listings.`,
    '',
    fields,
    '',
    "#### As the issue's acceptance lines",
    '',
    pairsTable(results),
    '',
    ...(results.fieldAdd
      ? [
          `Adding a ${results.fieldAdd.template.function} rollup of Others → ${results.fieldAdd.template.fieldId} to the ${n(data.rows)} Items, end to end, against the raw copy of Items getting the same column (\`ALTER TABLE … ADD COLUMN … NOT NULL DEFAULT 0\` and an \`UPDATE\`, one transaction) filled by the statement one would write, \`${results.fieldAdd.rawStatement.replace(/\s+/g, ' ')}\`, and by the service's own, \`${results.fieldAdd.serviceStatement.replace(/\s+/g, ' ')}\` (information, no target):`,
          '',
          fieldAddTable(results.fieldAdd),
          '',
        ]
      : []),
    '#### Each read against raw SQL',
    '',
    readsTable(results.reads),
    '',
    'Raw page plus the exact count (the API counts the filtered total):',
    '',
    totalsTable(results.reads),
    '',
    '#### Each update against raw SQL (the update and the refresh of the linking Items by hand, one transaction)',
    '',
    writesTable(results),
    '',
    'Indexes when the reads ran:',
    '',
    `- Items (API): ${list(results.indexes.api)}`,
    `- Raw copy: ${list(results.indexes.raw)}`,
    '',
    '#### Targets',
    '',
    targetsTable(verdicts(results)),
  ].join('\n');
}
