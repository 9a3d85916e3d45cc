import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import type { FieldType } from '@recordbase/contracts/fields';
import { type KeptFormula, keptFormula, moduleOfField } from '@recordbase/db/field-types';
import {
  type CompileContext,
  compileFormula,
  dependentsOf,
  displayFormula,
  FormulaError,
  type FormulaField,
  type FormulaFieldSql,
  type FormulaNode,
  formulaReadSql,
  formulaResultSql,
  formulaTruthySql,
  inferFormula,
  parseFormula,
  prepareFormula,
  selfReadingChain,
} from '@recordbase/db/formula';
import { hasColumn, linkTableName, qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import { nameKey } from './access';

/**
 * Formula fields as a table's schema keeps them: an expression a client writes (fields by name or
 * id) checked, typed and compiled against the table's other fields when it is saved, and kept with
 * fields by id (KeptFormula, packages/db/src/field-types/formula.ts); compiled again when a field
 * it reads changes type or expression; and what stands in the way of a change (a cycle, a field
 * that formulas still read). A formula reads other formulas by writing them out in place, since a
 * stored generated column cannot read another.
 */

/** A field of the table as formulas see it. */
export interface TableField {
  id: string;
  name: string;
  type: FieldType;
  template: unknown;
}

const EXPRESSION: InputPath = ['template', 'expression'];

/** The fields a formula reads directly: a formula's own, none for the other types. */
export function readsOf(field: TableField): readonly string[] {
  return field.type === 'formula' ? (keptFormula(field)?.fieldIds ?? []) : [];
}

function readsByField(fields: readonly TableField[]): Map<string, readonly string[]> {
  return new Map(
    fields.filter((field) => field.type === 'formula').map((field) => [field.id, readsOf(field)]),
  );
}

const formulaFieldOf = (field: TableField): FormulaField => ({
  id: field.id,
  name: field.name,
  type: moduleOfField(field).formula,
});

/**
 * How a formula reads a link field: the linked ids in order, from its junction table. A write
 * statement, which cannot see the link rows it inserts, puts the links it was given in its place.
 */
export const formulaLinkIdsSql = (schemaName: string, linkFieldId: string): string =>
  `ARRAY(SELECT l.linked_id::text FROM ${qualifiedTable(schemaName, linkTableName(linkFieldId))} l WHERE l.record_id = r.id ORDER BY l.position)`;

/**
 * How a field reads inside a formula compiled over the row's bare columns (`row` '') or over the
 * record table aliased `r` (`row` 'r.'). Links live in their junction table, which only a read can
 * join: a formula reading one is computed at read time.
 */
export function fieldReader(
  schemaName: string,
  fields: ReadonlyMap<string, TableField>,
  row: '' | 'r.',
): CompileContext['field'] {
  const compiled = new Map<string, FormulaFieldSql>();
  const read = (id: string): FormulaFieldSql => {
    const known = compiled.get(id);
    if (known) return known;
    const field = fields.get(id)!;
    const module = moduleOfField(field);
    const type = module.formula;
    const column = `${row}${quoteIdent(field.id)}`;
    let sql: FormulaFieldSql;
    if (module.formulaValue) {
      sql = { type, sql: module.formulaValue(column) };
    } else if (field.type === 'formula') {
      const kept = keptFormula(field);
      // Read at read time, a stored formula is its column; anywhere else it is written out.
      sql =
        row === 'r.' && kept.columnSql !== undefined
          ? { type, sql: formulaReadSql(type, column) }
          : compileKept(kept.expression, schemaName, fields, row, read);
    } else if (field.type === 'created_time') {
      sql = { type, sql: `date_trunc('milliseconds', ${row}created_at AT TIME ZONE 'UTC')` };
    } else if (field.type === 'created_by' || field.type === 'last_modified_by') {
      sql = { type, sql: `public.rb_f_nonempty(${column} ->> 'name')` };
    } else if (field.type === 'attachments') {
      sql = { type, sql: `public.rb_f_attachment_names(${column})` };
    } else if (field.type === 'linked_record') {
      sql = { type, sql: formulaLinkIdsSql(schemaName, field.id), volatile: true };
    } else if (hasColumn(field)) {
      sql = { type, sql: formulaReadSql(type, column) };
    } else {
      throw new Error(`formula: no reading of a ${field.type} field`);
    }
    compiled.set(id, sql);
    return sql;
  };
  return read;
}

/** How a formula over the row (`row` '' or 'r.') reads the record's own id and times. */
const recordReadings = (row: '' | 'r.') => ({
  recordId: `${row}id::text`,
  createdAt: `date_trunc('milliseconds', ${row}created_at AT TIME ZONE 'UTC')`,
  updatedAt: `date_trunc('milliseconds', ${row}updated_at AT TIME ZONE 'UTC')`,
});

function compileKept(
  expression: string,
  schemaName: string,
  fields: ReadonlyMap<string, TableField>,
  row: '' | 'r.',
  read: CompileContext['field'] = fieldReader(schemaName, fields, row),
) {
  return compileFormula(parseFormula(expression), { field: read, ...recordReadings(row) });
}

/**
 * A formula written by a client (`expression`, fields by name or id) for the field `self` of a
 * table with `fields` (which may include `self` as it was), checked and compiled: the template the
 * service keeps. A 400 at `where` (the field's place) naming the position and the fault otherwise.
 */
export function keepFormula(
  self: { id: string; name: string },
  expression: string,
  fields: readonly TableField[],
  schemaName: string,
  where: InputPath,
): KeptFormula {
  const others = fields.filter((field) => field.id !== self.id);
  // The field itself is a name it may not read: refused as a cycle, not as an unknown field.
  const candidates = [...others.map(formulaFieldOf), { id: self.id, name: self.name, type: 'text' as const }];
  const at = [...where, ...EXPRESSION];
  try {
    const prepared = prepareFormula(expression, candidates);
    const chain = selfReadingChain(self.id, prepared.fieldIds, readsByField(others));
    if (chain) {
      const names = new Map([
        ...others.map((field) => [field.id, field.name] as const),
        [self.id, self.name],
      ]);
      throw invalid(
        at,
        `the formula reads itself: ${chain.map((id) => `{${names.get(id) ?? id}}`).join(' → ')}`,
      );
    }
    const byId = new Map(others.map((field) => [field.id, field]));
    const atRead = compileKept(prepared.stored, schemaName, byId, 'r.');
    const kept: KeptFormula = {
      expression: prepared.stored,
      resultType: atRead.type,
      fieldIds: prepared.fieldIds,
    };
    if (atRead.volatile) return { ...kept, valueSql: formulaResultSql(atRead) };
    return { ...kept, columnSql: formulaResultSql(compileKept(prepared.stored, schemaName, byId, '')) };
  } catch (error) {
    if (error instanceof FormulaError) throw invalid(at, error.message);
    throw error;
  }
}

/**
 * A formula written by a client (fields by name or id) as a condition over the record table
 * aliased `r`: a record matches when the formula's value is true as IF() reads it (a non-zero
 * number, a non-empty text or array, a date). The Airtable-compatible API's filterByFormula. A
 * 400 at `where` naming the position and the fault otherwise.
 */
export function formulaConditionSql(
  expression: string,
  table: { schemaName: string; fields: readonly TableField[] },
  where: InputPath,
): string {
  try {
    // Compiled as written (fields by name or id), not printed with ids and parsed again as a kept
    // formula is: ids are longer than most names, and the text could pass the length bound.
    const tree = parseFormula(expression);
    inferFormula(tree, table.fields.map(formulaFieldOf));
    const byId = new Map(table.fields.map((field) => [field.id, field]));
    // Names as inferFormula matches them.
    const byName = new Map(table.fields.map((field) => [field.name.toLowerCase(), field]));
    const read = fieldReader(table.schemaName, byId, 'r.');
    const compiled = compileFormula(tree, {
      // inferFormula has found every field the tree names.
      field: (ref) => read((byId.get(ref) ?? byName.get(ref.toLowerCase()))!.id),
      ...recordReadings('r.'),
    });
    return formulaTruthySql(compiled);
  } catch (error) {
    if (error instanceof FormulaError) throw invalid(where, error.message);
    throw error;
  }
}

/** The names of the fields a formula names (by name or id, as written), each once. */
function namedFields(tree: FormulaNode, into = new Set<string>()): Set<string> {
  if (tree.kind === 'field') into.add(tree.name);
  else if (tree.kind === 'call') for (const arg of tree.args) namedFields(arg, into);
  else if (tree.kind === 'binary') {
    namedFields(tree.left, into);
    namedFields(tree.right, into);
  } else if (tree.kind === 'negate') namedFields(tree.operand, into);
  return into;
}

/**
 * The formulas of a new table (POST /tables, POST /bases), which may read each other in any order
 * of the body: kept in an order where each formula's formulas come first. `fields` are the
 * table's, formulas with the template as the client wrote it; `where(index)` is a field's place.
 */
export function keepNewTableFormulas(
  fields: readonly TableField[],
  schemaName: string,
  where: (index: number) => InputPath,
): TableField[] {
  const result = [...fields];
  const byRef = (ref: string) =>
    fields.findIndex((field) => field.id === ref) >= 0
      ? fields.findIndex((field) => field.id === ref)
      : fields.findIndex((field) => nameKey(field.name) === nameKey(ref));
  const pending = new Map<number, Set<number>>();
  fields.forEach((field, index) => {
    if (field.type !== 'formula') return;
    const expression = (field.template as { expression: string }).expression;
    let names: Set<string>;
    try {
      names = namedFields(parseFormula(expression));
    } catch (error) {
      if (error instanceof FormulaError) throw invalid([...where(index), ...EXPRESSION], error.message);
      throw error;
    }
    const formulaRefs = [...names]
      .map(byRef)
      .filter((ref) => ref >= 0 && ref !== index && fields[ref]!.type === 'formula');
    pending.set(index, new Set(formulaRefs));
  });
  while (pending.size > 0) {
    const ready = [...pending].find(([, waits]) => [...waits].every((ref) => !pending.has(ref)));
    if (!ready) {
      // Every formula left waits on another one left: they read each other.
      const [index] = [...pending.keys()];
      throw invalid(
        [...where(index!), ...EXPRESSION],
        `the formula reads itself through ${[...pending.keys()].map((i) => `{${fields[i]!.name}}`).join(', ')}`,
      );
    }
    const [index] = ready;
    const field = result[index]!;
    const expression = (field.template as { expression: string }).expression;
    result[index] = { ...field, template: keepFormula(field, expression, result, schemaName, where(index)) };
    pending.delete(index);
  }
  return result;
}

/** A formula's template as a client reads it: its expression with the fields' current names. */
export function shownFormulaTemplate(template: unknown, names: ReadonlyMap<string, string>) {
  return { expression: displayFormula(keptFormula({ template }).expression, names) };
}

/** The formulas that read `fieldId`, directly or through other formulas, nearest first. */
export function formulasReading(fields: readonly TableField[], fieldId: string): TableField[] {
  const byId = new Map(fields.map((field) => [field.id, field]));
  return dependentsOf(fieldId, readsByField(fields)).map((id) => byId.get(id)!);
}

/** The 400 for a change that would take from formulas (or other computed fields) a field they read. */
export function usedByFormulas(
  field: { name: string },
  readers: readonly TableField[],
  change: string,
  where: InputPath | null,
) {
  const names = readers.map((reader) => JSON.stringify(reader.name)).join(', ');
  const kind = readers.every((reader) => reader.type === 'formula') ? 'formula' : 'computed field';
  return invalid(
    where,
    `field ${JSON.stringify(field.name)} is read by the ${kind}${readers.length === 1 ? '' : 's'} ${names}: ${change}`,
  );
}

/**
 * The formulas reading `changedId` compiled again against `fields` (the table as it will be),
 * each keeping its result type; a 400 naming those that would no longer hold otherwise.
 */
export function recompiledReaders(
  fields: readonly TableField[],
  changedId: string,
  schemaName: string,
  where: InputPath | null,
): { field: TableField; kept: KeptFormula }[] {
  const readers = formulasReading(fields, changedId);
  const broken: TableField[] = [];
  const recompiled: { field: TableField; kept: KeptFormula }[] = [];
  for (const reader of readers) {
    const before = keptFormula(reader);
    try {
      const kept = keepFormula(reader, before.expression, fields, schemaName, []);
      if (kept.resultType !== before.resultType) broken.push(reader);
      else recompiled.push({ field: reader, kept });
    } catch {
      broken.push(reader);
    }
  }
  const changed = fields.find((field) => field.id === changedId)!;
  if (broken.length > 0) {
    throw usedByFormulas(changed, broken, 'they would no longer compute a value of the same type', where);
  }
  return recompiled;
}
