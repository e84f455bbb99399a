export * from './oanEvents';
export * from './runner';
export * from './readYourWrites';
export * from './readTables';
export * from './pushTail';
