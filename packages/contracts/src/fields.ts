import { z } from 'zod';
import { identifierSchema, nameSchema, tableRefSchema } from './common';

export const fieldTypes = [
  'single_line_text',
  'long_text',
  'email',
  'url',
  'phone_number',
  'number',
  'currency',
  'percent',
  'rating',
  'duration',
  'date',
  'datetime',
  'single_select',
  'multiple_select',
  'checkbox',
  'attachments',
  'linked_record',
] as const;
export const fieldTypeSchema = z.enum(fieldTypes);
export type FieldType = z.infer<typeof fieldTypeSchema>;

/** The type groups of the specification's filter rules (section 2.2). */
export const fieldTypeGroups = {
  text: ['single_line_text', 'long_text', 'email', 'url', 'phone_number'],
  number: ['number', 'currency', 'percent', 'rating', 'duration'],
  date: ['date', 'datetime'],
  selection: ['single_select', 'multiple_select'],
  checkbox: ['checkbox'],
  attachments: ['attachments'],
  linkedRecord: ['linked_record'],
} as const satisfies Record<string, readonly FieldType[]>;
export type FieldTypeGroup = keyof typeof fieldTypeGroups;

export function groupOfFieldType(type: FieldType): FieldTypeGroup {
  for (const [group, types] of Object.entries(fieldTypeGroups) as [FieldTypeGroup, readonly FieldType[]][]) {
    if (types.includes(type)) return group;
  }
  throw new Error(`field type ${type} belongs to no group`);
}

export const MAX_SELECT_OPTIONS = 1000;
export const MAX_COLOR_LENGTH = 32;
export const MAX_CURRENCY_SYMBOL_LENGTH = 8;

const selectOptionSchema = z.strictObject({
  name: nameSchema,
  color: identifierSchema(MAX_COLOR_LENGTH).optional(),
});

const selectTemplateSchema = z.strictObject({
  options: z
    .array(selectOptionSchema)
    .max(MAX_SELECT_OPTIONS)
    .refine((options) => new Set(options.map((o) => o.name)).size === options.length, {
      error: 'option names must be unique',
    })
    .default([]),
});

const decimalPlacesSchema = z.int().min(0).max(10);

/** Templates by field type. Absent templates take these defaults; unknown keys are refused. */
export const templateSchemaByType = {
  single_line_text: z.strictObject({}),
  long_text: z.strictObject({}),
  email: z.strictObject({}),
  url: z.strictObject({}),
  phone_number: z.strictObject({}),
  number: z.strictObject({ decimalPlaces: decimalPlacesSchema.default(0) }),
  currency: z.strictObject({
    decimalPlaces: decimalPlacesSchema.default(2),
    currencySymbol: identifierSchema(MAX_CURRENCY_SYMBOL_LENGTH)
      .min(1, { error: 'must not be empty' })
      .default('$'),
  }),
  percent: z.strictObject({ decimalPlaces: decimalPlacesSchema.default(0) }),
  rating: z.strictObject({ max: z.int().min(1).max(10).default(5) }),
  duration: z.strictObject({}),
  date: z.strictObject({}),
  datetime: z.strictObject({}),
  single_select: selectTemplateSchema,
  multiple_select: selectTemplateSchema,
  checkbox: z.strictObject({}),
  attachments: z.strictObject({}),
  linked_record: z.strictObject({
    /** Id or name of a table of the same database; stored as the id. */
    tableId: tableRefSchema,
  }),
} as const satisfies Record<FieldType, z.ZodType>;

export type FieldTemplate<T extends FieldType = FieldType> = z.output<(typeof templateSchemaByType)[T]>;
export type SelectOption = z.output<typeof selectOptionSchema>;

/** Names that would be ambiguous with the system fields usable in sorts and filters. */
export const systemFieldNames = ['id', 'createdAt', 'updatedAt'] as const;
export type SystemFieldName = (typeof systemFieldNames)[number];

/**
 * A key that JavaScript objects treat as their prototype: a field of that name would vanish from
 * any object keyed by field name (zod records, spreads), so no field may have it.
 */
export const PROTOTYPE_KEY = '__proto__';

export const fieldNameSchema = nameSchema
  .refine((name) => !systemFieldNames.some((system) => system.toLowerCase() === name.toLowerCase()), {
    error: `must not be one of the system field names (${systemFieldNames.join(', ')})`,
  })
  .refine((name) => name !== PROTOTYPE_KEY, { error: `must not be ${PROTOTYPE_KEY}` });

/** Input for a new field. The template is checked against the type once the type is known. */
export const fieldInputSchema = z.strictObject({
  name: fieldNameSchema,
  type: fieldTypeSchema,
  template: z.record(z.string(), z.unknown()).optional(),
});
export type FieldInput = z.infer<typeof fieldInputSchema>;

export const createFieldRequestSchema = fieldInputSchema;

export const updateFieldRequestSchema = z
  .strictObject({
    name: fieldNameSchema.optional(),
    type: fieldTypeSchema.optional(),
    template: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((body) => body.name !== undefined || body.type !== undefined || body.template !== undefined, {
    error: 'must change at least one of name, type or template',
  });
export type UpdateFieldRequest = z.infer<typeof updateFieldRequestSchema>;

export const fieldSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: fieldTypeSchema,
  template: z.record(z.string(), z.unknown()),
});
export type Field = z.infer<typeof fieldSchema>;

/**
 * Validates a template for a type, filling defaults. Returns the issues as readable strings
 * rather than throwing, so callers can name the field the template belongs to.
 */
export function parseTemplate<T extends FieldType>(
  type: T,
  template: unknown,
): { ok: true; template: FieldTemplate<T> } | { ok: false; problems: string[] } {
  const result = templateSchemaByType[type].safeParse(template ?? {});
  if (result.success) return { ok: true, template: result.data as FieldTemplate<T> };
  return {
    ok: false,
    problems: result.error.issues.map((issue) => {
      const where = issue.path.length > 0 ? `template.${issue.path.join('.')}` : 'template';
      return `${where}: ${issue.message}`;
    }),
  };
}

/**
 * Value patterns for the validated text types. Written in the common subset of JavaScript and
 * PostgreSQL regular expressions, because type conversions check existing values in SQL (`~*`).
 *
 * Each is unambiguous, so a backtracking engine runs it in linear time: no two quantifiers can
 * hand the same character back and forth (test/linear-patterns.test.ts proves it with recheck).
 * - email: the local part stops at the first `@`; the domain's first character is taken alone,
 *   then non-dots up to the first dot after it, so that dot is the only one the pattern can pick.
 *   Same meaning as `[^\s@]+\.[^\s@]+` (a dot with something either side), which backtracked
 *   quadratically over `a.a.a.a…`.
 * - url: scheme, then a host without `/?#`, then anything without whitespace: already unambiguous.
 * - phone_number: the spaces before an extension are part of the 3 to 40 number characters
 *   rather than a separate `[ ]*` that competed with them, and at most 10 spaces may follow the
 *   extension mark, so every repetition is bounded. Only absurd values change class: more than
 *   40 characters of number and spaces before the extension, or more than 10 spaces after it.
 */
export const textValuePatterns = {
  email: '^[^\\s@]+@[^\\s@][^\\s@.]*[.][^\\s@]+$',
  url: '^https?://[^\\s/?#]+([/?#][^\\s]*)?$',
  phone_number: '^[+]?[0-9 ()./-]{3,40}((x|ext[.]?)[ ]{0,10}[0-9]{1,6})?$',
} as const;
