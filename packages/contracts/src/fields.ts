import { z } from 'zod';
import {
  boundedFormat,
  fieldReferenceSchema,
  identifierSchema,
  isoDateString,
  isoDateTimeString,
  MAX_UUID_LENGTH,
  nameSchema,
  tableRefSchema,
} from './common';
import {
  attachmentWriteValueSchema,
  MAX_ATTACHMENTS_PER_VALUE,
  MAX_LINKED_RECORDS_PER_VALUE,
  MAX_SELECT_OPTIONS,
  MAX_TEXT_LENGTH,
  optionNameValue,
  patternValue,
  textValue,
} from './field-values';

export { MAX_SELECT_OPTIONS, textValuePatterns } from './field-values';

export const MAX_COLOR_LENGTH = 32;
export const MAX_CURRENCY_SYMBOL_LENGTH = 8;

/** The type groups filter rules are given by, in this order. */
export const fieldTypeGroupNames = [
  'text',
  'number',
  'date',
  'selection',
  'checkbox',
  'attachments',
  'linkedRecord',
] as const;
export type FieldTypeGroup = (typeof fieldTypeGroupNames)[number];

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
const noTemplate = z.strictObject({});
const numberValue = (error: string) => z.number({ error }).nullable();
const recordIdValue = boundedFormat(
  MAX_UUID_LENGTH,
  'must be a record id (UUID)',
  z.uuid({ error: 'must be a record id (UUID)' }),
);

/**
 * What a computed field's value is, as its Field object's `resultType` says: the filter group and
 * sorts follow it (`array` reads as a multiple_select), and so does how a formula reads it.
 */
export const computedResultTypes = ['text', 'number', 'checkbox', 'date', 'datetime', 'array'] as const;
export type ComputedResultType = (typeof computedResultTypes)[number];
export const computedResultTypeSchema = z.enum(computedResultTypes);

const groupOfResultType = {
  text: 'text',
  number: 'number',
  checkbox: 'checkbox',
  date: 'date',
  datetime: 'date',
  array: 'selection',
} as const satisfies Record<ComputedResultType, FieldTypeGroup>;

/** Computed fields are never written: a record body naming one is refused before this is asked. */
const notWritten = z.never({ error: 'is computed and cannot be written' });

/** The most fields a last_modified_time field watches by name. */
export const MAX_WATCHED_FIELDS = 500;

/** The longest formula read: far past any real one, short of what a tree that long would cost. */
export const MAX_FORMULA_LENGTH = 10_000;

/**
 * A formula's template as a client writes it: its expression, fields by name or id. The service
 * keeps it with fields by id and returns it with their current names.
 */
const formulaTemplateSchema = z.strictObject({
  expression: z
    .string({ error: 'must be a formula, such as {Price} * {Quantity}' })
    .min(1, { error: 'must not be empty' })
    .max(MAX_FORMULA_LENGTH, { error: `must be at most ${MAX_FORMULA_LENGTH} characters` }),
});

/** What a rollup computes over the linked records' values (flattened when they are arrays). */
export const rollupFunctions = [
  'sum',
  'average',
  'min',
  'max',
  'count_non_empty',
  'count_unique',
  'array_join',
  'array_unique',
  'and',
  'or',
] as const;
export type RollupFunction = (typeof rollupFunctions)[number];

/** A link field of the same table, by id or name; stored as the id. */
const linkFieldIdSchema = fieldReferenceSchema;

/** A computed type's entry: its group is its result type's. */
function computed<R extends ComputedResultType, T extends z.ZodType>(resultType: R, template: T) {
  return {
    group: groupOfResultType[resultType],
    template,
    writeValue: notWritten,
    computed: { resultType },
  } as const;
}

/**
 * Every field type, once: its filter group, its template (absent templates take the defaults;
 * unknown keys are refused) and the shape of a written value. Template-dependent rules (rating
 * max, select options, linked table membership) need the field and are checked by the service.
 * `null` always means "empty" on write. The order is the order of `fieldTypes`.
 */
