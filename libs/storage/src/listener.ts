import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import type { FilesystemStorage } from './filesystem.ts';
import { contentDisposition } from './types.ts';

export interface FileListenerOptions {
  storage: FilesystemStorage;
  host: string;
  /** 0 = any free port (tests). */
  port: number;
  /** Told about failures while streaming a file (the response is then cut short). */
  onError?: (err: unknown) => void;
}

export interface FileListener {
  /** `http://<host>:<port>`, the actual address. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const PREFIX = '/files/';

/**
 * The download origin of FilesystemStorage: `GET /files/<key>?exp=<epoch s>&sig=<hex>`. The URL is
 * the whole authorization: an Authorization header is neither needed nor looked at, so it can
 * never stand in for a signature. A bad or expired signature is 403 whether or not the key exists;
 * only a correctly signed URL learns that a key is gone (404).
 */
export async function startFileListener(opts: FileListenerOptions): Promise<FileListener> {
  const { storage } = opts;
  const server = createServer((req, res) => {
    handle(storage, req, res).catch((err: unknown) => {
      opts.onError?.(err);
      if (!res.headersSent) send(res, 500, { error: 'Internal error', code: 'INTERNAL_ERROR' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const url = `http://${host}:${port}`;
  storage.bindPublicBaseUrl(url);
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(storage: FilesystemStorage, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  // The raw path, not a normalized URL: `/files/../x` must stay invalid, not become `/x`.
  const path = q === -1 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q === -1 ? '' : raw.slice(q + 1));
  if (path === '/health') return send(res, 200, { status: 'ok' });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(res, 405, { error: 'Method not allowed', code: 'REQUEST_ERROR' });
  }
  if (!path.startsWith(PREFIX)) return send(res, 404, { error: 'Not Found', code: 'NOT_FOUND' });
  const key = path.slice(PREFIX.length);
  if (storage.verify(key, query.get('exp'), query.get('sig')) !== 'valid') {
    return send(res, 403, { error: 'Forbidden', code: 'FORBIDDEN' });
  }
  const object = await storage.open(key);
  if (!object) return send(res, 404, { error: 'Not Found', code: 'NOT_FOUND' });
  res.writeHead(200, {
    'content-type': object.contentType,
    'content-length': object.size,
    'content-disposition': contentDisposition(object.fileName),
    'x-content-type-options': 'nosniff',
    // The bytes are user content: never let a browser run them in this origin.
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'private, no-store',
  });
  if (req.method === 'HEAD') {
    object.stream.destroy();
    res.end();
    return;
  }
  await pipeline(object.stream, res);
}

function send(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}
