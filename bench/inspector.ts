/**
 * What a benchmark's child process holds once its garbage is collected, read through the child's
 * inspector (started with `--inspect=127.0.0.1:<port>`, loopback only): the DevTools protocol's
 * `HeapProfiler.collectGarbage`, then `process.memoryUsage()` evaluated in the child. RSS read
 * without a collection also counts garbage a process has not collected yet, which depends on when
 * its last collection ran; after one, what is left is what the process keeps.
 */
import { WebSocket } from 'ws';

export const inspectArg = (port: number) => `--inspect=127.0.0.1:${port}`;

export async function memoryAfterGc(port: number): Promise<NodeJS.MemoryUsage> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let nextId = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++nextId;
      const onMessage = (data: Buffer) => {
        const msg = JSON.parse(data.toString('utf8')) as { id?: number; result?: object; error?: object };
        if (msg.id !== id) return;
        ws.off('message', onMessage);
        if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
        else resolve(msg.result as Record<string, unknown>);
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    // Twice: the first collection's finalizers can free more for the second.
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const r = await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    return JSON.parse((r.result as { value: string }).value) as NodeJS.MemoryUsage;
  } finally {
    ws.close();
  }
}
