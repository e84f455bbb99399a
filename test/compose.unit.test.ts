import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { z } from 'zod';
import { parseReplicas, planFleet, PROCESS_KINDS, REPO_ROOT } from '@oan/testing';
import { agentsEnv } from '../services/agents/src/config.ts';
import { authEnv } from '../services/auth/src/config.ts';
import { conversationsEnv } from '../services/conversations/src/config.ts';
import { edgeEnv } from '../services/edge/src/config.ts';
import { gatewayEnv } from '../services/gateway/src/config.ts';
import { gofersEnv } from '../services/gofers/src/config.ts';
import { matchingEnv } from '../services/matching/src/config.ts';
import { outboxEnv } from '../services/outbox/src/config.ts';
import { projectorEnv } from '../services/projector/src/config.ts';
import { runtimesEnv } from '../services/runtimes/src/config.ts';

/** The env schema each service validates at start: the names it can read. */
const schemas: Record<string, z.ZodObject> = {
  agents: agentsEnv,
  auth: authEnv,
  conversations: conversationsEnv,
  edge: edgeEnv,
  gateway: gatewayEnv,
  gofers: gofersEnv,
  matching: matchingEnv,
  outbox: outboxEnv,
  projector: projectorEnv,
  runtimes: runtimesEnv,
};
const known = (dir: string) => new Set(Object.keys(schemas[dir]!.shape));

