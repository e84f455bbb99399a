export * from './oanEvents.ts';
export * from './runner.ts';
export * from './readYourWrites.ts';
export * from './readTables.ts';
export * from './pushTail.ts';
export * from './longPollSlots.ts';
export * from './runtimeWakes.ts';
