import { type FieldType, fieldTypeContracts, isComputedFieldType } from '@recordbase/contracts/fields';
import { fieldTypeModule } from './registry';

/**
 * `typecast: true` on a write: a value given as text is read the way an import reads a cell (the
 * type's `fromText`: "42" a number, "yes" a checkbox, "a, b" a list of options), and a number or
 * true/false given to a text or select field becomes its text. What cannot be read is left as given, so the
 * write schema refuses it with its usual words; so is any value of a computed field.
 */
export function typecastValue(type: FieldType, given: unknown): unknown {
  // Left as given, for the write's one refusal of computed fields to name.
  if (isComputedFieldType(type)) return given;
  const group = fieldTypeContracts[type].group;
  const value =
    (typeof given === 'number' || typeof given === 'boolean') && (group === 'text' || group === 'selection')
      ? String(given)
      : given;
  if (typeof value === 'string') {
    const module = fieldTypeModule(type);
    if (!module.fromText) return value;
    if (value.trim() === '') return group === 'text' ? value : null;
    return module.fromText(value) ?? value;
  }
  // Option names given as a list are trimmed as a single select's are, empty ones dropped (a name
  // may hold a comma, so the list is not read as text).
  if (type === 'multiple_select' && Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    return value.map((name) => name.trim()).filter((name) => name !== '');
  }
  return value;
}
