import { z } from 'zod';
import {
  boundedFormat,
  boundedString,
  FIELD_ID_PATTERN,
  isoDateString,
  isoDateTimeSchema,
  isoDateTimeString,
  isPlainObject,
  MAX_NAME_LENGTH,
  MAX_UUID_LENGTH,
  recordError,
  referenceSchema,
  textSchema,
  unionError,
  uuidSchema,
  withPrecheck,
} from './common';
import {
  type FieldType,
  type FieldTypeGroup,
  fieldTypeGroups,
  groupOfFieldType,
  MAX_SELECT_OPTIONS,
  PROTOTYPE_KEY,
  textValuePatterns,
} from './fields';
import { MAX_FIELDS_PER_TABLE } from './schema';

// ---------------------------------------------------------------------------------------------
// Record values
// ---------------------------------------------------------------------------------------------

/** An attachment as stored and returned; the same shape the attachment upload answers with. */
export const attachmentValueSchema = z.object({
  url: z.string(),
  fileName: z.string(),
  size: z.int().min(0),
  mimeType: z.string(),
  /**
   * In answers only, for files uploaded through /fileupload: `url` with a short-lived token that
   * opens the file without an API key (FILE_LINK_TTL_SECONDS), bound to the key that read it.
   */
  signedUrl: z.string().optional(),
});
export type AttachmentValue = z.infer<typeof attachmentValueSchema>;

/**
 * An attachment as written. `{url}` suffices when the url came from `/fileupload`; the service
 * takes name, size and type from its own upload record, so the optional keys are only tolerated
 * (a client may write back what it read).
 */
export const attachmentWriteValueSchema = z.strictObject({
  url: textSchema(2048).min(1, { error: 'must not be empty' }),
  fileName: textSchema(MAX_NAME_LENGTH).optional(),
  size: z.int().min(0).optional(),
  mimeType: textSchema(255).optional(),
  /** Tolerated and ignored: a link is made afresh for each answer. */
  signedUrl: textSchema(4096).optional(),
});
export type AttachmentWriteValue = z.infer<typeof attachmentWriteValueSchema>;

export const MAX_TEXT_LENGTH = 100_000;
export const MAX_ATTACHMENTS_PER_VALUE = 100;
export const MAX_LINKED_RECORDS_PER_VALUE = 1000;

/** Text of a record value: bounded first, no NUL (PostgreSQL text cannot hold it). */
const textValue = (error: string, max: number) => textSchema(max, { type: error });

/**
 * The same patterns validate values on write and on field type conversion (in SQL). The pattern
 * runs only on a value within `max` characters without NUL: the checks before it abort.
 */
const patternValue = (type: keyof typeof textValuePatterns, error: string, max: number) =>
  textValue(error, max).regex(new RegExp(textValuePatterns[type], 'i'), { error });

const optionNameValue = () => textValue('must be an option name', MAX_NAME_LENGTH).min(1);

/**
 * The shape of a written value by field type. Template-dependent rules (rating max, select
 * options, linked table membership) need the field and are checked by the service. `null`
 * always means "empty" on write.
 */
