import { numeric } from './numeric';

/** A fraction: 0.5 is 50%. */
export const percent = numeric('percent');
