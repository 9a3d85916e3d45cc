import { quoteIdent } from '../physical/naming';
import { fieldTypeModule } from './registry';
import type { FieldShape, WriteContext } from './types';

/**
 * The columns of computed fields that a write keeps itself (who wrote, when a watched field
 * changed): each write path (the records service's statements, an import's final move) puts
 * these beside the values it was given, so a record's author and times are never left to the
 * caller. The values are SQL the modules build (their `written`), from what the write offers.
 */

export interface WrittenColumn {
  fieldId: string;
  /** The column, quoted. */
  column: string;
  /** Its value, as SQL. */
  value: string;
}

export interface WrittenBy {
  /**
   * `{id, name}` of the API key that writes, as jsonb SQL: asked only by the columns that show it,
   * so that a statement does not carry a parameter it never reads (PostgreSQL cannot type one).
   */
  author: () => string;
  /** See WriteContext.changed; an insert need not give it. */
  changed?: WriteContext['changed'];
  /** See WriteContext.links; absent when the statement writes no links itself. */
  links?: WriteContext['links'];
}

function written(
  fields: readonly FieldShape[],
  by: WrittenBy,
  when: 'inserted' | 'updated',
): WrittenColumn[] {
  const columns: WrittenColumn[] = [];
  for (const field of fields) {
    const build = fieldTypeModule(field.type).written?.[when];
    if (!build) continue;
    const column = quoteIdent(field.id);
    const value = build({
      field,
      column: `r.${column}`,
      get author() {
        return by.author();
      },
      changed: by.changed ?? (() => 'true'),
      links: by.links ?? (() => undefined),
    });
    if (value !== undefined) columns.push({ fieldId: field.id, column, value });
  }
  return columns;
}

/** `sql()` made once, when first asked for: a parameter added to a statement only if it is read. */
export function once(sql: () => string): () => string {
  let made: string | undefined;
  return () => {
    made ??= sql();
    return made;
  };
}

/** The values a new record's kept columns take (the others take their defaults). */
export function insertedColumns(fields: readonly FieldShape[], by: WrittenBy): WrittenColumn[] {
  return written(fields, by, 'inserted');
}

/** The assignments an update makes to the kept columns of the records it writes. */
export function updatedColumns(fields: readonly FieldShape[], by: WrittenBy): WrittenColumn[] {
  return written(fields, by, 'updated');
}
