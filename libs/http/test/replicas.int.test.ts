import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Replicas } from '../src/index.ts';

/** A replica that answers its own name and records every body it read. */
interface Replica {
  url: string;
  bodies: string[];
  server: Server;
}

const open: Server[] = [];
const pools: Replicas[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  await Promise.all(open.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const readBody = async (req: IncomingMessage) => {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
};

async function replica(name: string, opts: { dieAfterBody?: boolean } = {}): Promise<Replica> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      bodies.push(body);
      // As a kill -9 mid-request looks from the caller: the body was read, no answer comes.
      if (opts.dieAfterBody) req.socket.destroy();
      else res.end(name);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server };
}

/** An address nothing listens on: connections to it are refused. */
async function refusing(): Promise<string> {
  const r = await replica('gone');
  await new Promise((done) => r.server.close(done));
  open.splice(open.indexOf(r.server), 1);
  return r.url;
}

function pool(urls: string[], setAsideMs = 60_000): Replicas {
  const p = new Replicas(urls, { setAsideMs });
  pools.push(p);
  return p;
}

/** POSTs `body`: a stream, as the edge passes a client's body on, or a string, as a service's internal call. */
async function post(p: Replicas, body: string, as: 'stream' | 'string' = 'stream'): Promise<string> {
  const res = await p.dispatcher.request({
    origin: 'http://service',
    path: '/command',
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: as === 'stream' ? Readable.from([Buffer.from(body)]) : body,
  });
  return res.body.text();
}

describe('Replicas', () => {
  it('spreads requests over every replica', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    const p = pool([a.url, b.url]);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(p, `r${i}`)));
    expect(new Set(answers)).toEqual(new Set(['a', 'b']));
    expect(a.bodies.length + b.bodies.length).toBe(20);
  });

  it('sends a POST whose connection was refused to another replica, once, body intact', async () => {
    const live = await replica('live');
    const gone = await refusing();
    const p = pool([gone, live.url]);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(p, `write ${i}`, i % 2 ? 'string' : 'stream')),
    );
    expect(answers).toEqual(Array(6).fill('live'));
    expect([...live.bodies].sort()).toEqual(Array.from({ length: 6 }, (_, i) => `write ${i}`));
    // Set aside: the requests after it do not knock on it first.
    expect(p.upstreams()).toEqual([live.url]);
    expect(p.has(gone)).toBe(true);
  });

  it('never sends again a POST that reached a replica which died before answering', async () => {
    const dying = await replica('dying', { dieAfterBody: true });
    const live = await replica('live');
    const p = pool([dying.url, live.url]);
    // A string body could be sent again as it is; a stream's was read: neither is.
    for (const as of ['stream', 'string'] as const) {
      const [dyingBefore, liveBefore] = [dying.bodies.length, live.bodies.length];
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, (_, i) => post(p, `${as} ${i}`, as).catch((err: Error) => err)),
      );
      const failed = outcomes.filter((o) => o instanceof Error).length;
      expect(failed, as).toBeGreaterThan(0);
      expect(dying.bodies.length - dyingBefore, as).toBe(failed);
      expect(live.bodies.length - liveBefore, as).toBe(4 - failed);
    }
    // What the dying replica read never reached the other one.
    for (const body of dying.bodies) expect(live.bodies).not.toContain(body);
  });

  it('takes a set-aside replica back after the pause, or at once when added', async () => {
    const live = await replica('live');
    const gone = await refusing();
    const p = pool([gone, live.url], 200);
    await post(p, 'x');
    expect(p.upstreams()).toEqual([live.url]);
    await new Promise((r) => setTimeout(r, 400));
    expect(p.upstreams().sort()).toEqual([gone, live.url].sort());
    await post(p, 'y');
    expect(p.upstreams()).toEqual([live.url]);
    p.update([gone, live.url]);
    expect(p.upstreams().sort()).toEqual([gone, live.url].sort());
  });

  it('sends nothing to a replica that left, even while its pool closes', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    const p = pool([a.url, b.url]);
    // b has open connections now, so its pool takes a while to close after it leaves.
    expect((await Promise.all([post(p, '0'), post(p, '1')])).sort()).toEqual(['a', 'b']);
    p.update([a.url]);
    expect(await Promise.all([post(p, '2'), post(p, '3'), post(p, '4')])).toEqual(['a', 'a', 'a']);
    expect(await post(p, '5')).toBe('a');
    expect(b.bodies.length).toBe(1);
  });

  it('fails fast when every replica refuses, and sends again once one answers', async () => {
    const gone = [await refusing(), await refusing()];
    const p = pool(gone, 100);
    await expect(post(p, 'nobody')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const live = await replica('back');
    p.update([...gone, live.url]);
    expect(await post(p, 'somebody')).toBe('back');
  });
});
