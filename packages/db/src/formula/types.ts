/** A formula's result type, as a computed field's `resultType` says it: also how a field reads inside one. */
export type FormulaType = 'text' | 'number' | 'checkbox' | 'date' | 'datetime' | 'array';
