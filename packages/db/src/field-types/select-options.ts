import type { FieldTemplate } from '@recordbase/contracts/fields';
import { didYouMean } from './suggest';

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

const LISTED_OPTIONS = 20;

/**
 * `unknown option "Wonn" (did you mean "Won"?); the options are "Lead", "Won"`: what a written
 * name that is no option is refused with, the first twenty options listed.
 */
export function unknownOption(given: string, template: { options?: readonly { name: string }[] }): string {
  const names = (template.options ?? []).map((option) => option.name);
  const listed = names
    .slice(0, LISTED_OPTIONS)
    .map((name) => JSON.stringify(name))
    .join(', ');
  const more = names.length > LISTED_OPTIONS ? ` and ${names.length - LISTED_OPTIONS} more` : '';
  const choices = names.length === 0 ? 'the field has no options yet' : `the options are ${listed}${more}`;
  return `unknown option ${JSON.stringify(given)}${didYouMean(given, names)}; ${choices}`;
}

/**
 * A select's options as an update sends them, each sent by name alone keeping the colour its
 * namesake has in the current template: re-sending the options by name (to reorder, add or remove
 * some) loses no colours. A colour sent wins; options have no ids, so the name is what matches.
 */
export function keepOptionColours(sent: unknown, current: unknown): unknown {
  const options = (sent as { options?: unknown } | null)?.options;
  const before = (current as { options?: unknown } | null)?.options;
  if (!Array.isArray(options) || !Array.isArray(before)) return sent;
  const colours = new Map<string, string>();
  for (const option of before as { name?: unknown; color?: unknown }[]) {
    if (typeof option?.name === 'string' && typeof option.color === 'string') {
      colours.set(option.name, option.color);
    }
  }
  if (colours.size === 0) return sent;
  return {
    ...(sent as object),
    options: (options as { name: string; color?: string }[]).map((option) => {
      const color = option.color === undefined ? colours.get(option.name) : undefined;
      return color === undefined ? option : { ...option, color };
    }),
  };
}