export const recordValueWriteSchemaByType = {
  single_line_text: textValue('must be a string', MAX_TEXT_LENGTH).nullable(),
  long_text: textValue('must be a string', MAX_TEXT_LENGTH).nullable(),
  email: patternValue('email', 'must be an email address', 254).nullable(),
  url: patternValue('url', 'must be an http or https URL such as https://example.com', 2048).nullable(),
  phone_number: patternValue('phone_number', 'must be a phone number', 60).nullable(),
  number: z.number({ error: 'must be a number' }).nullable(),
  currency: z.number({ error: 'must be a number' }).nullable(),
  /** A fraction: 0.5 is 50%. */
  percent: z.number({ error: 'must be a number (a fraction: 0.5 is 50%)' }).nullable(),
  rating: z.int({ error: 'must be an integer' }).min(0).max(10).nullable(),
  /** Seconds. */
  duration: z.number({ error: 'must be a number of seconds' }).nullable(),
  date: isoDateString('must be a date as YYYY-MM-DD').nullable(),
  datetime: isoDateTimeString(
    'must be an ISO 8601 date-time with a time zone, such as 2024-05-01T12:00:00Z',
  ).nullable(),
  single_select: optionNameValue().nullable(),
  multiple_select: z
    .array(optionNameValue(), { error: 'must be an array of option names' })
    .max(MAX_SELECT_OPTIONS)
    .nullable(),
  checkbox: z.boolean({ error: 'must be true or false' }).nullable(),
  attachments: z
    .array(attachmentWriteValueSchema, { error: 'must be an array of attachments ({url})' })
    .max(MAX_ATTACHMENTS_PER_VALUE)
    .nullable(),
  linked_record: z
    .array(
      boundedFormat(
        MAX_UUID_LENGTH,
        'must be a record id (UUID)',
        z.uuid({ error: 'must be a record id (UUID)' }),
      ),
      { error: 'must be an array of record ids' },
    )
    .max(MAX_LINKED_RECORDS_PER_VALUE)
    .nullable(),
} as const satisfies Record<FieldType, z.ZodType>;

/** Any value a record returns. Empty is null, except checkbox (false) and the array types ([]). */
export const recordValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.string()),
  z.array(attachmentValueSchema),
]);
export type RecordValue = z.infer<typeof recordValueSchema>;

/** Keys of a record body other than the `id` the service ignores. */
function countFieldKeys(values: Record<string, unknown>): number {
  const keys = Object.keys(values).length;
  return Object.hasOwn(values, 'id') ? keys - 1 : keys;
}

/**
 * A record body names each field at most once and a table has at most MAX_FIELDS_PER_TABLE
 * fields, so a body with more keys cannot be valid. They are counted before any key or value is
 * looked at: 600,000 keys cost one count rather than 600,000 validations.
 */
function refuseTooManyFieldKeys(values: unknown, ctx: z.RefinementCtx<unknown>): void {
  if (!isPlainObject(values)) return;
  // JSON.parse makes `__proto__` an own key, which a zod record would turn into a prototype.
  if (Object.hasOwn(values, PROTOTYPE_KEY)) {
    ctx.addIssue({ code: 'custom', message: `unknown field "${PROTOTYPE_KEY}"; no field has that name` });
    return;
  }
  const count = countFieldKeys(values);
  if (count <= MAX_FIELDS_PER_TABLE) return;
  ctx.addIssue({
    code: 'custom',
    message: `a record sets at most ${MAX_FIELDS_PER_TABLE} fields (a table has no more); this one has ${count} keys`,
  });
}

/**
 * Field values of a record body, keyed by field name or field id. An `id` key is allowed and
 * dropped here: record ids are always generated by the service (specification 2.1 and 4.2).
 * Other unknown keys are for the service to refuse, as only it knows the table's fields.
 */
export const recordValuesInputSchema = withPrecheck(
  refuseTooManyFieldKeys,
  z
    .record(referenceSchema('field keys must not be empty'), z.unknown(), {
      error: recordError('must be an object of field values keyed by field name or field id'),
    })
    .transform(({ id: _ignoredId, ...values }) => values),
);
export type RecordValuesInput = z.output<typeof recordValuesInputSchema>;

// ---------------------------------------------------------------------------------------------
// Record
// ---------------------------------------------------------------------------------------------

export const recordIdSchema = uuidSchema;

export const recordSchema = z.object({
  id: recordIdSchema,
  /** Every field of the table, keyed by field id. */
  data: z.record(z.string(), recordValueSchema),
  /** The same values keyed by field name. */
  fields: z.record(z.string(), recordValueSchema),
  createdAt: isoDateTimeSchema,
  updatedAt: isoDateTimeSchema,
});
export type TableRecord = z.infer<typeof recordSchema>;

// ---------------------------------------------------------------------------------------------
// Filters (specification 2.4 and 4.1.2)
// ---------------------------------------------------------------------------------------------

