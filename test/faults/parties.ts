import { call, FaultConnector } from './connector.ts';
import type { Party } from './load.ts';

/**
 * One party of the load: two SDK-like connectors for the account (round robin puts them on both
 * gateways), both starting at the account's cursor as it is now. Given several edges, connector i
 * goes through edge i (modulo their number).
 */
export async function openParty(
  edges: string | readonly string[],
  name: string,
  account: { userId: string; apiKey: string },
  goferId: string,
): Promise<Party> {
  const urls = typeof edges === 'string' ? [edges] : edges;
  const baseUrl = urls[0]!;
  const cursor = await call<{ seq: string }>(baseUrl, account.apiKey, 'GET', '/events/cursor');
  if (cursor.status !== 200) throw new Error(`cursor: ${cursor.status} ${cursor.text}`);
  const startCursor = BigInt(cursor.body.seq);
  const connectors = [0, 1].map(
    (i) => new FaultConnector(urls[i % urls.length]!, account.apiKey, startCursor),
  ) as [FaultConnector, FaultConnector];
  for (const c of connectors) await c.connect();
  return { name, userId: account.userId, goferId, connectors, startCursor };
}
