import { didYouMean } from '../field-types/suggest';
import { type BinaryOperator, FormulaError, type FormulaNode, parseFormula, printFormula } from './parse';
import type { FormulaType } from './types';

/**
 * What a formula gives, worked out from its tree before anything runs: its result type (a computed
 * field's `resultType`, whose filter operators it takes), the fields it reads, and every fault the
 * contract names (an unknown function or field, the wrong number of arguments) at its place.
 */

/** A type while inferring: `blank` is BLANK()'s, which takes the type of whatever it stands beside. */
export type Inferred = FormulaType | 'blank';

/** A field a formula may name: its id (how the formula stores it) and the type of its values. */
export interface FormulaField {
  id: string;
  name: string;
  type: FormulaType;
}

export interface InferredFormula {
  type: FormulaType;
  /** The ids of the fields the formula reads, each once, in the order first named. */
  fieldIds: string[];
}

/** The type two places of one result (IF's branches, SWITCH's results) give together. */
export function unify(a: Inferred, b: Inferred): Inferred {
  if (a === 'blank') return b;
  if (b === 'blank' || a === b) return a;
  if ((a === 'date' && b === 'datetime') || (a === 'datetime' && b === 'date')) return 'datetime';
  return 'text';
}

interface FunctionSpec {
  /** The fewest and most arguments it takes. */
  min: number;
  max: number;
  result: (args: readonly Inferred[]) => Inferred;
}

const ANY = Number.POSITIVE_INFINITY;
const fixed = (type: Inferred) => (): Inferred => type;
const spec = (min: number, max: number, result: FunctionSpec['result']): FunctionSpec => ({
  min,
  max,
  result,
});

/** The results of SWITCH(expression, pattern, result, …, default?): every second argument after the first, and a default. */
function switchResults(args: readonly Inferred[]): Inferred[] {
  const results = args.filter((_, index) => index >= 2 && index % 2 === 0);
  return args.length % 2 === 0 ? [...results, args[args.length - 1]!] : results;
}

/** Every function of the contract's list, by its upper-case name. */
const FUNCTIONS: Readonly<Record<string, FunctionSpec>> = {
  IF: spec(2, 3, (args) => unify(args[1]!, args[2] ?? 'blank')),
  // SWITCH(expression, default) is Airtable's too: no pattern, always the default.
  SWITCH: spec(2, ANY, (args) => switchResults(args).reduce<Inferred>(unify, 'blank')),
  AND: spec(1, ANY, fixed('checkbox')),
  OR: spec(1, ANY, fixed('checkbox')),
  NOT: spec(1, 1, fixed('checkbox')),
  XOR: spec(1, ANY, fixed('checkbox')),
  BLANK: spec(0, 0, fixed('blank')),
  TRUE: spec(0, 0, fixed('checkbox')),
  FALSE: spec(0, 0, fixed('checkbox')),
  ABS: spec(1, 1, fixed('number')),
  ROUND: spec(1, 2, fixed('number')),
  ROUNDUP: spec(1, 2, fixed('number')),
  ROUNDDOWN: spec(1, 2, fixed('number')),
  FLOOR: spec(1, 2, fixed('number')),
  CEILING: spec(1, 2, fixed('number')),
  INT: spec(1, 1, fixed('number')),
  MOD: spec(2, 2, fixed('number')),
  POWER: spec(2, 2, fixed('number')),
  SQRT: spec(1, 1, fixed('number')),
  EXP: spec(1, 1, fixed('number')),
  LOG: spec(1, 2, fixed('number')),
  MIN: spec(1, ANY, fixed('number')),
  MAX: spec(1, ANY, fixed('number')),
  SUM: spec(1, ANY, fixed('number')),
  AVERAGE: spec(1, ANY, fixed('number')),
  VALUE: spec(1, 1, fixed('number')),
  CONCATENATE: spec(1, ANY, fixed('text')),
  LEN: spec(1, 1, fixed('number')),
  LOWER: spec(1, 1, fixed('text')),
  UPPER: spec(1, 1, fixed('text')),
  TRIM: spec(1, 1, fixed('text')),
  LEFT: spec(2, 2, fixed('text')),
  RIGHT: spec(2, 2, fixed('text')),
  MID: spec(3, 3, fixed('text')),
  FIND: spec(2, 3, fixed('number')),
  SEARCH: spec(2, 3, fixed('number')),
  SUBSTITUTE: spec(3, 4, fixed('text')),
  REPLACE: spec(4, 4, fixed('text')),
  REPT: spec(2, 2, fixed('text')),
  T: spec(1, 1, fixed('text')),
  TODAY: spec(0, 0, fixed('date')),
  NOW: spec(0, 0, fixed('datetime')),
  YEAR: spec(1, 1, fixed('number')),
  MONTH: spec(1, 1, fixed('number')),
  DAY: spec(1, 1, fixed('number')),
  HOUR: spec(1, 1, fixed('number')),
  MINUTE: spec(1, 1, fixed('number')),
  SECOND: spec(1, 1, fixed('number')),
  WEEKDAY: spec(1, 2, fixed('number')),
  DATEADD: spec(3, 3, fixed('datetime')),
  // The unit may be left out, as in Airtable: seconds.
  DATETIME_DIFF: spec(2, 3, fixed('number')),
  DATESTR: spec(1, 1, fixed('text')),
  IS_BEFORE: spec(2, 2, fixed('checkbox')),
  IS_AFTER: spec(2, 2, fixed('checkbox')),
  RECORD_ID: spec(0, 0, fixed('text')),
  CREATED_TIME: spec(0, 0, fixed('datetime')),
  LAST_MODIFIED_TIME: spec(0, 0, fixed('datetime')),
  ARRAYJOIN: spec(1, 2, fixed('text')),
  ARRAYUNIQUE: spec(1, 1, fixed('array')),
  ARRAYCOMPACT: spec(1, 1, fixed('array')),
};

