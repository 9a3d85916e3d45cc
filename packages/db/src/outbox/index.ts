export * from './append';
export * from './dispatch';
export * from './revisions';
