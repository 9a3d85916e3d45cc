export * from './column-types';
export * from './conversions';
export * from './copy';
export * from './ddl';
export * from './naming';
export * from './params';
export * from './sql-roles';
export * from './sql-views';
