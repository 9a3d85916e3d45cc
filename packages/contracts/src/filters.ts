import { z } from 'zod';
import { fieldReferenceSchema, isPlainObject, textSchema, unionError } from './common';
import {
  type FieldType,
  type FieldTypeGroup,
  fieldTypeGroups,
  groupOfField,
  groupOfFieldType,
  type TypedField,
} from './fields';

/**
 * The filter language of record reads (docs/filters.md): its operators and the field type groups
 * each applies to, the operand each takes, conditions and and/or groups, and the bounds on a
 * filter's size checked before its shape. `@recordbase/contracts/records` exports it all too.
 */

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

/** Which field type groups each operator applies to. */
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

/** Whether a field takes the operator: by its group, which a formula's result type decides. */
export function filterOperatorSupportsField(operator: FilterOperator, field: TypedField): boolean {
  return (fieldTypeGroupsByFilterOperator[operator] as readonly FieldTypeGroup[]).includes(
    groupOfField(field),
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
