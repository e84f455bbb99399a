import type { OwnerAnswer, OwnerAnswers } from '../src/reactors/ownerAnswers.ts';

/**
 * The owner-answers port in memory: records every call, and answers `delivered` unless the task is
 * one of `gone` (its caller no longer waits). For tests of anything that waits for an owner.
 */
export class MemoryOwnerAnswers implements OwnerAnswers {
  readonly calls: OwnerAnswer[] = [];
  readonly gone = new Set<string>();

  async answered(answer: OwnerAnswer): Promise<{ delivered: boolean }> {
    this.calls.push(answer);
    return { delivered: !this.gone.has(answer.taskId) };
  }
}