export const filterOperators = [
  'equals',
  'does_not_equal',
  'contains',
  'does_not_contain',
  'starts_with',
  'ends_with',
  'is_empty',
  'is_not_empty',
  'in',
  'not_in',
  'greater_than',
  'greater_than_or_equal_to',
  'less_than',
  'less_than_or_equal_to',
] as const;
export const filterOperatorSchema = z.enum(filterOperators);
export type FilterOperator = z.infer<typeof filterOperatorSchema>;

/** Which field type groups each operator applies to (specification 4.1.2). */
export const fieldTypeGroupsByFilterOperator = {
  equals: ['text', 'number', 'date', 'selection', 'checkbox'],
  does_not_equal: ['text', 'number', 'date', 'selection', 'checkbox'],
  contains: ['text', 'selection', 'linkedRecord'],
  does_not_contain: ['text', 'selection', 'linkedRecord'],
  starts_with: ['text'],
  ends_with: ['text'],
  is_empty: ['text', 'number', 'date', 'selection', 'attachments', 'linkedRecord'],
  is_not_empty: ['text', 'number', 'date', 'selection', 'attachments', 'linkedRecord'],
  in: ['text', 'number', 'selection', 'linkedRecord'],
  not_in: ['text', 'number', 'selection', 'linkedRecord'],
  greater_than: ['number', 'date'],
  greater_than_or_equal_to: ['number', 'date'],
  less_than: ['number', 'date'],
  less_than_or_equal_to: ['number', 'date'],
} as const satisfies Record<FilterOperator, readonly FieldTypeGroup[]>;

/** The same table the other way round, in the order of `filterOperators`. */
export const filterOperatorsByFieldTypeGroup: Readonly<Record<FieldTypeGroup, readonly FilterOperator[]>> =
  (() => {
    const byGroup = {} as Record<FieldTypeGroup, FilterOperator[]>;
    for (const group of Object.keys(fieldTypeGroups) as FieldTypeGroup[]) {
      byGroup[group] = filterOperators.filter((operator) =>
        (fieldTypeGroupsByFilterOperator[operator] as readonly FieldTypeGroup[]).includes(group),
      );
    }
    return byGroup;
  })();

export function filterOperatorSupportsFieldType(operator: FilterOperator, type: FieldType): boolean {
  return (fieldTypeGroupsByFilterOperator[operator] as readonly FieldTypeGroup[]).includes(
    groupOfFieldType(type),
  );
}

export const MAX_FILTER_DEPTH = 10;
export const MAX_FILTER_CONDITIONS = 200;
export const MAX_FILTER_LIST_ITEMS = 1000;
export const MAX_FILTER_STRING_LENGTH = 10_000;
/**
 * The text-matching operators (ILIKE) cost about operand length x value length per row, so the
 * characters of their operands are bounded over a whole filter, not only per operand.
 */
export const MAX_FILTER_PATTERN_CHARACTERS = 10_000;
/** Values of all the in and not_in lists of one filter together. */
export const MAX_FILTER_LIST_ITEMS_TOTAL = 10_000;

export const textMatchingFilterOperators = [
  'contains',
  'does_not_contain',
  'starts_with',
  'ends_with',
] as const;
export const listFilterOperators = ['in', 'not_in'] as const;

const filterStringSchema = textSchema(MAX_FILTER_STRING_LENGTH);

export const filterScalarSchema = z.union([filterStringSchema, z.number(), z.boolean()], {
  error: unionError('must be a string, number or boolean'),
});
export type FilterScalar = z.infer<typeof filterScalarSchema>;

const presenceOperandSchema = (operator: string, opposite: string) =>
  z.literal(true, { error: `${operator} takes true (use ${opposite} for the opposite)` });

const listOperandSchema = z
  .array(filterScalarSchema, { error: `must be an array of strings, numbers or booleans` })
  .max(MAX_FILTER_LIST_ITEMS, { error: `must hold at most ${MAX_FILTER_LIST_ITEMS} values` });

const comparisonOperandSchema = z.union(
  [z.number(), filterStringSchema.min(1, { error: 'must be a number or a date string' })],
  {
    error: unionError('must be a number or a date string'),
  },
);

