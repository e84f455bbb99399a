import { randomBytes } from 'node:crypto';
import { PROCESS_KINDS, TestConnector, TestFleet, type ProcessName } from '@oan/testing';
import { matchTwoAccounts } from '../support.ts';
import { WebhookReceiver } from '../webhookReceiver.ts';
import { OwnKafka } from './kafkaServer.ts';
import { LinkProxy } from './linkProxy.ts';
import { REPLICAS, type Dependency, type Step } from './nemesisSchedule.ts';
import { openParty } from './parties.ts';
import { closeScene, type Scene } from './scenario.ts';
import { query } from './verify.ts';

/** The fleet of the nemesis, the dependencies it faults, and what the checker compares against. */
export interface World {
  scene: Scene;
  kafka: OwnKafka;
  receiver: WebhookReceiver;
  links: Map<string, LinkProxy>;
  /** Party b's webhook: where the receiver gets its envelopes, and the seq they start after. */
  hook: { path: string; from: string };
}

const linkKey = (name: ProcessName, dependency: Dependency) => `${name} ${dependency}`;

export function linkOf(world: World, name: ProcessName, dependency: Dependency): LinkProxy {
  const link = world.links.get(linkKey(name, dependency));
  if (!link) throw new Error(`no ${dependency} link for ${name}`);
  return link;
}

const hostPort = (url: string) => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
};

/**
 * The broker of the file's own, a fleet of two replicas of every kind on it, a proxy on every link
 * the schedule faults (only that process's traffic to that dependency goes through it), two matched
 * accounts whose parties carry the load over both edges, and a webhook of b's at a local receiver.
 */
export async function openWorld(steps: readonly Step[]): Promise<World> {
  const kafka = await OwnKafka.start();
  const receiver = await WebhookReceiver.start();
  const links = new Map<string, LinkProxy>();
  const world: World = {
    scene: undefined as unknown as Scene,
    kafka,
    receiver,
    links,
    hook: { path: '/b', from: '0' },
  };
  try {
    const databaseUrl = `postgres://postgres@127.0.0.1:5432/oan_nemesis_${randomBytes(4).toString('hex')}`;
    const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
    const targets = {
      postgres: hostPort(databaseUrl),
      redis: hostPort(redisUrl),
      kafka: hostPort(`tcp://${kafka.address}`),
    };
    for (const { fault } of steps)
      if (
        (fault.kind === 'cut' || fault.kind === 'delay') &&
        !links.has(linkKey(fault.target, fault.dependency))
      )
        links.set(linkKey(fault.target, fault.dependency), await LinkProxy.start(targets[fault.dependency]));
    const through = (url: string, link: LinkProxy) => {
      const u = new URL(url);
      u.host = link.address;
      return u.toString();
    };
    const envOf = (name: ProcessName): Record<string, string> => {
      const env: Record<string, string> = {};
      const pg = links.get(linkKey(name, 'postgres'));
      const redis = links.get(linkKey(name, 'redis'));
      const broker = links.get(linkKey(name, 'kafka'));
      if (pg) env.DATABASE_URL = through(databaseUrl, pg);
      if (redis) env.REDIS_URL = through(redisUrl, redis);
      if (broker) env.KAFKA_BROKER_ROUTES = `${kafka.address}=${broker.address}`;
      return env;
    };
    const fleet = await TestFleet.start({
      replicas: Object.fromEntries(PROCESS_KINDS.map((k) => [k, REPLICAS])),
      env: {
        KAFKA_BROKERS: kafka.address,
        DATABASE_URL: databaseUrl,
        // Every join of the load asks a code from the one loopback address.
        AUTH_MAX_CODE_REQUESTS_PER_ADDRESS: '100000',
        AUTH_MAX_CODE_REQUESTS: '100000',
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_POLL_MS: '200',
        WEBHOOK_RETRY_BASE_MS: '200',
        WEBHOOK_RETRY_MAX_MS: '1000',
      },
      envOf,
      // Twenty processes starting together on a shared two-core machine.
      readyTimeoutMs: 300_000,
    });
    world.scene = { fleet, parties: [], report: [] };
    const m = await matchTwoAccounts(fleet, ['nem-a', 'nem-b']);
    m.ca.close();
    m.cb.close();
    world.scene.conversationId = m.conversationId;
    const hook = await new TestConnector({ baseUrl: fleet.url, token: m.b.apiKey }).rest<{ id: string }>(
      'POST',
      '/webhooks',
      { url: receiver.url(world.hook.path) },
    );
    if (hook.status !== 201) throw new Error(`POST /webhooks: ${hook.status} ${hook.text}`);
    world.hook.from = await webhookStart(fleet.env.DATABASE_URL!, hook.body.id);
    world.scene.parties = [
      await openParty(fleet.urls, 'a', m.a, m.ga),
      await openParty([...fleet.urls].reverse(), 'b', m.b, m.gb),
    ];
    return world;
  } catch (err) {
    // The caller never gets the world to close: close it here, or its processes outlive the run.
    await closeWorld(world);
    throw err;
  }
}

async function webhookStart(databaseUrl: string, id: string): Promise<string> {
  const [row] = await query<{ s: string }>(
    databaseUrl,
    'select last_seq::text as s from auth.webhooks where id = $1',
    [id],
  );
  return row!.s;
}

export async function closeWorld(world: World | undefined): Promise<void> {
  if (!world) return;
  for (const name of world.scene?.fleet.running.keys() ?? []) world.scene.fleet.resume(name);
  for (const link of world.links.values()) link.set({ kind: 'pass' });
  await closeScene(world.scene);
  for (const link of world.links.values()) await link.close();
  await world.receiver.close();
  await world.kafka.stop();
}
