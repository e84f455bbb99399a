import { z } from 'zod';

/** The response schema of a 204: no body (so the OpenAPI document says 204, not 200). */
export const noContent = z.null().describe('No content');
