export { dependentsOf, type FieldReads, selfReadingChain } from './dependencies';
export {
  type FormulaField,
  type FormulaType,
  formulaFunctionNames,
  type InferredFormula,
  inferFormula,
} from './infer';
export {
  type BinaryOperator,
  FormulaError,
  type FormulaNode,
  MAX_FORMULA_DEPTH,
  MAX_FORMULA_LENGTH,
  parseFormula,
  printFormula,
} from './parse';
