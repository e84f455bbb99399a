import type { AgentCard } from '@a2a-js/sdk';
import type { PublicProfile } from '../brain/types.ts';

/** The A2A protocol version the Gofers serve (JSON-RPC binding). */
export const A2A_PROTOCOL_VERSION = '1.0';

/** Where a Gofer answers over A2A, under the fleet's public origin (the edge routes `/a2a/`). */
export const a2aUrl = (origin: string, goferId: string) =>
  `${origin}/a2a/gofers/${encodeURIComponent(goferId)}`;
export const agentCardUrl = (origin: string, goferId: string) =>
  `${a2aUrl(origin, goferId)}/.well-known/agent-card.json`;

/**
 * A published Gofer's agent card (ADR 0035): its public name and description, one skill saying
 * what it is looking for, text in and out, the JSON-RPC interface. Nothing else of the Gofer: not
 * its owner's chat, documents, review triggers or anything secret. The bearer scheme is declared
 * but not required (no security requirement): it only names a caller.
 */
export function agentCard(origin: string, goferId: string, profile: PublicProfile): AgentCard {
  const looking = profile.demands.length > 0 ? profile.demands.join('; ') : profile.description;
  return {
    name: profile.name,
    description: profile.description,
    supportedInterfaces: [
      {
        url: a2aUrl(origin, goferId),
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: { organization: 'Open Agent Network', url: origin },
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      caller: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'Bearer',
            bearerFormat: 'opaque',
            description:
              'Optional. Any opaque text of 16 to 256 characters you keep: it names you as a caller (your tasks are yours). Without it you are your client address.',
          },
        },
      },
    },
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'looking-for',
        name: 'What I am looking for',
        description: `${profile.name} is looking for: ${looking}`,
        tags: profile.values.slice(0, 10),
        examples: [],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
