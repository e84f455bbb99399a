import { randomUUID } from 'node:crypto';
import { sql, type MikroORM } from '@oan/db';

/**
 * Rows of the read models a decision concerns, written as the projector writes them, so that a test
 * can settle a decision without the other contexts running.
 */
export function readModels(orm: MikroORM) {
  const run = (q: string, params: unknown[]) => sql(orm.em.fork(), q, params);
  const at = (offsetMs = 1000) => new Date(Date.now() + offsetMs);
  return {
    gofer: (accountId: string, goferId = randomUUID(), deleted = false) =>
      run(
        `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform,
           discovery_status, human_review_triggers, "values", demands, created_at, updated_at, deleted_at)
         values (?, ?, ?, 'G', '', 'en', 'web', 'draft', '[]', '[]', '[]', now(), now(), ?)`,
        [goferId, accountId, goferId, deleted ? new Date() : null],
      ).then(() => goferId),
    deleteGofer: (goferId: string) =>
      run('update read.gofers set deleted_at = now() where id = ?', [goferId]),
    /** A message in the Gofer's role-chat, `role` 'user' (the owner) or 'assistant' (the Gofer). */
    chatMessage: (accountId: string, goferId: string, role: 'user' | 'assistant', createdAt = at()) =>
      run(
        `insert into read.gofer_messages (id, gofer_id, account_id, chat_id, role, content, pending_query,
           attachment_ids, created_at) values (?, ?, ?, ?, ?, 'Lyon', false, '[]', ?)`,
        [randomUUID(), goferId, accountId, goferId, role, createdAt],
      ),
    matchRequest: (accountId: string, goferId: string, status = 'pending') =>
      run(
        `insert into read.match_requests (id, thread_id, requester_gofer_id, requester_account_id,
           recipient_gofer_id, recipient_account_id, status, requested_at, updated_at)
         values (?, ?, 'other-gofer', 'other-account', ?, ?, ?, now(), now()) returning id`,
        [randomUUID(), randomUUID(), goferId, accountId, status],
      ).then((rows) => (rows[0] as { id: string }).id),
    decideMatchRequest: (id: string, status: 'accepted' | 'rejected') =>
      run('update read.match_requests set status = ?, decided_at = now() where id = ?', [status, id]),
    /** A confirm-mode thread; this account's Gofer is side a. */
    thread: (accountId: string, goferId: string) =>
      run(
        `insert into read.threads (id, mode, status, a_gofer_id, a_account_id, a_name, a_source_platform,
           b_gofer_id, b_account_id, b_name, b_source_platform, score, proposed_at, created_at, updated_at)
         values (?, 'confirm', 'awaiting_confirmation', ?, ?, 'A', 'web', 'other-gofer', 'other-account', 'B',
           'web', 0.9, now(), now(), now()) returning id`,
        [randomUUID(), goferId, accountId],
      ).then((rows) => (rows[0] as { id: string }).id),
    confirmThreadSide: (threadId: string, side: 'a' | 'b') =>
      run(`update read.threads set ${side}_confirmed_at = now() where id = ?`, [threadId]),
    setThreadStatus: (threadId: string, status: string) =>
      run('update read.threads set status = ? where id = ?', [status, threadId]),
    /** A message of the conversation, numbered after the ones before it. */
    conversationMessage: async (conversationId: string, sender: string, recipient: string) => {
      const id = randomUUID();
      await run(
        `insert into read.conversation_messages (id, conversation_id, sender_account_id, recipient_account_id,
           content, attachment_ids, change_sequence, created_at)
         values (?, ?, ?, ?, 'hi', '[]',
           coalesce((select max(change_sequence) from read.conversation_messages where conversation_id = ?), 0) + 1,
           now())`,
        [id, conversationId, sender, recipient, conversationId],
      );
      return id;
    },
  };
}
