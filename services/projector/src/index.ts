/**
 * What other packages' tests run of the projector inside their own process: its config and topic
 * names, the live pipeline (libs/testing startInProcessFleet takes them as parameters, since a
 * library never imports a service) and the two stages a test can drive batch by batch.
 */
export { loadProjectorConfig, topicNames } from './config.ts';
export { OAN_PARTITIONS_AT_ONCE, startPipeline, toRecord } from './pipeline.ts';
export { applyDomain, applyOan, applyOanAlone, type StageDeps } from './stages/batches.ts';
export { emptyReadModels } from './replayRun.ts';
export { projectDomainEvents } from './stages/domain.ts';
export { writeEnvelopes, writeEnvelopesAlone, type CommittedEnvelope } from './stages/oan.ts';
