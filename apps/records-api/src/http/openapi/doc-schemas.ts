import { pathSegmentSchema } from '@recordbase/contracts/common';
import {
  createFieldRequestSchema,
  type FieldType,
  fieldNameSchema,
  fieldTypeContracts,
  fieldTypes,
  isComputedFieldType,
  resultTypeOfFieldType,
  templateSchemaByType,
  updateFieldRequestSchema,
} from '@recordbase/contracts/fields';
import {
  bulkRecordsRequestSchema,
  bulkUpdateRecordsRequestSchema,
  filterOperandSchemaByOperator,
  filterOperators,
  filterOperatorsByFieldTypeGroup,
  filterSchema,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LIST_ITEMS_TOTAL,
  MAX_FILTER_PATTERN_CHARACTERS,
  MAX_RECORDS_PER_REQUEST,
  recordValuesInputSchema,
  recordValueWriteSchemaByType,
} from '@recordbase/contracts/records';
import {
  createDatabaseRequestSchema,
  MAX_FIELDS_PER_REQUEST,
  MAX_FIELDS_PER_TABLE,
  MAX_TABLES_PER_REQUEST,
  tableInputSchema,
} from '@recordbase/contracts/schema';
import { z } from 'zod';
import 'zod-openapi';

/**
 * Documentation views of what the contracts check in code rather than in shape: a filter is
 * measured before it is parsed, record bodies are counted before their values are read, and a
 * field's template is checked once its type is known. JSON Schema sees only the first step of such
 * a check (an unknown value), so the document would say "anything". These views are built from the
 * same contract pieces (operators and their operands, each type's template and value) and the
 * contract schemas are pointed at them, so the document shows the shapes the service accepts.
 */

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** Attaches OpenAPI metadata to a contract schema itself (not a copy), keeping what it had. */
function pointAt(schema: z.ZodType, override: Record<string, unknown>): void {
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), override });
}

// --- Filters ------------------------------------------------------------------------------

const filterConditionDoc = z
  .strictObject({
    field: pathSegmentSchema.meta({ description: 'A field name or field id (or id, createdAt, updatedAt).' }),
    ...Object.fromEntries(
      filterOperators.map((operator) => [operator, filterOperandSchemaByOperator[operator].optional()]),
    ),
  })
  .meta({
    id: 'FilterCondition',
    title: 'FilterCondition',
    unusedIO: 'input',
    description:
      'One condition: `field` and exactly one operator with its operand. Operators by field type group: ' +
      Object.entries(filterOperatorsByFieldTypeGroup)
        .map(([group, operators]) => `${group}: ${operators.join(', ')}`)
        .join('; ') +
      '. `is_empty` / `is_not_empty` take `true`; `in` / `not_in` take an array.',
    examples: [
      { field: 'Status', equals: 'Open' },
      { field: 'Amount', greater_than: 100 },
    ],
  });

// A group holds filters, which may be groups again: a getter lets the schema name itself.
const filterGroupDoc: z.ZodType = z
  .union([
    z.strictObject({
      get and() {
        return z.array(filterDoc).min(1).max(MAX_FILTER_CONDITIONS);
      },
    }),
    z.strictObject({
      get or() {
        return z.array(filterDoc).min(1).max(MAX_FILTER_CONDITIONS);
      },
    }),
  ])
  .meta({
    id: 'FilterGroup',
    title: 'FilterGroup',
    unusedIO: 'input',
    description: 'Exactly one of `and` or `or`, each an array of filters (conditions or groups).',
  });

const filterDoc: z.ZodType = z.union([filterConditionDoc, filterGroupDoc]).meta({
  id: 'Filter',
  title: 'Filter',
  unusedIO: 'input',
  description:
    `A condition or a group of filters. Limits per filter: nesting at most ${MAX_FILTER_DEPTH} groups deep, ` +
    `at most ${MAX_FILTER_CONDITIONS} conditions, at most ${MAX_FILTER_PATTERN_CHARACTERS} characters in the ` +
    `operands of contains/does_not_contain/starts_with/ends_with, at most ${MAX_FILTER_LIST_ITEMS_TOTAL} values ` +
    'in all in/not_in lists.',
  examples: [
    {
      and: [
        { field: 'Status', in: ['Open', 'Won'] },
        {
          or: [
            { field: 'Amount', greater_than_or_equal_to: 1000 },
            { field: 'Owner', is_empty: true },
          ],
        },
      ],
    },
  ],
});

// --- Record values ------------------------------------------------------------------------

const typeNotes: Partial<Record<FieldType, string>> = {
  percent: 'A fraction: 0.5 is 50%.',
  duration: 'Seconds.',
  rating: "An integer from 0 to the template's max.",
  single_select: 'The name of one of the options.',
  multiple_select: 'Names of options.',
  attachments: 'Each {url} of a file uploaded with POST /fileupload (its answer).',
  linked_record: 'Ids of records of the linked table.',
  date: 'YYYY-MM-DD.',
  datetime: 'ISO 8601 with a time zone.',
};

const writeValueIds = fieldTypes.map((type) => `FieldValue_${type}`);

const writeValueDocs = fieldTypes.map((type, index) =>
  recordValueWriteSchemaByType[type].meta({
    id: writeValueIds[index],
    unusedIO: 'input',
    title: type,
    description: isComputedFieldType(type)
      ? `None: the service computes a ${type} field's values (resultType ${
          type === 'formula'
            ? "its expression's"
            : type === 'rollup'
              ? "its function's"
              : resultTypeOfFieldType(type)
        }), and a record body that gives one is refused.`
      : `A value written to a ${type} field; null empties it. ${typeNotes[type] ?? ''}`.trim(),
  }),
);

