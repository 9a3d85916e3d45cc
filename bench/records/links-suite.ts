import { fillLinkedValuesSql, keptLinkedValues } from '@recordbase/db/field-types';
import { quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import { type BenchConfig, selected } from './config';
import { HttpRunner } from './http-runner';
import {
  addLinkedField,
  differingRows,
  dropLinkTables,
  HOT_LINKS,
  HOT_OTHERS,
  HOURS_MIN,
  HOURS_SUM,
  ITEMS_FIELDS,
  type LinkedFieldInfo,
  type LinkTables,
  linkedId,
  linkIndexes,
  loadLinkTables,
  recordsPathOf,
  vacuumLinkTables,
} from './links';
import { deleteEvents } from './load';
import { measure } from './measure';
import { DEFAULT_ORDER, type RawSource, type ReadCase, rawList } from './queries';
import type { Machine, ReadResult, WriteResult } from './results';
import {
  fmt,
  measureOptions,
  mergeRepeats,
  readIndexesBuilt,
  runOf,
  runReads,
  type SuiteContext,
} from './run';
import { SqlRunner } from './sql-runner';

/**
 * Count, lookup and rollup fields on 100,000 Items linking 10,000 Others, each case through the
 * API against its twin without them, beside raw SQL on copies of the physical tables, in the same
 * run:
 * - L1-plain / L1 / L1p: the first page of 100 of `Items plain` (no computed field), of `Items`
 *   (the same rows and links, three lookups and two rollups) and of Items with `fields` naming
 *   only the plain ones (the same rows read, the five values left out): L1 against L1-plain is the
 *   issue's line, L1 against L1p what rendering the five values costs on the same rows;
 * - L2-plain / L2-rollup: a filter and sort on `Hours plain` (a number field) and on `Hours total`
 *   (the sum rollup over the linked Hours, the same numbers), once the API's background read
 *   index on each is built;
 * - L3-hot / L3-cold: PATCH of an Other's Hours, a hot one (linked by 100 Items, whose lookup and
 *   rollup of Hours the service refreshes in the same transaction) and a cold one (linked by
 *   none), each concurrent worker its own, against the same in raw SQL: the update and the
 *   refresh of the linking Items by hand; L3s-hot / L3s-cold the same with every worker on one;
 * - adding a sum rollup to Items (POST …/fields, one UPDATE of every record) against the UPDATE a
 *   user of PostgreSQL would write, and against the service's own UPDATE run by hand.
 */

export interface LinkFieldAddResult {
  /** The rollup added (as the client writes it). */
  template: typeof HOURS_SUM;
  /** The hand-written statement, and the service's own (its columnAdded), as run on the raw copy. */
  rawStatement: string;
  serviceStatement: string;
  /** Seconds of each round, in order. */
  api: number[];
  raw: number[];
  service: number[];
}

export interface LinksResults {
  config: BenchConfig;
  machine: Machine;
  serverMode: string;
  startedAt: string;
  data: {
    rows: number;
    others: number;
    links: number;
    hotLinks: number;
    /** Hot Others (and cold ones). */
    hotOthers: number;
    /** Items the filter keeps. */
    matching: number;
    load: LinkTables['load'];
    linked: LinkedFieldInfo[];
  };
  /** How long the read indexes of the filter and sort took to be built after the first listings. */
  indexWaitSeconds: number;
  indexes: { api: string[]; raw: string[] };
  reads: ReadResult[];
  /** L3-hot and L3-cold at each of their concurrencies. */
  writes: WriteResult[];
  fieldAdd?: LinkFieldAddResult;
}

/** Rounds of the add case (each: the API adds and deletes the field, raw SQL adds and drops columns). */
export const FIELD_ADD_ROUNDS = 3;

const PLAIN_FIELDS = ITEMS_FIELDS.map((f) => f.name);

/** A raw row's system columns and its plain fields' columns (the link field has none). */
const baseColumns = (fieldIds: Record<(typeof ITEMS_FIELDS)[number]['name'], string>) => [
  'id',
  'created_at',
  'updated_at',
  ...ITEMS_FIELDS.filter((f) => f.type !== 'linked_record').map((f) => fieldIds[f.name]),
];

/** The linked ids of the page row `p`, in order, keyed as the API keys the link field (as queries.ts does). */
const linkIdsOf = (links: string, fieldId: string) =>
  `COALESCE((SELECT json_agg(l.linked_id ORDER BY l.position) FROM ${links} l WHERE l.record_id = p.id), '[]'::json) AS ${quoteIdent(fieldId)}`;

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Every field of the raw row (but the system columns) as the API's `data`: the same keys and values. */
function sameFields(api: { data: Record<string, unknown> }, raw: Record<string, unknown>): string | null {
  const keys = Object.keys(raw).filter((key) => !['id', 'created_at', 'updated_at'].includes(key));
  const apiKeys = Object.keys(api.data);
  if (apiKeys.length !== keys.length || !keys.every((key) => apiKeys.includes(key)))
    return `data holds ${apiKeys.join(', ')}, the raw row ${keys.join(', ')}`;
  const differing = keys.find((key) => !sameJson(api.data[key], raw[key]));
  return differing
    ? `field ${differing}: API ${JSON.stringify(api.data[differing])}, raw ${JSON.stringify(raw[differing])}`
    : null;
}

export function linkReadCases(tables: LinkTables): ReadCase[] {
  const i = tables.items.fieldIds;
  const itemsLinks = linkIdsOf(tables.raw.itemsLinks, i.Others);
  const page = { where: 'TRUE', values: [], order: DEFAULT_ORDER, limit: 100, offset: 0, withTotal: false };
  const total = linkedId(tables, 'Hours total');
  const filterSortSource: RawSource = {
    table: tables.raw.items,
    columns: [...baseColumns(i), total],
    extra: [itemsLinks],
  };
  const filterSort = (id: string, field: string, column: string): ReadCase => {
    const shape = (withTotal: boolean) =>
      rawList(filterSortSource, {
        where: `r.${quoteIdent(column)} > $1::double precision`,
        values: [HOURS_MIN],
        order: `r.${quoteIdent(column)} DESC NULLS LAST, r.seq ASC`,
        limit: 100,
        offset: 0,
        withTotal,
      });
    return {
      id,
      title: `${field} > ${HOURS_MIN}, ${field} desc, limit 100, fields: the plain ones and Hours total`,
      body: {
        filter: { field, greater_than: HOURS_MIN },
        sort: [{ field, direction: 'desc' }],
        limit: 100,
        fields: [...PLAIN_FIELDS, 'Hours total'],
      },
      raw: shape(false),
      rawWithTotal: shape(true),
      checkRecord: sameFields,
    };
  };
  return [
    {
      id: 'L1-plain',
      title: 'first page of 100, default order, Items plain (no computed field)',
      body: { limit: 100 },
      recordsPath: recordsPathOf(tables, tables.plain.tableId),
      raw: rawList(
        {
          table: tables.raw.plain,
          columns: baseColumns(tables.plain.fieldIds),
          extra: [linkIdsOf(tables.raw.plainLinks, tables.plain.fieldIds.Others)],
        },
        page,
      ),
      checkRecord: sameFields,
    },
    {
      id: 'L1',
      title: `first page of 100, default order, Items (the same and ${tables.linked.length} lookups and rollups)`,
      body: { limit: 100 },
      raw: rawList(
        {
          table: tables.raw.items,
          columns: [...baseColumns(i), ...tables.linked.map((f) => f.id)],
          extra: [itemsLinks],
        },
        page,
      ),
      checkRecord: sameFields,
    },
    {
      id: 'L1p',
      title: 'the page of L1 with fields: the plain ones (the lookups and rollups left out)',
      body: { limit: 100, fields: PLAIN_FIELDS },
      raw: rawList({ table: tables.raw.items, columns: baseColumns(i), extra: [itemsLinks] }, page),
      checkRecord: sameFields,
    },
    filterSort('L2-plain', 'Hours plain', i['Hours plain']),
    filterSort('L2-rollup', 'Hours total', total),
  ];
}

// ---------------------------------------------------------------------------------------------
// L3: an update of a linked record, hot and cold
// ---------------------------------------------------------------------------------------------

/** Each measured update sets a value no earlier one set (quarters, as loaded): every one changes it. */
const hoursOf = (sequence: number) => 1000 + sequence / 4;

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * The raw twin of PATCH of an Other's Hours: the update, then the two values of the Items linking
 * it that read Hours (Other hours, Hours total; the others cannot change, and the service leaves
 * them too) computed again from their links and set, in one transaction, as one would write it by
 * hand (one aggregate over the link table joined to Others, grouped by Item). For the cold Other
 * the second statement finds no Item, as the service's look-up of readers finds none.
 */
function rawUpdateScript(tables: LinkTables, otherId: string, hours: number): string {
  const o = tables.others.fieldIds;
  const col = (name: Parameters<typeof linkedId>[1]) => quoteIdent(linkedId(tables, name));
  const h = `o.${quoteIdent(o.Hours)}`;
  return `BEGIN;
UPDATE ${tables.raw.others} SET ${quoteIdent(o.Hours)} = ${hours}, updated_at = now() WHERE id = ${literal(otherId)};
UPDATE ${tables.raw.items} r SET ${col('Other hours')} = v.hours, ${col('Hours total')} = v.total
  FROM (SELECT l.record_id,
               COALESCE(jsonb_agg(to_jsonb(${h}) ORDER BY l.position) FILTER (WHERE ${h} IS NOT NULL), '[]'::jsonb) AS hours,
               COALESCE(sum(${h}), 0) AS total
          FROM ${tables.raw.itemsLinks} l JOIN ${tables.raw.others} o ON o.id = l.linked_id
         WHERE l.record_id IN (SELECT record_id FROM ${tables.raw.itemsLinks} WHERE linked_id = ${literal(otherId)})
         GROUP BY l.record_id) v
 WHERE r.id = v.record_id;
COMMIT;`;
}

/** Items whose five computed values differ between the API's table and the raw copy. */
async function itemsDiffering(pool: pg.Pool, tables: LinkTables): Promise<number> {
  const row = (alias: string) =>
    `ROW(${tables.linked.map((f) => `${alias}.${quoteIdent(f.id)}`).join(', ')})`;
  const result = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${tables.items.table} a FULL JOIN ${tables.raw.items} b USING (id)
      WHERE ${row('a')} IS DISTINCT FROM ${row('b')}`,
  );
  return result.rows[0]!.n;
}

/**
 * Sets every hot and cold Other's Hours through the API and in the raw copy, and checks that both
 * refreshed the Items the same (all of them: the measured updates leave the two apart).
 */
async function setHoursBothWays(
  http: HttpRunner,
  sql: SqlRunner,
  pool: pg.Pool,
  tables: LinkTables,
  hoursOf: (other: { hours: number }) => number,
): Promise<void> {
  for (const other of [...tables.others.hot, ...tables.others.cold]) {
    const hours = hoursOf(other);
    await http.send('PATCH', `${recordsPathOf(tables, tables.others.tableId)}/${other.id}`, 200, () =>
      JSON.stringify({ record: { Hours: hours } }),
    )(0, 0);
    await sql.script(() => rawUpdateScript(tables, other.id, hours))(0, 0);
  }
  const differing = await itemsDiffering(pool, tables);
  if (differing !== 0)
    throw new Error(`after the same updates, the API and raw SQL differ in ${differing} Items`);
}

/**
 * L3-hot and L3-cold at concurrency 1 and at the write concurrency, API then raw SQL, each worker
 * updating its own Other (hot or cold); L3s-hot and L3s-cold at the write concurrency, every
 * worker updating the same one, whose row lock queues them; then L3q-hot and L3q-cold, the same
 * PATCH as L3 with `suppressWebhooks: true` (no record.updated events, so neither the records'
 * JSON before and after nor the outbox rows), through the API only: what the refresh costs
 * without what announcing it costs.
 */
async function runLinkWrites(context: SuiteContext, tables: LinkTables): Promise<WriteResult[]> {
  const { config, server, apiKey, admin } = context;
  const { hot, cold } = tables.others;
  const hotTitle = `PATCH Hours of a hot Other (linked by ${HOT_LINKS} Items, whose 2 values reading Hours are refreshed)`;
  const coldTitle = 'PATCH Hours of a cold Other (linked by no Item)';
  const quietly = ', suppressWebhooks: true (no events)';
  const same = ', every worker the same Other';
  const cases = [
    { id: 'L3-hot', title: hotTitle, others: hot, quiet: false, sameOther: false },
    { id: 'L3-cold', title: coldTitle, others: cold, quiet: false, sameOther: false },
    { id: 'L3s-hot', title: `${hotTitle}${same}`, others: hot, quiet: false, sameOther: true },
    { id: 'L3s-cold', title: `${coldTitle}${same}`, others: cold, quiet: false, sameOther: true },
    { id: 'L3q-hot', title: `${hotTitle}${quietly}`, others: hot, quiet: true, sameOther: false },
    { id: 'L3q-cold', title: `${coldTitle}${quietly}`, others: cold, quiet: true, sameOther: false },
  ].filter((c) => selected(config, c.id));
  const results: WriteResult[] = [];
  for (const concurrency of [...new Set([1, config.writeConcurrency])]) {
    const http = new HttpRunner(server.baseUrl, apiKey, concurrency);
    const sql = new SqlRunner(config.databaseUrl, concurrency);
    const options = measureOptions(config, server, concurrency);
    try {
      for (const write of cases) {
        // At concurrency 1 every worker's Other is the first: L3s would repeat L3.
        if (write.sameOther && concurrency === 1) continue;
        const other = (worker: number) => write.others[write.sameOther ? 0 : worker % write.others.length]!;
        // The same updates both ways must leave the same values (a quarter no measured update sets).
        await setHoursBothWays(http, sql, admin, tables, () => 999.75);
        console.log(`${write.id} c=${concurrency}: ${write.title} [checked against raw SQL]`);
        const api = await measure(
          http.send(
            'PATCH',
            (worker) => `${recordsPathOf(tables, tables.others.tableId)}/${other(worker).id}`,
            200,
            (_, sequence) =>
              JSON.stringify({
                record: { Hours: hoursOf(sequence) },
                ...(write.quiet ? { suppressWebhooks: true } : {}),
              }),
          ),
          options,
        );
        console.log(`  API      ${fmt(api)}`);
        const result: WriteResult = { id: write.id, title: write.title, concurrency, api };
        if (!write.quiet) {
          result.raw = await measure(
            sql.script((worker, sequence) => rawUpdateScript(tables, other(worker).id, hoursOf(sequence))),
            options,
          );
          console.log(`  raw SQL  ${fmt(result.raw)}`);
        }
        results.push(result);
      }
    } finally {
      // Back to the loaded Hours, so that Hours total is Hours plain again for the next round's reads.
      await setHoursBothWays(http, sql, admin, tables, (other) => other.hours);
      await http.close();
      await sql.close();
    }
  }
  const differing = await differingRows(
    admin,
    tables.items.table,
    tables.items.fieldIds['Hours plain'],
    linkedId(tables, 'Hours total'),
  );
  if (differing !== 0)
    throw new Error(`after the updates, Hours total is not Hours plain in ${differing} Items`);
  return results;
}

// ---------------------------------------------------------------------------------------------
// Adding a rollup to the loaded Items
// ---------------------------------------------------------------------------------------------

/**
 * Adds `Hours added` (the sum of the linked Hours) to Items through the API, timed end to end;
 * then, in the raw copy of Items, a column filled by the UPDATE one would write by hand (one
 * aggregate over the raw link table joined to the raw Others) and a column filled by the
 * service's own UPDATE (its columnAdded, a correlated subquery per record reading the physical
 * link table and Others), each in a transaction with its `ALTER TABLE … ADD COLUMN`, timed. All
 * three must hold the same values; then the field is deleted, the columns dropped and the tables
 * vacuumed (not timed), so that every round starts from the same tables.
 */
async function measureFieldAdds(
  pool: pg.Pool,
  api: ApiClient,
  tables: LinkTables,
): Promise<LinkFieldAddResult> {
  const o = tables.others.fieldIds;
  const handWritten = (column: string) =>
    `UPDATE ${tables.raw.items} r SET ${column} = s.total
       FROM (SELECT l.record_id, sum(o.${quoteIdent(o.Hours)}) AS total
               FROM ${tables.raw.itemsLinks} l JOIN ${tables.raw.others} o ON o.id = l.linked_id
              GROUP BY l.record_id) s
      WHERE r.id = s.record_id`;
  const result: LinkFieldAddResult = {
    template: HOURS_SUM,
    rawStatement: handWritten('bench_added'),
    serviceStatement: '',
    api: [],
    raw: [],
    service: [],
  };
  const timedScript = async (column: string, update: string) => {
    const client = await pool.connect();
    try {
      const started = performance.now();
      await client.query(`BEGIN;
        ALTER TABLE ${tables.raw.items} ADD COLUMN ${column} double precision NOT NULL DEFAULT 0;
        ${update};
        COMMIT;`);
      return (performance.now() - started) / 1000;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };
  for (let round = 1; round <= FIELD_ADD_ROUNDS; round++) {
    const { created, seconds } = await addLinkedField(api, tables.databaseId, tables.items.tableId, {
      name: `Hours added ${round}`,
      type: 'rollup',
      template: HOURS_SUM,
    });
    result.api.push(seconds);
    const kept = await pool.query<{ template: unknown }>('SELECT template FROM public.fields WHERE id = $1', [
      created.id,
    ]);
    result.serviceStatement = fillLinkedValuesSql(
      keptLinkedValues({ template: kept.rows[0]!.template }),
      tables.schemaName,
      tables.raw.items,
      'bench_service',
    ).join(';\n');
    result.raw.push(await timedScript('bench_added', result.rawStatement));
    result.service.push(await timedScript('bench_service', result.serviceStatement));
    const differing = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${tables.items.table} a JOIN ${tables.raw.items} b USING (id)
        WHERE a.${quoteIdent(created.id)} IS DISTINCT FROM b.bench_added
           OR a.${quoteIdent(created.id)} IS DISTINCT FROM b.bench_service`,
    );
    if (differing.rows[0]!.n !== 0)
      throw new Error(`the added rollup and the raw columns differ in ${differing.rows[0]!.n} Items`);
    const deleted = await api.call(
      'DELETE',
      `/bases/${tables.databaseId}/tables/${tables.items.tableId}/fields/${created.id}`,
    );
    if (deleted.status >= 300) throw new Error(`DELETE of the added field: status ${deleted.status}`);
    await pool.query(`ALTER TABLE ${tables.raw.items} DROP COLUMN bench_added, DROP COLUMN bench_service`);
    await vacuumLinkTables(pool, tables);
    console.log(
      `  add a rollup, round ${round}: API ${seconds.toFixed(2)} s, hand-written UPDATE ${result.raw.at(-1)!.toFixed(2)} s, the service's UPDATE by hand ${result.service.at(-1)!.toFixed(2)} s`,
    );
  }
  return result;
}

