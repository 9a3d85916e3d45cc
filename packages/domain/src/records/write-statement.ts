import type { FieldTemplate } from '@recordbase/contracts/fields';
import { appendSelectedEventsSql, queryNamed } from '@recordbase/db';
import { insertedColumns, once, updatedColumns } from '@recordbase/db/field-types';
import {
  hasColumn,
  linkTableName,
  qualifiedTable,
  quoteIdent,
  requireColumnSpec,
  SqlParams,
} from '@recordbase/db/physical';
import type { TransactionEvents } from '../events';
import { formulaLinkIdsSql } from '../formula-fields';
import { recordChanges } from './record-changes';
import { recordJsonSql } from './record-json';
import type { Queryable } from './store';
import { matchCondition, storedLinksSql } from './store';
import type { FieldMeta, TableMeta } from './table-meta';
import type { PreparedRecord } from './values';
import { insideOf, recordViewMembers, viewConditionSql, watchedViews } from './view-members';

/**
 * A bulk create or upsert as one statement, whatever the batch: the records travel as one JSON
 * parameter (`json_to_recordset` types each column), the linked ids are checked, the matches
 * found, the rows updated and inserted, the links written, the answer rendered from what
 * `INSERT`/`UPDATE … RETURNING` gave and the record events appended to the outbox with the same
 * text. A request PostgreSQL must refuse (a missing linked record, a key matching several
 * records) writes nothing: every write is guarded by the statement's own checks, and the problem
 * comes back for the caller to name.
 */

export interface WriteInput {
  table: TableMeta;
  records: readonly PreparedRecord[];
  /** A fresh id per record, used when the record is created. */
  newIds: readonly string[];
  /** Upsert: the fields whose equal values make a record an update (in canonical order). */
  matchOn?: readonly FieldMeta[];
  /** Id of the record.created event the statement may append (an upsert's record.updated is appended after it). */
  eventIds: { created: string };
  /** `{id, name}` of the key that writes (authorOf), as JSON. */
  author: string;
  /** The request asked that webhooks not hear of it: its events are for history only. */
  quiet?: boolean;
}

export type WriteProblem =
  | { kind: 'missing-link'; index: number; fieldId: string; linkedId: string }
  | { kind: 'many-matches'; index: number; count: number };

export interface WriteOutcome {
  /** The records in input order, as a JSON array (text). */
  recordsJson: string;
  /** Ids of the records inserted, and of those an upsert matched and updated, in input order. */
  createdIds: string[];
  updatedIds: string[];
  /** The outbox events appended for the dispatcher (heard), in append order. */
  eventIds: string[];
  /** How many events the statement appended, heard or not. */
  eventsAppended?: number;
  problem?: WriteProblem;
}

const isColumn = (field: FieldMeta) => hasColumn(field);

/** Attachments arrive as JSON text and are cast; every other column is typed by json_to_recordset. */
function recordsetType(field: FieldMeta): string {
  const sqlType = requireColumnSpec(field).sqlType;
  return sqlType === 'jsonb' ? 'text' : sqlType;
}

function columnValue(field: FieldMeta, column: string): string {
  const spec = requireColumnSpec(field);
  return spec.sqlType === 'jsonb' ? `${column}::jsonb` : column;
}

