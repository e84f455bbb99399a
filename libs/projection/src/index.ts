export * from './oanEvents';
export * from './runner';
