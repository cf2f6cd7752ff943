// Share groups (KIP-932) with the Java client (the reference release, 4.3.1):
// KafkaShareConsumer processes (java/ShareMember.java) against a Sediment child
// process. Every record is delivered; a record held by a member that is killed,
// released, or whose lock expires is delivered again to someone; a rejected
// record, or one released at the delivery count limit, is archived; nothing
// acknowledged is delivered again, also after the broker restarts.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { eventually } from '../e2e-groups/support.js';
import { compileShareMember, createAndProduce, Ledger, ShareMember, type MemberEnv } from './support.js';

let broker: SedimentProcess;
let classes: string;
const members: ShareMember[] = [];
let env: MemberEnv;

before(async () => {
  requireTools(['java', 'kafka']);
  classes = compileShareMember();
  broker = await startSediment({ overrides: { 'group.share.min.record.lock.duration.ms': '1000' } });
  env = { classes, get bootstrap() { return broker.bootstrap; }, members };
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  if (classes !== undefined) rmSync(classes, { recursive: true, force: true });
});

test('implicit acknowledgement, three members, one killed holding a batch: every record is delivered, the held ones again to someone', { timeout: 400_000 }, async () => {
  const topic = 'share-implicit';
  const values = Array.from({ length: 600 }, (_, i) => `v-${i}`);
  await createAndProduce(broker.bootstrap, topic, 3, values);
  const ledger = new Ledger();
  const configs = { 'share.auto.offset.reset': 'earliest' };
  // The holder takes one batch and stops acknowledging; then it is killed.
  const holder = new ShareMember(env, 'holder', ledger, 'g-implicit', topic, 'implicit', true, configs);
  await eventually('the holder to acquire a batch', () => ledger.deliveries.some((d) => d.member === 'holder'), 120_000, () => holder.proc.diagnostics());
  const held = ledger.deliveries.filter((d) => d.member === 'holder').map((d) => d.v);
  const a = new ShareMember(env, 'a', ledger, 'g-implicit', topic, 'implicit', false, configs);
  const b = new ShareMember(env, 'b', ledger, 'g-implicit', topic, 'implicit', false, configs);
  await eventually('the other members to deliver', () => ledger.deliveries.some((d) => d.member !== 'holder'), 120_000, () => a.proc.diagnostics() + b.proc.diagnostics());
  await holder.proc.kill();
  await eventually('every record to be delivered', () => ledger.distinct().size === values.length, 180_000, () => `delivered ${ledger.distinct().size} of ${values.length}`);
  for (const v of held) {
    const again = ledger.seen(v).filter((d) => d.member !== 'holder');
    assert.ok(again.length >= 1, `${v}, held by the killed member, was delivered again`);
    assert.ok(again.every((d) => d.dc >= 2), `${v} came back with its delivery count raised: ${JSON.stringify(again)}`);
  }
  await a.stop();
  await b.stop();
  // Only the killed member's records were delivered twice.
  const heldSet = new Set(held);
  const twice = [...ledger.distinct()].filter((v) => ledger.seen(v).length > 1 && !heldSet.has(v));
  assert.deepEqual(twice, [], 'records acknowledged (implicitly) are not delivered again');
  assert.deepEqual([...a.errors, ...b.errors], []);
});

test('explicit acknowledgement: released records come back, rejected ones and those at the delivery limit are archived, accepted ones stay done', { timeout: 400_000 }, async () => {
  const topic = 'share-explicit';
  const values = [
    ...Array.from({ length: 150 }, (_, i) => `v-${i}`),
    ...Array.from({ length: 10 }, (_, i) => `release-${i}`),
    ...Array.from({ length: 10 }, (_, i) => `reject-${i}`),
    ...Array.from({ length: 5 }, (_, i) => `poison-${i}`),
  ];
  await createAndProduce(broker.bootstrap, topic, 2, values);
  const ledger = new Ledger();
  const configs = { 'share.auto.offset.reset': 'earliest', 'share.delivery.count.limit': '3' };
  const ms = ['x', 'y', 'z'].map((n) => new ShareMember(env, n, ledger, 'g-explicit', topic, 'explicit', false, configs));
  const done = (): boolean =>
    values.every((v) => {
      const seen = ledger.seen(v);
      if (v.startsWith('poison-')) return seen.length >= 3;
      if (v.startsWith('release-')) return seen.some((d) => d.dc >= 2);
      return seen.length >= 1;
    });
  await eventually('every record to reach its end state', done, 240_000, () => `delivered ${ledger.distinct().size} distinct, ${ledger.deliveries.length} deliveries`);
  // A member that joins afterwards finds nothing left: archived and acknowledged records are never delivered again.
  const late = new ShareMember(env, 'late', ledger, 'g-explicit', topic, 'explicit', false, {});
  await eventually('the late member to poll empty several times', () => late.idle >= 6, 120_000, () => late.proc.diagnostics());
  for (const m of [...ms, late]) await m.stop();
  for (const v of values) {
    const seen = ledger.seen(v);
    if (v.startsWith('poison-')) assert.deepEqual(seen.map((d) => d.dc), [1, 2, 3], `${v}: released every time, archived at the limit (3)`);
    else if (v.startsWith('release-')) assert.deepEqual(seen.map((d) => d.dc), [1, 2], `${v}: released once, then accepted`);
    else assert.deepEqual(seen.map((d) => d.dc), [1], `${v}: delivered once (${v.startsWith('reject-') ? 'rejected' : 'accepted'})`);
  }
  assert.equal(ledger.deliveries.filter((d) => d.member === 'late').length, 0);
  assert.deepEqual(ms.flatMap((m) => m.errors), []);
});

