import type { FastifyBaseLogger } from 'fastify';
import type { ObjectStorage } from '@oan/storage';

/** Best effort, after the commit: the files are unreachable already (their URL route answers 404). */
export async function deleteFiles(
  storage: ObjectStorage | null,
  keys: string[],
  log: FastifyBaseLogger,
): Promise<void> {
  for (const key of keys) {
    await storage?.delete(key).catch((err: unknown) => log.warn({ err }, 'could not delete a file'));
  }
}
