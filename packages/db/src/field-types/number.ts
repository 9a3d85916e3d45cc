import { numeric } from './numeric';

export const number = numeric('number');