export const fieldTypeContracts = {
  single_line_text: {
    group: 'text',
    template: noTemplate,
    writeValue: textValue('must be a string', MAX_TEXT_LENGTH).nullable(),
  },
  long_text: {
    group: 'text',
    template: noTemplate,
    writeValue: textValue('must be a string', MAX_TEXT_LENGTH).nullable(),
  },
  email: {
    group: 'text',
    template: noTemplate,
    writeValue: patternValue('email', 'must be an email address', 254).nullable(),
  },
  url: {
    group: 'text',
    template: noTemplate,
    writeValue: patternValue(
      'url',
      'must be an http or https URL such as https://example.com',
      2048,
    ).nullable(),
  },
  phone_number: {
    group: 'text',
    template: noTemplate,
    writeValue: patternValue('phone_number', 'must be a phone number', 60).nullable(),
  },
  number: {
    group: 'number',
    template: z.strictObject({ decimalPlaces: decimalPlacesSchema.default(0) }),
    writeValue: numberValue('must be a number'),
  },
  currency: {
    group: 'number',
    template: z.strictObject({
      decimalPlaces: decimalPlacesSchema.default(2),
      currencySymbol: identifierSchema(MAX_CURRENCY_SYMBOL_LENGTH)
        .min(1, { error: 'must not be empty' })
        .default('$'),
    }),
    writeValue: numberValue('must be a number'),
  },
  /** A fraction: 0.5 is 50%. */
  percent: {
    group: 'number',
    template: z.strictObject({ decimalPlaces: decimalPlacesSchema.default(0) }),
    writeValue: numberValue('must be a number (a fraction: 0.5 is 50%)'),
  },
  rating: {
    group: 'number',
    template: z.strictObject({ max: z.int().min(1).max(10).default(5) }),
    writeValue: z.int({ error: 'must be an integer' }).min(0).max(10).nullable(),
  },
  /** Seconds. */
  duration: { group: 'number', template: noTemplate, writeValue: numberValue('must be a number of seconds') },
  date: {
    group: 'date',
    template: noTemplate,
    writeValue: isoDateString('must be a date as YYYY-MM-DD').nullable(),
  },
  datetime: {
    group: 'date',
    template: noTemplate,
    writeValue: isoDateTimeString(
      'must be an ISO 8601 date-time with a time zone, such as 2024-05-01T12:00:00Z',
    ).nullable(),
  },
  single_select: {
    group: 'selection',
    template: selectTemplateSchema,
    writeValue: optionNameValue().nullable(),
  },
  multiple_select: {
    group: 'selection',
    template: selectTemplateSchema,
    writeValue: z
      .array(optionNameValue(), { error: 'must be an array of option names' })
      .max(MAX_SELECT_OPTIONS)
      .nullable(),
  },
  checkbox: {
    group: 'checkbox',
    template: noTemplate,
    writeValue: z.boolean({ error: 'must be true or false' }).nullable(),
  },
  attachments: {
    group: 'attachments',
    template: noTemplate,
    writeValue: z
      .array(attachmentWriteValueSchema, { error: 'must be an array of attachments ({url})' })
      .max(MAX_ATTACHMENTS_PER_VALUE)
      .nullable(),
  },
  linked_record: {
    group: 'linkedRecord',
    template: z.strictObject({
      /** Id or name of a table of the same database; stored as the id. */
      tableId: tableRefSchema,
    }),
    writeValue: z
      .array(recordIdValue, { error: 'must be an array of record ids' })
      .max(MAX_LINKED_RECORDS_PER_VALUE)
      .nullable(),
  },
  /** 1, 2, 3… in creation order, never reused. */
  autonumber: computed('number', noTemplate),
  /** The record's createdAt. */
  created_time: computed('datetime', noTemplate),
  /** When a write last changed a watched field (its creation before that). */
  last_modified_time: computed(
    'datetime',
    z.strictObject({
      /** Fields by id or name, stored by id; left out: every field written. */
      fieldIds: z
        .array(fieldReferenceSchema)
        .min(1, { error: 'must name at least one field (leave it out to watch every field)' })
        .max(MAX_WATCHED_FIELDS)
        .optional(),
    }),
  ),
  /** `{id, name}` of the API key that created the record; filters and sorts read the name. */
  created_by: computed('text', noTemplate),
  /** `{id, name}` of the API key that last wrote to the record. */
  last_modified_by: computed('text', noTemplate),
  /**
   * Its expression's value. Its result type, and with it its group, is each field's own (its
   * expression's, resultTypeOfField); `text` here only stands for it where a type alone is asked.
   */
  formula: computed('text', formulaTemplateSchema),
  /** How many records the link field holds. */
  count: computed('number', z.strictObject({ linkFieldId: linkFieldIdSchema })),
  /** The linked records' values of `fieldId` (a field of the linked table), in link order. */
  lookup: computed(
    'array',
    z.strictObject({ linkFieldId: linkFieldIdSchema, fieldId: fieldReferenceSchema }),
  ),
  /** `function` over the linked records' values of `fieldId`; its result type is the function's. */
  rollup: computed(
    'number',
    z.strictObject({
      linkFieldId: linkFieldIdSchema,
      fieldId: fieldReferenceSchema,
      function: z.enum(rollupFunctions, { error: `must be one of ${rollupFunctions.join(', ')}` }),
    }),
  ),
} as const satisfies Record<
  string,
  {
    group: FieldTypeGroup;
    template: z.ZodType;
    writeValue: z.ZodType;
    computed?: { resultType: ComputedResultType };
  }
