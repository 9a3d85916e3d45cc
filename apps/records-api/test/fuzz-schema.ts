import fc from 'fast-check';

/**
 * fast-check arbitraries from the JSON Schemas of the OpenAPI document (which zod 4 generates from
 * the contracts): values shaped as a route expects, so that hostile mutations of them get past the
 * first checks and reach deeper code. Only the keywords zod's output uses are read; the rest is
 * ignored, which at worst makes a value invalid (and a refused value is a fine fuzz case too).
 */

export type JsonSchema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  format?: string;
  pattern?: string;
};

export interface SchemaContext {
  /** `#/components/schemas/<name>` targets. */
  components: Record<string, JsonSchema>;
  /**
   * Strings worth trying wherever a string goes: the fixture's ids and names (often), so that field
   * references and ids name something that exists, and the document's example values.
   */
  fixture: string[];
  examples: string[];
  /** The fixture's fields: name (and id) to type, for values that fit the field they go to. */
  fieldTypes: Record<string, string>;
}

/** Recursive schemas (filters) are cut off past this many nested references. */
const MAX_REF_DEPTH = 4;
/** Generated collections stay small: size comes from the hostile mutations, not from here. */
const MAX_GENERATED_ITEMS = 4;
const MAX_GENERATED_LENGTH = 24;
const MAX_OPTIONAL_KEYS = 3;

function resolve(schema: JsonSchema, context: SchemaContext): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = context.components[name];
  if (!target) throw new Error(`the document references an unknown schema ${schema.$ref}`);
  return target;
}

/** Whether a schema can only be satisfied through a reference (so it is cut at the depth limit). */
const refersOnward = (schema: JsonSchema) => JSON.stringify(schema).includes('"$ref"');

function stringArbitrary(schema: JsonSchema, context: SchemaContext): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(
    minLength,
    Math.min(schema.maxLength ?? MAX_GENERATED_LENGTH, MAX_GENERATED_LENGTH),
  );
  const fits = (text: string) => text.length >= minLength && text.length <= (schema.maxLength ?? Infinity);
  const formatted: Record<string, fc.Arbitrary<string>> = {
    uuid: fc.uuid(),
    email: fc.emailAddress(),
    uri: fc.webUrl(),
    url: fc.webUrl(),
    date: fc
      .date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10)),
    'date-time': fc
      .date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString()),
  };
  const options: fc.Arbitrary<string>[] = [
    fc.string({ minLength, maxLength, unit: 'grapheme' }),
    fc.string({ minLength, maxLength }),
  ];
  const format = schema.format && formatted[schema.format];
  if (format) options.push(format, format);
  if (schema.pattern) {
    try {
      options.push(fc.stringMatching(new RegExp(schema.pattern)).filter(fits));
    } catch {
      // A pattern this JavaScript cannot compile: the other strings still go.
    }
  }
  const weighted = options.map((arbitrary) => ({ weight: 1, arbitrary }));
  const existing = context.fixture.filter(fits);
  if (existing.length > 0) weighted.push({ weight: 4, arbitrary: fc.constantFrom(...existing) });
  const examples = context.examples.filter(fits);
  if (examples.length > 0) weighted.push({ weight: 1, arbitrary: fc.constantFrom(...examples) });
  return fc.oneof(...weighted);
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min =
    schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
  const max =
    schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
  if (integer) {
    const lo = Math.max(min ?? -1_000_000, Number.MIN_SAFE_INTEGER);
    const hi = Math.min(max ?? 1_000_000, Number.MAX_SAFE_INTEGER);
    // The bounds themselves are the interesting values; plain small numbers the common ones.
    return fc.oneof(
      fc.integer({ min: lo, max: Math.max(lo, Math.min(hi, lo + 100)) }),
      fc.constantFrom(lo, hi),
    );
  }
  return fc.double({
    noNaN: true,
    noDefaultInfinity: true,
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
  });
}

