import type { FieldType } from '@recordbase/contracts/fields';
import type { FilterOperator } from '@recordbase/contracts/filters';
import type { FormulaType } from '../formula/types';
import type { SqlParams } from '../physical/params';
import type { KeyKind } from './key-kinds';

/**
 * What one field type declares, from its column to its place in the test oracle. Everything
 * else asks the registry (index.ts) rather than switching over type names, so a new type is one
 * new module plus its entry in the registry and in the contracts' table.
 */
export interface FieldTypeModule<T extends FieldType = FieldType> {
  type: T;
  /**
   * Its column on the record table, or absent when it has none (links live in a junction table,
   * created_time reads the record's created_at).
   */
  column?: ColumnSpec;
  /**
   * The column of one field, for a type whose column depends on the field (its template); absent:
   * `column`. Every column decision asks columnSpecOf (physical/column-types.ts), which asks this.
   */
  columnOf?(field: FieldShape): ColumnSpec | undefined;
  /**
   * A computed field's value as SQL over the record table aliased `r`, for a field without a
   * column (created_time: `r.created_at`). What every SQL consumer reads as the field's value
   * (fieldValueSql, physical/column-types.ts) is its column or this.
   */
  valueSql?(field: FieldShape): string;
  /**
   * Its values follow from other values (a formula's stored column, a lookup's): a deleted field of
   * the type keeps no column in the database trash, and a restored one computes them again.
   */
  derived?: true;
  /**
   * Statements that complete a new field's column, once added, on a table that may already hold
   * records: their values (autonumber numbers them) and what keeps new ones filled (a default).
   */
  columnAdded?(column: AddedColumn): string[];
  /**
   * What a write puts in the column itself, for computed types the write keeps (who wrote, when a
   * watched field changed). The write paths ask writtenColumns (written-columns.ts) for these.
   */
  written?: WrittenSpec;
  /**
   * The module one field of the type reads, filters and sorts by, for a type whose behaviour
   * depends on the field (a formula takes its result type's); absent: the module itself. Everything
   * that has the field asks moduleOfField (registry.ts), which asks this.
   */
  forField?(field: FieldShape): FieldTypeModule;
  /** Whether it can be a table's primary field, which names each record (absent: it can). */
  primary?: false;
  /** How its values read inside a formula (docs/formulas.md, "Value kinds"). */
  formula: FormulaType;
  /**
   * Its column as a formula reads a value of its `formula` kind, for a column that holds it in
   * another form (a lookup's JSON array is read as text[]); absent: the column as it is.
   */
  formulaValue?(column: string): string;
  /**
   * Where a record body's value goes once coerced (see the records service's PreparedRecord);
   * absent for computed types, whose values are never written.
   */
  prepared?: 'columns' | 'links' | 'attachments';
  /**
   * A written value, already shaped by the contracts' write schema, made ready to store.
   * Rules that need the field's template are checked here; `fail` ends with a 400.
   */
  coerce(value: unknown, input: CoerceInput): unknown;
  /**
   * An imported cell's text (never empty) as the written value it stands for, which the write
   * schema and `coerce` then check as any written value; undefined when the text cannot be one.
   * Absent: imports cannot fill the type (links, attachments).
   */
  fromText?(text: string): unknown;
  /** The value as JSON text, never SQL NULL (an empty value is the JSON `null`). */
  json(sql: FieldSql): string;
  /**
   * The value as read-only SQL shows it, in the API's shape as far as SQL allows; absent: the
   * column as it is (sql-views.ts).
   */
  sqlValue?(sql: FieldSql): string;
  /** The SQL of each filter operator it supports: exactly those of its group in the contracts. */
  filters: Partial<Record<FilterOperator, OperatorSql>>;
  /** What it sorts by, and the kind its value travels as in a cursor. */
  sort(sql: FieldSql): SortExpression;
  /** How upserts find records by it; absent when it cannot be matched on. */
  match?: MatchSpec;
  /** Which indexes the records service may build for listings on it; absent when none. */
  readIndex?: ReadIndexSpec;
  /** Its values as other types read them in a type conversion (conversions.ts). */
  readings(column: string): Readings;
  /** Its values built from another type's readings, or null when that type does not convert. */
  convertFrom(from: Readings, context: ConversionContext): string | null;
  /**
   * For types whose template lists the values allowed (selects): the distinct values stored, as
   * `SELECT ... AS value`, which become options when a field converts to it.
   */
  storedValuesSql?(table: string, column: string, limit: number): string;
  /** The statement that brings stored values within a changed template, when the template limits them. */
  fitToTemplate?(table: string, column: string, template: unknown): Statement;
  /**
   * A template sent in a field's update (already valid), completed from the field's current
   * template with what the sender left out and the field keeps (a select's option colours);
   * absent: the sent template as it is.
   */
  updatedTemplate?(sent: unknown, current: unknown): unknown;
  /** The same semantics in memory, stated plainly: the oracle the SQL is tested against. */
  oracle: OracleSpec;
}

