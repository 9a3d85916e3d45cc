import fc from 'fast-check';
import { fieldTypeModules } from '../src/field-types/registry';
import {
  dependentsOf,
  displayFormula,
  type FieldReads,
  FormulaError,
  type FormulaField,
  type FormulaNode,
  formulaFunctionNames,
  inferFormula,
  MAX_FORMULA_DEPTH,
  MAX_FORMULA_LENGTH,
  parseFormula,
  prepareFormula,
  printFormula,
  selfReadingChain,
} from '../src/formula';

/** The tree without places, to compare shapes. */
function shape(node: FormulaNode): unknown {
  switch (node.kind) {
    case 'number':
    case 'text':
      return node.value;
    case 'field':
      return { field: node.name };
    case 'negate':
      return ['-', shape(node.operand)];
    case 'binary':
      return [node.operator, shape(node.left), shape(node.right)];
    case 'call':
      return { [node.name]: node.args.map(shape) };
  }
}

/** The fault of a formula that must not parse or type, with its 1-based character. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FormulaError);
    return (error as FormulaError).message;
  }
  throw new Error('expected a refusal');
}

describe('parsing a formula', () => {
  it('reads field references, numbers, texts and calls, function names in any case', () => {
    expect(shape(parseFormula('IF({Amount} > 10.5, "big", \'small\')'))).toEqual({
      IF: [['>', { field: 'Amount' }, 10.5], 'big', 'small'],
    });
    expect(shape(parseFormula('concatenate({First name}, " ", {Last})'))).toEqual({
      CONCATENATE: [{ field: 'First name' }, ' ', { field: 'Last' }],
    });
    expect(shape(parseFormula('1.5e3 + .25'))).toEqual(['+', 1500, 0.25]);
  });

  it('binds as spreadsheets do: * / before + -, before &, before comparisons, left to right', () => {
    expect(shape(parseFormula('1 + 2 * 3 & "x" = "7x"'))).toEqual([
      '=',
      ['&', ['+', 1, ['*', 2, 3]], 'x'],
      '7x',
    ]);
    expect(shape(parseFormula('10 - 4 - 3'))).toEqual(['-', ['-', 10, 4], 3]);
    expect(shape(parseFormula('-{A} * (2 + 3)'))).toEqual(['*', ['-', { field: 'A' }], ['+', 2, 3]]);
    expect(shape(parseFormula('{A} != 1'))).toEqual(['!=', { field: 'A' }, 1]);
  });

  it('takes escapes in names and texts, and TRUE and FALSE without parentheses', () => {
    expect(shape(parseFormula('{A \\} B}'))).toEqual({ field: 'A } B' });
    expect(shape(parseFormula('"say \\"hi\\""'))).toBe('say "hi"');
    expect(shape(parseFormula('AND(true, FALSE())'))).toEqual({ AND: [{ TRUE: [] }, { FALSE: [] }] });
  });

  it.each([
    ['{Amount} +', 'at character 11: the formula ends where a value was expected'],
    ['IF({A}, 1', 'at character 10: expected "," or ")" to go on with IF(, found the end of the formula'],
    ['"open', 'at character 1: a text that is never closed'],
    ['{Open', 'at character 1: a field reference that is never closed'],
    ['{ }', 'at character 1: a field reference without a field name'],
    ['1 # 2', 'at character 3: unexpected "#"'],
    [
      'Amount * 2',
      'at character 1: "Amount" is neither a function call nor a field (a field is written {Amount})',
    ],
    ['(1 + 2', 'at character 7: expected ")", found the end of the formula'],
    ['1 2', 'at character 3: expected an operator or the end of the formula, found the number 2'],
    ['* 3', 'at character 1: expected a value, found "*"'],
    ['2 * 1e999', 'at character 5: the number 1e999 is too large'],
  ])('refuses %j, naming the place: %s', (formula, message) => {
    expect(refusal(() => parseFormula(formula))).toBe(message);
  });

  it('bounds how long and how deep a formula is, before the stack would', () => {
    expect(refusal(() => parseFormula('1'.repeat(MAX_FORMULA_LENGTH + 1)))).toBe(
      `at character ${MAX_FORMULA_LENGTH + 1}: a formula is at most ${MAX_FORMULA_LENGTH} characters`,
    );
    expect(refusal(() => parseFormula(`${'('.repeat(MAX_FORMULA_DEPTH + 5)}1`))).toMatch(
      /a formula nests at most 100 deep$/,
    );
    expect(refusal(() => parseFormula(`${'-'.repeat(MAX_FORMULA_DEPTH + 5)}1`))).toMatch(
      /a formula nests at most 100 deep$/,
    );
    expect(shape(parseFormula(`${'('.repeat(50)}1${')'.repeat(50)}`))).toBe(1);
  });
});

describe('printing a formula', () => {
  const names = fc.string({ minLength: 1, maxLength: 8 }).filter((name) => name.trim() !== '');
  const leaf: fc.Arbitrary<FormulaNode> = fc.oneof(
    fc
      .double({ min: 0, max: 1e6, noNaN: true })
      .map((value) => ({ kind: 'number' as const, value: Math.abs(value), at: 0 })),
    fc.string({ maxLength: 6 }).map((value) => ({ kind: 'text' as const, value, at: 0 })),
    names.map((name) => ({ kind: 'field' as const, name, at: 0 })),
  );
  const tree = fc.letrec<{ node: FormulaNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      tie('node').map((operand) => ({ kind: 'negate' as const, operand, at: 0 })),
      fc
        .tuple(
          fc.constantFrom('+', '-', '*', '/', '&', '=', '!=', '<', '>', '<=', '>=' as const),
          tie('node'),
          tie('node'),
        )
        .map(([operator, left, right]) => ({ kind: 'binary' as const, operator, left, right, at: 0 })),
      fc
        .tuple(fc.constantFrom('IF', 'SUM', 'CONCATENATE'), fc.array(tie('node'), { maxLength: 3 }))
        .map(([name, args]) => ({ kind: 'call' as const, name, args, at: 0 })),
    ),
  })).node;

  it('gives back, once parsed, the tree it printed', () => {
    fc.assert(
      fc.property(tree, (node) => {
        expect(shape(parseFormula(printFormula(node)))).toEqual(shape(node));
      }),
      { numRuns: 500 },
    );
  });

  it('writes each field reference as the caller names it', () => {
    const ids: Record<string, string> = { fldAmount0000: 'Amount } due' };
    expect(printFormula(parseFormula('{fldAmount0000} * 2'), (id) => ids[id] ?? id)).toBe(
      '{Amount \\} due} * 2',
    );
  });
});

describe('inferring what a formula gives', () => {
  const fields: FormulaField[] = [
    { id: 'fldamount', name: 'Amount', type: 'number' },
    { id: 'fldname', name: 'Name', type: 'text' },
    { id: 'flddue', name: 'Due', type: 'date' },
    { id: 'fldseen', name: 'Seen at', type: 'datetime' },
    { id: 'fldtags', name: 'Tags', type: 'array' },
    { id: 'flddone', name: 'Done', type: 'checkbox' },
  ];
  const typeOf = (formula: string) => inferFormula(parseFormula(formula), fields).type;

  it.each([
    ['{Due} + 1', 'at character 7: + cannot take a date: use DATEADD'],
    ['1 - {Seen at}', 'at character 3: - cannot take a date: use DATEADD'],
    ['{Due} * {Due}', 'at character 7: * cannot take a date'],
    ['-{Due}', 'at character 1: - cannot take a date'],
  ])('refuses arithmetic on a date but date - date: %s', (formula, message) => {
    expect(() => typeOf(formula)).toThrow(message);
  });

  it.each([
    ['{Amount} * 2', 'number'],
    ['{Name} & " x"', 'text'],
    ['{Amount} > 3', 'checkbox'],
    ['IF({Done}, {Amount}, BLANK())', 'number'],
    ['IF({Done}, {Due}, {Seen at})', 'datetime'],
    ['IF({Done}, {Amount}, "none")', 'text'],
    ['SWITCH({Name}, "a", 1, "b", 2, 0)', 'number'],
    ['SWITCH({Name}, "a", {Due})', 'date'],
    ['SWITCH({Name}, {Amount})', 'number'],
    ['DATETIME_DIFF({Seen at}, {Due})', 'number'],
    ['DATEADD({Due}, 1, "days")', 'datetime'],
    ['{Seen at} - {Due}', 'number'],
    ['DATETIME_DIFF({Seen at}, {Due}, "days")', 'number'],
    ['TODAY()', 'date'],
    ['ARRAYUNIQUE({Tags})', 'array'],
    ['ARRAYJOIN({Tags}, ", ")', 'text'],
    ['BLANK()', 'text'],
    ['not({Done})', 'checkbox'],
    ['-{Amount}', 'number'],
  ])('%s gives %s', (formula, type) => {
    expect(typeOf(formula)).toBe(type);
  });

  it('lists the fields read, each once, by id; names are matched whatever their case', () => {
    expect(inferFormula(parseFormula('{amount} + {AMOUNT} + LEN({Name})'), fields).fieldIds).toEqual([
      'fldamount',
      'fldname',
    ]);
  });

  it.each([
    ['{Amont} + 1', 'at character 1: unknown field {Amont} (did you mean "Amount"?)'],
    ['1 + SUMM({Amount})', 'at character 5: unknown function SUMM (did you mean "SUM"?)'],
    ['IF({Done})', 'at character 1: IF takes 2 to 3 arguments, not 1'],
    ['MID("abc", 1)', 'at character 1: MID takes 3 arguments, not 2'],
    ['SUM()', 'at character 1: SUM takes at least 1 argument, not 0'],
    ['NOW(1)', 'at character 1: NOW takes 0 arguments, not 1'],
  ])('refuses %j: %s', (formula, message) => {
    expect(refusal(() => inferFormula(parseFormula(formula), fields))).toBe(message);
  });

  it('knows every function of the contract', () => {
    expect([...formulaFunctionNames].sort()).toEqual(
      [
        'IF',
        'SWITCH',
        'AND',
        'OR',
        'NOT',
        'XOR',
        'BLANK',
        'TRUE',
        'FALSE',
        'ABS',
        'ROUND',
        'ROUNDUP',
        'ROUNDDOWN',
        'FLOOR',
        'CEILING',
        'INT',
        'MOD',
        'POWER',
        'SQRT',
        'EXP',
        'LOG',
        'MIN',
        'MAX',
        'SUM',
        'AVERAGE',
        'VALUE',
        'CONCATENATE',
        'LEN',
        'LOWER',
        'UPPER',
        'TRIM',
        'LEFT',
        'RIGHT',
        'MID',
        'FIND',
        'SEARCH',
        'SUBSTITUTE',
        'REPLACE',
        'REPT',
        'T',
        'TODAY',
        'NOW',
        'YEAR',
        'MONTH',
        'DAY',
        'HOUR',
        'MINUTE',
        'SECOND',
        'WEEKDAY',
        'DATEADD',
        'DATETIME_DIFF',
        'DATESTR',
        'IS_BEFORE',
        'IS_AFTER',
        'RECORD_ID',
        'CREATED_TIME',
        'LAST_MODIFIED_TIME',
        'ARRAYJOIN',
        'ARRAYUNIQUE',
        'ARRAYCOMPACT',
      ].sort(),
    );
  });
});

describe('how computed fields depend on each other', () => {
  // total = price * qty; taxed = total * 1.2; label = taxed & name
  const reads: FieldReads = new Map([
    ['total', ['price', 'qty']],
    ['taxed', ['total']],
    ['label', ['taxed', 'name', 'taxed']],
  ]);

  it('finds the chain by which a field would read itself, and none when it would not', () => {
    expect(selfReadingChain('total', ['label'], reads)).toEqual(['total', 'label', 'taxed', 'total']);
    expect(selfReadingChain('total', ['total'], reads)).toEqual(['total', 'total']);
    expect(selfReadingChain('total', ['price', 'name'], reads)).toBeNull();
    expect(selfReadingChain('fresh', ['label', 'taxed'], reads)).toBeNull();
  });

  it('lists what reads a field, through any chain, nearest first and each once', () => {
    expect(dependentsOf('price', reads)).toEqual(['total', 'taxed', 'label']);
    expect(dependentsOf('name', reads)).toEqual(['label']);
    expect(dependentsOf('label', reads)).toEqual([]);
  });

  it('walks a long chain without recursion', () => {
    const chain: FieldReads = new Map(
      Array.from({ length: 50_000 }, (_, index) => [`f${index + 1}`, [`f${index}`]] as const),
    );
    expect(dependentsOf('f0', chain)).toHaveLength(50_000);
    expect(selfReadingChain('f0', ['f50000'], chain)).toHaveLength(50_002);
  });
});

describe('a formula as a computed field keeps it', () => {
  const fields: FormulaField[] = [
    { id: 'fldPrice000000', name: 'Unit price', type: 'number' },
    { id: 'fldQty00000000', name: 'Qty', type: 'number' },
  ];

  it('stores field references by id, whether written by name or id, and shows them by current name', () => {
    const prepared = prepareFormula('{unit price} * {fldQty00000000} + 1', fields);
    expect(prepared).toEqual({
      type: 'number',
      fieldIds: ['fldPrice000000', 'fldQty00000000'],
      stored: '{fldPrice000000} * {fldQty00000000} + 1',
    });
    // Renamed since: the stored text names the field by id, and reads under its new name.
    const names = new Map([
      ['fldPrice000000', 'Price (EUR)'],
      ['fldQty00000000', 'Quantity'],
    ]);
    expect(displayFormula(prepared.stored, names)).toBe('{Price (EUR)} * {Quantity} + 1');
  });

  it('refuses what it cannot store, at the place of the fault', () => {
    expect(refusal(() => prepareFormula('{Unit price} * {Qt}', fields))).toBe(
      'at character 16: unknown field {Qt} (did you mean "Qty"?)',
    );
  });
});

describe('how each field type reads inside a formula', () => {
  it("is its module's to say, as docs/formulas.md's table of value kinds lists", () => {
    expect(
      Object.fromEntries(Object.values(fieldTypeModules).map((module) => [module.type, module.formula])),
    ).toEqual({
      single_line_text: 'text',
      long_text: 'text',
      email: 'text',
      url: 'text',
      phone_number: 'text',
      single_select: 'text',
      number: 'number',
      currency: 'number',
      percent: 'number',
      rating: 'number',
      duration: 'number',
      checkbox: 'checkbox',
      date: 'date',
      datetime: 'datetime',
      multiple_select: 'array',
      attachments: 'array',
      linked_record: 'array',
      autonumber: 'number',
      created_time: 'datetime',
      last_modified_time: 'datetime',
      created_by: 'text',
      last_modified_by: 'text',
      // A formula field reads as its own result type (moduleOfField); its type alone says text.
      formula: 'text',
      count: 'number',
      lookup: 'array',
      // A rollup reads as its function's result type (moduleOfField); its type alone says number.
      rollup: 'number',
    });
  });
});