const recordValuesDoc = z.record(z.string(), z.union(writeValueDocs)).meta({
  id: 'RecordValues',
  title: 'RecordValues',
  unusedIO: 'input',
  description:
    "Field values keyed by field name or field id; each value's shape is set by its field's type (FieldValue_<type>). " +
    'Fields left out keep their value (on update) or are empty (on create); an `id` key is ignored, ids are generated.',
  examples: [{ Name: 'Acme', Status: 'Open', Amount: 1250.5, Tags: ['b2b'], 'Signed on': '2026-05-01' }],
});

// --- Fields and templates -----------------------------------------------------------------

const templateIds = fieldTypes.map((type) => `Template_${type}`);

const templateDocs = fieldTypes.map((type, index) =>
  templateSchemaByType[type].meta({
    id: templateIds[index],
    unusedIO: 'input',
    title: `${type} template`,
    description: `Settings of a ${type} field (filter group: ${fieldTypeContracts[type].group}); left out, the defaults apply.`,
  }),
);

const fieldInputDoc = z
  .discriminatedUnion(
    'type',
    fieldTypes.map((type, index) =>
      z.strictObject({
        name: fieldNameSchema,
        type: z.literal(type),
        template: templateDocs[index]!.optional(),
      }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  )
  .meta({
    id: 'FieldInput',
    title: 'FieldInput',
    unusedIO: 'input',
    description:
      "A new field: its name, type and the type's template (settings). Types: " + `${fieldTypes.join(', ')}.`,
    examples: [
      { name: 'Status', type: 'single_select', template: { options: [{ name: 'Open' }, { name: 'Won' }] } },
      { name: 'Amount', type: 'currency', template: { decimalPlaces: 2, currencySymbol: '€' } },
      { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
    ],
  });

/** The `out` side of a `withPrecheck` wrapper (an unknown value, checked, piped into it). */
function afterPrecheck(schema: z.ZodType): z.ZodType {
  const def = schema._zod.def as { type: string; out?: z.ZodType };
  if (def.type !== 'pipe' || def.out === undefined) throw new Error('not a precheck wrapper');
  return def.out;
}

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  return (schema as unknown as z.ZodObject).shape as Record<string, z.ZodType>;
}

/**
 * Contract schemas whose shape sits behind a precheck, with the component each is shown as: the
 * contract's own inner schema where it renders, else the same shape over RecordValues (a record
 * body's values are transformed, which JSON Schema cannot show as an answer).
 */
function prechecked(): { wrapper: z.ZodType; id: string; description: string; shown?: z.ZodType }[] {
  const databaseTables = shapeOf(createDatabaseRequestSchema).tables as unknown as z.ZodOptional;
  return [
    {
      wrapper: shapeOf(bulkRecordsRequestSchema).records!,
      id: 'BulkRecordValues',
      description: `The records to write, 1 to ${MAX_RECORDS_PER_REQUEST}.`,
      shown: z.array(recordValuesDoc).min(1).max(MAX_RECORDS_PER_REQUEST),
    },
    {
      wrapper: shapeOf(bulkUpdateRecordsRequestSchema).records!,
      id: 'BulkRecordUpdates',
      description: `1 to ${MAX_RECORDS_PER_REQUEST} records by id, each with the fields to change.`,
      shown: z
        .array(z.strictObject({ id: z.string().min(1).max(64), fields: recordValuesDoc }))
        .min(1)
        .max(MAX_RECORDS_PER_REQUEST),
    },
    {
      wrapper: tableInputSchema,
      id: 'TableInput',
      description: `A table and its fields (at most ${MAX_FIELDS_PER_TABLE}); the first field becomes its primary field.`,
    },
    {
      wrapper: databaseTables.unwrap() as z.ZodType,
      id: 'TableInputList',
      description: `Tables created with the database: at most ${MAX_TABLES_PER_REQUEST} tables and ${MAX_FIELDS_PER_REQUEST} fields in all.`,
    },
  ];
}

let pointed = false;

/**
 * The schemas to add to the document's components, after pointing the contract schemas that
 * hide their shape at them. Pointing is idempotent; it only adds OpenAPI metadata.
 */
export function documentationSchemas(): Record<string, z.ZodType> {
  const wrapped = prechecked();
  if (!pointed) {
    pointAt(filterSchema, ref('Filter'));
    pointAt(recordValuesInputSchema, ref('RecordValues'));
    pointAt(createFieldRequestSchema, ref('FieldInput'));
    pointAt(shapeOf(updateFieldRequestSchema).template!, {
      anyOf: templateIds.map(ref),
      description: "The field's new settings, for its (new) type.",
    });
    for (const { wrapper, id } of wrapped) pointAt(wrapper, ref(id));
    pointed = true;
  }
  return {
    Filter: filterDoc,
    RecordValues: recordValuesDoc,
    FieldInput: fieldInputDoc,
    ...Object.fromEntries(
      wrapped.map(({ wrapper, id, description, shown }) => [
        id,
        (shown ?? afterPrecheck(wrapper)).meta({ id, unusedIO: 'input', description }),
      ]),
    ),
  };
}
