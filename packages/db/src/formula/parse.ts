import { MAX_FORMULA_LENGTH } from '@recordbase/contracts/fields';

/**
 * The formula language of computed fields (and of the Airtable-compatible API's filterByFormula),
 * read into a tree. Airtable's syntax: field references `{Field name}` (a `}` in a name written
 * `\}`), numbers, strings in single or double quotes (a quote or backslash inside escaped with a
 * backslash), the operators `+ - * / & = != < > <= >=` and parentheses, and function calls
 * `NAME(arguments)` whose names are in any case. Every node keeps its place in the text, so that
 * a refusal names the character it is about.
 *
 * Precedence, loosest first, as in Airtable and spreadsheets: comparisons, `&`, `+ -`, `* /`,
 * then a leading minus. Operators of one level associate to the left.
 */

/** A node of the tree; `at` is the offset (0-based) of its first character in the text. */
export type FormulaNode =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'text'; value: string; at: number }
  | { kind: 'field'; name: string; at: number }
  | { kind: 'call'; name: string; args: FormulaNode[]; at: number }
  | { kind: 'negate'; operand: FormulaNode; at: number }
  | { kind: 'binary'; operator: BinaryOperator; left: FormulaNode; right: FormulaNode; at: number };

export type BinaryOperator = '+' | '-' | '*' | '/' | '&' | '=' | '!=' | '<' | '>' | '<=' | '>=';

/** Why a formula cannot be used, and where: `at` is a 0-based offset into its text. */
export class FormulaError extends Error {
  constructor(
    readonly at: number,
    readonly fault: string,
  ) {
    super(`at character ${at + 1}: ${fault}`);
    this.name = 'FormulaError';
  }
}

export { MAX_FORMULA_LENGTH } from '@recordbase/contracts/fields';
/** How deep calls, parentheses and operators may nest. */
export const MAX_FORMULA_DEPTH = 100;

type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'text'; value: string; at: number }
  | { kind: 'field'; name: string; at: number }
  | { kind: 'name'; name: string; at: number }
  | { kind: 'punct'; value: BinaryOperator | '(' | ')' | ','; at: number }
  | { kind: 'end'; at: number };

const SPACE = /\s/;
const DIGIT = /[0-9]/;
const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;

/** The tokens of `text`, one pass, each character looked at once or twice. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (SPACE.test(char)) {
      i += 1;
      continue;
    }
    const at = i;
    if (DIGIT.test(char) || (char === '.' && DIGIT.test(text[i + 1] ?? ''))) {
      while (i < text.length && DIGIT.test(text[i]!)) i += 1;
      if (text[i] === '.') {
        i += 1;
        while (i < text.length && DIGIT.test(text[i]!)) i += 1;
      }
      if (text[i] === 'e' || text[i] === 'E') {
        const sign = text[i + 1] === '+' || text[i + 1] === '-' ? 1 : 0;
        if (DIGIT.test(text[i + 1 + sign] ?? '')) {
          i += 1 + sign;
          while (i < text.length && DIGIT.test(text[i]!)) i += 1;
        }
      }
      const value = Number(text.slice(at, i));
      // Infinity would be stored as the text "Infinity", which reads back as no formula at all.
      if (!Number.isFinite(value)) throw new FormulaError(at, `the number ${text.slice(at, i)} is too large`);
      tokens.push({ kind: 'number', value, at });
      continue;
    }
    if (char === '"' || char === "'") {
      let value = '';
      i += 1;
      for (;;) {
        if (i >= text.length) throw new FormulaError(at, 'a text that is never closed');
        const next = text[i]!;
        if (next === '\\' && i + 1 < text.length) {
          value += text[i + 1];
          i += 2;
        } else if (next === char) {
          i += 1;
          break;
        } else {
          value += next;
          i += 1;
        }
      }
      tokens.push({ kind: 'text', value, at });
      continue;
    }
    if (char === '{') {
      let name = '';
      i += 1;
      for (;;) {
        if (i >= text.length) throw new FormulaError(at, 'a field reference that is never closed');
        const next = text[i]!;
        if (next === '\\' && (text[i + 1] === '}' || text[i + 1] === '\\')) {
          name += text[i + 1];
          i += 2;
        } else if (next === '}') {
          i += 1;
          break;
        } else {
          name += next;
          i += 1;
        }
      }
      if (name.trim() === '') throw new FormulaError(at, 'a field reference without a field name');
      tokens.push({ kind: 'field', name, at });
      continue;
    }
    if (NAME_START.test(char)) {
      while (i < text.length && NAME_PART.test(text[i]!)) i += 1;
      tokens.push({ kind: 'name', name: text.slice(at, i), at });
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '!=' || two === '<=' || two === '>=') {
      tokens.push({ kind: 'punct', value: two, at });
      i += 2;
      continue;
    }
    if ('+-*/&=<>(),'.includes(char)) {
      tokens.push({ kind: 'punct', value: char as BinaryOperator | '(' | ')' | ',', at });
      i += 1;
      continue;
    }
    throw new FormulaError(at, `unexpected ${JSON.stringify(char)}`);
  }
  tokens.push({ kind: 'end', at: text.length });
  return tokens;
}

/** Binary operators by level, loosest first. */
const LEVELS: readonly (readonly BinaryOperator[])[] = [
  ['=', '!=', '<', '>', '<=', '>='],
  ['&'],
  ['+', '-'],
  ['*', '/'],
];

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the formula';
    case 'number':
      return `the number ${token.value}`;
    case 'text':
      return 'a text';
    case 'field':
      return `the field {${token.name}}`;
    case 'name':
      return `"${token.name}"`;
    case 'punct':
      return `"${token.value}"`;
  }
}

