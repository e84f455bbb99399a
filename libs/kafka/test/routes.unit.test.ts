import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { routedSocketFactory } from '../src/kafka.ts';

let server: Server | undefined;
afterEach(() => server?.close());

/** A loopback listener that answers every connection with `name`. */
async function listener(name: string): Promise<number> {
  server = createServer((socket) => socket.end(name));
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

const read = (socket: NodeJS.ReadableStream) =>
  new Promise<string>((done, fail) => {
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    socket.on('end', () => done(text));
    socket.on('error', fail);
  });

describe('routedSocketFactory (KAFKA_BROKER_ROUTES)', () => {
  it('dials the route of an advertised address instead of the address', async () => {
    const port = await listener('proxy');
    const factory = routedSocketFactory({ 'broker.invalid:9092': `127.0.0.1:${port}` });
    const socket = factory({
      host: 'broker.invalid',
      port: 9092,
      ssl: undefined as never,
      onConnect: () => undefined,
    });
    expect(await read(socket)).toBe('proxy');
  });

  it('dials an address without a route as it is', async () => {
    const port = await listener('broker');
    const factory = routedSocketFactory({ 'other.invalid:9092': '127.0.0.1:1' });
    const socket = factory({ host: '127.0.0.1', port, ssl: undefined as never, onConnect: () => undefined });
    expect(await read(socket)).toBe('broker');
  });
});
