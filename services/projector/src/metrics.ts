import { Counter } from 'prom-client';

export const metrics = {
  domainEvents: new Counter({ name: 'oan_projector_domain_events_total', help: 'Domain events applied' }),
  envelopes: new Counter({
    name: 'oan_projector_envelopes_total',
    help: 'OAN envelopes written to the event table',
  }),
  deadLetters: new Counter({
    name: 'oan_projector_dead_letters_total',
    help: 'Records that could not be decoded',
  }),
};
