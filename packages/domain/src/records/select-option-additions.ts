import { invalid } from '@recordbase/contracts/domain-errors';
import {
  type Field,
  type FieldTemplate,
  type FieldType,
  MAX_SELECT_OPTIONS,
} from '@recordbase/contracts/fields';
import type pg from 'pg';
import type { TransactionEvents } from '../events';
import { notifySchemaChange } from './table-cache';
import { loadLinkedReaders } from './table-loader';
import { StaleTableMeta, type TableMeta } from './table-meta';
import { withAddedOptions } from './typecast';

/**
 * Adds the select options a typecast write needs to their fields, in the write's transaction: the
 * options and the records that use them commit together or not at all. It is a schema change as
 * any other: the database's schema version moves (listings holding older metadata reload it), the
 * change NOTIFYs every process's table cache, and a field.updated event tells webhooks.
 *
 * Runs first in its transaction: like a schema change it takes the database's row before the
 * fields' and the records', so the two never wait for each other in opposite orders. Returns the
 * table's metadata at the schema version the transaction now holds, which the write's own checks
 * after it compare with.
 */
export async function addSelectOptions(
  client: pg.PoolClient,
  events: TransactionEvents,
  table: TableMeta,
  newOptions: ReadonlyMap<string, readonly string[]>,
): Promise<TableMeta> {
  if (newOptions.size === 0) return table;
  const version = await client.query<{ before: string; after: string }>(
    `UPDATE databases SET schema_version = schema_version + 1 WHERE id = $1::uuid
     RETURNING (schema_version - 1)::text AS before, schema_version::text AS after`,
    [table.databaseId],
  );
  const { before, after } = version.rows[0]!;
  // Another schema change came between the metadata and this write (another typecast's options,
  // most often): what a write to records must know besides the fields it checks below is which
  // lookups read the table, read again here rather than failing the write.
  const current =
    table.schemaVersion === undefined
      ? table
      : {
          ...table,
          schemaVersion: after,
          ...(before === table.schemaVersion
            ? {}
            : { linkedReaders: await loadLinkedReaders(client, table) }),
        };
  const { rows } = await client.query<{ id: string; name: string; type: FieldType; template: FieldTemplate }>(
    'SELECT id, name, type, template FROM fields WHERE table_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE',
    [table.id, [...newOptions.keys()]],
  );
  const changed: Field[] = [];
  for (const field of rows) {
    // Another change made it no select, or the field is gone: the write runs again on fresh metadata.
    if (field.type !== table.fieldsById.get(field.id)?.type) throw new StaleTableMeta();
    const template = withAddedOptions(field.template, newOptions.get(field.id) ?? []);
    const options = (template as FieldTemplate<'single_select'>).options;
    if (options.length === (field.template as FieldTemplate<'single_select'>).options.length) continue;
    if (options.length > MAX_SELECT_OPTIONS) {
      throw invalid(
        null,
        `field ${JSON.stringify(field.name)} would have more than ${MAX_SELECT_OPTIONS} options`,
      );
    }
    await client.query('UPDATE fields SET template = $2::jsonb, updated_at = now() WHERE id = $1', [
      field.id,
      JSON.stringify(template),
    ]);
    changed.push({
      id: field.id,
      name: field.name,
      type: field.type,
      template: template as Record<string, unknown>,
    });
  }
  if (rows.length < newOptions.size) throw new StaleTableMeta();
  if (changed.length === 0) return current;
  await client.query('UPDATE tables SET updated_at = now() WHERE id = $1', [table.id]);
  await client.query(notifySchemaChange);
  for (const field of changed) {
    await events.field(table.databaseId, table.id, 'field.updated', field);
  }
  return current;
}