/** The tree of `text`, or a FormulaError naming the first place it cannot be read. */
export function parseFormula(text: string): FormulaNode {
  if (text.length > MAX_FORMULA_LENGTH) {
    throw new FormulaError(MAX_FORMULA_LENGTH, `a formula is at most ${MAX_FORMULA_LENGTH} characters`);
  }
  const tokens = tokenize(text);
  let next = 0;
  const peek = () => tokens[next]!;
  const take = () => tokens[next++]!;
  const isPunct = (token: Token, value: string) => token.kind === 'punct' && token.value === value;
  const expect = (value: ')' | ',', what: string) => {
    const token = peek();
    if (!isPunct(token, value))
      throw new FormulaError(token.at, `expected ${what}, found ${describe(token)}`);
    take();
  };

  const level = (index: number, depth: number): FormulaNode => {
    if (index === LEVELS.length) return unary(depth);
    let left = level(index + 1, depth);
    for (;;) {
      const token = peek();
      if (token.kind !== 'punct' || !(LEVELS[index] as readonly string[]).includes(token.value)) return left;
      take();
      const right = level(index + 1, depth);
      left = { kind: 'binary', operator: token.value as BinaryOperator, left, right, at: token.at };
    }
  };
  const expression = (depth: number): FormulaNode => {
    if (depth > MAX_FORMULA_DEPTH) {
      throw new FormulaError(peek().at, `a formula nests at most ${MAX_FORMULA_DEPTH} deep`);
    }
    return level(0, depth);
  };
  const unary = (depth: number): FormulaNode => {
    const token = peek();
    if (depth > MAX_FORMULA_DEPTH) {
      throw new FormulaError(token.at, `a formula nests at most ${MAX_FORMULA_DEPTH} deep`);
    }
    if (isPunct(token, '-') || isPunct(token, '+')) {
      take();
      const operand = unary(depth + 1);
      return isPunct(token, '-') ? { kind: 'negate', operand, at: token.at } : operand;
    }
    return primary(depth);
  };
  const primary = (depth: number): FormulaNode => {
    const token = take();
    switch (token.kind) {
      case 'number':
        return { kind: 'number', value: token.value, at: token.at };
      case 'text':
        return { kind: 'text', value: token.value, at: token.at };
      case 'field':
        return { kind: 'field', name: token.name, at: token.at };
      case 'name': {
        if (!isPunct(peek(), '(')) {
          // TRUE and FALSE may be written without parentheses, as in Airtable.
          const upper = token.name.toUpperCase();
          if (upper === 'TRUE' || upper === 'FALSE')
            return { kind: 'call', name: upper, args: [], at: token.at };
          throw new FormulaError(
            token.at,
            `"${token.name}" is neither a function call nor a field (a field is written {${token.name}})`,
          );
        }
        take();
        const args: FormulaNode[] = [];
        if (!isPunct(peek(), ')')) {
          for (;;) {
            args.push(expression(depth + 1));
            if (!isPunct(peek(), ',')) break;
            take();
          }
        }
        expect(')', `"," or ")" to go on with ${token.name.toUpperCase()}(`);
        return { kind: 'call', name: token.name.toUpperCase(), args, at: token.at };
      }
      case 'punct':
        if (token.value === '(') {
          const inner = expression(depth + 1);
          expect(')', '")"');
          return inner;
        }
        throw new FormulaError(token.at, `expected a value, found ${describe(token)}`);
      case 'end':
        throw new FormulaError(token.at, 'the formula ends where a value was expected');
    }
  };

  const tree = expression(0);
  const rest = peek();
  if (rest.kind !== 'end') {
    throw new FormulaError(
      rest.at,
      `expected an operator or the end of the formula, found ${describe(rest)}`,
    );
  }
  return tree;
}

/** Binding strength of each operator: a child binding looser than its parent is parenthesized. */
const STRENGTH: Readonly<Record<BinaryOperator, number>> = Object.fromEntries(
  LEVELS.flatMap((operators, index) => operators.map((operator) => [operator, index])),
) as Record<BinaryOperator, number>;

/**
 * The tree as formula text, each field reference written with `fieldName(name)` (a field's current
 * name, for a formula stored with ids): parsing the text gives the tree back.
 */
export function printFormula(
  tree: FormulaNode,
  fieldName: (name: string) => string = (name) => name,
): string {
  const print = (node: FormulaNode, parentStrength: number, rightOperand: boolean): string => {
    switch (node.kind) {
      case 'number':
        return String(node.value);
      case 'text':
        return `"${node.value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
      case 'field':
        return `{${fieldName(node.name).replace(/[\\}]/g, (char) => `\\${char}`)}}`;
      case 'call':
        return `${node.name}(${node.args.map((arg) => print(arg, -1, false)).join(', ')})`;
      case 'negate':
        return `-${print(node.operand, LEVELS.length, false)}`;
      case 'binary': {
        const strength = STRENGTH[node.operator];
        const text = `${print(node.left, strength, false)} ${node.operator} ${print(node.right, strength, true)}`;
        // Left-associative: a right operand of the same strength needs its parentheses.
        const bare = strength > parentStrength || (strength === parentStrength && !rightOperand);
        return bare ? text : `(${text})`;
      }
    }
  };
  return print(tree, -1, false);
}
