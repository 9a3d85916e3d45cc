import { linkedValuesModule } from './linked-values';

/** A function over the linked records' values of one of their fields (linked-values.ts). */
export const rollup = linkedValuesModule('rollup', 'number');