interface ComposeService {
  image?: string;
  container_name?: string;
  networks?: Record<string, { ipv4_address?: string } | null>;
  command?: string[] | string;
  environment?: Record<string, unknown>;
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  profiles?: string[];
  scale?: number;
  healthcheck?: { test: string[] };
}
const read = (file: string) =>
  parse(readFileSync(join(REPO_ROOT, file), 'utf8'), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
const compose = read('docker-compose.yml');
const local = read('docker-compose.local.yml');
const serviceDir = (s: ComposeService) =>
  /services\/([a-z]+)\/src\/main\.ts/.exec([s.command ?? []].flat().join(' '))?.[1];

describe('docker-compose.yml', () => {
  const ours = Object.entries(compose.services).filter(([, s]) => serviceDir(s));

  it('runs every service process of the native fleet, the gateway as one service of replicas (--scale)', () => {
    const dirs = ours.map(([, s]) => serviceDir(s));
    expect(new Set(dirs)).toEqual(new Set(Object.keys(schemas)));
    const gateways = ours.filter(([, s]) => serviceDir(s) === 'gateway');
    expect(gateways.map(([name]) => name)).toEqual(['gateway']);
    const [, gateway] = gateways[0]!;
    // Two replicas unless `--scale gateway=N` says otherwise; each names itself (its container id).
    expect(gateway.scale).toBe(2);
    expect(gateway.environment?.GATEWAY_ID).toBe('auto');
    // The edge finds every replica through the service's name, not a list.
    const edge = ours.find(([, s]) => serviceDir(s) === 'edge')![1];
    expect(edge.environment?.GATEWAY_DNS).toBe(`gateway:${String(gateway.environment?.GATEWAY_PORT)}`);
    expect(edge.environment).not.toHaveProperty('GATEWAY_URLS');
    expect(edge.environment).not.toHaveProperty('GATEWAY_IDS');
    expect(edge.depends_on).toHaveProperty('gateway');
  });

  it('lets every service but the edge scale, and names each service by its DNS name', () => {
    const portOf: Record<string, string> = {};
    for (const [name, s] of ours) {
      const port = Object.entries(s.environment ?? {}).find(
        ([k]) => k.endsWith('_PORT') && !['OAN_PORT', 'EDGE_METRICS_PORT'].includes(k),
      );
      if (port) portOf[name] = String(port[1]);
      // The service is named after its process (no `agents1`/`agents2`), so `--scale` and DNS find it.
      expect(name, 'one service per process kind').toBe(serviceDir(s));
      if (name === 'edge') continue;
      expect(s.container_name, name).toBeUndefined();
      expect(s.ports ?? [], `${name} publishes no port`).toEqual([]);
      for (const net of Object.values(s.networks ?? {})) expect(net?.ipv4_address, name).toBeUndefined();
    }
    expect(compose.services.agents?.scale).toBe(2);
    expect(compose.services.agents?.environment).not.toHaveProperty('AGENTS_REPLICA_ID');
    // Every URL one process gives for another names a service and its port, never one replica.
    const urls = ours.flatMap(([name, s]) =>
      Object.entries(s.environment ?? {})
        .filter(([k]) => /_URLS?$/.test(k) && !['DATABASE_URL', 'REDIS_URL', 'OAN_WEB_BASE_URL'].includes(k))
        .flatMap(([k, v]) =>
          String(v)
            .split(',')
            .map((u) => ({ at: `${name} ${k}`, u })),
        ),
    );
    const internal = urls.filter(({ u }) => /^http:\/\/[a-z]+:\d+$/.test(u) && !u.includes('s3:'));
    expect(internal.length).toBeGreaterThanOrEqual(12);
    for (const { at, u } of internal) {
      const { hostname, port } = new URL(u);
      expect(portOf[hostname], `${at}: ${u} names a service`).toBe(port);
    }
  });

  it('orders start-up by health checks and publishes ports on loopback only', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      expect(s.healthcheck?.test, `${name} has a health check`).toBeDefined();
      for (const [d, { condition }] of Object.entries(s.depends_on ?? {}))
        expect(condition, `${name} waits for ${d}`).toBe('service_healthy');
      for (const p of s.ports ?? []) expect(p, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('has a local image for every service in docker-compose.local.yml', () => {
    expect(Object.keys(local.services).sort()).toEqual(Object.keys(compose.services).sort());
    for (const [name, s] of Object.entries(local.services)) expect(s.image, name).toMatch(/^oan-local\//);
  });

  it('names only entry points that exist and env vars that the service reads', () => {
    for (const [name, s] of ours) {
      const dir = serviceDir(s)!;
      expect(existsSync(join(REPO_ROOT, 'services', dir, 'src/main.ts')), name).toBe(true);
      const unknown = Object.keys(s.environment ?? {}).filter((k) => !known(dir).has(k));
      expect(unknown, `${name} sets variables its config does not read`).toEqual([]);
    }
  });

  it('depends only on services it defines', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      for (const d of Object.keys(s.depends_on ?? {}))
        expect(compose.services[d], `${name} depends on ${d}`).toBeDefined();
    }
  });

  it('publishes the topics the projector consumes', () => {
    const outbox = ours.find(([, s]) => serviceDir(s) === 'outbox')![1];
    const schemasPublished = String(outbox.environment?.OUTBOX_SCHEMAS).split(',');
    const projectorTopics = projectorEnv.shape.DOMAIN_TOPICS.parse(undefined);
    expect(schemasPublished.map((s) => `${s}.events`).sort()).toEqual([...projectorTopics].sort());
  });

  it('starts every service with the defaults of its `${VAR:-default}` entries', () => {
    // What compose hands the process when the operator sets nothing but the required JWT_SECRET.
    const resolve = (v: unknown) =>
      String(v).replace(
        /\$\{(\w+)(?::-([^}]*)|(:\?)[^}]*)\}/g,
        (_m, _n: string, fallback?: string, req?: string) => (req ? 'x'.repeat(32) : (fallback ?? '')),
      );
    for (const [name, s] of ours) {
      const env = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, resolve(v)]));
      const parsed = schemas[serviceDir(s)!]!.safeParse(env);
      expect(parsed.error?.issues ?? [], name).toEqual([]);
    }
  });

  it('gives ID_SECRET to the processes that derive ids (auth, matching) and to no other', async () => {
    const composeHolders = ours.filter(([, s]) => s.environment?.ID_SECRET !== undefined).map(([n]) => n);
    expect(composeHolders.sort()).toEqual(['auth', 'matching']);
    const plan = await planFleet({ JWT_SECRET: 'x'.repeat(32), ID_SECRET: 'i'.repeat(32) });
    const nativeHolders = plan.processes.filter((p) => p.env.ID_SECRET !== undefined).map((p) => p.name);
    expect(nativeHolders.sort()).toEqual(['auth', 'matching']);
  });

  it('agrees with the native runner on every variable name', async () => {
    const plan = await planFleet({ JWT_SECRET: 'x'.repeat(32), ID_SECRET: 'i'.repeat(32) });
    for (const p of plan.processes) {
      const dir = p.entry.split('/services/')[1]!.split('/')[0]!;
      const unknown = Object.keys(p.env).filter((k) => !known(dir).has(k));
      expect(unknown, `native ${p.name}`).toEqual([]);
      const composeNames = new Set(
        ours.filter(([, s]) => serviceDir(s) === dir).flatMap(([, s]) => Object.keys(s.environment ?? {})),
      );
      // Natively mail goes to a local sink and objects to the filesystem store; compose uses SMTP and S3.
      // The native edge lists its gateways (GATEWAY_URLS); compose's finds the replicas by DNS (GATEWAY_DNS).
      // Natively each agents replica is given its id; under compose each draws its own.
      const nativeOnly = (k: string) =>
        k === 'SMTP_URL' || k.startsWith('STORAGE_') || k === 'GATEWAY_URLS' || k === 'AGENTS_REPLICA_ID';
      const missing = Object.keys(p.env).filter((k) => !composeNames.has(k) && !nativeOnly(k));
      expect(missing, `compose ${dir} lacks variables the native runner sets`).toEqual([]);
    }
  });

  it('takes every credential from the environment as a required `${VAR:?…}`, never a literal', () => {
    // A key that names a credential, and a URL's password part: a fixed one would ship to every
    // deployment that forgot to set it.
    const credential = /PASSWORD|SECRET|ACCESS_KEY|KEY_ID|ROOT_USER/;
    const required = /^\$\{\w+:\?[^}]*\}$/;
    const seen: string[] = [];
    for (const [name, s] of Object.entries(compose.services)) {
      for (const [k, v] of Object.entries(s.environment ?? {})) {
        if (credential.test(k)) {
          seen.push(k);
          expect(String(v), `${name}: ${k}`).toMatch(required);
        }
        const password = /^\w+:\/\/[^:/@]*:(.*)@/.exec(String(v))?.[1];
        if (password !== undefined) {
          seen.push(k);
          expect(password, `${name}: the password in ${k}`).toMatch(required);
        }
      }
    }
    // the test looks at what it means to: the store's and the database's credentials are among them
    expect(new Set(seen)).toEqual(
      new Set([
        'DATABASE_URL',
        'JWT_SECRET',
        'ID_SECRET',
        'POSTGRES_PASSWORD',
        'S3_ACCESS_KEY_ID',
        'S3_SECRET_ACCESS_KEY',
        'S3_URL_ACCESS_KEY_ID',
        'S3_URL_SECRET_ACCESS_KEY',
        'MINIO_ROOT_USER',
        'MINIO_ROOT_PASSWORD',
        'OAN_URL_KEY_ID',
        'OAN_URL_SECRET',
      ]),
    );
  });

  it('hands JWT_SECRET only to the processes that sign or verify tokens, natively and under compose', async () => {
    // The relay, the projector and the agents relay neither sign nor check an OAN token.
    const keyless = new Set(['agents', 'outbox', 'projector']);
    const plan = await planFleet({ JWT_SECRET: 'x'.repeat(32) });
    for (const p of plan.processes) {
      const dir = p.entry.split('/services/')[1]!.split('/')[0]!;
      expect('JWT_SECRET' in p.env, `native ${p.name}`).toBe(!keyless.has(dir));
    }
    for (const [name, s] of ours)
      expect(Object.keys(s.environment ?? {}).includes('JWT_SECRET'), `compose ${name}`).toBe(
        !keyless.has(serviceDir(s)!),
      );
  });
});

