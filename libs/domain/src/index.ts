export * from './errors.ts';
export * from './events/index.ts';
