export {
  asText as formulaTextSql,
  CLOCK_SQL,
  type CompileContext,
  type CompiledFormula,
  compileFormula,
  FORMULA_COLUMN_TYPE,
  type FormulaFieldSql,
  formulaReadSql,
  formulaResultSql,
  MAX_COMPILED_FORMULA_LENGTH,
  truthy as formulaTruthySql,
} from './compile';
export { dependentsOf, type FieldReads, selfReadingChain } from './dependencies';
export {
  displayFormula,
  type FormulaField,
  formulaFunctionNames,
  type InferredFormula,
  inferFormula,
  type PreparedFormula,
  prepareFormula,
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
export type { FormulaType } from './types';
