export * from './ports';
export * from './fleet';
export * from './mailbox';
export * from './testFleet';
