export * from './oanEvents.ts';
export * from './runner.ts';
export * from './readYourWrites.ts';
export * from './readTables.ts';
export * from './pushTail.ts';
