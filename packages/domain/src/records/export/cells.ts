import { ISO_UTC_MILLIS, moduleOfField } from '@recordbase/db/field-types';
import { hasColumn } from '@recordbase/db/physical';
import { type ExpandedLink, linkedPrimariesSql } from '../expand';
import { type FieldMeta, fieldSql, type TableMeta } from '../table-meta';

/**
 * A record's cells as a spreadsheet shows them, rendered by PostgreSQL: one text (or NULL for an
 * empty value) per field, from the field's JSON as the API renders it (so numbers, dates and times
 * read exactly as the API answers them), flattened where a cell holds one value: arrays joined
 * with ", ", attachments as their urls, authors as their names, links as the linked records'
 * primary values. Node then only types the cells (XLSX); PostgreSQL's COPY writes them as CSV.
 */

/** How a cell is written: the kinds a CSV leaves unquoted and an XLSX types. */
export type CellKind = 'number' | 'boolean' | 'date' | 'datetime' | 'text';

/**
 * The kind of a field's cells: by the kind of value it reads as (a formula's, lookup's or rollup's
 * result type), as formulas see it.
 */
export function cellKindOf(field: FieldMeta): CellKind {
  switch (moduleOfField(field).formula) {
    case 'number':
      return 'number';
    case 'checkbox':
      return 'boolean';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    default:
      return 'text';
  }
}

/** One element of a JSON array (`e`) as text: objects as their url (attachments) or name (authors). */
const ELEMENT_TEXT = `CASE json_typeof(e) WHEN 'string' THEN e #>> '{}' WHEN 'null' THEN NULL
  WHEN 'object' THEN COALESCE(e ->> 'url', e ->> 'name', e::text) ELSE e::text END`;

/**
 * A written column's cell from the column's own text where that is what the API renders (a float8's
 * and a boolean's text are their JSON; a date's, under the export's DateStyle ISO, its JSON's
 * 'YYYY-MM-DD' for the years 1 to 9999 a date field holds; a date-time's the same to_char as its
 * JSON's), sparing PostgreSQL the JSON and its unquoting per cell; undefined for every other field.
 */
function columnCellSql(field: FieldMeta, column: string): string | undefined {
  if (!hasColumn(field)) return undefined;
  switch (field.type) {
    case 'number':
    case 'currency':
    case 'percent':
    case 'rating':
    case 'duration':
    case 'autonumber':
    case 'checkbox':
    case 'date':
      return `(${column})::text`;
    case 'datetime':
      return `to_char(${column} AT TIME ZONE 'UTC', ${ISO_UTC_MILLIS})`;
    default:
      return undefined;
  }
}

/** A field's cell as SQL text over the record aliased `r`; NULL when empty. */
function cellSql(table: TableMeta, field: FieldMeta, links: ReadonlyMap<string, ExpandedLink>): string {
  const module = moduleOfField(field);
  const sql = fieldSql(table, field);
  const link = links.get(field.id);
  if (link) return linkedPrimariesSql(table, link, (primary) => cellSql(link.linked, primary, new Map()));
  if (field.type === 'linked_record') throw new Error(`export: no linked table given for ${field.id}`);
  const plain = columnCellSql(field, sql.column);
  if (plain !== undefined) return plain;
  const json = module.json(sql);
  switch (cellKindOf(field)) {
    case 'number':
    case 'boolean':
      // A JSON number or boolean is its own text.
      return `NULLIF(${json}, 'null')`;
    case 'date':
    case 'datetime':
      // An ISO string holds no character JSON escapes: its text is inside the quotes.
      return `NULLIF(btrim(${json}, '"'), 'null')`;
    case 'text':
      break;
  }
  if (module.type === 'created_by' || module.type === 'last_modified_by') return `(${sql.column} ->> 'name')`;
  // Arrays (selects, attachments, lookups, formulas): their elements joined.
  if (module.formula === 'array') {
    return `(SELECT string_agg(${ELEMENT_TEXT}, ', ' ORDER BY n)
       FROM json_array_elements(NULLIF(${json}, 'null')::json) WITH ORDINALITY AS a(e, n))`;
  }
  // The text types render their text column as a JSON string: the column is the text itself.
  return `(${sql.column})::text`;
}

/**
 * The first characters of a text cell a spreadsheet would run as a formula (tab, CR, `+`, `-`,
 * `=`, `@`): such a cell gets a leading `'` (the formula guard). Tested by code point with
 * ascii(), which reads one character: about 15 % of the CSV statement's time less than a regular
 * expression per cell.
 */
const FORMULA_STARTS = [9, 13, 43, 45, 61, 64].join(', ');

/**
 * Whether a cell is computed where it is used rather than once in the row's LATERAL subquery: a
 * cell that is not text is used once; a text cell, used three times by the formula guard, is when
 * it reads the field's own column as it is (not an array's elements, not a link's primaries).
 * PostgreSQL runs a LATERAL (… OFFSET 0) subquery per row at a cost of its own: on 1,000,000 rows
 * of nine plain fields, dropping it halved the statement's time.
 */
function inlineCell(field: FieldMeta, kind: CellKind, links: ReadonlyMap<string, ExpandedLink>): boolean {
  if (links.has(field.id) || field.type === 'linked_record') return false;
  if (kind !== 'text') return true;
  return hasColumn(field) && moduleOfField(field).formula !== 'array';
}

export interface ExportCellsSql {
  kinds: CellKind[];
  /** Joined after the row source aliased `r`: the cells c0, c1… of the row that are costly, each computed once. */
  join: string;
  /** The cells as columns (for XLSX). */
  columns: string;
  /** The cells as columns for PostgreSQL's COPY to write as CSV: text cells with the formula guard. */
  csvColumns: string;
}

/**
 * The cells of `fields` over the record aliased `r`. `links` has the linked table of each link
 * field among them (expandedLinks).
 */
export function exportCellsSql(
  table: TableMeta,
  fields: readonly FieldMeta[],
  links: readonly ExpandedLink[],
): ExportCellsSql {
  const byField = new Map(links.map((link) => [link.field.id, link]));
  const kinds = fields.map(cellKindOf);
  const joined: string[] = [];
  const refs = fields.map((field, i) => {
    const cell = cellSql(table, field, byField);
    if (inlineCell(field, kinds[i]!, byField)) return cell;
    joined.push(`${cell} AS c${i}`);
    return `c.c${i}`;
  });
  return {
    kinds,
    // OFFSET 0 keeps the planner from inlining the subquery (which would compute a cell twice).
    join: joined.length > 0 ? `CROSS JOIN LATERAL (SELECT ${joined.join(', ')} OFFSET 0) c` : '',
    columns: refs.length > 0 ? refs.join(', ') : 'NULL',
    csvColumns:
      refs.length > 0
        ? refs
            .map((ref, i) =>
              kinds[i] === 'text'
                ? `CASE WHEN ascii(${ref}) IN (${FORMULA_STARTS}) THEN '''' || ${ref} ELSE ${ref} END`
                : ref,
            )
            .map((cell, i) => `${cell} AS c${i}`)
            .join(', ')
        : `'' AS c0`,
  };
}
