/**
 * `npm run dev`: the whole fleet natively (no Docker): Kafka/Postgres/Redis via infra/up.sh, then
 * every service, two gateway replicas, one public origin on OAN_PORT (default 8080), or as many
 * replicas of each kind as OAN_REPLICAS says (`auth=2,gofers=2`). Codes mailed by
 * the auth service land in a local SMTP sink and are printed here. Ctrl-C stops everything.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  Mailbox,
  parseReplicas,
  planFleet,
  REPO_ROOT,
  startProcess,
  waitReady,
  type RunningProcess,
} from '@oan/testing';
import { buildWeb } from './web.ts';

execFileSync('bash', [join(REPO_ROOT, 'infra/up.sh')], { stdio: 'inherit' });
// The web frontend the edge serves at `/`, rebuilt when its inputs changed.
console.log(`[dev] web frontend: ${await buildWeb()}`);

const dataDir = join(REPO_ROOT, '.data');
mkdirSync(dataDir, { recursive: true });
/** A secret kept under .data, made once: a restart keeps its tokens valid and its ids the same. */
function keptSecret(name: string): string {
  const file = join(dataDir, name);
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

const mailbox = await Mailbox.start();
const env: Record<string, string> = {
  NODE_ENV: 'development',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  ENABLE_OPEN_API: process.env.ENABLE_OPEN_API ?? 'true',
  OAN_PORT: process.env.OAN_PORT ?? '8080',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/oan',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
  KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
  // Partitions of the event topics the services create (1 unless set; existing topics keep theirs).
  ...(process.env.KAFKA_TOPIC_PARTITIONS
    ? { KAFKA_TOPIC_PARTITIONS: process.env.KAFKA_TOPIC_PARTITIONS }
    : {}),
  JWT_SECRET: process.env.JWT_SECRET ?? keptSecret('jwt-secret'),
  ID_SECRET: process.env.ID_SECRET ?? keptSecret('id-secret'),
  SMTP_URL: process.env.SMTP_URL ?? mailbox.url,
  STORAGE_DIR: process.env.STORAGE_DIR ?? join(dataDir, 'storage'),
  MAIL_FROM: process.env.MAIL_FROM ?? 'OAN <no-reply@localhost>',
  // Webhooks to a receiver on this machine (QA only; refused in production).
  WEBHOOK_ALLOW_LOOPBACK: process.env.WEBHOOK_ALLOW_LOOPBACK ?? 'true',
  // Runtime endpoints (HTTP agents) on this machine, likewise.
  RUNTIMES_ALLOW_LOOPBACK: process.env.RUNTIMES_ALLOW_LOOPBACK ?? 'true',
  // A2A push notifications to a receiver on this machine, likewise.
  GOFER_A2A_PUSH_ALLOW_LOOPBACK: process.env.GOFER_A2A_PUSH_ALLOW_LOOPBACK ?? 'true',
  // Every webUrl opens the edge's own pages unless another frontend is named.
  OAN_WEB_BASE_URL: process.env.OAN_WEB_BASE_URL ?? `http://127.0.0.1:${process.env.OAN_PORT ?? '8080'}`,
  ...(process.env.OAN_TEST_LOGIN_CODES ? { OAN_TEST_LOGIN_CODES: process.env.OAN_TEST_LOGIN_CODES } : {}),
};
// OAN_REPLICAS=auth=2,gofers=2,…: replicas per kind (docs/architecture.md says which may run how many).
const plan = await planFleet(env, { fixedPorts: true, replicas: parseReplicas(process.env.OAN_REPLICAS) });
const logDir = join(dataDir, 'logs');
const running: RunningProcess[] = [];
for (const spec of plan.processes) {
  const p = startProcess(spec, logDir);
  running.push(p);
  void p.exited.then((code) =>
    console.error(`[dev] ${spec.name} exited with ${code}; see ${logDir}/${spec.name}.log`),
  );
}
let seen = 0;
setInterval(() => {
  for (; seen < mailbox.messages.length; seen++) {
    const m = mailbox.messages[seen]!;
    const code = /\b(\d{6})\b/.exec(m.raw)?.[1] ?? '(no code)';
    console.log(`[dev] mail to ${m.to.join(', ')}: code ${code}`);
  }
}, 250).unref();

const shutdown = () => {
  for (const p of running) p.child.kill('SIGTERM');
  void mailbox.close();
  setTimeout(() => process.exit(0), 3000).unref();
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

await Promise.all(running.map((p) => waitReady(p, 90_000)));
console.log(`\nOAN fleet is up: ${plan.publicUrls.join(', ')}  (logs in ${logDir})`);
console.log(`  web:     ${plan.publicUrl}/  (sign in with an email code; codes are printed here)`);
console.log(`  health:  ${plan.publicUrl}/api/health`);
console.log(`  REST:    ${plan.publicUrl}/api/v1   Socket.IO: ${plan.publicUrl}/oan`);
