// A broker restart keeps every committed offset and every group. Before the
// restart: groups left Empty by a kafkajs consumer (offsets with metadata),
// groups that only ever had admin commits (generation -1), and one group whose
// kafkajs member keeps consuming. SIGTERM, start again on the same log dir:
// OffsetFetch returns the same offsets and metadata, ListGroups and
// DescribeGroups the same groups (state, protocol type, protocol), and the
// active member carries on to the log end without losing or skipping a
// record. Then the same after `kill -9` (acknowledged commits are in the log).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { ErrorCode } from '../../broker/protocol/errors.js';
import type { AdminClient, CommittedOffset, GroupDescription } from '../../broker/cli/admin-client.js';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { eventually, logEndOffsets, ProcessedLedger, produceKeyed, range, Report, waitCommittedToEnd, withAdmin } from './support.js';

const topic = 'restart-topic';
const partitions = 4;
const activeGroup = 'g-restart-active';
const emptyGroups = range(5).map((i) => `g-restart-empty-${i}`);
const adminGroups = range(20).map((i) => `g-restart-admin-${i}`);
let broker: SedimentProcess;
let kafka: Kafka;
const report = new Report();
const ledger = new ProcessedLedger();
let active: Consumer | null = null;
let produced = 0;
let crashRestarts = 0;

before(async () => {
  requireTools(['kafkajs']);
  broker = await startSediment();
  kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'restart-test', logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 2000 } });
  await createTopic(broker.bootstrap, topic, partitions);
  await produceKeyed(broker.bootstrap, topic, 4000, { prefix: 'r' });
  produced = 4000;
});

after(async () => {
  await active?.disconnect().catch(() => undefined);
  await broker?.close();
  report.print('broker restart:');
});

interface GroupSnapshot {
  readonly offsets: string[];
  readonly description: Pick<GroupDescription, 'state' | 'protocolType' | 'protocol'> & { members: number };
}

const offsetKey = (o: CommittedOffset): string => `${o.topic}-${o.partition}=${o.offset}/${o.metadata ?? 'null'}/${o.errorCode}`;

async function snapshot(admin: AdminClient, groups: readonly string[]): Promise<Map<string, GroupSnapshot>> {
  const out = new Map<string, GroupSnapshot>();
  for (const g of groups) {
    const fetched = await admin.offsetFetch(g, null);
    assert.equal(fetched.errorCode, ErrorCode.NONE);
    const d = await admin.describeGroup(g);
    out.set(g, {
      offsets: fetched.offsets.map(offsetKey).sort(),
      description: { state: d.state, protocolType: d.protocolType, protocol: d.protocol, members: d.members.length },
    });
  }
  return out;
}

/** Commits chosen offsets with metadata as a kafkajs member, then leaves: an Empty group with a protocol. */
async function emptyGroupWithOffsets(groupId: string, i: number): Promise<void> {
  const c = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 250 });
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  let joined!: () => void;
  const ready = new Promise<void>((r) => (joined = r));
  c.on(c.events.GROUP_JOIN, () => joined());
  await c.run({ autoCommit: false, eachMessage: async () => undefined });
  await ready;
  c.pause([{ topic }]);
  await c.commitOffsets(range(partitions).map((partition) => ({ topic, partition, offset: String(100 * (i + 1) + partition), metadata: `meta-${i}-${partition}` })));
  await c.disconnect();
}

async function startActive(): Promise<Consumer> {
  const c = kafka.consumer({ groupId: activeGroup, sessionTimeout: 20_000, heartbeatInterval: 500, maxWaitTimeInMs: 250 });
  // kafkajs may give up reconnecting while the broker restarts; it then restarts the consumer itself (restart: true).
  c.on(c.events.CRASH, (e) => {
    if (e.payload.restart) crashRestarts++;
    else ledger.conflicts.push(`active consumer crashed for good: ${String(e.payload.error)}`);
  });
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  await c.run({
    autoCommit: true,
    eachMessage: async ({ partition, message }) => {
      ledger.record(partition, BigInt(message.offset), message.value?.toString('utf8') ?? '');
    },
  });
  return c;
}

const allGroups = (): string[] => [activeGroup, ...emptyGroups, ...adminGroups];