function objectArbitrary(schema: JsonSchema, context: SchemaContext, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const requiredRecord: Record<string, fc.Arbitrary<unknown>> = {};
  const optional: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (required.has(name)) requiredRecord[name] = arbitraryOf(property, context, depth);
    else optional.push(name);
  }
  // A few optional keys at a time: with all of them, exclusive options (cursor and offset, eleven
  // operators in one condition) would make nearly every value invalid before the hostile part.
  const chosen = fc
    .subarray(optional, { maxLength: Math.min(MAX_OPTIONAL_KEYS, optional.length) })
    .chain((names) => {
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const name of names) record[name] = arbitraryOf(properties[name]!, context, depth);
      return fc.record(record);
    });
  const known = fc
    .tuple(fc.record(requiredRecord), chosen)
    .map(([fixed, more]) => ({ ...(fixed as object), ...(more as object) }));
  const extra = schema.additionalProperties;
  if (extra && typeof extra === 'object') {
    // A map (field values by field name): keys from the dictionary mostly, values from the schema.
    const keys = stringArbitrary(schema.propertyNames ?? { type: 'string', minLength: 1 }, context);
    const generic = fc.dictionary(keys, arbitraryOf(extra, context, depth), { maxKeys: MAX_GENERATED_ITEMS });
    const entries = typedValues(extra, context, depth) ?? generic;
    return fc.tuple(known, entries).map(([fixed, more]) => ({ ...more, ...(fixed as object) }));
  }
  return known;
}

/**
 * Field values (a map whose values are one of the `FieldValue_<type>` schemas): mostly values of
 * the fixture's own fields, each from the schema of its field's type, so that a hostile value
 * planted in one of them reaches the storage layer instead of the first type check.
 */
function typedValues(values: JsonSchema, context: SchemaContext, depth: number) {
  const options = values.anyOf ?? [];
  const typed = options.length > 0 && options.every((option) => option.$ref?.includes('/FieldValue_'));
  const fields = Object.entries(context.fieldTypes);
  if (!typed || fields.length === 0) return undefined;
  const entry = fc.constantFrom(...fields).chain(([name, type]) => {
    const schema = context.components[`FieldValue_${type}`];
    return schema
      ? arbitraryOf(schema, context, depth).map((value) => [name, value] as const)
      : fc.constant([name, null] as const);
  });
  const own = fc.array(entry, { maxLength: MAX_GENERATED_ITEMS }).map((pairs) => Object.fromEntries(pairs));
  const generic = fc.dictionary(
    stringArbitrary({ type: 'string', minLength: 1 }, context),
    arbitraryOf(values, context, depth),
    { maxKeys: MAX_GENERATED_ITEMS },
  );
  return fc.oneof({ weight: 3, arbitrary: own }, { weight: 1, arbitrary: generic });
}

/** An arbitrary of values that satisfy (mostly) a JSON Schema of the document. */
export function arbitraryOf(schema: JsonSchema, context: SchemaContext, depth = 0): fc.Arbitrary<unknown> {
  if (schema.$ref) {
    if (depth >= MAX_REF_DEPTH) return cutOff(resolve(schema, context), context, depth);
    return arbitraryOf(resolve(schema, context), context, depth + 1);
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((option) => arbitraryOf(option, context, depth)));
  if (schema.allOf)
    return arbitraryOf(Object.assign({}, ...schema.allOf.map((s) => resolve(s, context))), context, depth);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1)
    return fc.oneof(...types.map((type) => arbitraryOf({ ...schema, type }, context, depth)));
  switch (types[0]) {
    case 'string':
      return stringArbitrary(schema, context);
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (schema.prefixItems)
        return fc.tuple(...schema.prefixItems.map((item) => arbitraryOf(item, context, depth)));
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(
        minLength,
        Math.min(schema.maxItems ?? MAX_GENERATED_ITEMS, MAX_GENERATED_ITEMS),
      );
      return fc.array(arbitraryOf(schema.items ?? {}, context, depth), { minLength, maxLength });
    }
    case 'object':
      return objectArbitrary(schema, context, depth);
    default:
      // No type: any JSON value.
      return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<unknown>;
  }
}

/** Past the depth limit: an alternative that needs no further reference, or the smallest value. */
function cutOff(schema: JsonSchema, context: SchemaContext, depth: number): fc.Arbitrary<unknown> {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const flat = alternatives.filter((option) => !refersOnward(resolve(option, context)));
    if (flat.length > 0) return fc.oneof(...flat.map((option) => arbitraryOf(option, context, depth)));
  }
  return fc.constant({});
}
