import type { FieldTemplate } from '@recordbase/contracts/fields';

/**
 * The option names of a select's template as a set, made once per template object (table
 * metadata is cached, so its templates live across requests): a bulk write checks every value
 * against them, and a template holds up to 1,000 options.
 */
const namesByTemplate = new WeakMap<object, ReadonlySet<string>>();

export function optionNames(
  template: FieldTemplate<'single_select' | 'multiple_select'>,
): ReadonlySet<string> {
  let names = namesByTemplate.get(template);
  if (!names) {
    names = new Set(template.options.map((option) => option.name));
    namesByTemplate.set(template, names);
  }
  return names;
}
