export * from './types.ts';
export * from './store.ts';
export * from './command.ts';
export * from './relay.ts';
export * from './keyedId.ts';
