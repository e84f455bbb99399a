/** What other packages' tests use of the matching context: its thread decider, to make real thread events. */
export { threadDecider, type ThreadCommand } from './domain/thread.ts';
