import { linkedValuesModule } from './linked-values';

/** The linked records' values of one of their fields, in link order, flattened (linked-values.ts). */
export const lookup = linkedValuesModule('lookup', 'array');
