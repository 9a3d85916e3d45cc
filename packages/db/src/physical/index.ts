export * from './column-types';
export * from './conversions';
export * from './ddl';
export * from './naming';
