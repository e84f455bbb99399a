import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@oan/testing';
import { exitOf, untilServing } from './serverProcess.ts';

const run = promisify(execFile);

/**
 * A Redis server of one test file's own, on a free port and without persistence: a kill -9 loses
 * every key and stream, as a crash of a server without RDB/AOF would. The shared Redis is never
 * touched.
 */
export class OwnRedis {
  private child: ChildProcess | undefined;
  private exited: Promise<unknown> = Promise.resolve();

  readonly port: number;
  readonly dir: string;
  private constructor(port: number, dir: string) {
    this.port = port;
    this.dir = dir;
  }

  static async start(): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort(), mkdtempSync(join(tmpdir(), 'oan-faults-redis-')));
    try {
      await redis.up();
    } catch (err) {
      await redis.stop();
      throw err;
    }
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Starts the server on its port (again, empty, after a kill) and waits until it answers PING. */
  async up(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        ...['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        ...['--dir', this.dir, '--logfile', join(this.dir, 'redis.log')],
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    this.exited = exitOf(child);
    await untilServing(child, async () => (await this.cli('PING')) === 'PONG', {
      what: `redis-server on port ${this.port}`,
      cannotRun: 'setup: cannot run redis-server (install it, e.g. apt-get install redis-server)',
      log: () => this.log(),
      timeoutMs: 15_000,
    });
  }

  /** kill -9: no shutdown save (there is none anyway), open connections break at once. */
  async kill(): Promise<void> {
    this.child?.kill('SIGKILL');
    await this.exited;
    this.child = undefined;
  }

  /** One command through redis-cli; the reply as redis-cli prints it, trimmed. */
  async cli(...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...args], {
      timeout: 5000,
    });
    return stdout.trim();
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private log(): string {
    try {
      return readFileSync(join(this.dir, 'redis.log'), 'utf8').slice(-2000);
    } catch {
      return '(no log)';
    }
  }
}
