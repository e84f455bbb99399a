import { describe, expect, it } from 'vitest';
import { NOT_WAITING_FOR_CONFIRMATION } from '../src/domain/errors.ts';
import { assertParticipant, threadDecider, type ThreadCommand } from '../src/domain/thread.ts';
import {
  A,
  B,
  STRANGER,
  THREAD,
  activated,
  closed,
  confirmedBy,
  given,
  proposed,
  running,
  sessionEnded,
} from './fixtures.ts';

const propose = (mode: 'confirm' | 'auto', sides = [B, A] as const): ThreadCommand => ({
  type: 'ProposePairing',
  data: { threadId: THREAD, mode, sides: [sides[0], sides[1]], score: 0.6 },
});
const confirm = (side: { goferId: string; accountId: string }, accepted = true): ThreadCommand => ({
  type: 'ConfirmPairing',
  data: { goferId: side.goferId, accountId: side.accountId, accepted },
});
const deleteGofer = (goferId: string): ThreadCommand => ({ type: 'CloseForDeletedGofer', data: { goferId } });
const banAccount = (accountId: string): ThreadCommand => ({
  type: 'CloseForBannedAccount',
  data: { accountId },
});

describe('proposing a pair', () => {
  it('records public snapshots, the lower goferId as side a, and waits for confirmation (confirm mode)', () => {
    given().when(propose('confirm')).then(proposed('confirm'));
  });

  it('starts an auto-paired thread active at once', () => {
    given().when(propose('auto')).then(proposed('auto'), activated);
  });

  it('keeps only the four platform values in the snapshot', () => {
    const [event] = given()
      .when(propose('confirm', [{ ...A, sourcePlatform: 'foo' }, B]))
      .events();
    expect(event?.type === 'ThreadProposed' && event.data.a.sourcePlatform).toBe('other');
  });

  it('never proposes a pair twice, whatever became of the first thread', () => {
    given(proposed()).when(propose('confirm')).thenNothing();
    given(proposed(), closed('rejected', B)).when(propose('auto')).thenNothing();
  });

  it('refuses a Gofer with itself and two Gofers of one account', () => {
    given()
      .when(propose('confirm', [A, A]))
      .thenThrows('SAME_GOFER');
    given()
      .when(propose('confirm', [A, { ...B, accountId: A.accountId }]))
      .thenThrows('SAME_ACCOUNT');
  });
});

describe('when the thread awaits both confirmations', () => {
  it('records the first acceptance and stays pending', () => {
    given(proposed()).when(confirm(B)).then(confirmedBy(B));
  });

  it('activates the thread with the second acceptance', () => {
    given(proposed(), confirmedBy(B)).when(confirm(A)).then(confirmedBy(A), activated);
  });

  it('closes the thread when a side rejects', () => {
    given(proposed(), confirmedBy(B)).when(confirm(A, false)).then(closed('rejected', A));
  });

  it('activates once when both confirm at once (two commands serialized on the stream)', () => {
    const first = given(proposed()).when(confirm(A)).events();
    given(proposed(), ...first)
      .when(confirm(B))
      .then(confirmedBy(B), activated);
    expect(first).toEqual([confirmedBy(A)]);
  });

  it('answers a side confirming twice with the literal "not waiting" error', () => {
    given(proposed(), confirmedBy(A))
      .when(confirm(A))
      .thenThrows('THREAD_NOT_AWAITING_CONFIRMATION', NOT_WAITING_FOR_CONFIRMATION);
  });
});

describe('confirming a thread that is not waiting (the literal 400 read as already paired)', () => {
  const cases = {
    'auto-paired': running(),
    'active after both confirmed': [proposed(), confirmedBy(A), confirmedBy(B), activated],
    rejected: [proposed(), closed('rejected', B)],
    'closed by a deleted Gofer': [proposed(), closed('gofer_deleted', B)],
    'past its session': [...running(), sessionEnded()],
  };
  it.each(Object.entries(cases))("is a 400 containing the engine's text when %s", (_, events) => {
    given(...events)
      .when(confirm(A))
      .thenThrows('THREAD_NOT_AWAITING_CONFIRMATION', NOT_WAITING_FOR_CONFIRMATION);
    expect(NOT_WAITING_FOR_CONFIRMATION).toContain('Thread is not waiting for confirmation');
  });
});

describe('who may confirm (unknown thread 404, not a participant 403)', () => {
  it('refuses an unknown thread with 404', () => {
    given().when(confirm(A)).thenThrows('THREAD_NOT_FOUND');
  });

  it('refuses a Gofer not in the thread, and a participant Gofer named by another account, with 403', () => {
    given(proposed()).when(confirm(STRANGER)).thenThrows('THREAD_FORBIDDEN');
    given(proposed())
      .when(confirm({ goferId: A.goferId, accountId: B.accountId }))
      .thenThrows('THREAD_FORBIDDEN');
  });

  it('checks reads of a thread the same way', () => {
    const state = [proposed()].reduce(threadDecider.evolve, threadDecider.initialState());
    expect(() => assertParticipant(state, B.goferId, B.accountId)).not.toThrow();
    expect(() => assertParticipant(state, STRANGER.goferId, STRANGER.accountId)).toThrow(
      expect.objectContaining({ code: 'THREAD_FORBIDDEN' }),
    );
    expect(() => assertParticipant(threadDecider.initialState(), A.goferId, A.accountId)).toThrow(
      expect.objectContaining({ code: 'THREAD_NOT_FOUND' }),
    );
  });
});

describe('when a Gofer of the thread is deleted', () => {
  it.each([
    ['awaiting confirmation', [proposed()]],
    ['running its session', running()],
    ['past its session', [...running(), sessionEnded()]],
  ] as const)('closes the thread %s, naming the deleted side', (_, events) => {
    given(...events)
      .when(deleteGofer(B.goferId))
      .then(closed('gofer_deleted', B));
  });

  it('does nothing for a closed, unknown or unrelated thread', () => {
    given(proposed(), closed('rejected', A)).when(deleteGofer(B.goferId)).thenNothing();
    given().when(deleteGofer(B.goferId)).thenNothing();
    given(proposed()).when(deleteGofer(STRANGER.goferId)).thenNothing();
  });

  it('reads as closed for the counterpart', () => {
    const state = [...running(), closed('gofer_deleted', B)].reduce(
      threadDecider.evolve,
      threadDecider.initialState(),
    );
    expect(state).toMatchObject({
      status: 'closed',
      closedReason: 'gofer_deleted',
      closedByGoferId: B.goferId,
    });
  });
});

describe('when the account of a side is banned', () => {
  it.each([
    ['awaiting confirmation', [proposed()]],
    ['running its session', running()],
    ['past its session', [...running(), sessionEnded()]],
  ] as const)('closes the thread %s, naming the banned side', (_, events) => {
    given(...events)
      .when(banAccount(A.accountId))
      .then(closed('account_banned', A));
  });

  it('does nothing for a closed, unknown or unrelated thread', () => {
    given(proposed(), closed('rejected', B)).when(banAccount(A.accountId)).thenNothing();
    given().when(banAccount(A.accountId)).thenNothing();
    given(proposed()).when(banAccount(STRANGER.accountId)).thenNothing();
  });
});