test('an acquisition lock that expires (a member holding records without acknowledging) makes them available to another member', { timeout: 300_000 }, async () => {
  const topic = 'share-lock';
  const values = Array.from({ length: 40 }, (_, i) => `v-${i}`);
  await createAndProduce(broker.bootstrap, topic, 1, values);
  const ledger = new Ledger();
  const configs = { 'share.auto.offset.reset': 'earliest', 'share.record.lock.duration.ms': '2000' };
  const holder = new ShareMember(env, 'holder', ledger, 'g-lock', topic, 'explicit', true, configs);
  await eventually('the holder to acquire records', () => ledger.deliveries.some((d) => d.member === 'holder'), 120_000, () => holder.proc.diagnostics());
  const held = ledger.deliveries.filter((d) => d.member === 'holder');
  const other = new ShareMember(env, 'other', ledger, 'g-lock', topic, 'explicit', false, {});
  await eventually('the held records to reach the other member', () => held.every((h) => ledger.seen(h.v).some((d) => d.member === 'other')), 120_000, () => other.proc.diagnostics());
  for (const h of held) assert.ok(ledger.seen(h.v).filter((d) => d.member === 'other').every((d) => d.dc >= 2), `${h.v} redelivered with its delivery count raised`);
  assert.ok(holder.proc.alive, 'the holder is still a member: the lock expired, it was not released by a disconnect');
  await eventually('every record to be delivered', () => ledger.distinct().size === values.length, 120_000);
  await other.stop();
  await holder.stop();
});

test('after a broker restart, acknowledged records stay done and new ones are delivered', { timeout: 300_000 }, async () => {
  const topic = 'share-implicit';
  await broker.restart();
  const kafka = new Kafka({ clientId: 'share-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, messages: [0, 1, 2].map((partition) => ({ value: `after-restart-${partition}`, partition })) });
  await producer.disconnect();
  const ledger = new Ledger();
  const m = new ShareMember(env, 'after', ledger, 'g-implicit', topic, 'implicit', false, {});
  await eventually('the new records', () => ledger.distinct().size >= 3, 120_000, () => m.proc.diagnostics());
  await eventually('a few empty polls', () => m.idle >= 4, 60_000);
  await m.stop();
  assert.deepEqual([...ledger.distinct()].sort(), ['after-restart-0', 'after-restart-1', 'after-restart-2']);
  const errors = broker.logs.atLeast(LogLevel.error);
  assert.equal(errors.length, 0, errors.map((l) => JSON.stringify(l)).join('\n'));
});

test('after the broker is killed (kill -9) and restarted, records a member held are delivered again and acknowledged ones are not', { timeout: 400_000 }, async () => {
  const topic = 'share-crash';
  const done = Array.from({ length: 20 }, (_, i) => `done-${i}`);
  await createAndProduce(broker.bootstrap, topic, 1, done);
  const ledger = new Ledger();
  const configs = { 'share.auto.offset.reset': 'earliest' };
  const a = new ShareMember(env, 'a', ledger, 'g-crash', topic, 'explicit', false, configs);
  await eventually('the first records to be acknowledged', () => ledger.acks.length >= done.length, 120_000, () => a.proc.diagnostics());
  await a.stop();
  const kafka = new Kafka({ clientId: 'share-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const held = Array.from({ length: 10 }, (_, i) => `held-${i}`);
  await producer.send({ topic, messages: held.map((value) => ({ value, partition: 0 })) });
  await producer.disconnect();
  const holder = new ShareMember(env, 'holder', ledger, 'g-crash', topic, 'explicit', true, {});
  await eventually('the holder to acquire the new records', () => held.every((v) => ledger.seen(v).length > 0), 120_000, () => holder.proc.diagnostics());
  await broker.kill();
  await holder.proc.kill();
  await broker.restart();
  const b = new ShareMember(env, 'b', ledger, 'g-crash', topic, 'explicit', false, {});
  await eventually('the held records again', () => held.every((v) => ledger.seen(v).some((d) => d.member === 'b')), 120_000, () => b.proc.diagnostics());
  await eventually('b to poll empty', () => b.idle >= 4, 60_000);
  await b.stop();
  const got = ledger.deliveries.filter((d) => d.member === 'b').map((d) => d.v);
  assert.deepEqual([...got].sort(), [...held].sort(), 'only the held records, each once; nothing acknowledged before the crash');
});