export function writeStatement(input: WriteInput): { text: string; values: unknown[] } {
  const { table, records, newIds, matchOn } = input;
  const upsert = matchOn !== undefined;
  const columnFields = table.fields.filter(
    (field) => isColumn(field) && records.some((record) => record.columns.has(field.id)),
  );
  const linkFields = table.fields.filter(
    (field) => !isColumn(field) && records.some((record) => record.links.has(field.id)),
  );
  const givenByAll = columnFields.map((field) => records.every((record) => record.columns.has(field.id)));
  const columnIndex = new Map(columnFields.map((field, i) => [field.id, i]));

  // The rows of the recordset: c<i> a column value, g<i> whether it was given (only when some
  // record leaves it out), l<i> the linked ids of a link field (absent when not given).
  const rows = records.map((record, n) => {
    const row: Record<string, unknown> = { n, id: newIds[n] };
    columnFields.forEach((field, i) => {
      if (!record.columns.has(field.id)) return;
      row[`c${i}`] = record.columns.get(field.id);
      if (!givenByAll[i]) row[`g${i}`] = true;
    });
    linkFields.forEach((field, i) => {
      const links = record.links.get(field.id);
      if (links) row[`l${i}`] = links;
    });
    return row;
  });
  const params = new SqlParams();
  const recordset = params.add(JSON.stringify(rows));
  const definitions = [
    'n int',
    'id uuid',
    ...columnFields.flatMap((field, i) => [
      `c${i} ${recordsetType(field)}`,
      ...(givenByAll[i] ? [] : [`g${i} boolean`]),
    ]),
    ...linkFields.map((_, i) => `l${i} uuid[]`),
  ];
  const given = (i: number) => (givenByAll[i] ? 'true' : `(w.g${i} IS TRUE)`);
  const ref = qualifiedTable(table.schemaName, table.id);
  const ctes: string[] = [
    `input AS MATERIALIZED (SELECT * FROM json_to_recordset(${recordset}::json) AS x(${definitions.join(', ')}))`,
  ];

  // Linked ids that name no record of the linked table: the first in field, record, list order.
  const missing = linkFields.map((field, i) => {
    const linked = qualifiedTable(
      table.schemaName,
      (field.template as FieldTemplate<'linked_record'>).tableId,
    );
    return `SELECT ${i} AS f, x.n, u.o, u.linked FROM input x CROSS JOIN LATERAL unnest(x.l${i}) WITH ORDINALITY AS u(linked, o)
             WHERE NOT EXISTS (SELECT 1 FROM ${linked} t WHERE t.id = u.linked)`;
  });
  ctes.push(
    `missing AS (${missing.length > 0 ? `SELECT * FROM (${missing.join(' UNION ALL ')}) m ORDER BY f, n, o LIMIT 1` : 'SELECT NULL::int AS f, NULL::int AS n, NULL::bigint AS o, NULL::uuid AS linked WHERE false'})`,
  );
  if (upsert) {
    const on = matchOn
      .map((field) => matchCondition(field, `r.${quoteIdent(field.id)}`, `x.c${columnIndex.get(field.id)!}`))
      .join(' AND ');
    ctes.push(
      `matches AS (SELECT x.n, r.id FROM ${ref} r JOIN input x ON ${on})`,
      `many AS (SELECT n, count(*)::int AS c FROM matches GROUP BY n HAVING count(*) > 1 ORDER BY n LIMIT 1)`,
    );
  } else {
    ctes.push('many AS (SELECT NULL::int AS n, NULL::int AS c WHERE false)');
  }
  ctes.push(
    `target AS (SELECT x.*, ${upsert ? 'COALESCE(m.id, x.id)' : 'x.id'} AS rid, ${upsert ? 'm.id IS NOT NULL' : 'false'} AS matched
       FROM input x ${upsert ? 'LEFT JOIN matches m ON m.n = x.n' : ''}
      WHERE NOT EXISTS (SELECT 1 FROM missing) AND NOT EXISTS (SELECT 1 FROM many))`,
  );
  const author = once(() => `${params.add(input.author)}::jsonb`);
  // A record's links as this statement writes them: counts, lookups and rollups read them here.
  const linkIndex = new Map(linkFields.map((field, i) => [field.id, i]));
  const links = (linkFieldId: string) => {
    const i = linkIndex.get(linkFieldId);
    return i === undefined ? undefined : `w.l${i}`;
  };
  const insertedKept = insertedColumns(table.fields, { author, links });
  const insertColumns = [
    'id',
    ...columnFields.map((field) => quoteIdent(field.id)),
    ...insertedKept.map((column) => column.column),
  ];
  const insertValues = [
    'w.rid',
    ...columnFields.map((field, i) => {
      const value = columnValue(field, `w.c${i}`);
      const fallback = requireColumnSpec(field).notNullDefault;
      return givenByAll[i] || !fallback ? value : `COALESCE(${value}, ${fallback})`;
    }),
    ...insertedKept.map((column) => column.value),
  ];
  ctes.push(
    `ins AS (INSERT INTO ${ref} (${insertColumns.join(', ')})
       SELECT ${insertValues.join(', ')} FROM target w WHERE NOT w.matched ORDER BY w.n RETURNING *)`,
  );
  if (upsert) {
    // Whether a matched record's watched fields change: its values before, in the statement's
    // snapshot (its links too, which the link CTEs below change only after it).
    const changed = (fieldIds: readonly string[] | undefined) => {
      const watched = (field: FieldMeta) => fieldIds === undefined || fieldIds.includes(field.id);
      const conditions = [
        ...columnFields.flatMap((field, i) =>
          watched(field)
            ? [
                `(${given(i)} AND ${columnValue(field, `w.c${i}`)} IS DISTINCT FROM r.${quoteIdent(field.id)})`,
              ]
            : [],
        ),
        ...linkFields.flatMap((field, i) =>
          watched(field)
            ? [`(w.l${i} IS NOT NULL AND w.l${i} IS DISTINCT FROM ${storedLinksSql(table, field)})`]
            : [],
        ),
      ];
      return conditions.length > 0 ? `(${conditions.join(' OR ')})` : 'false';
    };
    const updatedKept = updatedColumns(table.fields, { author, changed, links });
    const assignments = [
      'updated_at = now()',
      ...columnFields.map((field, i) => {
        const column = quoteIdent(field.id);
        const value = columnValue(field, `w.c${i}`);
        return givenByAll[i]
          ? `${column} = ${value}`
          : `${column} = CASE WHEN ${given(i)} THEN ${value} ELSE r.${column} END`;
      }),
      ...updatedKept.map((column) => `${column.column} = ${column.value}`),
    ];
    ctes.push(
      `upd AS (UPDATE ${ref} AS r SET ${assignments.join(', ')} FROM target w WHERE w.matched AND r.id = w.rid RETURNING r.*)`,
    );
  }
  linkFields.forEach((field, i) => {
    const link = qualifiedTable(table.schemaName, linkTableName(field.id));
    if (upsert) {
      // Links of updated records that the new list drops; the kept ones are upserted below (no
      // row is both deleted and inserted, which one statement could not do).
      ctes.push(
        `unlink${i} AS (DELETE FROM ${link} l USING target w
           WHERE w.matched AND w.l${i} IS NOT NULL AND l.record_id = w.rid AND l.linked_id <> ALL (w.l${i}))`,
      );
    }
    ctes.push(
      `link${i} AS (INSERT INTO ${link} (record_id, linked_id, position)
         SELECT w.rid, u.linked, (u.o - 1)::int FROM target w CROSS JOIN LATERAL unnest(w.l${i}) WITH ORDINALITY AS u(linked, o)
         ${upsert ? 'ON CONFLICT (record_id, linked_id) DO UPDATE SET position = EXCLUDED.position' : ''})`,
    );
  });
  // The links a record gave are rendered from the input (the statement cannot read its own link
  // rows); the others from the link table, as any read would. Formulas reading a link (computed
  // at read time) read the given links the same way.
  const formulaLinkReads = linkFields.map((field, i) => {
    const fromTable = formulaLinkIdsSql(table.schemaName, field.id);
    return { fromTable, given: `(CASE WHEN w.l${i} IS NULL THEN ${fromTable} ELSE w.l${i}::text[] END)` };
  });
  const record = recordJsonSql(table, params, (field, fromTable) => {
    const i = linkIndex.get(field.id);
    if (i === undefined) {
      return formulaLinkReads.reduce((sql, read) => sql.split(read.fromTable).join(read.given), fromTable);
    }
    return `CASE WHEN w.l${i} IS NULL THEN ${fromTable}
                 ELSE COALESCE((SELECT json_agg(u.linked ORDER BY u.o) FROM unnest(w.l${i}) WITH ORDINALITY AS u(linked, o))::text, '[]') END`;
  });
  // An upsert's matched records as they were, which its record.updated event compares with: the
  // statement's snapshot precedes its own UPDATE.
  const announcesUpdates = upsert;
  // And which of them were inside the views webhooks watch, by each view's condition on `r`.
  const watched = upsert && input.quiet !== true ? watchedViews(table) : [];
  if (announcesUpdates) {
    const before = recordJsonSql(table, params);
    const inside = watched.map((view) => `(${viewConditionSql(table, view, params)}) IS TRUE`);
    ctes.push(
      `previous AS (SELECT m.n, m.id::text AS rid, ${before.text} AS j${inside.length > 0 ? `, ARRAY[${inside.join(', ')}] AS inside` : ''}
         FROM matches m JOIN ${ref} r ON r.id = m.id ${before.join})`,
    );
  }
  const written = upsert ? '(SELECT * FROM upd UNION ALL SELECT * FROM ins)' : 'ins';
  ctes.push(
    `rendered AS (SELECT w.n, w.matched, r.id::text AS id, ${record.text} AS j
       FROM ${written} r JOIN target w ON w.rid = r.id ${record.join})`,
  );
  // The record.created event carries the records as answered, only when there are any.
  ctes.push(
    `events AS (${appendSelectedEventsSql(
      `SELECT ${params.add(input.eventIds.created)}::uuid, ${params.add(table.databaseId)}::uuid, ${params.add(table.id)}::text,
              'record.created', 'public_api',
              (${params.add(`{"tableId":${JSON.stringify(table.id)},"recordIds":[`)}::text
                || string_agg('"' || id || '"', ',' ORDER BY n) || '],"records":['
                || string_agg(j, ',' ORDER BY n) || ']}')::json,
              ${params.add(input.author)}::json
         FROM rendered WHERE NOT matched HAVING count(*) > 0`,
      'id::text, type',
      { actor: true, suppressed: input.quiet === true },
    )})`,
  );
  return {
    text: `WITH ${ctes.join(',\n')}
      SELECT (SELECT '[' || string_agg(j, ',' ORDER BY n) || ']' FROM rendered) AS answer,
             (SELECT array_agg(id ORDER BY n) FROM rendered WHERE NOT matched) AS created_ids,
             (SELECT array_agg(id ORDER BY n) FROM rendered WHERE matched) AS updated_ids,
             ${announcesUpdates ? `(SELECT '[' || string_agg(j, ',' ORDER BY n) || ']' FROM rendered WHERE matched) AS updated_json, (SELECT '[' || string_agg(j, ',' ORDER BY n) || ']' FROM previous) AS previous_json,` : ''}
             ${watched.length > 0 ? '(SELECT json_object_agg(rid, inside) FROM previous) AS previous_inside,' : ''}
             (SELECT array_agg(id ORDER BY type) FILTER (WHERE heard) FROM events) AS event_ids,
             (SELECT count(*)::int FROM events) AS events_appended,
             (SELECT row_to_json(m) FROM missing m) AS missing,
             (SELECT row_to_json(x) FROM many x) AS many`,
    values: params.values,
  };
}