/** The names of the functions a formula may call. */
export const formulaFunctionNames: readonly string[] = Object.keys(FUNCTIONS);

const OPERATOR_TYPES: Readonly<Record<string, Inferred>> = {
  '+': 'number',
  '-': 'number',
  '*': 'number',
  '/': 'number',
  '&': 'text',
  '=': 'checkbox',
  '!=': 'checkbox',
  '<': 'checkbox',
  '>': 'checkbox',
  '<=': 'checkbox',
  '>=': 'checkbox',
};

/** The type of a call of `name` (a function of the catalogue, arity checked) on arguments of these types. */
export function callType(name: string, args: readonly Inferred[]): Inferred {
  return FUNCTIONS[name]!.result(args);
}

const isDate = (type: Inferred) => type === 'date' || type === 'datetime';

/**
 * The type of `left operator right`. Dates take part in arithmetic only as `date - date` (days
 * between); moving one is DATEADD's, since a bare number says nothing of its unit.
 */
export function binaryType(operator: BinaryOperator, left: Inferred, right: Inferred, at: number): Inferred {
  const arithmetic = operator === '+' || operator === '-' || operator === '*' || operator === '/';
  if (arithmetic && (isDate(left) || isDate(right)) && !(operator === '-' && isDate(left) && isDate(right))) {
    throw new FormulaError(
      at,
      `${operator} cannot take a date: use DATEADD to move a date and DATETIME_DIFF or date - date to compare two`,
    );
  }
  return OPERATOR_TYPES[operator]!;
}

function arity(spec: FunctionSpec): string {
  if (spec.min === spec.max) return `${spec.min} argument${spec.min === 1 ? '' : 's'}`;
  if (spec.max === ANY) return `at least ${spec.min} argument${spec.min === 1 ? '' : 's'}`;
  return `${spec.min} to ${spec.max} arguments`;
}

/**
 * The result type and fields of `tree`, whose field references are looked up among `fields` by
 * id, else by name (case-insensitively, as fields are named); a FormulaError at the first fault.
 */
export function inferFormula(tree: FormulaNode, fields: readonly FormulaField[]): InferredFormula {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const byName = new Map(fields.map((field) => [field.name.toLowerCase(), field]));
  const fieldIds: string[] = [];
  const infer = (node: FormulaNode): Inferred => {
    switch (node.kind) {
      case 'number':
        return 'number';
      case 'text':
        return 'text';
      case 'field': {
        const field = byId.get(node.name) ?? byName.get(node.name.toLowerCase());
        if (!field) {
          const names = fields.map((candidate) => candidate.name);
          throw new FormulaError(node.at, `unknown field {${node.name}}${didYouMean(node.name, names)}`);
        }
        if (!fieldIds.includes(field.id)) fieldIds.push(field.id);
        return field.type;
      }
      case 'negate':
        if (isDate(infer(node.operand))) {
          throw new FormulaError(node.at, '- cannot take a date: use DATEADD to move a date');
        }
        return 'number';
      case 'binary':
        return binaryType(node.operator, infer(node.left), infer(node.right), node.at);
      case 'call': {
        const spec = FUNCTIONS[node.name];
        if (!spec) {
          throw new FormulaError(
            node.at,
            `unknown function ${node.name}${didYouMean(node.name, formulaFunctionNames)}`,
          );
        }
        if (node.args.length < spec.min || node.args.length > spec.max) {
          throw new FormulaError(node.at, `${node.name} takes ${arity(spec)}, not ${node.args.length}`);
        }
        return spec.result(node.args.map(infer));
      }
    }
  };
  const type = infer(tree);
  // A formula of nothing but BLANK() holds no value of any type: text, the type of an empty cell.
  return { type: type === 'blank' ? 'text' : type, fieldIds };
}

/** A formula as a computed field keeps it: its text with field references by id, and what it gives. */
export interface PreparedFormula extends InferredFormula {
  /** The expression with every field reference written by the field's id, as it is stored. */
  stored: string;
}

/**
 * A formula as written by a client (fields named by name or id) checked and made ready to store:
 * a FormulaError naming the place of its first fault otherwise.
 */
export function prepareFormula(expression: string, fields: readonly FormulaField[]): PreparedFormula {
  const tree = parseFormula(expression);
  const inferred = inferFormula(tree, fields);
  const byId = new Map(fields.map((field) => [field.id, field]));
  const byName = new Map(fields.map((field) => [field.name.toLowerCase(), field]));
  const idOf = (name: string) => (byId.get(name) ?? byName.get(name.toLowerCase()))!.id;
  return { ...inferred, stored: printFormula(tree, idOf) };
}

/** A stored formula as a client reads it: each field by its current name (an unknown id as is). */
export function displayFormula(stored: string, nameOfId: ReadonlyMap<string, string>): string {
  return printFormula(parseFormula(stored), (id) => nameOfId.get(id) ?? id);
}
