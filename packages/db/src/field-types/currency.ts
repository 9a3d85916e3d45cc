import { numeric } from './numeric';

export const currency = numeric('currency');
