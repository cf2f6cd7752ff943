// The online migration of a Java group between the classic and the consumer
// (KIP-848) protocol while a producer keeps writing, as Kafka supports it: three
// classic members (CooperativeStickyAssignor) are rolled one at a time to
// group.protocol=consumer. The first consumer-protocol member to join upgrades
// the group to a consumer group; the classic members left in it are served
// through JoinGroup/SyncGroup/Heartbeat from the server-side assignment. Then
// they are rolled back one at a time: when the last consumer-protocol member
// leaves, the group downgrades to a classic group and rebalances. After every
// step the group settles with each partition owned once and the committed
// offsets have moved on; across the whole run no partition is ever owned by
// two members at once (the members' callbacks replayed on one monotonic clock);
// a broker restart in the middle of the upgrade brings the mixed group back;
// at the end committed == log end and every offset was processed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember, type JavaMember } from './java-member.js';
import { JavaGroupRun } from './java-group-run.js';
import { committedOffsets, ContinuousProducer, eventually, range, waitCommittedToEnd, withAdmin } from './support.js';

const topic = 'java-online-migration';
const group = 'g-java-online-migration';
const partitions = 6;
const sessionTimeoutMs = 6000;
let broker: SedimentProcess;
let classDir: string;
let run: JavaGroupRun;
let producer: ContinuousProducer | null = null;

/** The group's type and, for a consumer group, each member's type (0 classic, 1 consumer) from ConsumerGroupDescribe v1. */
async function groupKind(): Promise<{ type: 'classic' | 'consumer'; memberTypes: number[] }> {
  const admin = await AdminClient.connect(broker.bootstrap, { retryMs: 30_000 });
  try {
    const conn = await admin.coordinator(group);
    const { body } = await conn.send(apis.ConsumerGroupDescribe, () => ({ groupIds: [group], includeAuthorizedOperations: false }), { min: 1 });
    const g = body.groups[0];
    assert.ok(g !== undefined);
    if (g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND) return { type: 'classic', memberTypes: [] };
    assert.equal(g.errorCode, ErrorCode.NONE, g.errorMessage ?? '');
    return { type: 'consumer', memberTypes: g.members.map((m) => m.memberType).sort() };
  } finally {
    await admin.close();
  }
}

async function committedSum(): Promise<bigint> {
  const offsets = await withAdmin(broker.bootstrap, (adm) => committedOffsets(adm, group, topic, partitions));
  return offsets.reduce((x, y) => x + (y < 0n ? 0n : y), 0n);
}

/** Settles the group, then waits for its committed offsets to pass `previous` (consumption goes on). */
async function settleAndProgress(step: string, live: readonly JavaMember[], previous: { sum: bigint }): Promise<void> {
  await run.settle(step, live);
  await eventually(`committed offsets to move on after: ${step}`, async () => (await committedSum()) > previous.sum, 60_000, () => run.diagnostics());
  previous.sum = await committedSum();
}

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  broker = await startSediment({
    overrides: {
      'group.consumer.min.session.timeout.ms': String(sessionTimeoutMs),
      'group.consumer.session.timeout.ms': String(sessionTimeoutMs),
      'group.consumer.min.heartbeat.interval.ms': '500',
      'group.consumer.heartbeat.interval.ms': '500',
    },
  });
  run = new JavaGroupRun({ broker, classDir, topic, group, sessionTimeoutMs, partitions, protocol: 'classic' });
  await createTopic(broker.bootstrap, topic, partitions);
  producer = new ContinuousProducer(broker.bootstrap, topic, { keys: 900, batch: 20, pauseMs: 10 });
  await producer.start();
});

after(async () => {
  await producer?.stop().catch(() => undefined);
  await run?.killAll();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  run?.report.print('Java group rolled classic -> consumer -> classic (online migration):');
});

test('rolling classic -> consumer -> classic, one member at a time: never two owners, nothing skipped', { timeout: 1_800_000 }, async () => {
  const t0 = Date.now();
  const progress = { sum: -1n };
  let live: JavaMember[] = ['a', 'b', 'c'].map((n) => run.start(`classic-${n}`));
  await settleAndProgress('classic a, b, c joined', live, progress);
  assert.equal((await groupKind()).type, 'classic');

  // Upgrade: each classic member in turn is replaced by a consumer-protocol one.
  for (const n of ['a', 'b', 'c']) {
    const old = live.find((m) => m.name === `classic-${n}`)!;
    await old.stop();
    live = live.filter((m) => m !== old);
    await settleAndProgress(`classic-${n} stopped`, live, progress);
    const fresh = run.start(`consumer-${n}`, 'consumer');
    live.push(fresh);
    await settleAndProgress(`consumer-${n} joined`, live, progress);
    const kind = await groupKind();
    assert.equal(kind.type, 'consumer', `after consumer-${n} joined`);
    assert.deepEqual(kind.memberTypes, live.map((m) => (m.name.startsWith('classic') ? 0 : 1)).sort(), `member types after consumer-${n} joined`);
    if (n === 'b') {
      // Mid-migration (one classic and two consumer-protocol members), the broker restarts: the group comes back from __consumer_offsets as it was.
      await producer?.stop();
      await broker.restart();
      producer = new ContinuousProducer(broker.bootstrap, topic, { keys: 900, batch: 20, pauseMs: 10 });
      await producer.start();
      await settleAndProgress('broker restarted mid-migration', live, progress);
      assert.deepEqual((await groupKind()).memberTypes, [0, 1, 1], 'after the restart');
    }
  }
  assert.deepEqual((await groupKind()).memberTypes, [1, 1, 1]);

  // Downgrade: each consumer-protocol member in turn is replaced by a classic one.
  for (const n of ['a', 'b', 'c']) {
    const old = live.find((m) => m.name === `consumer-${n}`)!;
    await old.stop();
    live = live.filter((m) => m !== old);
    await settleAndProgress(`consumer-${n} stopped`, live, progress);
    // The last consumer-protocol member leaving turned the group classic again.
    assert.equal((await groupKind()).type, n === 'c' ? 'classic' : 'consumer', `after consumer-${n} stopped`);
    const fresh = run.start(`classic2-${n}`, 'classic');
    live.push(fresh);
    await settleAndProgress(`classic2-${n} joined`, live, progress);
  }
  assert.equal((await groupKind()).type, 'classic');

  await producer?.stop();
  producer = null;
  const ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions, 120_000, () => run.diagnostics());
  for (const m of live) await m.stop();
  const steps = run.checkNeverTwoOwners();
  for (const p of range(partitions)) assert.equal(run.ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: an offset never processed`);
  assert.deepEqual(run.ledger.conflicts, []);
  const s = run.ledger.summary(partitions);
  run.report.add(`${steps} ownership changes replayed: never two owners; ${ends.reduce((x, y) => x + y, 0n)} records over ${partitions} partitions, ${s.reduce((x, y) => x + y.duplicates, 0)} redelivered; wall ${Date.now() - t0} ms`);
  assertNoBrokerErrors(broker.logs);
});
