import type { KafkaHandle, LogSink, SchemaRegistry } from '@oan/kafka';
import type { ConversationContext } from '../commands/context.ts';

/** What the conversations process's reactors are given. */
export interface ReactorDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: ConversationContext;
  logger: LogSink;
  topicPrefix: string;
}
