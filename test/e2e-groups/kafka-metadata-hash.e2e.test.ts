// The group metadata hash (KIP-1101) against the reference Kafka 4.3.1: a
// broker with broker.rack set, a topic of 3 partitions, a Java consumer with
// group.protocol=consumer; the metadataHash Kafka writes in its
// ConsumerGroupMetadataValue (read back from __consumer_offsets) equals the one
// Sediment computes for the same topic id, partitions and replica rack.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { createTopic } from '../clients/common.js';
import { KafkaTool, runKafkaTool, startKafkaReference, type KafkaReference } from '../support/kafka-reference.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember, JavaMember } from './java-member.js';
import { eventually, ProcessedLedger } from './support.js';
import { Reader } from '../../broker/protocol/reader.js';
import { decodeConsumerGroupMetadataValue } from '../../broker/protocol/messages/records/consumer-group-metadata-value.js';
import { metadataHashOf } from '../../broker/group/consumer/target.js';
import type { ConsumerTopicsView } from '../../broker/group/consumer/types.js';

/** ConsumerGroupMetadataKey's record type in __consumer_offsets keys. */
const CONSUMER_GROUP_METADATA = 3;
const rack = 'rack-x';
let kafka: KafkaReference;
let classDir: string;
let member: JavaMember | undefined;

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  kafka = await startKafkaReference({ overrides: { 'broker.rack': rack } });
});

after(async () => {
  member?.proc.kill();
  await kafka?.stop();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
});

/** The metadataHash values of ConsumerGroupMetadataValue records in __consumer_offsets. */
async function kafkaMetadataHashes(): Promise<bigint[]> {
  const consumer = new Kafka({ brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING }).consumer({ groupId: 'metadata-hash-reader' });
  const hashes: bigint[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: '__consumer_offsets', fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.key === null || message.value === null || message.key.readInt16BE(0) !== CONSUMER_GROUP_METADATA) return;
        const r = new Reader(message.value);
        const { metadataHash } = decodeConsumerGroupMetadataValue(r, r.readInt16());
        if (metadataHash !== undefined) hashes.push(metadataHash);
      },
    });
    await eventually('a ConsumerGroupMetadataValue in __consumer_offsets', () => hashes.length > 0, 60_000);
  } finally {
    await consumer.disconnect();
  }
  return hashes;
}

test("Kafka's ConsumerGroupMetadataValue.metadataHash equals Sediment's, racks included", { timeout: 300_000 }, async () => {
  await createTopic(kafka.bootstrap, 'hash-topic', 3);
  const described = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', kafka.bootstrap, '--describe', '--topic', 'hash-topic']);
  const topicId = /TopicId:\s*(\S+)/.exec(described.stdout)?.[1];
  assert.ok(topicId !== undefined, described.stdout);
  member = new JavaMember({ classDir, bootstrap: kafka.bootstrap, topic: 'hash-topic', group: 'g-hash', sessionTimeoutMs: 45_000, ledger: new ProcessedLedger(), name: 'h', protocol: 'consumer' });
  await member.proc.waitFor('an assignment', (e) => e.ev === 'assigned' && Array.isArray(e['partitions']) && e['partitions'].length > 0, 120_000);
  const hashes = await kafkaMetadataHashes();
  // One broker: every partition's single replica is on `rack`.
  const view: ConsumerTopicsView = {
    byName: (n) => (n === 'hash-topic' ? { topicId, partitionCount: 3 } : undefined),
    byId: () => undefined,
    names: () => ['hash-topic'],
    partitionRacks: () => [rack],
  };
  assert.deepEqual([...new Set(hashes)], [metadataHashOf(['hash-topic'], view)]);
  assert.notEqual(metadataHashOf(['hash-topic'], { ...view, partitionRacks: () => [] }), hashes[0], 'the rack is part of it');
});
