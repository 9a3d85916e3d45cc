export * from './state';
export * from './statements';
export * from './subscription';
