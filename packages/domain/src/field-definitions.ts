import { DomainError, type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import {
  checkTemplate,
  type FieldInput,
  type FieldTemplate,
  type FieldType,
  isComputedFieldType,
} from '@recordbase/contracts/fields';
import { newFieldId, type Tx } from '@recordbase/db';
import { fieldTypeModule } from '@recordbase/db/field-types';
import type { PhysicalField } from '@recordbase/db/physical';
import { findTableByRef, nameKey } from './access';

export interface FieldDefinition {
  id: string;
  name: string;
  nameKey: string;
  type: FieldType;
  template: FieldTemplate;
}

/** Some types cannot serve as a table's primary field, which names each record (their module says). */
export function assertPrimaryCapable(type: FieldType, where: InputPath): void {
  if (fieldTypeModule(type).primary === false) {
    throw invalid(where, `a ${type} field cannot be the primary field`);
  }
}

export function validTemplate<T extends FieldType>(
  type: T,
  template: unknown,
  where: InputPath,
): FieldTemplate<T> {
  const checked = checkTemplate(type, template);
  if (!checked.ok) {
    throw new DomainError(
      'invalid',
      checked.problems.map((problem) => ({ path: [...where, ...problem.path], message: problem.message })),
    );
  }
  return checked.template;
}

/**
 * Resolves a linked_record template's table (id or name) to an id of the same database.
 * `pending` holds tables created in the same request, which are not yet readable by name.
 */
async function resolveLinkedTable(
  tx: Tx,
  databaseId: string,
  ref: string,
  where: InputPath,
  pending: ReadonlyMap<string, string> = new Map(),
): Promise<string> {
  const pendingId = pending.get(ref) ?? pending.get(nameKey(ref));
  if (pendingId) return pendingId;
  try {
    return (await findTableByRef(tx, databaseId, ref)).id;
  } catch {
    throw invalid([...where, 'template', 'tableId'], `no table ${JSON.stringify(ref)} in this database`);
  }
}

export async function defineField(
  tx: Tx,
  databaseId: string,
  input: FieldInput,
  where: InputPath,
  pendingTables?: ReadonlyMap<string, string>,
): Promise<FieldDefinition> {
  const template = validTemplate(input.type, input.template, where);
  if (input.type === 'linked_record') {
    const linked = template as FieldTemplate<'linked_record'>;
    linked.tableId = await resolveLinkedTable(tx, databaseId, linked.tableId, where, pendingTables);
  }
  return { id: newFieldId(), name: input.name, nameKey: nameKey(input.name), type: input.type, template };
}

/** A field of the same table, as templates name them. */
export interface SiblingField {
  id: string;
  name: string;
  type: string;
}

/**
 * A template that names fields of its own table (last_modified_time's fieldIds: by id or name on
 * input) naming them by id, each once; a name that is no field of the table, or a computed field
 * (which no write changes), is refused at its place.
 */
export function resolveTemplateFields(
  type: FieldType,
  template: FieldTemplate,
  siblings: readonly SiblingField[],
  where: InputPath,
): FieldTemplate {
  if (type !== 'last_modified_time') return template;
  const { fieldIds } = template as FieldTemplate<'last_modified_time'>;
  if (fieldIds === undefined) return template;
  const ids = fieldIds.map((ref, index) => {
    const place = [...where, 'template', 'fieldIds', index];
    const field =
      siblings.find((sibling) => sibling.id === ref) ??
      siblings.find((sibling) => nameKey(sibling.name) === nameKey(ref));
    if (!field) throw invalid(place, `no field ${JSON.stringify(ref)} in this table`);
    if (isComputedFieldType(field.type as FieldType)) {
      throw invalid(
        place,
        `field ${JSON.stringify(field.name)} is computed, and no write changes it: a last_modified_time field watches written fields`,
      );
    }
    return field.id;
  });
  return { fieldIds: [...new Set(ids)] };
}

/** The last_modified_time fields among `fields` that watch the field `fieldId` by name. */
export function watchersOf(fields: readonly (SiblingField & { template: unknown })[], fieldId: string) {
  return fields.filter(
    (field) =>
      field.type === 'last_modified_time' &&
      (field.template as FieldTemplate<'last_modified_time'>).fieldIds?.includes(fieldId),
  );
}

export function assertUniqueNames(inputs: readonly { name: string }[], where: InputPath): void {
  const seen = new Set<string>();
  inputs.forEach((input, index) => {
    const key = nameKey(input.name);
    if (seen.has(key))
      throw invalid([...where, index, 'name'], `duplicate field name ${JSON.stringify(input.name)}`);
    seen.add(key);
  });
}

export function toPhysicalField(field: {
  id: string;
  name: string;
  type: string;
  template: unknown;
}): PhysicalField {
  const type = field.type as FieldType;
  const linkedTableId =
    type === 'linked_record' ? (field.template as FieldTemplate<'linked_record'>).tableId : undefined;
  return {
    id: field.id,
    name: field.name,
    type,
    template: field.template,
    ...(linkedTableId ? { linkedTableId } : {}),
  };
}
