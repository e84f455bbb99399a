#!/bin/bash
# A single-node KRaft broker in the foreground, the same settings as infra/kafka/start.sh (the native
# runner), advertised as $KAFKA_ADVERTISED (default kafka:9092). Formats its storage once.
set -euo pipefail
DATA="${KAFKA_DATA_DIR:-/var/lib/kafka/data}"
CONF=/var/lib/kafka/server.properties
ADVERTISED="${KAFKA_ADVERTISED:-kafka:9092}"
cat >"$CONF" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://0.0.0.0:9092,CONTROLLER://127.0.0.1:9093
advertised.listeners=PLAINTEXT://$ADVERTISED
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DATA
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=false
log.retention.ms=-1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
JAVA=(java -Djava.awt.headless=true -Dlog4j2.configurationFile=/opt/kafka/log4j2.properties -cp '/opt/kafka/lib/*')
if [[ ! -f "$DATA/meta.properties" ]]; then
  "${JAVA[@]}" kafka.tools.StorageTool format -t C_YvXxVnT8SxcCRBH7pStw -c "$CONF" --ignore-formatted
fi
# shellcheck disable=SC2086
exec "${JAVA[@]}" ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 kafka.Kafka "$CONF"
