import { median } from '../../lib/stats';
import type { FormulasResults } from '../formulas-suite';
import type { ReadResult } from '../results';
import { errorsOf, n1, readsTable, rps, runSummary, targetsTable, totalsTable, type Verdict } from './format';

/** The formulas suite's figures as markdown: formula fields against their twins without formulas. */

/** The acceptance lines: a case with formulas against the same without, and the most it may cost. */
const PAIRS = [
  {
    with: 'F-formula',
    without: 'F-plain',
    limit: 1.5,
    what: 'filter and sort on the stored formula Total vs on the number Total plain',
  },
  { with: 'P5', without: 'P0', limit: 1.3, what: 'page of 100 with 5 formula fields vs without them' },
  {
    with: 'P5',
    without: 'P5v',
    limit: 1.3,
    what: 'page of 100 with 5 formula fields vs with their values in 5 plain fields',
  },
] as const;

/** The API's cost of formulas: how many times slower (req/s) and how many times the p50 and p99. */
function pairRows(reads: ReadResult[]) {
  return PAIRS.flatMap((pair) =>
    [...new Set(reads.map((r) => r.concurrency))].flatMap((concurrency) => {
      const find = (id: string) => reads.find((r) => r.id === id && r.concurrency === concurrency);
      const withF = find(pair.with);
      const without = find(pair.without);
      if (!withF || !without) return [];
      return [
        {
          pair,
          concurrency,
          withF,
          without,
          slowdown: without.api.requestsPerSecond / withF.api.requestsPerSecond,
          p50: withF.api.p50Ms / without.api.p50Ms,
          p99: withF.api.p99Ms / without.api.p99Ms,
          rawSlowdown: without.raw.requestsPerSecond / withF.raw.requestsPerSecond,
        },
      ];
    }),
  );
}

function pairsTable(reads: ReadResult[]): string {
  const lines = [
    '| Case (with / without) | Conc. | API req/s with / without | formula ÷ plain req/s | API p50 ms with / without | p50 ratio | API p99 ms with / without | p99 ratio | slowdown (req/s) | target | same ratio in raw SQL |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const row of pairRows(reads)) {
    const { withF, without } = row;
    lines.push(
      `| ${row.pair.with} / ${row.pair.without}: ${row.pair.what} | ${row.concurrency} | ${rps(withF.api.requestsPerSecond)}${errorsOf(withF.api)} / ${rps(without.api.requestsPerSecond)}${errorsOf(without.api)} | ${(1 / row.slowdown).toFixed(2)} | ${n1(withF.api.p50Ms)} / ${n1(without.api.p50Ms)} | ${row.p50.toFixed(2)} | ${n1(withF.api.p99Ms)} / ${n1(without.api.p99Ms)} | ${row.p99.toFixed(2)} | ${row.slowdown.toFixed(2)} x | <= ${row.pair.limit} x | ${row.rawSlowdown.toFixed(2)} x |`,
    );
  }
  return lines.join('\n');
}

function fieldAddTable(fieldAdd: NonNullable<FormulasResults['fieldAdd']>): string {
  const lines = [
    '| Round | API (POST …/fields) s | PostgreSQL (`ALTER TABLE … ADD COLUMN`) s | API / PostgreSQL |',
    '|--:|--:|--:|--:|',
  ];
  fieldAdd.api.forEach((api, i) => {
    const raw = fieldAdd.raw[i]!;
    lines.push(`| ${i + 1} | ${api.toFixed(2)} | ${raw.toFixed(2)} | ${(api / raw).toFixed(2)} |`);
  });
  const api = median(fieldAdd.api);
  const raw = median(fieldAdd.raw);
  lines.push(`| median | ${api.toFixed(2)} | ${raw.toFixed(2)} | ${(api / raw).toFixed(2)} |`);
  return lines.join('\n');
}

function verdicts(results: FormulasResults): Verdict[] {
  const list: Verdict[] = pairRows(results.reads).map((row) => ({
    target: `${row.pair.with} at concurrency ${row.concurrency}: within ${row.pair.limit} x of ${row.pair.without} (req/s and p50)`,
    measured: `${row.slowdown.toFixed(2)} x slower (${rps(row.withF.api.requestsPerSecond)} vs ${rps(row.without.api.requestsPerSecond)} req/s), p50 ${row.p50.toFixed(2)} x, p99 ${row.p99.toFixed(2)} x`,
    met:
      row.slowdown <= row.pair.limit &&
      row.p50 <= row.pair.limit &&
      row.withF.api.errors === 0 &&
      row.without.api.errors === 0,
  }));
  if (results.fieldAdd) {
    const ratio = median(results.fieldAdd.api) / median(results.fieldAdd.raw);
    list.push({
      target: `adding a formula field to ${results.data.rows.toLocaleString('en-US')} records: within 3 x of PostgreSQL adding the generated column`,
      measured: `${ratio.toFixed(2)} x (median ${median(results.fieldAdd.api).toFixed(2)} s vs ${median(results.fieldAdd.raw).toFixed(2)} s)`,
      met: ratio <= 3,
    });
  }
  return list;
}

export function renderFormulasReport(results: FormulasResults): string {
  const steps = results.data.load.steps
    .map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`)
    .join('; ');
  const fields = [
    '| Field of Items | Expression | resultType | Computed |',
    '|---|---|---|---|',
    ...results.data.formulas.map(
      (f) =>
        `| ${f.name} | \`${f.expression}\` | ${f.resultType} | ${f.stored ? 'stored (generated column)' : 'at read time'} |`,
    ),
  ].join('\n');
  const list = (defs: string[]) => defs.map((d) => `\`${d}\``).join('; ');
  return [
    runSummary(results),
    `- ${results.data.rows.toLocaleString('en-US')} records in each of Items and Items plain; ${results.config.durationMs / 1000} s per case after ${results.config.warmupMs / 1000} s warm-up; ${results.config.repeats} round(s)${results.config.repeats > 1 ? ', medians shown' : ''}`,
    '',
    `Load: ${results.data.load.seconds.toFixed(1)} s (${steps}); the read indexes of the filter and sort were built ${results.indexWaitSeconds.toFixed(1)} s after their first listings.`,
    '',
    fields,
    '',
    "#### As the issue's acceptance lines",
    '',
    pairsTable(results.reads),
    '',
    ...(results.fieldAdd
      ? [
          `Adding \`${results.fieldAdd.expression}\` to Items plain, end to end (the API makes \`${results.fieldAdd.column}\`), against PostgreSQL adding the column a user of it would write, \`${results.fieldAdd.rawColumn}\`, to the raw copy:`,
          '',
          fieldAddTable(results.fieldAdd),
          '',
        ]
      : []),
    '#### Each case against raw SQL',
    '',
    readsTable(results.reads),
    '',
    'Raw page plus the exact count (the API counts the filtered total):',
    '',
    totalsTable(results.reads),
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
