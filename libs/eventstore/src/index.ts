export * from './types';
export * from './store';
export * from './command';
export * from './relay';
