// One contract for every ClusterMetadataStore: run against the in-memory twin
// (store-memory.test.ts, manual clock) and a real etcd (store-etcd.it.test.ts,
// real time with short leases). Time-dependent steps await the event they are
// about (`within`): the twin moves its clock until the event happens, etcd
// waits for it up to a bound. Nothing sleeps for a fixed time.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import {
  DuplicateBrokerRegistrationError,
  IncompatibleLayoutError,
  InconsistentClusterIdError,
  StalePartitionUpdateError,
} from '../../../metadata/cluster/errors.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import type { BrokerRegistration, MetadataChange, PartitionProposal, TopicRecord } from '../../../metadata/cluster/records.js';
import type { BrokerSession, ClusterMetadataStore, SessionOptions } from '../../../metadata/cluster/store.js';
import type { Scheduler } from '../../../broker/common/scheduler.js';

export interface StoreHarness {
  /** A new client (one broker's connection) of this harness's store. */
  client(): Promise<ClusterMetadataStore>;
  /** Cuts one client off from the store / lets it back. */
  cut(store: ClusterMetadataStore): void;
  heal(store: ClusterMetadataStore): void;
  /** Compacts the store's history up to its current revision. */
  compact(): Promise<void>;
  /** Writes a raw key (relative to the prefix), bypassing the records (foreign or future layouts). */
  writeRaw(key: string, value: string): Promise<void>;
  readRaw(key: string): Promise<string | undefined>;
  /** Resolves with `p` once it settles, letting (twin: simulated) time pass; fails after `maxMs`. */
  within<T>(p: Promise<T>, maxMs: number, what: string): Promise<T>;
  readonly session: SessionOptions;
  readonly scheduler: Scheduler;
  close(): Promise<void>;
}

let incarnation = 0;
function registration(nodeId: number): BrokerRegistration {
  return {
    nodeId,
    incarnationId: `inc-${nodeId}-${++incarnation}`,
    rack: nodeId % 2 === 0 ? 'rack-b' : null,
    endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + nodeId, securityProtocol: 'PLAINTEXT' }],
  };
}

function topic(name: string, partitionCount: number, id = `id-${name}`): TopicRecord {
  return { topicId: id, name, partitionCount, configs: { 'cleanup.policy': 'delete' } };
}

function led(leader: number, replicas: number[] = [leader]): PartitionProposal {
  return { replicas, leader, leaderEpoch: 0, isr: replicas };
}

function lost(session: BrokerSession): Promise<string> {
  return new Promise((resolve) => session.onLost(resolve));
}

function codeOf(e: unknown): number | undefined {
  return e instanceof KafkaError ? e.code : undefined;
}

async function rejectsWithCode(p: Promise<unknown>, code: number, pattern?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.equal(codeOf(e), code, `expected code ${code}, got ${String(e)}`);
    if (pattern !== undefined) assert.match((e as Error).message, pattern);
    return true;
  });
}

/** Follows `store` into an image, recording the revisions it saw. */
async function follow(h: StoreHarness, store: ClusterMetadataStore): Promise<{ follower: MetadataImageFollower; revisions: bigint[]; changes: MetadataChange[] }> {
  const revisions: bigint[] = [];
  const changes: MetadataChange[] = [];
  const follower = new MetadataImageFollower(store, {
    scheduler: h.scheduler,
    reloadRetryMs: 100,
    onChange: (rev, cs) => {
      revisions.push(rev);
      changes.push(...cs);
    },
  });
  await follower.start();
  return { follower, revisions, changes };
}

