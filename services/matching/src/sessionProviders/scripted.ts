import { scriptTurn, summarizeSession } from '../domain/scriptedSession.ts';
import type { CardFields, NextTurnInput, SessionProvider, SummaryCardInput } from './provider.ts';

/** The deterministic script of domain/scriptedSession.ts behind the provider interface (the default). */
export class ScriptedSessionProvider implements SessionProvider {
  readonly kind = 'scripted';
  readonly deterministic = true;

  nextTurn(input: NextTurnInput): Promise<{ content: string }> {
    if ((input.turnIndex % 2 === 0) !== input.opens)
      return Promise.reject(new RangeError(`turn ${input.turnIndex} is not this side's`));
    const [opener, responder] = input.opens
      ? [input.self.profile, input.counterpart]
      : [input.counterpart, input.self.profile];
    return Promise.resolve({ content: scriptTurn(opener, responder, input.turnIndex) });
  }

  summaryCard(input: SummaryCardInput): Promise<CardFields> {
    return Promise.resolve(
      summarizeSession(input.transcript, { profile: input.self.profile }, { profile: input.counterpart }),
    );
  }
}
