export * from './ports';
export * from './fleet';
export * from './mailbox';
export * from './testFleet';
export * from './connector';
export * from './join';
export * from './openapi';
export * from './credentials';
