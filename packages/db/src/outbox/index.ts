export * from './append';
export * from './dispatch';