export async function runWrite(
  client: Queryable,
  events: TransactionEvents,
  input: WriteInput,
): Promise<WriteOutcome> {
  const statement = writeStatement(input);
  // Named: the text is the same for every write of the same fields to the same table.
  const result = await queryNamed<{
    answer: string | null;
    created_ids: string[] | null;
    updated_ids: string[] | null;
    updated_json?: string | null;
    previous_json?: string | null;
    previous_inside?: Record<string, boolean[]> | null;
    event_ids: string[] | null;
    events_appended: number;
    missing: { f: number; n: number; linked: string } | null;
    many: { n: number; c: number } | null;
  }>(client, statement.text, statement.values);
  const row = result.rows[0]!;
  if (row.missing) {
    const linkFields = input.table.fields.filter(
      (field) => !isColumn(field) && input.records.some((record) => record.links.has(field.id)),
    );
    return {
      recordsJson: '[]',
      createdIds: [],
      updatedIds: [],
      eventIds: [],
      problem: {
        kind: 'missing-link',
        index: row.missing.n,
        fieldId: linkFields[row.missing.f]!.id,
        linkedId: row.missing.linked,
      },
    };
  }
  if (row.many) {
    return {
      recordsJson: '[]',
      createdIds: [],
      updatedIds: [],
      eventIds: [],
      problem: { kind: 'many-matches', index: row.many.n, count: row.many.c },
    };
  }
  const updatedIds = row.updated_ids ?? [];
  if (updatedIds.length > 0 && row.updated_json && row.previous_json) {
    // Appended after the statement's record.created: what changed is worked out here, in Node.
    const eventId = await events.records(input.table, 'record.updated', updatedIds, row.updated_json, {
      changes: recordChanges(row.previous_json, row.updated_json),
    });
    if (row.previous_inside !== undefined) {
      await recordViewMembers(
        client,
        input.table,
        eventId,
        updatedIds,
        insideOf(watchedViews(input.table), row.previous_inside ?? {}),
      );
    }
  }
  return {
    recordsJson: row.answer ?? '[]',
    createdIds: row.created_ids ?? [],
    updatedIds,
    eventIds: row.event_ids ?? [],
    eventsAppended: row.events_appended,
  };
}
