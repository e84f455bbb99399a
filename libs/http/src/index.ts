export * from './app';
export * from './errors';
export * from './limits';
export * from './logger';
export type { ZodTypeProvider } from 'fastify-type-provider-zod';
export * from './multipart';
export * from './schemas';
