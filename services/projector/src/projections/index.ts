import { authProjection } from './auth';
import { gofersProjection } from './gofers';
import { matchingProjection } from './matching';
import type { Projection } from './types';

export * from './types';

/** Every context's projection; later issues add conversations here. */
export const projections: Projection[] = [authProjection, gofersProjection, matchingProjection];
