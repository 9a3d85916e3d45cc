import { type FieldTemplate, groupOfField } from '@recordbase/contracts/fields';
import type { Filter } from '@recordbase/contracts/records';
import type { TableMeta } from './table-meta';

/**
 * `search` on a list, as a filter: the records where any text, email, url or phone field, or
 * the name of a selected option, holds the text, case aside. Being a filter, it is served like
 * one: the same SQL, indexes (trigram, built for the fields it reads), exact total, cursor
 * binding and in-memory oracle.
 */
export function searchFilter(table: TableMeta, text: string): Filter {
  const wanted = text.toLowerCase();
  const conditions: Filter[] = [];
  for (const field of table.fields) {
    if (groupOfField(field) === 'text') {
      conditions.push({ field: field.id, contains: text });
    } else if (field.type === 'single_select' || field.type === 'multiple_select') {
      // A select holds option names: those that hold the text, any of them selected (equality on
      // the option, which an index on the select serves, not a pattern over every row).
      const options = (field.template as FieldTemplate<'single_select'>).options ?? [];
      const names = options
        .map((option) => option.name)
        .filter((name) => name.toLowerCase().includes(wanted));
      if (names.length > 0) conditions.push({ field: field.id, in: names });
    }
  }
  // No field to search in: an empty group, which matches nothing.
  return { or: conditions };
}
