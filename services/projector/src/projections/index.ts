import { authProjection } from './auth';
import { conversationsProjection } from './conversations';
import { gofersProjection } from './gofers';
import { matchingProjection } from './matching';
import type { Projection } from './types';

export * from './types';

/** Every context's projection. */
export const projections: Projection[] = [
  authProjection,
  gofersProjection,
  matchingProjection,
  conversationsProjection,
];