async function checkSurvives(how: string, restart: () => Promise<void>): Promise<void> {
  const beforeSnap = await withAdmin(broker.bootstrap, (a) => snapshot(a, [...emptyGroups, ...adminGroups]));
  const activeBefore = await withAdmin(broker.bootstrap, (a) => a.offsetFetch(activeGroup, null));
  const listedBefore = await withAdmin(broker.bootstrap, (a) => a.listGroups());
  const t = Date.now();
  await restart();
  const restartMs = Date.now() - t;
  const afterSnap = await withAdmin(broker.bootstrap, (a) => snapshot(a, [...emptyGroups, ...adminGroups]));
  assert.deepEqual(afterSnap, beforeSnap, `${how}: offsets or groups changed`);
  const listedAfter = await withAdmin(broker.bootstrap, (a) => a.listGroups());
  for (const g of allGroups()) assert.ok(listedAfter.some((x) => x.groupId === g), `${how}: ${g} not listed after the restart`);
  assert.deepEqual(
    listedAfter.filter((x) => x.groupId !== activeGroup).map((x) => [x.groupId, x.protocolType]),
    listedBefore.filter((x) => x.groupId !== activeGroup).map((x) => [x.groupId, x.protocolType]),
  );
  // The active member commits on: its offsets never go back below what was committed before.
  const activeAfter = await withAdmin(broker.bootstrap, (a) => a.offsetFetch(activeGroup, null));
  for (const o of activeBefore.offsets) {
    const now = activeAfter.offsets.find((x) => x.topic === o.topic && x.partition === o.partition);
    assert.ok(now !== undefined && now.offset >= o.offset, `${how}: ${activeGroup} ${o.topic}-${o.partition} went from ${o.offset} to ${now?.offset}`);
  }
  report.add(`${how}: ${beforeSnap.size + 1} groups and their offsets intact; broker back in ${restartMs} ms`);
}

test('committed offsets and groups survive SIGTERM and kill -9 restarts', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  for (const [i, g] of emptyGroups.entries()) await emptyGroupWithOffsets(g, i);
  await withAdmin(broker.bootstrap, async (a) => {
    for (const [i, g] of adminGroups.entries()) {
      const errors = await a.offsetCommit(g, range(partitions).map((partition) => ({ topic, partition, offset: BigInt(i * 10 + partition) })));
      assert.ok(errors.every((e) => e.errorCode === ErrorCode.NONE), JSON.stringify(errors));
    }
  });
  active = await startActive();
  await waitCommittedToEnd(broker.bootstrap, activeGroup, topic, partitions);

  const snap = await withAdmin(broker.bootstrap, (a) => snapshot(a, [...emptyGroups, ...adminGroups]));
  assert.deepEqual(snap.get('g-restart-empty-1')?.offsets, range(partitions).map((p) => `${topic}-${p}=${200 + p}/meta-1-${p}/0`));
  assert.deepEqual(snap.get('g-restart-empty-1')?.description, { state: 'Empty', protocolType: 'consumer', protocol: '', members: 0 });
  assert.deepEqual(snap.get('g-restart-admin-3')?.offsets, range(partitions).map((p) => `${topic}-${p}=${30 + p}//0`));

  await checkSurvives('SIGTERM restart', async () => {
    const exit = await broker.stop();
    assert.deepEqual(exit, { code: 0, signal: null });
    await broker.start();
  });
  let t = Date.now();
  await produceKeyed(broker.bootstrap, topic, 2000, { prefix: 'r', first: produced });
  produced += 2000;
  await waitCommittedToEnd(broker.bootstrap, activeGroup, topic, partitions);
  report.add(`active member consumed and committed 2000 more records ${Date.now() - t} ms after the SIGTERM restart`);

  // New commits right before kill -9: acknowledged means in the log.
  await withAdmin(broker.bootstrap, async (a) => {
    for (const [i, g] of adminGroups.entries()) {
      const errors = await a.offsetCommit(g, range(partitions).map((partition) => ({ topic, partition, offset: BigInt(1000 + i * 10 + partition) })));
      assert.ok(errors.every((e) => e.errorCode === ErrorCode.NONE));
    }
  });
  await checkSurvives('kill -9 restart', async () => {
    await broker.kill();
    await broker.start();
  });
  const adminAfter = await withAdmin(broker.bootstrap, (a) => snapshot(a, ['g-restart-admin-7']));
  assert.deepEqual(adminAfter.get('g-restart-admin-7')?.offsets, range(partitions).map((p) => `${topic}-${p}=${1070 + p}//0`));

  t = Date.now();
  await produceKeyed(broker.bootstrap, topic, 2000, { prefix: 'r', first: produced });
  produced += 2000;
  const ends = await waitCommittedToEnd(broker.bootstrap, activeGroup, topic, partitions);
  report.add(`active member consumed and committed 2000 more records ${Date.now() - t} ms after the kill -9 restart`);
  assert.equal(ends.reduce((x, y) => x + y, 0n), BigInt(produced));
  for (const p of range(partitions)) assert.equal(ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: an offset never processed by the active member`);
  assert.deepEqual(ledger.conflicts, []);
  const s = ledger.summary(partitions);
  report.add(`active kafkajs member across both restarts: ${produced} records, ${s.reduce((x, y) => x + y.duplicates, 0)} redelivered, ${crashRestarts} client restarts after connection loss; wall ${Date.now() - t0} ms`);
  assert.deepEqual(await withAdmin(broker.bootstrap, (a) => logEndOffsets(a, topic, partitions)), ends);
  await active.disconnect();
  active = null;
  await eventually(`${activeGroup} Empty after its member left`, async () => (await withAdmin(broker.bootstrap, (a) => a.describeGroup(activeGroup))).state === 'Empty');
  for (const logs of [...broker.previousLogs, broker.logs]) assertNoBrokerErrors(logs);
});
