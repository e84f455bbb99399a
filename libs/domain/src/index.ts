export * from './decider.ts';
export * from './errors.ts';
export * from './events/index.ts';
