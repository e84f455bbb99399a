// The tiny logger interface @oan/kafka writes to, and the bridge from kafkajs' log output to it.
// A pino logger satisfies `LogSink` as is.
import { logLevel } from 'kafkajs';
import type { LogEntry, logCreator } from 'kafkajs';

export interface LogSink {
  debug(obj: Record<string, unknown>, msg: string): void;
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export type LogLevelName = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

const LEVELS: Record<LogLevelName, logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

export function toKafkajsLogLevel(name: LogLevelName): logLevel {
  return LEVELS[name];
}

const noop = (): void => undefined;
export const silentLogger: LogSink = { debug: noop, info: noop, warn: noop, error: noop };

function stderrLine(level: string) {
  return (obj: Record<string, unknown>, msg: string): void => {
    process.stderr.write(`${JSON.stringify({ level, time: Date.now(), ...obj, msg })}\n`);
  };
}
/** Default when no logger is given: JSON lines on stderr (the kafkajs level filter still applies). */
export const stderrLogger: LogSink = {
  debug: stderrLine('debug'),
  info: stderrLine('info'),
  warn: stderrLine('warn'),
  error: stderrLine('error'),
};

/** kafkajs logs at ERROR every failed *attempt* it then retries: error responses of a request
 * ("[Connection] Response X ... coordinator is loading") and entries carrying `retryCount`. */
function isRetriedAttempt(entry: LogEntry): boolean {
  const message = String(entry.log.message);
  return (
    (entry.namespace === 'Connection' && message.startsWith('Response ')) ||
    typeof entry.log.retryCount === 'number'
  );
}

/**
 * Routes kafkajs log entries to `logger`. Retried attempts (see isRetriedAttempt) go to `warn`;
 * a failure kafkajs finally gives up on reaches the caller as a rejected promise.
 */
export function kafkajsLogCreator(logger: LogSink): logCreator {
  return () => (entry: LogEntry) => {
    const { message, timestamp: _timestamp, logger: _name, ...extra } = entry.log;
    const obj: Record<string, unknown> = { component: 'kafkajs', namespace: entry.namespace, ...extra };
    const msg = `[kafkajs ${entry.namespace}] ${String(message)}`;
    switch (entry.level) {
      case logLevel.ERROR:
        if (isRetriedAttempt(entry)) logger.warn(obj, msg);
        else logger.error(obj, msg);
        return;
      case logLevel.WARN:
        logger.warn(obj, msg);
        return;
      case logLevel.INFO:
        logger.info(obj, msg);
        return;
      case logLevel.DEBUG:
        logger.debug(obj, msg);
        return;
      case logLevel.NOTHING:
        return;
    }
  };
}