export function storeContract(newHarness: () => Promise<StoreHarness>): void {
  const withHarness = (name: string, fn: (h: StoreHarness) => Promise<void>): void => {
    it(name, async () => {
      const h = await newHarness();
      try {
        await fn(h);
      } finally {
        await h.close();
      }
    });
  };

  withHarness('initialize writes the layout and cluster id once; later brokers read the same id', async (h) => {
    const a = await h.client();
    assert.equal(await a.initialize({ proposedClusterId: 'cluster-A' }), 'cluster-A');
    const b = await h.client();
    assert.equal(await b.initialize({ proposedClusterId: 'cluster-B' }), 'cluster-A');
    assert.equal(await b.initialize({ proposedClusterId: 'x', expectedClusterId: 'cluster-A' }), 'cluster-A');
    await assert.rejects(b.initialize({ proposedClusterId: 'x', expectedClusterId: 'cluster-Z' }), (e: unknown) => {
      assert.ok(e instanceof InconsistentClusterIdError);
      assert.equal(e.code, ErrorCode.INCONSISTENT_CLUSTER_ID);
      assert.match(e.message, /cluster-A.*cluster-Z/);
      return true;
    });
    const snap = await b.load();
    assert.deepEqual(snap.records.filter((r) => r.kind === 'cluster-id'), [{ kind: 'cluster-id', clusterId: 'cluster-A' }]);
  });

  withHarness('producer id blocks: brokers racing for blocks never share an id; the counter is readable; atLeast raises a block', async (h) => {
    const a = await h.client();
    const b = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    await b.initialize({ proposedClusterId: 'c' });
    const starts = await Promise.all([
      ...Array.from({ length: 6 }, () => a.allocateProducerIds(1, 1000)),
      ...Array.from({ length: 6 }, () => b.allocateProducerIds(2, 1000)),
    ]);
    const sorted = [...starts].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    assert.deepEqual(sorted, Array.from({ length: 12 }, (_, i) => BigInt(i * 1000)), 'twelve disjoint consecutive blocks');
    const raw = JSON.parse((await h.readRaw('producer-ids')) ?? '{}') as { nextBlockStart?: string; blockSize?: number };
    assert.equal(raw.nextBlockStart, '12000');
    assert.equal(raw.blockSize, 1000);
    assert.equal(await a.allocateProducerIds(1, 1000, 50_000n), 50_000n);
    assert.equal(await b.allocateProducerIds(2, 1000, 10n), 51_000n, 'atLeast below the counter changes nothing');
    // The counter is no record of the image: a snapshot does not show it and nothing complains.
    const snap = await a.load();
    assert.deepEqual(snap.problems, []);
    await h.writeRaw('producer-ids', 'garbage');
    await rejectsWithCode(a.allocateProducerIds(1, 1000), ErrorCode.UNKNOWN_SERVER_ERROR, /Unreadable producer-ids/);
    assert.equal(await h.readRaw('producer-ids'), 'garbage', 'an unreadable counter is never overwritten');
  });

  withHarness('a layout of another version is refused and left as it was', async (h) => {
    await h.writeRaw('layout', '{"version":2}');
    await h.writeRaw('cluster/id', 'future');
    const a = await h.client();
    await assert.rejects(a.initialize({ proposedClusterId: 'c' }), (e: unknown) => {
      assert.ok(e instanceof IncompatibleLayoutError);
      assert.match(e.message, /layout 2.*layout 1/);
      return true;
    });
    assert.equal(await h.readRaw('layout'), '{"version":2}');
    assert.equal(await h.readRaw('cluster/id'), 'future');
  });

  withHarness('a prefix holding keys but no layout is refused, not taken over', async (h) => {
    await h.writeRaw('someone/else', 'x');
    const a = await h.client();
    await assert.rejects(a.initialize({ proposedClusterId: 'c' }), IncompatibleLayoutError);
    assert.equal(await h.readRaw('layout'), undefined);
  });

  withHarness('a node id held by a live broker is refused, naming the id and the holder; free again once closed', async (h) => {
    const a = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    const regA = registration(1);
    const sessionA = await a.registerBroker(regA, h.session);
    assert.equal(sessionA.state, 'live');
    const b = await h.client();
    await assert.rejects(b.registerBroker(registration(1), h.session), (e: unknown) => {
      assert.ok(e instanceof DuplicateBrokerRegistrationError);
      assert.equal(e.code, ErrorCode.DUPLICATE_BROKER_REGISTRATION);
      assert.match(e.message, new RegExp(`node.id 1 .*${regA.incarnationId}.*PLAINTEXT://127.0.0.1:9001`));
      assert.equal(e.holder.brokerEpoch, sessionA.brokerEpoch);
      return true;
    });
    const other = await b.registerBroker(registration(2), h.session);
    assert.ok(other.brokerEpoch > sessionA.brokerEpoch, 'broker epochs grow with registration order');
    await sessionA.close();
    assert.equal(sessionA.state, 'closed');
    const again = await b.registerBroker(registration(1), h.session);
    assert.ok(again.brokerEpoch > sessionA.brokerEpoch);
    const snap = await a.load();
    const brokers = snap.records.flatMap((r) => (r.kind === 'broker' && r.broker !== null ? [r.broker] : []));
    assert.deepEqual(brokers.map((x) => x.nodeId).sort(), [1, 2]);
    assert.equal(brokers.find((x) => x.nodeId === 2)?.rack, 'rack-b');
  });

  withHarness('a broker cut off from the store loses its session before the store expires its registration', async (h) => {
    const a = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    const b = await h.client();
    const order: string[] = [];
    let sawGone: () => void = () => undefined;
    const gone = new Promise<void>((resolve) => (sawGone = resolve));
    const follower = new MetadataImageFollower(b, {
      scheduler: h.scheduler,
      onChange: (_rev, changes) => {
        if (changes.some((c) => c.kind === 'broker' && c.nodeId === 1 && c.broker === null)) {
          order.push('registration gone');
          sawGone();
        }
      },
    });
    await follower.start();
    const sessionA = await a.registerBroker(registration(1), h.session);
    await h.within(follower.waitForRevision(sessionA.brokerEpoch), 5000, 'the registration reaching the other image');
    assert.ok(follower.image.broker(1) !== undefined);
    sessionA.onLost(() => order.push('session lost'));
    h.cut(a);
    const reason = await h.within(lost(sessionA), h.session.sessionTimeoutMs * 3, 'the lease loss event');
    assert.match(reason, /no keepalive acknowledged|expired/);
    assert.equal(sessionA.state, 'lost');
    await h.within(gone, h.session.sessionTimeoutMs * 4, 'the registration expiring at the store');
    assert.deepEqual(order, ['session lost', 'registration gone'], 'the broker knew before anyone could see its registration gone');
    assert.equal(follower.image.broker(1), undefined);
    // A lost session stays lost; the broker registers anew once it can reach the store.
    h.heal(a);
    const again = await h.within(a.registerBroker(registration(1), h.session), 10_000, 're-registration');
    assert.ok(again.brokerEpoch > sessionA.brokerEpoch);
    await follower.close();
  });

  withHarness('partition changes are compare-and-swap: stale leader epochs and partition epochs are fenced', async (h) => {
    const a = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    await a.createTopic(topic('orders', 2), [led(1, [1, 2]), led(2, [2, 1])]);
    const ref = { topicId: 'id-orders', partition: 0 };
    // ISR shrink by the leader, based on the current epochs.
    const s1 = await a.alterPartition(ref, { leaderEpoch: 0, partitionEpoch: 0 }, { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1] });
    assert.deepEqual(s1, { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1], partitionEpoch: 1 });
    // Same base again: the partition epoch moved.
    const stale = a.alterPartition(ref, { leaderEpoch: 0, partitionEpoch: 0 }, { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1, 2] });
    await assert.rejects(stale, (e: unknown) => {
      assert.ok(e instanceof StalePartitionUpdateError);
      assert.equal(e.code, ErrorCode.INVALID_UPDATE_VERSION);
      assert.equal(e.current.partitionEpoch, 1);
      return true;
    });
    // A new leader (epoch 1); the old leader's write based on epoch 0 is FENCED_LEADER_EPOCH.
    const b = await h.client();
    await b.alterPartition(ref, { leaderEpoch: 0, partitionEpoch: 1 }, { replicas: [1, 2], leader: 2, leaderEpoch: 1, isr: [2] });
    await rejectsWithCode(a.alterPartition(ref, { leaderEpoch: 0, partitionEpoch: 2 }, { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1] }), ErrorCode.FENCED_LEADER_EPOCH);
    // Changing the leader without raising the leader epoch is refused.
    await rejectsWithCode(b.alterPartition(ref, { leaderEpoch: 1, partitionEpoch: 2 }, { replicas: [1, 2], leader: 1, leaderEpoch: 1, isr: [1] }), ErrorCode.INVALID_REQUEST, /leader epoch above 1/);
    await rejectsWithCode(b.alterPartition({ topicId: 'id-orders', partition: 7 }, { leaderEpoch: 0, partitionEpoch: 0 }, led(1)), ErrorCode.UNKNOWN_TOPIC_ID);
    // Two writers racing from the same state: exactly one wins.
    const base = { leaderEpoch: 1, partitionEpoch: 2 };
    const results = await Promise.allSettled([
      a.alterPartition(ref, base, { replicas: [1, 2], leader: 2, leaderEpoch: 1, isr: [2, 1] }),
      b.alterPartition(ref, base, { replicas: [1, 2], leader: 1, leaderEpoch: 2, isr: [1] }),
    ]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results.map((r) => r.status)));
    const loser = results.find((r) => r.status === 'rejected');
    assert.ok(loser?.status === 'rejected' && loser.reason instanceof StalePartitionUpdateError);
    const snap = await a.load();
    const p0 = snap.records.find((r) => r.kind === 'partition' && r.partition === 0);
    assert.ok(p0?.kind === 'partition' && p0.state?.partitionEpoch === 3);
  });

  withHarness('topics: create (many partitions too), duplicate names, add partitions, configs, delete', async (h) => {
    const a = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    const { follower } = await follow(h, await h.client());
    const rev = await a.createTopic(topic('big', 250), Array.from({ length: 250 }, (_, i) => led(i % 3)));
    await h.within(follower.waitForRevision(rev), 10_000, 'the topic in the image');
    const img = follower.image;
    assert.equal(img.topic('big')?.partitionCount, 250);
    assert.equal(img.partitions('id-big').filter((p) => p !== undefined).length, 250);
    assert.equal(img.partition('id-big', 249)?.leader, 0);
    await rejectsWithCode(a.createTopic(topic('big', 1, 'other-id'), [led(1)]), ErrorCode.TOPIC_ALREADY_EXISTS, /'big' already exists/);
    assert.equal((await a.load()).records.filter((r) => r.kind === 'partition' && r.topicId === 'other-id').length, 0, 'the loser left no partitions');
    await rejectsWithCode(a.createTopic(topic('t', 2), [led(1)]), ErrorCode.INVALID_PARTITIONS);

    const grown = await a.createPartitions('big', 'id-big', 250, [led(1), led(2)]);
    assert.equal(grown.partitionCount, 252);
    await rejectsWithCode(a.createPartitions('big', 'id-big', 250, [led(1)]), ErrorCode.INVALID_UPDATE_VERSION);
    const configured = await a.alterTopicConfigs('big', 'id-big', { 'retention.ms': '1000' });
    assert.deepEqual(configured.configs, { 'retention.ms': '1000' });
    await rejectsWithCode(a.alterTopicConfigs('big', 'wrong-id', {}), ErrorCode.UNKNOWN_TOPIC_ID);

    await a.alterConfigs({ type: 'broker', nodeId: 3 }, { 'log.retention.ms': '5', 'num.io.threads': '4' });
    await a.alterConfigs({ type: 'cluster' }, { 'log.retention.ms': '7' });
    await a.alterConfigs({ type: 'broker', nodeId: 3 }, { 'num.io.threads': null });
    // Share group configs, under a group id holding '/' (encoded in the key).
    await a.alterConfigs({ type: 'group', groupId: 'g/1' }, { 'share.auto.offset.reset': 'earliest', 'share.delivery.count.limit': '3' });
    await a.alterConfigs({ type: 'group', groupId: 'g/1' }, { 'share.delivery.count.limit': null });
    await rejectsWithCode(a.alterConfigs({ type: 'cluster' }, { 'a/b': '1' }), ErrorCode.INVALID_CONFIG);

    await a.deleteTopic('big', 'id-big');
    await rejectsWithCode(a.deleteTopic('big', 'id-big'), ErrorCode.UNKNOWN_TOPIC_ID);
    const after = await a.load();
    assert.equal(after.records.filter((r) => r.kind === 'partition').length, 0, 'partitions went with the topic');
    await h.within(follower.waitForRevision(after.revision), 10_000, 'the deletion in the image');
    assert.equal(img.topic('big'), undefined);
    assert.deepEqual(img.partitions('id-big'), []);
    assert.deepEqual([...img.configs({ type: 'broker', nodeId: 3 })], [['log.retention.ms', '5']]);
    assert.deepEqual([...img.configs({ type: 'cluster' })], [['log.retention.ms', '7']]);
    assert.deepEqual([...img.configs({ type: 'group', groupId: 'g/1' })], [['share.auto.offset.reset', 'earliest']]);
    assert.equal(img.configs({ type: 'group', groupId: 'g' }).size, 0);
    await follower.close();
  });

  withHarness('an unreachable store fails calls with a retriable error and changes nothing', async (h) => {
    const a = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    h.cut(a);
    await assert.rejects(h.within(a.createTopic(topic('t', 1), [led(1)]), 60_000, 'the failed create'), (e: unknown) => {
      assert.ok(e instanceof KafkaError && e.retriable, String(e));
      assert.equal(e.code, ErrorCode.REQUEST_TIMED_OUT);
      return true;
    });
    h.heal(a);
    const b = await h.client();
    const snap = await b.load();
    assert.equal(snap.records.filter((r) => r.kind === 'topic').length, 0);
  });

  withHarness('a watch cut off resumes after the last revision it delivered: every change once, in order', async (h) => {
    const a = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    const b = await h.client();
    const { follower, revisions } = await follow(h, b);
    const r1 = await a.createTopic(topic('t1', 1), [led(1)]);
    await h.within(follower.waitForRevision(r1), 10_000, 'the first change');
    h.cut(b);
    const written: bigint[] = [r1];
    for (let i = 0; i < 5; i++) {
      written.push(await a.createTopic(topic(`cut-${i}`, 1), [led(1)]));
      if (i === 2) await a.alterPartition({ topicId: 'id-t1', partition: 0 }, { leaderEpoch: 0, partitionEpoch: 0 }, led(1));
    }
    h.heal(b);
    const last = written[written.length - 1]!;
    await h.within(follower.waitForRevision(last), 30_000, 'the watch catching up after the cut');
    // The five creations and the partition change, each revision once, in order.
    assert.equal(revisions.length, written.length + 1, revisions.join(','));
    for (const r of written) assert.ok(revisions.includes(r), `revision ${r} delivered`);
    for (let i = 1; i < revisions.length; i++) assert.ok(revisions[i]! > revisions[i - 1]!, 'strictly increasing');
    assert.equal(follower.reloadCount, 0);
    assert.deepEqual(follower.image.topics().map((t) => t.name), ['cut-0', 'cut-1', 'cut-2', 'cut-3', 'cut-4', 't1']);
    assert.equal(follower.image.partition('id-t1', 0)?.partitionEpoch, 1);
    await follower.close();
  });

  withHarness('a watch whose revision was compacted reloads the whole image', async (h) => {
    const a = await h.client();
    await a.initialize({ proposedClusterId: 'c' });
    await a.createTopic(topic('before', 1), [led(1)]);
    const b = await h.client();
    const reloaded: string[] = [];
    const follower = new MetadataImageFollower(b, { scheduler: h.scheduler, reloadRetryMs: 100, onReload: (why) => reloaded.push(why) });
    await follower.start();
    h.cut(b);
    await a.deleteTopic('before', 'id-before');
    const rev = await a.createTopic(topic('after', 3), [led(1), led(2), led(3)]);
    await h.compact();
    h.heal(b);
    await h.within(follower.waitForRevision(rev), 30_000, 'the reload after compaction');
    assert.equal(follower.reloadCount, 1);
    assert.match(reloaded[0] ?? '', /compacted/);
    assert.deepEqual(follower.image.topics().map((t) => t.name), ['after']);
    assert.equal(follower.image.partitions('id-after').length, 3);
    // Still following after the reload.
    const rev2 = await a.createTopic(topic('later', 1), [led(1)]);
    await h.within(follower.waitForRevision(rev2), 10_000, 'a change after the reload');
    assert.ok(follower.image.topic('later') !== undefined);
    await follower.close();
  });
}