/** The operand each operator takes. An empty `in` list matches nothing, an empty `not_in` list everything. */
export const filterOperandSchemaByOperator = {
  equals: filterScalarSchema,
  does_not_equal: filterScalarSchema,
  contains: filterScalarSchema,
  does_not_contain: filterScalarSchema,
  starts_with: textSchema(MAX_FILTER_STRING_LENGTH, { type: 'must be a string' }),
  ends_with: textSchema(MAX_FILTER_STRING_LENGTH, { type: 'must be a string' }),
  is_empty: presenceOperandSchema('is_empty', 'is_not_empty'),
  is_not_empty: presenceOperandSchema('is_not_empty', 'is_empty'),
  in: listOperandSchema,
  not_in: listOperandSchema,
  greater_than: comparisonOperandSchema,
  greater_than_or_equal_to: comparisonOperandSchema,
  less_than: comparisonOperandSchema,
  less_than_or_equal_to: comparisonOperandSchema,
} as const satisfies Record<FilterOperator, z.ZodType>;

export type FilterOperand<Operator extends FilterOperator = FilterOperator> = z.infer<
  (typeof filterOperandSchemaByOperator)[Operator]
>;

/** `{field, <operator>: operand}` with exactly one operator. */
export type FilterCondition = {
  [Operator in FilterOperator]: { field: string } & { [Key in Operator]: FilterOperand<Key> };
}[FilterOperator];
export type FilterGroup = { and: Filter[] } | { or: Filter[] };
export type Filter = FilterCondition | FilterGroup;

/** A condition taken apart; switching on `operator` narrows `operand`. */
export type FilterConditionParts = {
  [Operator in FilterOperator]: { field: string; operator: Operator; operand: FilterOperand<Operator> };
}[FilterOperator];

export function isFilterGroup(filter: Filter): filter is FilterGroup {
  return 'and' in filter || 'or' in filter;
}

/** Takes apart a condition that passed `filterConditionSchema`. */
export function readFilterCondition(condition: FilterCondition): FilterConditionParts {
  const values = condition as Record<string, unknown>;
  const operator = filterOperators.find((candidate) => values[candidate] !== undefined);
  if (operator === undefined) throw new Error('filter condition has no operator');
  const operand = values[operator];
  return { field: condition.field, operator, operand } as FilterConditionParts;
}

const fieldReferenceSchema = referenceSchema('must name a field by id or name');

const filterConditionShape = {
  field: fieldReferenceSchema,
  ...Object.fromEntries(
    filterOperators.map((operator) => [operator, filterOperandSchemaByOperator[operator].optional()]),
  ),
} as Record<'field', typeof fieldReferenceSchema> & Record<FilterOperator, z.ZodOptional<z.ZodType>>;

