// Exit 0 if a Kafka broker answers a metadata request on $KAFKA_BROKERS (or argv[2]), else 1.
// Used by start.sh (idempotency check + readiness wait). Prints nothing unless --verbose.
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;
const brokers = (process.argv[2] ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const verbose = process.argv.includes('--verbose');

const kafka = new Kafka({
  clientId: 'oan-infra-ping',
  brokers,
  connectionTimeout: 1000,
  requestTimeout: 3000,
  retry: { retries: 0 },
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
const timer = setTimeout(() => process.exit(1), 5000);
try {
  await admin.connect();
  const cluster = await admin.describeCluster();
  if (verbose) console.log(JSON.stringify(cluster));
  await admin.disconnect();
  clearTimeout(timer);
  process.exit(cluster.brokers.length > 0 ? 0 : 1);
} catch (err) {
  if (verbose) console.error(String(err));
  process.exit(1);
}
