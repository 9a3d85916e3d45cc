import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import type { FieldTemplate } from '@recordbase/contracts/fields';
import { MAX_EXPANDED_LINKS } from '@recordbase/contracts/records';
import { moduleOfField } from '@recordbase/db/field-types';
import { linkTableName, qualifiedTable, quoteIdent, type SqlParams } from '@recordbase/db/physical';
import type pg from 'pg';
import { loadTableMeta } from './table-loader';
import { type FieldMeta, requireField, type TableMeta } from './table-meta';

/**
 * `expand` on a read: beside a link field's ids, each linked record's id and primary field value,
 * one level deep, the first MAX_EXPANDED_LINKS in link order; rendered by the same statement as
 * the records (a subquery per expanded field and record, on the link table's primary key).
 */

export interface ExpandedLink {
  field: FieldMeta;
  linked: TableMeta;
}

/** The link fields `refs` names, with their linked tables; refused at any that is no link field. */
export async function expandedLinks(
  pool: Pick<pg.Pool, 'query'>,
  table: TableMeta,
  refs: readonly string[] | undefined,
  where: InputPath,
): Promise<ExpandedLink[]> {
  if (refs === undefined) return [];
  const fields: FieldMeta[] = [];
  refs.forEach((ref, index) => {
    const field = requireField(table, ref, [...where, index]);
    if (field.type !== 'linked_record') {
      throw invalid(
        [...where, index],
        `${JSON.stringify(field.name)} is a ${field.type} field, not a link field`,
      );
    }
    if (!fields.includes(field)) fields.push(field);
  });
  return Promise.all(
    fields.map(async (field) => ({
      field,
      linked: await loadTableMeta(
        pool,
        table.databaseId,
        (field.template as FieldTemplate<'linked_record'>).tableId,
      ),
    })),
  );
}

/** The field that names a table's records. */
const primaryFieldOf = (table: TableMeta): FieldMeta | undefined =>
  table.fields.find((candidate) => candidate.id === table.primaryFieldId) ?? table.fields[0];

/**
 * A link field's linked records' primary values, in link order, joined with ", " (NULL for none),
 * over the record aliased `r`: what an export shows of a link. `primaryText` renders the primary
 * field as text over its record aliased `r`, so computed primaries read as any field: the linked
 * table takes the alias inside, and the links are read in a subquery of their own, where `r` is
 * still the record being rendered (a FROM item does not see its siblings).
 */
export function linkedPrimariesSql(
  table: TableMeta,
  { field, linked }: ExpandedLink,
  primaryText: (primary: FieldMeta) => string,
): string {
  const primary = primaryFieldOf(linked);
  const link = qualifiedTable(table.schemaName, linkTableName(field.id));
  return `(SELECT string_agg(${primary ? primaryText(primary) : 'NULL::text'}, ', ' ORDER BY x.position)
     FROM (SELECT l.linked_id, l.position FROM ${link} l WHERE l.record_id = r.id) x
     JOIN ${qualifiedTable(linked.schemaName, linked.id)} r ON r.id = x.linked_id)`;
}

/** The `"expanded":{…}` member of a record as SQL text pieces, over the record aliased `r`. */
export function expandedPieces(
  table: TableMeta,
  expanded: readonly ExpandedLink[],
  params: SqlParams,
): string[] {
  if (expanded.length === 0) return [];
  const pieces = [`',"expanded":{'`];
  expanded.forEach(({ field, linked }, index) => {
    const primary = primaryFieldOf(linked);
    // The linked table is aliased lt: r stays the record being rendered.
    const primaryJson = primary
      ? moduleOfField(primary).json({
          field: primary,
          schemaName: linked.schemaName,
          column: `lt.${quoteIdent(primary.id)}`,
        })
      : `'null'`;
    const link = qualifiedTable(table.schemaName, linkTableName(field.id));
    pieces.push(
      `${params.add(`${index > 0 ? ',' : ''}${JSON.stringify(field.name)}:`)}::text`,
      `COALESCE((SELECT json_agg(json_build_object('id', lt.id, 'primary', (${primaryJson})::json) ORDER BY x.position)::text
         FROM (SELECT l.linked_id, l.position FROM ${link} l WHERE l.record_id = r.id ORDER BY l.position LIMIT ${MAX_EXPANDED_LINKS}) x
         JOIN ${qualifiedTable(linked.schemaName, linked.id)} lt ON lt.id = x.linked_id), '[]')`,
    );
  });
  pieces.push(`'}'`);
  return pieces;
}
