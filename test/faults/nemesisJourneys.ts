import { joinAccount, type TestFleet } from '@oan/testing';
import { matchTwoAccountsSaying, WEDDING } from '../support.ts';

/**
 * Interview answers of pairs that need each other and share no word with another pair's (nor with
 * the scene's team and engineer), so discovery never pairs across two journeys.
 */
const THEMES: [string[], string[]][] = [
  WEDDING,
  [
    [
      'Our cooperative seeks a landscape gardener in Oslo to plant our rooftop terrace with herbs and shrubs.',
      'A housing cooperative in Oslo whose rooftop terrace needs herbs, shrubs and drip irrigation.',
      'Reliability, tidiness, ecology.',
      'Name yourself Sprout.',
    ],
    [
      'I offer landscape gardening in Oslo: rooftop terraces, herbs, shrubs and drip irrigation.',
      'A landscape gardener in Oslo planting rooftop terraces with herbs, shrubs and drip irrigation.',
      'Reliability, tidiness, ecology.',
      'Name yourself Fern.',
    ],
  ],
  [
    [
      'Our orchestra hires a piano tuner in Vienna for the concert grand pianos of our chamber hall.',
      'A chamber orchestra in Vienna owning three concert grand pianos that need tuning monthly.',
      'Precision, discretion, musicality.',
      'Be called Keynote.',
    ],
    [
      'Available for piano tuning in Vienna: concert grand pianos, chamber halls, monthly tuning.',
      'A piano tuner in Vienna caring for concert grand pianos in chamber orchestra halls.',
      'Precision, discretion, musicality.',
      'Be called Tuning Fork.',
    ],
  ],
];

export interface Journeys {
  /** Journeys (two joins, two interviews, discovery, pairing, the session, a match) run to their end. */
  matched: number;
  /** Accounts joined after the themes ran out (joins alone). */
  joined: number;
  /** Why the others stopped: a fault met on the way (a journey is not retried). */
  failed: string[];
  stop(): Promise<void>;
}

/**
 * Joins and matches while the faults run: a journey per theme, one after another, then joins alone.
 * A journey that meets a fault stops there; what it did is still checked (no proposal twice, every
 * stream once), only its remaining steps are skipped.
 */
export function startJourneys(fleet: TestFleet): Journeys {
  let stopped = false;
  const journeys: Omit<Journeys, 'stop'> = { matched: 0, joined: 0, failed: [] };
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      try {
        if (i < THEMES.length) {
          const m = await matchTwoAccountsSaying(fleet, [`nem-j${i}a`, `nem-j${i}b`], THEMES[i]!);
          m.ca.close();
          m.cb.close();
          journeys.matched++;
        } else {
          await joinAccount(
            fleet.urls[i % fleet.urls.length]!,
            fleet.mailbox,
            `nem-join${i}-${fleet.id}@example.com`,
          );
          journeys.joined++;
        }
      } catch (err) {
        journeys.failed.push(`${i}: ${String(err).slice(0, 200)}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return Object.assign(journeys, {
    /** Stops after the current journey, or after a minute (a journey may be waiting out a fault). */
    stop: async () => {
      stopped = true;
      await Promise.race([loop, new Promise((r) => setTimeout(r, 60_000).unref())]);
    },
  });
}
