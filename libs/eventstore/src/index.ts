export * from './types.ts';
export * from './store.ts';
export * from './command.ts';
export * from './outbox.ts';
export * from './keyedId.ts';
export * from './commandIds.ts';
