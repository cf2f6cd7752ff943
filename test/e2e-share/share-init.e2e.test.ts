// The group coordinator initialises share-partition state (KIP-932, Kafka
// 4.x's InitializeShareGroupState from the group coordinator), seen through
// Kafka 4.3.1's kafka-share-groups tool: a member joins by ShareGroupHeartbeat
// alone (no ShareFetch ever), and the group's share-partitions are described
// (START-OFFSET "-": initialised at -1, resolved at the first load). A
// KafkaShareConsumer then reads the group from share.auto.offset.reset
// (earliest) and acknowledges everything; after a broker restart the tool
// describes the same start offsets.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { eventually } from '../e2e-groups/support.js';
import { compileShareMember, createAndProduce, groupRows, Ledger, type MemberEnv, shareGroupsTool, ShareMember } from './support.js';

let broker: SedimentProcess;
let classes: string;
const members: ShareMember[] = [];
let env: MemberEnv;
const topic = 'share-init';
const group = 'g-init';
const values = Array.from({ length: 20 }, (_, i) => `init-${i}`);

/** kafka-share-groups (4.3.1) against the broker: its stdout. */
const shareGroups = (...args: string[]): Promise<string> => shareGroupsTool(broker.bootstrap, ...args);

/** GROUP TOPIC PARTITION START-OFFSET LAG rows of the group, by partition. */
async function describeOffsets(): Promise<string[][]> {
  const out = await shareGroups('--describe', '--group', group, '--offsets');
  return groupRows(out, group).map((c) => c.slice(2)).sort((a, b) => Number(a[0]) - Number(b[0]));
}

before(async () => {
  requireTools(['java', 'kafka']);
  classes = compileShareMember();
  broker = await startSediment({});
  env = { classes, get bootstrap() { return broker.bootstrap; }, members };
  await createAndProduce(broker.bootstrap, topic, 2, values);
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  if (classes !== undefined) rmSync(classes, { recursive: true, force: true });
});

test('a heartbeat alone initialises the share-partitions; the consumer then starts at share.auto.offset.reset; a restart keeps the start offsets', { timeout: 400_000 }, async () => {
  const [host, port] = broker.bootstrap.split(':');
  const conn = await BrokerConnection.connect(host!, Number(port));
  const memberId = 'init-member-0000000001';
  try {
    const hb = (memberEpoch: number) => conn.send(apis.ShareGroupHeartbeat, () => ({ groupId: group, memberId, memberEpoch, rackId: null, subscribedTopicNames: memberEpoch === 0 ? [topic] : null }));
    const joined = (await hb(0)).body;
    assert.equal(joined.errorCode, 0, joined.errorMessage ?? '');
    assert.equal(joined.memberEpoch, 1);
    // No ShareFetch was sent: the rows come from the state the group coordinator initialised.
    let rows: string[][] = [];
    await eventually('both share-partitions to be described', async () => (rows = await describeOffsets()).length === 2, 60_000, () => JSON.stringify(rows));
    assert.deepEqual(rows, [['0', '-', '-'], ['1', '-', '-']], 'initialised at start offset -1 (resolved at the first load)');
    assert.equal((await hb(-1)).body.errorCode, 0);
  } finally {
    conn.close();
  }
  const ledger = new Ledger();
  const m = new ShareMember(env, 'reader', ledger, group, topic, 'explicit', false, { 'share.auto.offset.reset': 'earliest' });
  await eventually('every record', () => ledger.distinct().size === values.length, 180_000, () => `${ledger.distinct().size} of ${values.length}`);
  await eventually('the reader to poll empty', () => m.idle >= 3, 60_000);
  await m.stop();
  assert.deepEqual(m.errors, []);
  const consumed = [['0', '10', '0'], ['1', '10', '0']];
  assert.deepEqual(await describeOffsets(), consumed, 'the reset (earliest) applied to the initialised state: every record consumed');
  await broker.restart();
  assert.deepEqual(await describeOffsets(), consumed, 'the start offsets survive a restart');
});
