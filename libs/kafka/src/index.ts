// @oan/kafka — the only wrapper over kafkajs in this repo (nothing else imports kafkajs).
export { brokersFromEnv, createKafka, needsNewProducer } from './kafka';
export type {
  ConsumerOptions,
  CreateKafkaOptions,
  KafkaHandle,
  ProducerOptions,
  Sender,
  TopicSpec,
} from './kafka';
export { kafkajsLogCreator, silentLogger, stderrLogger } from './logger';
export type { LogLevelName, LogSink } from './logger';
export { HEADER_SCHEMA_VERSION, HEADER_TYPE, SchemaRegistry, loadSchemaDir } from './schema-registry';
export type { EncodedValue, LoadedSchema } from './schema-registry';
export { SCHEMAS_DIR } from './schemas-dir';
export { fromKafkaMessage, headersToStrings, toKafkaMessage } from './message';
export type { LogRecord, OutgoingRecord, RawMessage } from './message';
export { runConsumer } from './consumer';
export type {
  Assignment,
  BatchContext,
  ConsumedMessage,
  RunConsumerOptions,
  RunningConsumer,
} from './consumer';
export { InvalidMessageError, SchemaLoadError, SchemaValidationError, UnknownSchemaError } from './errors';
// kafkajs client types, so callers can name what the handle returns without importing kafkajs.
export type { Admin, Consumer, Message, Producer, RecordMetadata, Transaction } from 'kafkajs';
export { avroEventValidator, EventSchemaError } from './validator';
export { startReactorLoop, type ReactorLoop, type RunningReactor } from './reactor';
