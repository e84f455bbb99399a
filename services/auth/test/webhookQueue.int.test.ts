import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { oanEventMigration } from '@oan/projection';
import { insertWebhook } from '../src/infra/webhookStore.ts';
import { authMigrations, createAuthStore } from '../src/infra/store.ts';
import { dueWebhooks, nextEnvelopes, recordAttempt, webhookById } from '../src/webhooks/queue.ts';

/** The delivery loop's queries against a real database (ADR 0018). */
const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(6).toString('hex')}`;
let orm: MikroORM;
const accountId = randomUUID();

beforeAll(async () => {
  await (await openDatabase({ url, schema: 'read', migrations: [oanEventMigration] })).close(true);
  orm = await openDatabase({ url, schema: 'auth', migrations: authMigrations(createAuthStore()) });
  const em = orm.em.fork();
  await sql(em, `insert into auth.accounts (id, source_platform, created_at) values (?, 'other', now())`, [
    accountId,
  ]);
  for (let seq = 1; seq <= 12; seq++) {
    await sql(
      em,
      `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at) values (?, ?, ?, 'system_notice', ?, now())`,
      [accountId, seq, randomUUID(), `{"seq":"${seq}"}`],
    );
  }
  await sql(em, 'insert into read.oan_account_seq (account_id, last_seq) values (?, 1)', [accountId]);
});
afterAll(async () => {
  await orm?.close(true);
  await dropDatabase(url);
});

describe('an endpoint registered after the first envelope', () => {
  it('starts after it, takes the envelopes in numeric seq order, and moves only when its cursor is unchanged', async () => {
    const em = orm.em.fork();
    const created = await orm.em.fork().transactional((tx) =>
      insertWebhook(
        tx,
        {
          id: randomUUID(),
          accountId,
          url: 'https://x.test/',
          description: null,
          secret: 'whsec_x',
          now: new Date(),
        },
        3,
      ),
    );
    expect(await dueWebhooks(em, 10)).toEqual([created!.id]);
    let w = (await webhookById(em, created!.id))!;
    expect(w.last_seq).toBe('1');
    expect((await nextEnvelopes(em, accountId, '0', 20)).map((e) => Number(e.seq))).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    const seen: string[] = [];
    for (;;) {
      const [ev] = await nextEnvelopes(em, accountId, w.last_seq, 1);
      if (!ev) break;
      seen.push(ev.seq);
      const ok = { statusCode: 200, error: null, latencyMs: 1, delivered: true };
      expect(await recordAttempt(em, w, ev, ok, new Date(), null)).toBe(true);
      // The same step again (a stale cursor) changes nothing.
      expect(await recordAttempt(em, w, ev, ok, new Date(), null)).toBe(false);
      w = (await webhookById(em, w.id))!;
    }
    expect(seen).toEqual(['2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12']);
    expect(await dueWebhooks(em, 10)).toEqual([]);
  });
});

describe('a banned account', () => {
  it('has no endpoint due and none to step, though envelopes follow its cursor', async () => {
    const em = orm.em.fork();
    const banned = randomUUID();
    await sql(
      em,
      `insert into auth.accounts (id, source_platform, created_at, banned_at) values (?, 'other', now(), now())`,
      [banned],
    );
    const w = await orm.em.fork().transactional((tx) =>
      insertWebhook(
        tx,
        {
          id: randomUUID(),
          accountId: banned,
          url: 'https://x.test/',
          description: null,
          secret: 'whsec_x',
          now: new Date(),
        },
        3,
      ),
    );
    await sql(
      em,
      `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at) values (?, 1, ?, 'system_notice', '{}', now())`,
      [banned, randomUUID()],
    );
    expect(await dueWebhooks(em, 10)).not.toContain(w!.id);
    expect(await webhookById(em, w!.id)).toBeNull();
  });
});
