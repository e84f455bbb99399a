/** The A2A tasks read model (ADR 0035): its table and its projection. */
export { a2aTables } from './tables.ts';
export { a2aProjection } from './projection.ts';