export interface ColumnSpec {
  /** PostgreSQL type of the column. */
  sqlType: string;
  /** NOT NULL with this default, for types whose empty value is not null. */
  notNullDefault?: string;
  /** A stored generated column's expression over the row's columns (a stored formula). */
  generated?: string;
}

export interface CoerceInput {
  template: unknown;
  /** The value as the body gave it, for messages. */
  raw: unknown;
  fail(message: string): never;
}

/** A field as its column and computed value are decided from: never by the type alone. */
export interface FieldShape {
  id: string;
  type: FieldType;
  template?: unknown;
}

/** A field's column just added to its table (quoted, qualified identifiers). */
export interface AddedColumn {
  field: FieldShape;
  schemaName: string;
  /** The record table, schema-qualified. */
  table: string;
  /** The column, quoted. */
  column: string;
}

/** A field as SQL over a record table aliased `r` sees it. */
export interface FieldSql {
  field: { id: string; template: unknown };
  schemaName: string;
  /**
   * The field's value over `r` (fieldValueSql): its column `r."<field id>"`, or what a computed
   * type's valueSql gives; '' for links, which read their junction table.
   */
  column: string;
}

/** What a write statement offers the computed columns it keeps, as SQL. */
export interface WriteContext {
  /** The field's column over `r`: in an update, its value before the write. */
  column: string;
  field: FieldShape;
  /** `{id, name}` of the API key that writes, as jsonb. */
  author: string;
  /**
   * Whether the write changes any of these fields of the record (by id; every field written when
   * undefined), comparing with the values before it; an insert passes 'true'.
   */
  changed(fieldIds: readonly string[] | undefined): string;
  /**
   * The record's links of a link field as this write gives them, as SQL of a uuid[] (NULL for a
   * record of the write that leaves them as they are); undefined when the write gives none of them
   * in the statement (its links are then written by another, and the value refreshed after it).
   */
  links?(linkFieldId: string): string | undefined;
}

export interface WrittenSpec {
  /** The value of a new record (absent, or undefined: the column's default). */
  inserted?(ctx: WriteContext): string | undefined;
  /** The value after an update of the record (absent, or undefined: kept). */
  updated?(ctx: WriteContext): string | undefined;
}

/** What an operator's SQL needs: where to put values and how to refuse an operand. */
export interface ConditionContext {
  operator: FilterOperator;
  operand: unknown;
  params: SqlParams;
  /** The 400 for an operand of the wrong shape, naming what was needed. */
  needs(what: string): Error;
}

export type OperatorSql = (sql: FieldSql, ctx: ConditionContext) => string;

export interface SortExpression {
  /** SQL over `r` (text compared by code point through COLLATE "C"). */
  expression: string;
  kind: KeyKind;
}

export interface MatchSpec {
  /** The indexed form of a value, for a match index; absent when no index is built. */
  key?: MatchKey;
  /** The column equal to an incoming value; plain `=` when absent. */
  equals?(column: string, value: string): string;
}

/**
 * Indexes built in the background for listings (the records service's read-indexes.ts). They
 * must never refuse a value the column accepts, so only keys of bounded width are ordered.
 */
export interface ReadIndexSpec {
  /** Its sort expression as a btree key, when every value fits a btree row. */
  order?(column: string): string;
  /**
   * What serves its filters: `order` the ascending order index, `btree` one on the bare column
   * (its own collation), `trigram` a trigram GIN index (ILIKE, and values of any length).
   */
  filter: 'order' | 'btree' | 'trigram';
}

export interface MatchKey {
  /** The indexed value of a column (or of a value compared with it), as SQL. */
  of(sql: string): string;
  /** Named in the index, so a build planned before a type change fails rather than fit the new type. */
  opclass: string;
}

/**
 * The forms a type's values can be read in by a conversion, each as SQL over the column. A type
 * offers only those it has; a target builds itself from the forms it knows.
 */
export interface Readings {
  /** As text, for the text types. */
  text?: string;
  /** As a double, for the number types. */
  number?: string;
  /** Its own text column, for targets that parse text (dates, checkbox). */
  textColumn?: string;
  /** Free text that is not an option name, for the select types. */
  freeText?: string;
  /** Its own number column. */
  numberColumn?: string;
  /** A date column. */
  day?: string;
  /** A timestamptz column. */
  instant?: string;
  /** A single option name. */
  option?: string;
  /** A text[] of option names. */
  options?: string;
}

export interface ConversionContext {
  /** Template of the field after the change (a rating needs its max). */
  template?: unknown;
}

export interface Statement {
  text: string;
  values: unknown[];
}

/** What a value sorts by in the oracle. `null` is an empty value and the smallest of all. */
export type OracleSortKey = null | number | bigint | string | boolean | string[];

export interface OracleSpec {
  /** Whether a value in API shape matches `operator` with `operand` (one the compiler accepted). */
  matches(value: unknown, operator: FilterOperator, operand: unknown): boolean;
  sortKey(value: unknown): OracleSortKey;
}
