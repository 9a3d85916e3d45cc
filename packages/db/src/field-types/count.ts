import { linkedValuesModule } from './linked-values';

/** How many records a link field of the record holds (linked-values.ts). */
export const count = linkedValuesModule('count', 'number');
