export * from './app.ts';
export * from './errors.ts';
export * from './limits.ts';
export * from './logger.ts';
export type { ZodTypeProvider } from 'fastify-type-provider-zod';
export * from './multipart.ts';
export * from './schemas.ts';
export * from './clientAddress.ts';
export * from './replicas.ts';
