/** The gofers read model: its tables, its projection and the queries others run on it. */
export { gofersTables } from './tables.ts';
export { gofersProjection } from './projection.ts';
export {
  deletedGoferAmong,
  goferFileOf,
  goferFiles,
  goferList,
  goferMessagesSince,
  goferName,
  goferProfile,
  recentGoferMessages,
  type GoferFileRow,
  type GoferListRow,
  type GoferMessageRow,
  type GoferProfileRow,
} from './queries.ts';