/** Loads the tables once, then BENCH_REPEATS rounds of the reads and the writes, then the add case. */
export async function runLinksSuite(context: SuiteContext): Promise<LinksResults> {
  const { config, server, apiKey, admin, api } = context;
  console.log(
    `--- links: loading ${config.linkRows} Items and Items plain, ${config.linkRows / 10} Others ...`,
  );
  const tables = await loadLinkTables(admin, api, config.linkRows);
  console.log(`  loaded in ${tables.load.seconds.toFixed(1)} s`);
  const cases = linkReadCases(tables);
  const target = {
    config,
    server,
    apiKey,
    recordsPath: recordsPathOf(tables, tables.items.tableId),
    table: { name: tables.items.table, pool: admin },
  };
  const indexWaitSeconds = await readIndexesBuilt(
    target,
    cases.filter((c) => c.id.startsWith('L2-')),
    [
      { id: tables.items.fieldIds['Hours plain']!, name: 'Hours plain' },
      { id: linkedId(tables, 'Hours total'), name: 'Hours total' },
    ],
  );
  const readRounds: ReadResult[][] = [];
  const writeRounds: WriteResult[][] = [];
  for (let round = 1; round <= config.repeats; round++) {
    if (config.repeats > 1) console.log(`--- links round ${round} of ${config.repeats}`);
    readRounds.push(
      await runReads(
        target,
        cases.filter((c) => selected(config, c.id)),
      ),
    );
    writeRounds.push(await runLinkWrites(context, tables));
    // Each hot update rewrote 100 Items and queued an event holding them: tidy for the next round.
    await deleteEvents(admin, tables.databaseId);
    await vacuumLinkTables(admin, tables);
  }
  const indexes = await linkIndexes(admin, tables);
  const fieldAdd = selected(config, 'add') ? await measureFieldAdds(admin, api, tables) : undefined;
  await dropLinkTables(admin, api);
  return {
    ...runOf(context),
    data: {
      rows: tables.rows,
      others: tables.others.rows,
      links: tables.links,
      hotLinks: HOT_LINKS,
      hotOthers: HOT_OTHERS,
      matching: tables.matching,
      load: tables.load,
      linked: tables.linked,
    },
    indexWaitSeconds,
    indexes,
    ...mergeRepeats(readRounds, writeRounds),
    ...(fieldAdd ? { fieldAdd } : {}),
  };
}
