import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitFor } from '@oan/testing';
import { exitOf, untilServing } from './serverProcess.ts';

const run = promisify(execFile);

/** The server binaries of the installed PostgreSQL (pg_config knows where they are). */
function binDir(): string {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch (err) {
    throw new Error(`setup: pg_config not found (install postgresql): ${(err as Error).message}`);
  }
}

/** PostgreSQL refuses to run as root: under root the server runs as the `postgres` system user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = ['-u', '-g'].map((flag) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()),
  );
  return { uid: uid!, gid: gid! };
}

/**
 * A PostgreSQL server of one test file's own: a fresh cluster (initdb) on a free port, trust auth
 * on loopback only. `kill` is a crash of the whole server (SIGKILL to the postmaster and every
 * backend), so `up` afterwards runs WAL crash recovery, as after a power cut of the process. The
 * shared server on 5432 is never touched.
 */
export class OwnPostgres {
  /** What the server printed, across restarts (crash recovery announces itself here). */
  log = '';
  private child: ChildProcess | undefined;
  private exited: Promise<unknown> = Promise.resolve();

  readonly port: number;
  readonly dir: string;
  private readonly bin: string;
  private readonly user: { uid: number; gid: number } | undefined;
  private constructor(
    port: number,
    dir: string,
    bin: string,
    user: { uid: number; gid: number } | undefined,
  ) {
    this.port = port;
    this.dir = dir;
    this.bin = bin;
    this.user = user;
  }

  static async start(): Promise<OwnPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'oan-faults-pg-'));
    const user = serverUser();
    if (user) chownSync(dir, user.uid, user.gid);
    const pg = new OwnPostgres(await freePort(), dir, binDir(), user);
    try {
      await run(
        join(pg.bin, 'initdb'),
        ['-D', pg.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
        { ...pg.user, timeout: 60_000 },
      );
      await pg.up();
    } catch (err) {
      await pg.stop();
      throw err;
    }
    return pg;
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** A database URL on this server (the database is created by whoever first opens it). */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server (again, recovering from the crash after a kill) and waits until it accepts. */
  async up(): Promise<void> {
    const child = spawn(
      join(this.bin, 'postgres'),
      [
        ...['-D', this.dataDir, '-p', String(this.port), '-k', this.dir],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
      ],
      // Its own process group: kill takes the postmaster and every backend at once.
      { ...this.user, detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => {
      this.log += chunk.toString();
    });
    this.exited = exitOf(child);
    await untilServing(child, () => this.accepts(), {
      what: `postgres on port ${this.port}`,
      cannotRun: 'cannot run postgres',
      log: () => this.log.slice(-4000),
      timeoutMs: 30_000,
    });
  }

  private async accepts(): Promise<boolean> {
    try {
      await run(join(this.bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(this.port)], {
        timeout: 5000,
      });
      return true;
    } catch {
      return false;
    }
  }

  /** kill -9 of the whole server: open connections break at once, nothing is shut down cleanly. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await this.exited;
    // Backends die with their group; wait until none holds the port any more.
    await waitFor(async () => !(await this.accepts()), { timeoutMs: 10_000, what: 'postgres to be gone' });
    this.child = undefined;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
