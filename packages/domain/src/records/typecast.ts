import { nameSchema } from '@recordbase/contracts/common';
import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import { type FieldTemplate, MAX_SELECT_OPTIONS, type SelectOption } from '@recordbase/contracts/fields';
import type { RecordValuesInput } from '@recordbase/contracts/records';
import { optionNames, typecastValue } from '@recordbase/db/field-types';
import { buildTableMeta, type FieldMeta, findField, type TableMeta } from './table-meta';

/**
 * `typecast: true` on a write (as Airtable's): each value converted to what its field takes
 * (typecastValue), and a select's option names the field lacks collected, to be added to the
 * field in the write's own transaction (select-option-additions.ts). The converted records are
 * then checked as any written record is, against the table with those options already added.
 */
export interface Typecast {
  inputs: RecordValuesInput[];
  /** `table` with the added options in its selects' templates; `table` itself when none. */
  table: TableMeta;
  /** Option names to add, by field id, in the order the records name them. */
  newOptions: ReadonlyMap<string, readonly string[]>;
}

const isSelect = (field: FieldMeta) => field.type === 'single_select' || field.type === 'multiple_select';

function namesIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
}

export function typecastRecords(
  table: TableMeta,
  inputs: readonly RecordValuesInput[],
  where: (index: number) => InputPath,
): Typecast {
  const newOptions = new Map<string, string[]>();
  const converted = inputs.map((input, index) => {
    // Entries, not assignments: a key such as "__proto__" stays a key, for the usual check to refuse.
    const entries: [string, unknown][] = [];
    for (const [key, raw] of Object.entries(input)) {
      const field = findField(table, key);
      // A key that is no field is left for the usual check to refuse, with the nearest names.
      const value = field ? typecastValue(field.type, raw) : raw;
      entries.push([key, value]);
      if (!field || !isSelect(field)) continue;
      const known = optionNames(field.template as FieldTemplate<'single_select'>);
      for (const name of namesIn(value)) {
        if (known.has(name)) continue;
        const valid = nameSchema.safeParse(name);
        if (!valid.success || valid.data !== name) {
          const reason = valid.success ? 'it begins or ends with spaces' : valid.error.issues[0]?.message;
          throw invalid(
            [...where(index), key],
            `${JSON.stringify(name)} cannot be an option name: ${reason}`,
          );
        }
        const names = newOptions.get(field.id) ?? [];
        if (!names.includes(name)) names.push(name);
        newOptions.set(field.id, names);
        if (
          (field.template as FieldTemplate<'single_select'>).options.length + names.length >
          MAX_SELECT_OPTIONS
        ) {
          throw invalid(
            [...where(index), key],
            `adding option ${JSON.stringify(name)} would give the field more than ${MAX_SELECT_OPTIONS} options`,
          );
        }
      }
    }
    return Object.fromEntries(entries) as RecordValuesInput;
  });
  if (newOptions.size === 0) return { inputs: converted, table, newOptions };
  const withOptions = buildTableMeta({
    ...table,
    fields: table.fields.map((field) => {
      const names = newOptions.get(field.id);
      return names ? { ...field, template: withAddedOptions(field.template, names) } : field;
    }),
  });
  return { inputs: converted, table: withOptions, newOptions };
}

/** The template with the options of `names` it lacks added at the end, colourless. */
export function withAddedOptions(template: FieldTemplate, names: readonly string[]): FieldTemplate {
  const options = (template as { options?: SelectOption[] }).options ?? [];
  const known = new Set(options.map((option) => option.name));
  const added = names.filter((name) => !known.has(name)).map((name) => ({ name }));
  return { ...template, options: [...options, ...added] } as FieldTemplate;
}
