import { authProjection } from './auth';
import { gofersProjection } from './gofers';
import type { Projection } from './types';

export * from './types';

/** Every context's projection; later issues add gofers, matching and conversations here. */
export const projections: Projection[] = [authProjection, gofersProjection];
