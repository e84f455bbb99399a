export * from './constants';
export * from './envelope';
export * from './errors';
export * from './connectors';
export * from './extensionsOpenApi';
export * from './limits';
