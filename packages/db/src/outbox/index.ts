export * from './append';
export * from './changes';
export * from './dispatch';
export * from './revisions';
