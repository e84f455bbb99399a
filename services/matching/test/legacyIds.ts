import { v5 as uuidv5 } from 'uuid';
import { orderPair } from '../src/domain/ids.ts';

/**
 * How thread ids were derived before they were keyed (UUIDv5 of the sorted pair under a public
 * namespace): threads proposed then keep these ids, and the tests recreate them with it.
 */
export const legacyThreadIdFor = (goferId1: string, goferId2: string) =>
  uuidv5(`thread:${orderPair(goferId1, goferId2).join(':')}`, '3d0f4a8e-8b1c-4f2a-9c57-2e6b1d9a7c40');
