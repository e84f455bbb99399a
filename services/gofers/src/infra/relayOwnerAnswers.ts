import { Migration, sql, type EntityManager, type MikroORM } from '@oan/db';
import type { OwnerAnswer, OwnerAnswers } from '../reactors/ownerAnswers.ts';

/**
 * ADR 0036: a relay caller cannot be called back (the relay carries OUTPUT only in answer to the
 * caller's INPUT), so the owner's answer waits here for the caller's next turn with the Gofer, in
 * any session: its relay address is verified at every CONNECT. One row per question.
 */
export class CreateRelayOwnerAnswers extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists gofers.relay_owner_answers (
      question_message_id text primary key, gofer_id text not null, caller text not null,
      answer text not null, answered_at timestamptz not null, handed_at timestamptz)`);
    this.addSql(`create index if not exists relay_owner_answers_waiting
      on gofers.relay_owner_answers (gofer_id, caller, answered_at) where handed_at is null`);
  }
}

/** The relay channel's port: keeps the answer for the caller (idempotent on the question). */
export class RelayOwnerAnswers implements OwnerAnswers {
  private readonly orm: MikroORM;
  constructor(orm: MikroORM) {
    this.orm = orm;
  }

  async answered(a: OwnerAnswer): Promise<{ delivered: boolean }> {
    await sql(
      this.orm.em.fork(),
      `insert into gofers.relay_owner_answers (question_message_id, gofer_id, caller, answer, answered_at)
       values (?, ?, ?, ?, ?) on conflict (question_message_id) do nothing`,
      [a.questionMessageId, a.goferId, a.caller, a.answer, a.answeredAt],
    );
    return { delivered: true };
  }
}

export interface WaitingAnswer {
  questionMessageId: string;
  answer: string;
}

/** The owner's answers this caller has not been told yet, oldest first. */
export function waitingOwnerAnswers(
  em: EntityManager,
  goferId: string,
  caller: string,
): Promise<WaitingAnswer[]> {
  return sql<WaitingAnswer>(
    em,
    `select question_message_id as "questionMessageId", answer from gofers.relay_owner_answers
      where gofer_id = ? and caller = ? and handed_at is null order by answered_at limit 5`,
    [goferId, caller],
  );
}

/** Once the turn that told the caller is recorded. */
export async function markOwnerAnswersHanded(em: EntityManager, ids: string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await sql(
    em,
    'update gofers.relay_owner_answers set handed_at = ? where question_message_id in (?) and handed_at is null',
    [now, ids],
  );
}
