export * from './constants.ts';
export * from './envelope.ts';
export * from './errors.ts';
export * from './connectors.ts';
export * from './extensionsOpenApi.ts';
export * from './limits.ts';
export * from './connectonion.ts';