describe('the native fleet with replicas (npm run dev, OAN_REPLICAS)', () => {
  it('runs each kind as many times as asked, each replica on its own port and named apart', async () => {
    const replicas = Object.fromEntries(PROCESS_KINDS.map((k) => [k, 2]));
    const plan = await planFleet({ JWT_SECRET: 'x'.repeat(32) }, { fixedPorts: true, replicas });
    for (const kind of PROCESS_KINDS) {
      expect(
        plan.processes.filter((p) => p.kind === kind),
        kind,
      ).toHaveLength(2);
    }
    const ports = plan.processes.flatMap((p) => [p.port, ...(p.metricsPort ? [p.metricsPort] : [])]);
    const storage = plan.processes.flatMap((p) => (p.env.STORAGE_PORT ? [Number(p.env.STORAGE_PORT)] : []));
    expect(new Set(ports).size).toBe(ports.length);
    // Every gofers replica listens for files on a port of its own; the others only sign for one.
    const gofersStorage = plan.processes.filter((p) => p.kind === 'gofers').map((p) => p.env.STORAGE_PORT);
    expect(new Set(gofersStorage).size).toBe(2);
    for (const port of gofersStorage) expect(ports).not.toContain(Number(port));
    expect(storage.length).toBeGreaterThan(0);
    expect(plan.publicUrls).toEqual(['http://127.0.0.1:8080', 'http://127.0.0.1:8081']);
    const names = (kind: string, key: string) =>
      plan.processes.filter((p) => p.kind === kind).map((p) => p.env[key]);
    expect(new Set(names('gateway', 'GATEWAY_ID'))).toEqual(new Set(['g1', 'g2']));
    expect(new Set(names('agents', 'AGENTS_REPLICA_ID'))).toEqual(new Set(['a1', 'a2']));
    // Whoever calls a service is given all of its replicas.
    const urlsOf = (kind: string) =>
      plan.processes
        .filter((p) => p.kind === kind)
        .map((p) => `http://127.0.0.1:${p.port}`)
        .join(',');
    for (const p of plan.processes) {
      for (const [key, kind] of [
        ['AUTH_URL', 'auth'],
        ['GOFERS_URL', 'gofers'],
        ['MATCHING_URL', 'matching'],
        ['CONVERSATIONS_URL', 'conversations'],
        ['RUNTIMES_URL', 'runtimes'],
        ['AGENTS_URLS', 'agents'],
        ['GOFER_RELAY_URLS', 'agents'],
        ['GATEWAY_URLS', 'gateway'],
      ] as const) {
        if (p.env[key] !== undefined) expect(p.env[key], `${p.name} ${key}`).toBe(urlsOf(kind));
      }
    }
  });

  it('reads OAN_REPLICAS as <kind>=<count> pairs and refuses anything else', () => {
    expect(parseReplicas('auth=2, gofers=3,edge=1')).toEqual({ auth: 2, gofers: 3, edge: 1 });
    expect(parseReplicas(undefined)).toEqual({});
    expect(parseReplicas('')).toEqual({});
    for (const bad of ['auths=2', 'auth=0', 'auth=two', 'auth', 'auth=10'])
      expect(() => parseReplicas(bad), bad).toThrow(/OAN_REPLICAS/);
  });
});
