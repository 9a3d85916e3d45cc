export * from './state';
export * from './statements';
