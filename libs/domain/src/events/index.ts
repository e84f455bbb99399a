/**
 * Every bounded context's domain events, one typed union per context, in the one place the context's
 * domain, the projector and the tests import them from. A union names each event's `type` and the
 * shape of its `data` (the Avro schema under schemas/<context>/ is its wire form).
 */
export * from './common.ts';
export * from './auth.ts';
export * from './gofers.ts';
export * from './matching.ts';
export * from './conversations.ts';
export * from './deviceKeys.ts';
export * from './agents.ts';
export * from './a2a.ts';
