import { MAX_NAME_LENGTH } from '@recordbase/contracts/common';
import {
  type FieldType,
  fieldNameSchema,
  PROTOTYPE_KEY,
  systemFieldNames,
} from '@recordbase/contracts/fields';
import { fieldTypeModule } from '@recordbase/db/field-types';

/**
 * The columns of an imported file: for a new table, field names from the header (blank ones
 * named, repeats numbered, control characters dropped, names the field API refuses avoided); for
 * an existing table, which field each column fills, matched by name without regard to case. Header
 * text only ever keys a Map or a Set here, never a plain object.
 */

const CONTROL_CHARACTERS = /\p{Cc}+/gu;
const nameKey = (name: string) => name.toLowerCase();
const reserved = new Set(systemFieldNames.map(nameKey));

export function newFieldNames(header: readonly string[] | null, width: number): string[] {
  const taken = new Set<string>();
  const names: string[] = [];
  for (let index = 0; index < width; index += 1) {
    const given = clip(
      (header?.[index] ?? '').replace(CONTROL_CHARACTERS, ' ').trim(),
      MAX_NAME_LENGTH,
    ).trim();
    let name = given.length > 0 ? given : `Column ${index + 1}`;
    // The names POST …/fields refuses get a suffix: the system fields' (any case), and __proto__,
    // which objects keyed by field name (record bodies, zod records, spreads) take for their prototype.
    if (reserved.has(nameKey(name)) || name === PROTOTYPE_KEY) name = `${name} (imported)`;
    // Anything else it refuses (a lone surrogate from an _xD800_ escape) is no name to keep.
    if (!fieldNameSchema.safeParse(name).success) name = `Column ${index + 1}`;
    names.push(unique(name, taken));
  }
  return names;
}

/** The first `length` characters of `text`, without cutting a surrogate pair in two. */
function clip(text: string, length: number): string {
  if (text.length <= length) return text;
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

/** `name`, or `name (2)`, `name (3)`… when taken; marks the result taken. */
export function unique(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let count = 2; taken.has(nameKey(candidate)); count += 1) {
    const suffix = ` (${count})`;
    candidate = `${clip(name, MAX_NAME_LENGTH - suffix.length)}${suffix}`;
  }
  taken.add(nameKey(candidate));
  return candidate;
}

export interface TargetField {
  id: string;
  name: string;
  type: FieldType;
  template: unknown;
}

export interface ColumnMatch {
  /** For each column of the file, the field it fills, or null. */
  fields: (TargetField | null)[];
  /** Columns no field takes: no field of that name, or one an import cannot fill (links, attachments). */
  skipped: string[];
}

/** By header name; without a header, the file's columns fill the fields in their order. */
export function matchColumns(
  header: readonly string[] | null,
  width: number,
  fields: readonly TargetField[],
): ColumnMatch {
  const importable = fields.filter((field) => fieldTypeModule(field.type).fromText !== undefined);
  const byName = new Map(importable.map((field) => [nameKey(field.name), field]));
  const used = new Set<string>();
  const matched: (TargetField | null)[] = [];
  const skipped: string[] = [];
  for (let index = 0; index < width; index += 1) {
    const label = header ? (header[index] ?? '').trim() : `Column ${index + 1}`;
    const field = header ? byName.get(nameKey(label)) : importable[index];
    if (field && !used.has(field.id)) {
      used.add(field.id);
      matched.push(field);
    } else {
      matched.push(null);
      skipped.push(label.length > 0 ? label : `Column ${index + 1}`);
    }
  }
  return { fields: matched, skipped };
}
