import { numeric } from './numeric';

/** Seconds. */
export const duration = numeric('duration');