// The strict object refuses unknown keys (a misspelt operator lands here), the refinement
// counts the operators. The cast gives the exact one-operator union the refinement ensures.
export const filterConditionSchema = z
  .strictObject(filterConditionShape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown filter operator ${issue.keys.map((key) => `"${key}"`).join(', ')}; operators are ${filterOperators.join(', ')}`
        : undefined,
  })
  .superRefine((condition, ctx) => {
    const present = filterOperators.filter((operator) => condition[operator] !== undefined);
    if (present.length === 1) return;
    // A misspelt operator is already reported as unknown; "no operator" would only repeat it.
    if (present.length === 0 && ctx.issues.some((issue) => issue.code === 'unrecognized_keys')) return;
    ctx.addIssue({
      code: 'custom',
      message:
        present.length === 0
          ? `filter condition on field "${condition.field}" needs exactly one operator (${filterOperators.join(', ')})`
          : `filter condition on field "${condition.field}" has ${present.length} operators (${present.join(', ')}); exactly one is allowed`,
    });
  }) as unknown as z.ZodType<FilterCondition, FilterCondition>;

function looksLikeGroup(value: Record<string, unknown>): boolean {
  return Object.hasOwn(value, 'and') || Object.hasOwn(value, 'or');
}

/**
 * Depth counts nested groups: a bare condition is 0, `{and: [condition]}` is 1.
 * `patternCharacters` adds up the string operands of the text-matching operators,
 * `listItems` the values of every in and not_in list.
 */
export type FilterMeasure = {
  depth: number;
  conditions: number;
  patternCharacters: number;
  listItems: number;
};

function patternCharactersOf(condition: Record<string, unknown>): number {
  let characters = 0;
  for (const operator of textMatchingFilterOperators) {
    const operand = condition[operator];
    if (typeof operand === 'string') characters += operand.length;
  }
  return characters;
}

function listItemsOf(condition: Record<string, unknown>): number {
  let items = 0;
  for (const operator of listFilterOperators) {
    const operand = condition[operator];
    if (Array.isArray(operand)) items += operand.length;
  }
  return items;
}

/**
 * Measures a filter without recursion, so a hostile body nested thousands deep cannot
 * exhaust the stack. Takes unknown input: it runs before the filter's shape is checked.
 */
export function measureFilter(filter: unknown): FilterMeasure {
  let depth = 0;
  let conditions = 0;
  let patternCharacters = 0;
  let listItems = 0;
  const pending: { node: unknown; depth: number }[] = [{ node: filter, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node } = next;
    if (!isPlainObject(node)) continue;
    if (!looksLikeGroup(node)) {
      conditions += 1;
      depth = Math.max(depth, next.depth);
      patternCharacters += patternCharactersOf(node);
      listItems += listItemsOf(node);
      continue;
    }
    const groupDepth = next.depth + 1;
    depth = Math.max(depth, groupDepth);
    for (const members of [node.and, node.or]) {
      if (!Array.isArray(members)) continue;
      for (const member of members) pending.push({ node: member, depth: groupDepth });
    }
  }
  return { depth, conditions, patternCharacters, listItems };
}

// Typed with Filter as input too (the runtime takes unknown) so clients get a typed request body.
const filterNodeSchema = z.lazy(() =>
  z.unknown().transform((value, ctx): Filter => {
    if (!isPlainObject(value)) {
      ctx.addIssue({
        code: 'custom',
        message:
          'a filter must be a condition {field, <operator>: operand} or a group {and: [...]} / {or: [...]}',
      });
      return z.NEVER;
    }
    const result = (looksLikeGroup(value) ? filterGroupSchema : filterConditionSchema).safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues)
      ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }),
) as unknown as z.ZodType<Filter, Filter>;

const groupMembersSchema = (key: 'and' | 'or') =>
  z
    .array(filterNodeSchema, { error: `${key} must be an array of filters` })
    .min(1, { error: `${key} must hold at least one filter` })
    .max(MAX_FILTER_CONDITIONS, { error: `${key} must hold at most ${MAX_FILTER_CONDITIONS} filters` });

export const filterGroupSchema = z
  .strictObject(
    { and: groupMembersSchema('and').optional(), or: groupMembersSchema('or').optional() },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `a filter group takes only "and" or "or", not ${issue.keys.map((key) => `"${key}"`).join(', ')}`
          : undefined,
    },
  )
  .superRefine((group, ctx) => {
    if ((group.and === undefined) !== (group.or === undefined)) return;
    ctx.addIssue({ code: 'custom', message: 'a filter group takes exactly one of "and" or "or"' });
  }) as unknown as z.ZodType<FilterGroup, FilterGroup>;

/** A whole filter: its size and the work it asks for are checked first, then its shape. */
export const filterSchema = z
  .unknown()
  .superRefine((filter, ctx) => {
    const { depth, conditions, patternCharacters, listItems } = measureFilter(filter);
    if (depth > MAX_FILTER_DEPTH) {
      ctx.addIssue({ code: 'custom', message: `nesting deeper than ${MAX_FILTER_DEPTH} levels` });
    }
    if (conditions > MAX_FILTER_CONDITIONS) {
      ctx.addIssue({ code: 'custom', message: `more than ${MAX_FILTER_CONDITIONS} conditions` });
    }
    if (patternCharacters > MAX_FILTER_PATTERN_CHARACTERS) {
      ctx.addIssue({
        code: 'custom',
        message: `the operands of ${textMatchingFilterOperators.join(', ')} add up to ${patternCharacters} characters; one filter may use at most ${MAX_FILTER_PATTERN_CHARACTERS}`,
      });
    }
    if (listItems > MAX_FILTER_LIST_ITEMS_TOTAL) {
      ctx.addIssue({
        code: 'custom',
        message: `the in and not_in lists hold ${listItems} values in all; one filter may use at most ${MAX_FILTER_LIST_ITEMS_TOTAL}`,
      });
    }
  })
  .pipe(filterNodeSchema) as unknown as z.ZodType<Filter, Filter>;

// ---------------------------------------------------------------------------------------------
// Sorting (specification 2.3)
// ---------------------------------------------------------------------------------------------

export const sortDirections = ['asc', 'desc'] as const;
export const sortDirectionSchema = z.enum(sortDirections, { error: 'must be "asc" or "desc"' });
export type SortDirection = z.infer<typeof sortDirectionSchema>;

export const MAX_SORT_ENTRIES = 50;

/** Accepts `field` or its deprecated alias `fieldId` (exactly one) and always yields `field`. */
export const sortSchema = z
  .strictObject({
    field: fieldReferenceSchema.optional(),
    fieldId: fieldReferenceSchema.optional(),
    direction: sortDirectionSchema.default('asc'),
  })
  .superRefine((sort, ctx) => {
    if (sort.field === undefined && sort.fieldId === undefined) {
      ctx.addIssue({ code: 'custom', message: 'a sort needs "field" (or its deprecated alias "fieldId")' });
    } else if (sort.field !== undefined && sort.fieldId !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'a sort takes "field" or its deprecated alias "fieldId", not both',
        path: ['fieldId'],
      });
    }
  })
  .transform(({ field, fieldId, direction }) => ({ field: (field ?? fieldId) as string, direction }));
export type SortInput = z.input<typeof sortSchema>;
export type Sort = z.output<typeof sortSchema>;

// ---------------------------------------------------------------------------------------------
// List records (specification 4.1)
// ---------------------------------------------------------------------------------------------

export const DEFAULT_LIST_LIMIT = 500;
export const MAX_LIST_LIMIT = 2000;

/**
 * A cursor holds the sort key values of a record, so a sort on long texts makes a long one; the
 * list body's size limit bounds it in practice.
 */
export const MAX_CURSOR_LENGTH = 1_000_000;

/**
 * The body is optional as a whole: an absent or empty body means the defaults. `cursor`, the
 * `nextCursor` of an earlier page of the same listing (same sort and filter), is an alternative
 * to `offset` that costs the same at any depth.
 */
export const listRecordsRequestSchema = z
  .strictObject({
    limit: z
      .int({ error: 'must be an integer' })
      .min(1, { error: `must be between 1 and ${MAX_LIST_LIMIT}` })
      .max(MAX_LIST_LIMIT, { error: `must be between 1 and ${MAX_LIST_LIMIT}` })
      .default(DEFAULT_LIST_LIMIT),
    offset: z.int({ error: 'must be an integer' }).min(0, { error: 'must be 0 or more' }).default(0),
    cursor: z
      .string({ error: 'must be a string (the nextCursor of an earlier page)' })
      .min(1, { error: 'must not be empty' })
      .max(MAX_CURSOR_LENGTH, { error: `must be at most ${MAX_CURSOR_LENGTH} characters` })
      .optional(),
    sort: z
      .array(sortSchema, { error: 'must be an array of sort objects' })
      .max(MAX_SORT_ENTRIES, { error: `must hold at most ${MAX_SORT_ENTRIES} entries` })
      .optional(),
    filter: filterSchema.optional(),
  })
  .superRefine((request, ctx) => {
    if (request.cursor === undefined || request.offset === 0) return;
    ctx.addIssue({
      code: 'custom',
      message:
        'cannot be combined with body.offset: a cursor says where the page starts (send offset 0 or none with it)',
      path: ['cursor'],
    });
  })
  .prefault({});
export type ListRecordsRequestInput = z.input<typeof listRecordsRequestSchema>;
export type ListRecordsRequest = z.output<typeof listRecordsRequestSchema>;

export const listRecordsResponseSchema = z.object({
  records: z.array(recordSchema),
  /** Count of all records matching the filter, ignoring limit, offset and cursor. */
  total: z.int().min(0),
  hasMore: z.boolean(),
  /** Pass as `cursor` to read the page after this one; null when there is none (hasMore false). */
  nextCursor: z.string().nullable(),
});
export type ListRecordsResponse = z.infer<typeof listRecordsResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Bulk create or upsert (specification 4.2)
// ---------------------------------------------------------------------------------------------

export const MAX_RECORDS_PER_REQUEST = 100;
export const MAX_MATCH_ON_FIELDS = 20;

const fieldIdSchema = boundedString(MAX_NAME_LENGTH, { type: 'must be a field id' }).regex(FIELD_ID_PATTERN, {
  error: 'must be a field id (fld...); field names are not accepted in matchOn',
});

/** Counted before any record is parsed: zod checks an array's `.max()` only after its elements. */
function refuseTooManyRecords(records: unknown, ctx: z.RefinementCtx<unknown>): void {
  if (Array.isArray(records) && records.length > MAX_RECORDS_PER_REQUEST) {
    ctx.addIssue({ code: 'custom', message: `must hold at most ${MAX_RECORDS_PER_REQUEST} records` });
  }
}

export const bulkRecordsRequestSchema = z.strictObject({
  records: withPrecheck(
    refuseTooManyRecords,
    z
      .array(recordValuesInputSchema, { error: 'must be an array of records' })
      .min(1, { error: 'must hold at least one record' }),
  ),
  /** Field ids only, unlike the keys inside each record. */
  matchOn: z
    .array(fieldIdSchema, { error: 'must be an array of field ids' })
    .min(1, { error: 'must name at least one field id' })
    .max(MAX_MATCH_ON_FIELDS, { error: `must name at most ${MAX_MATCH_ON_FIELDS} field ids` })
    .refine((ids) => new Set(ids).size === ids.length, { error: 'must not repeat a field id' })
    .optional(),
});
export type BulkRecordsRequestInput = z.input<typeof bulkRecordsRequestSchema>;
export type BulkRecordsRequest = z.output<typeof bulkRecordsRequestSchema>;

/** 201 when every record was created, 200 for an upsert; records in input order. */
export const bulkRecordsResponseSchema = z.object({
  success: z.boolean(),
  records: z.array(recordSchema),
});
export type BulkRecordsResponse = z.infer<typeof bulkRecordsResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Single records and bulk delete
// ---------------------------------------------------------------------------------------------

export const createRecordRequestSchema = z.strictObject({ record: recordValuesInputSchema });
export type CreateRecordRequest = z.output<typeof createRecordRequestSchema>;

/** Partial: only the given fields change. */
export const updateRecordRequestSchema = z.strictObject({ record: recordValuesInputSchema });
export type UpdateRecordRequest = z.output<typeof updateRecordRequestSchema>;

/** Ids stay plain strings here so the service can answer a malformed one with INVALID_RECORD_ID. */
export const bulkDeleteRecordsRequestSchema = z.strictObject({
  ids: z
    .array(z.string({ error: 'must be a record id' }).min(1).max(64), {
      error: 'must be an array of record ids',
    })
    .min(1, { error: 'must hold at least one record id' })
    .max(MAX_RECORDS_PER_REQUEST, { error: `must hold at most ${MAX_RECORDS_PER_REQUEST} record ids` }),
});
export type BulkDeleteRecordsRequest = z.infer<typeof bulkDeleteRecordsRequestSchema>;

export const bulkDeleteRecordsResponseSchema = z.object({
  success: z.literal(true),
  deletedIds: z.array(z.string()),
});
export type BulkDeleteRecordsResponse = z.infer<typeof bulkDeleteRecordsResponseSchema>;
