import { z } from 'zod';
import type { BrainOutput, CallerOutput } from './types.ts';

/** The frozen v1 shape of `responseConstraints`. */
export const responseConstraintsSchema = z.object({
  format: z.enum(['freestyle', 'boolean', 'enum', 'json_schema']),
  enumOptions: z.array(z.string().max(200)).max(50).optional(),
  jsonSchema: z.record(z.string(), z.unknown()).optional(),
  maxLength: z.number().int().positive().optional(),
});

const short = (max: number) => z.string().trim().min(1).max(max);

/**
 * What a model must answer with. Anything else is a failed generation (silent in v1: no event), so the
 * bounds are the ones a stored event and a public profile can carry.
 */
export const brainOutputSchema = z
  .object({
    content: short(8000),
    pendingQuery: z.boolean(),
    responseConstraints: responseConstraintsSchema.nullish(),
    profile: z
      .object({
        name: short(80),
        description: z.string().trim().max(2000),
        values: z.array(short(200)).max(20),
        demands: z.array(short(500)).max(20),
      })
      .nullish(),
    discoveryStatus: z.enum(['in_discovery', 'ready_for_pairing']).nullish(),
  })
  .transform((o): BrainOutput => {
    const out: BrainOutput = {
      content: o.content,
      pendingQuery: o.pendingQuery,
      // Constraints describe the reply to a question; a plain message carries none.
      responseConstraints: o.pendingQuery ? (o.responseConstraints ?? null) : null,
    };
    if (o.profile) out.profile = o.profile;
    if (o.discoveryStatus) out.discoveryStatus = o.discoveryStatus;
    return out;
  });

/**
 * What a model must answer a caller with: the answer and, when only the owner can answer, the
 * question for the owner; never a profile change.
 */
export const callerOutputSchema = z
  .object({ content: short(4000), askOwner: short(500).nullish() })
  .transform((o): CallerOutput => ({ content: o.content, askOwner: o.askOwner ?? null }));