>;

type Contracts = typeof fieldTypeContracts;
export type FieldType = keyof Contracts;

export const fieldTypes = Object.keys(fieldTypeContracts) as [FieldType, ...FieldType[]];
export const fieldTypeSchema = z.enum(fieldTypes);

const projectContracts = <Key extends 'template' | 'writeValue'>(key: Key) =>
  Object.fromEntries(fieldTypes.map((type) => [type, fieldTypeContracts[type][key]])) as {
    [Type in FieldType]: Contracts[Type][Key];
  };

/** Templates by field type. */
export const templateSchemaByType = projectContracts('template');

/** The shape of a written value by field type. */
export const recordValueWriteSchemaByType = projectContracts('writeValue');

/** The types of each group, in the order of `fieldTypes`. */
export const fieldTypeGroups: Readonly<Record<FieldTypeGroup, readonly FieldType[]>> = (() => {
  const byGroup = {} as Record<FieldTypeGroup, FieldType[]>;
  for (const group of fieldTypeGroupNames) {
    byGroup[group] = fieldTypes.filter((type) => fieldTypeContracts[type].group === group);
  }
  return byGroup;
})();

export function groupOfFieldType(type: FieldType): FieldTypeGroup {
  return fieldTypeContracts[type].group;
}

/** Whether the service computes the type's values: read everywhere, never written. */
export function isComputedFieldType(type: FieldType): boolean {
  return 'computed' in fieldTypeContracts[type];
}

/** The computed types, in the order of `fieldTypes`. */
export const computedFieldTypes: readonly FieldType[] = fieldTypes.filter(isComputedFieldType);

/** A computed type's result type; undefined for a type whose values are written. */
export function resultTypeOfFieldType(type: FieldType): ComputedResultType | undefined {
  const contract = fieldTypeContracts[type];
  return 'computed' in contract ? contract.computed.resultType : undefined;
}

/** A field as its result type and group are decided from: a formula's by its template. */
export interface TypedField {
  type: FieldType;
  template?: unknown;
}

/**
 * A computed field's result type: a formula's is its expression's and a rollup's its function's
 * (kept in their templates by the service), the other computed types' their type's; undefined for
 * a written field.
 */
export function resultTypeOfField(field: TypedField): ComputedResultType | undefined {
  if (field.type === 'formula' || field.type === 'rollup') {
    const kept = (field.template as { resultType?: unknown } | undefined)?.resultType;
    return computedResultTypeSchema.safeParse(kept).data ?? 'text';
  }
  return resultTypeOfFieldType(field.type);
}

/** The group a field's filters and sorts follow: a formula's is its result type's. */
export function groupOfField(field: TypedField): FieldTypeGroup {
  return field.type === 'formula' || field.type === 'rollup'
    ? groupOfResultType[resultTypeOfField(field)!]
    : groupOfFieldType(field.type);
}

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
  template: z
    .record(z.string(), z.unknown())
    .meta({ description: "The field's settings, defaults filled in; their shape depends on the type." }),
  resultType: computedResultTypeSchema.optional().meta({
    description:
      "A computed field's kind of value, which its filters and sorts follow (created_by and last_modified_by: text, the key's name); absent on written fields.",
  }),
});
export type Field = z.infer<typeof fieldSchema>;

/** A problem of a template: its place from the field (`['template', 'options', '0', 'name']`). */
export interface TemplateProblem {
  path: string[];
  message: string;
}

/**
 * Validates a template for a type, filling defaults. Returns the problems with their places rather
 * than throwing, so callers can name the field the template belongs to.
 */
export function checkTemplate<T extends FieldType>(
  type: T,
  template: unknown,
): { ok: true; template: FieldTemplate<T> } | { ok: false; problems: TemplateProblem[] } {
  const result = templateSchemaByType[type].safeParse(template ?? {});
  if (result.success) return { ok: true, template: result.data as FieldTemplate<T> };
  return {
    ok: false,
    problems: result.error.issues.map((issue) => ({
      path: ['template', ...issue.path.map(String)],
      message: issue.message,
    })),
  };
}

/** checkTemplate, each problem worded `template.options.0.name: …`. */
export function parseTemplate<T extends FieldType>(
  type: T,
  template: unknown,
): { ok: true; template: FieldTemplate<T> } | { ok: false; problems: string[] } {
  const checked = checkTemplate(type, template);
  if (checked.ok) return checked;
  return {
    ok: false,
    problems: checked.problems.map((problem) => `${problem.path.join('.')}: ${problem.message}`),
  };
}
