// @oan/kafka — the only wrapper over kafkajs in this repo (nothing else imports kafkajs).
export { brokersFromEnv, createKafka, routedSocketFactory } from './kafka.ts';
export { needsNewProducer } from './sender.ts';
export type { Sender } from './sender.ts';
export type {
  ConsumerOptions,
  CreateKafkaOptions,
  KafkaHandle,
  ProducerOptions,
  TopicSpec,
} from './kafka.ts';
export type { Placement } from './placement.ts';
export { kafkajsLogCreator, silentLogger, stderrLogger } from './logger.ts';
export type { LogLevelName, LogSink } from './logger.ts';
export { HEADER_SCHEMA_VERSION, HEADER_TYPE, SchemaRegistry, loadSchemaDir } from './schema-registry.ts';
export type { EncodedValue, LoadedSchema } from './schema-registry.ts';
export { SCHEMAS_DIR } from './schemas-dir.ts';
export { fromConsumedMessage, fromKafkaMessage, headersToStrings, toKafkaMessage } from './message.ts';
export type { LogRecord, OutgoingRecord, RawMessage } from './message.ts';
export { runConsumer } from './consumer.ts';
export { encodeRecord, fixRecordHeaderDecoding, recordDecoders, recordReader } from './recordDecoderFix.ts';
export type { PlainRecord, RecordDecoder } from './recordDecoderFix.ts';
export { encoderClass, fixEncoderBuffers, withOriginalEncoder } from './encoderFix.ts';
export type { EncoderClass } from './encoderFix.ts';
export type {
  Assignment,
  BatchContext,
  ConsumedMessage,
  RunConsumerOptions,
  RunningConsumer,
} from './consumer.ts';
export { InvalidMessageError, SchemaLoadError, SchemaValidationError, UnknownSchemaError } from './errors.ts';
// kafkajs client types, so callers can name what the handle returns without importing kafkajs.
export type { Admin, Consumer, Message, Producer, RecordMetadata, Transaction } from 'kafkajs';
export { avroEventValidator, EventSchemaError } from './validator.ts';
export {
  BACKGROUND_GATHER_MS,
  reactor,
  reactorMember,
  startBackgroundReactors,
  startReactorGroup,
} from './reactor.ts';
export type {
  MemberSpec,
  ReactorContext,
  ReactorGroup,
  ReactorHandlers,
  ReactorMember,
  ReactorSpec,
  RunningReactor,
  TypedEvent,
} from './reactor.ts';
