/** The account notices: the tables auth once had here (now dropped) and the notice projection. */
export { accountsDropped, accountsTables } from './tables.ts';
export { authProjection } from './projection.ts';
