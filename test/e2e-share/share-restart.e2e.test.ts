// A share group across broker restarts: the group coordinator keeps Kafka's
// ShareGroupMetadata and ShareGroupStatePartitionMetadata records in
// __consumer_offsets and replays them at start-up. A KafkaShareConsumer
// acknowledges part of a topic; after a restart the group is listed (Empty),
// a member's first ShareGroupHeartbeat is assigned both share-partitions at
// once (they are recorded initialized: not initialised again), and a new
// consumer receives only what was not acknowledged, none of it twice.
// Then Kafka 4.3.1's kafka-share-groups: --reset-offsets (InitializeShareGroupState
// at the new start) and --delete-offsets, each followed by a restart, behave as
// on Kafka: the reset start offsets survive, and after --delete-offsets the
// group has no share-partition state and starts again at share.auto.offset.reset.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { eventually } from '../e2e-groups/support.js';
import { compileShareMember, createAndProduce, groupRows, Ledger, type MemberEnv, produce, shareGroupsTool, ShareMember } from './support.js';

let broker: SedimentProcess;
let classes: string;
const members: ShareMember[] = [];
let env: MemberEnv;
const topic = 'share-restart';
const group = 'g-restart';
const first = Array.from({ length: 20 }, (_, i) => `first-${i}`);
const second = Array.from({ length: 10 }, (_, i) => `second-${i}`);

/** kafka-share-groups (4.3.1) against the broker: its stdout. */
const shareGroups = (...args: string[]): Promise<string> => shareGroupsTool(broker.bootstrap, ...args);

const rows = (output: string): string[][] => groupRows(output, group);

/** PARTITION START-OFFSET LAG of the group's share-partitions, by partition. */
async function startOffsets(): Promise<string[][]> {
  return rows(await shareGroups('--describe', '--group', group, '--offsets')).map((c) => c.slice(2)).sort((a, b) => Number(a[0]) - Number(b[0]));
}

/** Runs a member until it polls empty; returns what it delivered. */
async function consume(name: string, expected: number): Promise<Ledger> {
  const ledger = new Ledger();
  const m = new ShareMember(env, name, ledger, group, topic, 'explicit', false, { 'share.auto.offset.reset': 'earliest' });
  await eventually(`${name} to receive ${expected} records`, () => ledger.distinct().size >= expected, 180_000, () => `${ledger.distinct().size} of ${expected}`);
  await eventually(`${name} to poll empty`, () => m.idle >= 3, 60_000);
  await m.stop();
  assert.deepEqual(m.errors, []);
  return ledger;
}

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classes = compileShareMember();
  broker = await startSediment({});
  env = { classes, get bootstrap() { return broker.bootstrap; }, members };
  await createAndProduce(broker.bootstrap, topic, 2, first);
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  if (classes !== undefined) rmSync(classes, { recursive: true, force: true });
});

test('after a restart the group keeps its share-partitions initialised: assigned at once, start offsets kept, nothing acknowledged delivered again', { timeout: 600_000 }, async () => {
  const before = await consume('before', first.length);
  assert.equal(before.deliveries.length, first.length, 'each record once');
  assert.deepEqual(await startOffsets(), [['0', '10', '0'], ['1', '10', '0']]);
  await broker.restart();
  assert.ok((await shareGroups('--list')).split('\n').map((l) => l.trim()).includes(group), 'the group is back after the restart (from its records)');
  assert.deepEqual(await startOffsets(), [['0', '10', '0'], ['1', '10', '0']], 'start offsets kept');
  // A raw member: its first heartbeat after the restart is assigned both share-partitions (before, they had to be initialised first).
  const [host, port] = broker.bootstrap.split(':');
  const conn = await BrokerConnection.connect(host!, Number(port));
  try {
    const memberId = 'restart-member-00000001';
    const joined = (await conn.send(apis.ShareGroupHeartbeat, () => ({ groupId: group, memberId, memberEpoch: 0, rackId: null, subscribedTopicNames: [topic] }))).body;
    assert.equal(joined.errorCode, 0, joined.errorMessage ?? '');
    assert.deepEqual(joined.assignment?.topicPartitions.flatMap((t) => t.partitions).sort(), [0, 1], 'assigned on the first heartbeat');
    assert.ok(joined.memberEpoch > 1, `the group epoch goes on from the recorded one (${joined.memberEpoch})`);
    assert.equal((await conn.send(apis.ShareGroupHeartbeat, () => ({ groupId: group, memberId, memberEpoch: -1, rackId: null, subscribedTopicNames: null }))).body.errorCode, 0);
  } finally {
    conn.close();
  }
  await produce(broker.bootstrap, topic, 2, second);
  const afterRestart = await consume('after', second.length);
  assert.deepEqual([...afterRestart.distinct()].sort(), [...second].sort(), 'only the records produced since: none acknowledged before the restart comes again');
  assert.equal(afterRestart.deliveries.length, second.length);
  assert.deepEqual(await startOffsets(), [['0', '15', '0'], ['1', '15', '0']]);
});

test('kafka-share-groups --reset-offsets and --delete-offsets across restarts', { timeout: 600_000 }, async () => {
  const all = first.length + second.length;
  assert.deepEqual(rows(await shareGroups('--reset-offsets', '--to-earliest', '--execute', '--group', group, '--topic', topic)).map((r) => r.slice(2)).sort(), [['0', '0'], ['1', '0']], 'NEW-OFFSET 0');
  await broker.restart();
  assert.deepEqual(await startOffsets(), [['0', '0', '15'], ['1', '0', '15']], 'the reset start offsets survive a restart');
  const replayed = await consume('reset', all);
  assert.equal(replayed.deliveries.length, all, 'every record again, once');
  assert.ok(replayed.deliveries.every((d) => d.dc === 1), 'a reset starts the delivery counts afresh');
  assert.match(await shareGroups('--delete-offsets', '--group', group, '--topic', topic), new RegExp(`${topic}\\s+Successful`));
  assert.deepEqual(await startOffsets(), [], 'no share-partition state left');
  await broker.restart();
  assert.deepEqual(await startOffsets(), [], 'still none after a restart: the deletion was recorded');
  // The next member initialises the share-partitions again: share.auto.offset.reset (earliest) applies.
  const fresh = await consume('fresh', all);
  assert.equal(fresh.deliveries.length, all, 'every record, from the start');
});
