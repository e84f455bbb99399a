import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { freePort, REPO_ROOT } from '@oan/testing';

/**
 * The compose fleet on local images (docker-compose.local.yml, ADR 0021) for test/compose.e2e.test.ts,
 * brought up and down with testcontainers. Its reaper image cannot be fetched here, so it is off and
 * `down()` removes containers, networks and volumes itself.
 */
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';

const FILES = ['docker-compose.yml', 'docker-compose.local.yml', 'test/compose.test.yml'];

/** On by default in CI (this machine's runs), opt-in elsewhere: it builds images and needs an engine. */
export function composeTestWanted(env = process.env): { run: boolean; reason: string } {
  if (env.OAN_COMPOSE_TEST === '0') return { run: false, reason: 'OAN_COMPOSE_TEST=0' };
  if (env.OAN_COMPOSE_TEST === '1' || env.CI === 'true') return { run: true, reason: '' };
  return {
    run: false,
    reason: 'opt-in outside CI: set OAN_COMPOSE_TEST=1 (installs and starts Docker, builds the local images)',
  };
}

const run = promisify(execFile);

/**
 * `infra/docker/build.sh`, idempotent, tried twice: a first build on a fresh machine fetches from
 * Debian's archive, the npm registry and Maven Central, and one dropped download must not fail the
 * suite. What the last try printed (and the disk it had) goes into the error, so the CI report
 * shows why, not only that, it failed.
 */
function buildImages(attempts = 2): void {
  let output = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const result = spawnSync('bash', ['infra/docker/build.sh'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
    process.stdout.write(output);
    if (result.status === 0) return;
    process.stdout.write(
      `images: try ${attempt} of ${attempts} ended with ${result.status ?? result.signal}\n`,
    );
  }
  const disk = spawnSync('df', ['-h', REPO_ROOT, '/var/lib/docker'], { encoding: 'utf8' }).stdout;
  const tail = output.trimEnd().split('\n').slice(-40).join('\n');
  throw new Error(`bash infra/docker/build.sh failed ${attempts} times; its last lines:\n${tail}\n${disk}`);
}

export interface ContainerState {
  service: string;
  id: string;
  status: string;
  restarts: number;
}

export class ComposeFleet {
  readonly project: string;
  readonly url: string;
  readonly databaseUrl: string;
  readonly loginCode: string;
  private readonly env: Record<string, string>;
  private environment: StartedDockerComposeEnvironment | undefined;
  private constructor(
    project: string,
    url: string,
    databaseUrl: string,
    loginCode: string,
    env: Record<string, string>,
    environment: StartedDockerComposeEnvironment | undefined,
  ) {
    this.project = project;
    this.url = url;
    this.databaseUrl = databaseUrl;
    this.loginCode = loginCode;
    this.env = env;
    this.environment = environment;
  }

  /**
   * `docker-compose up --scale <service>=<n> …` of the three files: the replicas `scale` asks for
   * (the file's defaults for the rest), every container healthy.
   */
  static async start(email: string, scale: Record<string, number> = {}): Promise<ComposeFleet> {
    // Engine and images, idempotently (seconds when nothing changed).
    buildImages();
    const [edge, pg, s3] = [await freePort(), await freePort(), await freePort()];
    const loginCode = '246810';
    // The five secrets compose refuses to start without (the password goes into a URL: hex only).
    const pgPassword = randomBytes(16).toString('hex');
    const env = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      ID_SECRET: randomBytes(32).toString('hex'),
      POSTGRES_PASSWORD: pgPassword,
      S3_ACCESS_KEY_ID: randomBytes(8).toString('hex'),
      S3_SECRET_ACCESS_KEY: randomBytes(20).toString('hex'),
      S3_URL_ACCESS_KEY_ID: randomBytes(8).toString('hex'),
      S3_URL_SECRET_ACCESS_KEY: randomBytes(20).toString('hex'),
      OAN_PORT: String(edge),
      OAN_WEB_BASE_URL: `http://127.0.0.1:${edge}`,
      PG_PORT: String(pg),
      S3_PORT: String(s3),
      S3_PUBLIC_ENDPOINT: `http://127.0.0.1:${s3}`,
      OAN_TEST_LOGIN_CODES: `${email}=${loginCode}`,
    };
    const project = `oancompose${randomBytes(4).toString('hex')}`;
    const environment = await new DockerComposeEnvironment(REPO_ROOT, FILES)
      .withProjectName(project)
      .withEnvironment(env)
      // Debian's Compose 1.29 (`docker-compose`); the engine here has no `docker compose` plugin.
      .withClientOptions({
        executable: { standalone: true },
        commandOptions: Object.entries(scale).flatMap(([service, n]) => ['--scale', `${service}=${n}`]),
      })
      .withDefaultWaitStrategy(Wait.forHealthCheck())
      .withStartupTimeout(300_000)
      .up();
    return new ComposeFleet(
      project,
      `http://127.0.0.1:${edge}`,
      `postgres://postgres:${pgPassword}@127.0.0.1:${pg}/oan`,
      loginCode,
      env,
      environment,
    );
  }

  /** `docker-compose <args>` on this fleet's project and files; returns its output. */
  compose(args: string[]): string {
    const files = FILES.flatMap((f) => ['-f', f]);
    return execFileSync('docker-compose', ['-p', this.project, ...files, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...this.env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
    });
  }

  /** Every container of the project (running or not), from the engine. */
  containers(): ContainerState[] {
    const ids = execFileSync(
      'docker',
      ['ps', '-aq', '--filter', `label=com.docker.compose.project=${this.project}`],
      {
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter(Boolean);
    if (ids.length === 0) return [];
    const format =
      '{{index .Config.Labels "com.docker.compose.service"}} {{.Id}} {{.State.Status}} {{.RestartCount}}';
    return execFileSync('docker', ['inspect', '-f', format, ...ids], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [service, id, status, restarts] = line.split(' ');
        return { service: service!, id: id!, status: status!, restarts: Number(restarts) };
      });
  }

  /** The user each container's processes run as (its image's USER, unless compose overrides it). */
  userOf(id: string): string {
    return execFileSync('docker', ['inspect', '-f', '{{.Config.User}}', id], { encoding: 'utf8' }).trim();
  }

  /** The running containers of a service, by id. */
  running(service: string): string[] {
    return this.containers()
      .filter((k) => k.service === service && k.status === 'running')
      .map((k) => k.id);
  }

  /** The JSON lines a container logged (pino), oldest first. */
  logLines(id: string): Record<string, unknown>[] {
    const out = execFileSync('docker', ['logs', id], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return out.split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /**
   * Ends a container as an operator would: `stop` (SIGTERM, the process closes and leaves) or `kill`
   * (SIGKILL, its connections cut). Either way the restart policy leaves it down.
   */
  async end(id: string, how: 'stop' | 'kill'): Promise<void> {
    await run('docker', how === 'stop' ? ['stop', '-t', '20', id] : ['kill', id]);
  }

  /** The project's named volumes still present. */
  volumes(): string[] {
    return execFileSync(
      'docker',
      ['volume', 'ls', '-q', '--filter', `label=com.docker.compose.project=${this.project}`],
      {
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter(Boolean);
  }

  /** Removes containers, networks and volumes (also the replicas the scale step added). */
  async down(): Promise<void> {
    const env = this.environment;
    this.environment = undefined;
    await env?.down({ removeVolumes: true, timeout: 10_000 });
  }
}
