// Shared set-up for the group coordinator tests: a coordinator over a memory
// __consumer_offsets log, driven by ManualClock/ManualScheduler, plus helpers
// that play a client's part of the classic protocol.
import assert from 'node:assert/strict';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { GroupCoordinator } from '../../../broker/group/group-coordinator.js';
import type { GroupCoordinatorConfig } from '../../../broker/group/config.js';
import {
  MemoryOffsetsTopicLog,
  type OffsetsTopicLog,
  type OffsetsTopicRecord,
  type TxnProducer,
} from '../../../broker/group/offsets-topic.js';
import type { GroupProtocol, JoinGroupParams, JoinGroupResult, OffsetCommitParams, SyncGroupResult } from '../../../broker/group/types.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { Writer } from '../../../broker/protocol/writer.js';
import { encodeConsumerProtocolSubscription } from '../../../broker/protocol/messages/records/consumer-protocol-subscription.js';

export { ErrorCode };

/** Lets every pending promise callback (memory log appends included) run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A promise whose state can be looked at without awaiting it. */
export interface Tracked<T> {
  readonly promise: Promise<T>;
  readonly settled: boolean;
  /** Throws if not settled yet. */
  readonly value: T;
}

export function track<T>(promise: Promise<T>): Tracked<T> {
  let settled = false;
  let value: T | undefined;
  void promise.then((v) => {
    settled = true;
    value = v;
  });
  return {
    promise,
    get settled() {
      return settled;
    },
    get value(): T {
      if (!settled) throw new Error('promise not settled yet');
      return value as T;
    },
  };
}

/** A "consumer" protocol subscription (version 0) to the given topics. */
export function subscription(topics: string[], userData: string | null = null): Buffer {
  const w = new Writer(64);
  w.writeInt16(0);
  encodeConsumerProtocolSubscription(w, 0, {
    topics,
    userData: userData === null ? null : Buffer.from(userData),
    ownedPartitions: [],
    generationId: -1,
    rackId: null,
  });
  return w.toBuffer();
}

export const TEST_CONFIG: Partial<GroupCoordinatorConfig> = {
  offsetsTopicNumPartitions: 5,
  groupInitialRebalanceDelayMs: 3_000,
  groupMinSessionTimeoutMs: 6_000,
  groupMaxSessionTimeoutMs: 300_000,
};

const ADVANCE_STEP_MS = 100;

export interface Harness {
  readonly clock: ManualClock;
  readonly scheduler: ManualScheduler;
  readonly log: MemoryOffsetsTopicLog;
  readonly coordinator: GroupCoordinator;
  /** Advances time in 100 ms steps, letting the callbacks each step triggered finish. */
  advance(ms: number): Promise<void>;
}

export async function startHarness(
  options: {
    config?: Partial<GroupCoordinatorConfig>;
    log?: MemoryOffsetsTopicLog;
    clock?: ManualClock;
    /** Puts a test double (failures, delays) between the coordinator and the memory log. */
    wrap?: (log: MemoryOffsetsTopicLog) => OffsetsTopicLog;
  } = {},
): Promise<Harness> {
  const clock = options.clock ?? new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const log = options.log ?? new MemoryOffsetsTopicLog();
  const coordinator = new GroupCoordinator({
    log: options.wrap === undefined ? log : options.wrap(log),
    clock,
    scheduler,
    config: { ...TEST_CONFIG, ...options.config },
  });
  await coordinator.start();
  return {
    clock,
    scheduler,
    log,
    coordinator,
    async advance(ms: number) {
      // ManualClock jumps; timers scheduled while firing count from the new
      // time. Walk in small steps so chained timers fire when they would.
      for (let left = ms; left > 0; left -= ADVANCE_STEP_MS) {
        clock.advance(Math.min(left, ADVANCE_STEP_MS));
        await settle();
      }
    },
  };
}

/** An OffsetCommit of one offset of `t`-0 by a simple (generation -1) group `g`; overrides and the partition entry's fields change it. */
export function commitParams(
  offset: bigint,
  overrides: Partial<OffsetCommitParams> = {},
  entry: { partitionIndex?: number; committedLeaderEpoch?: number; committedMetadata?: string | null } = {},
): OffsetCommitParams {
  return {
    groupId: 'g',
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1,
    groupIdNotFoundSupported: true,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 0, committedMetadata: null, ...entry }] }],
    ...overrides,
  };
}

export function joinParams(overrides: Partial<JoinGroupParams> = {}): JoinGroupParams {
  return {
    groupId: 'g',
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['t']) }],
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    requireKnownMemberId: true,
    supportsSkipAssignment: true,
    ...overrides,
  };
}

/** JoinGroup v4+ first round: returns the member id handed out with MEMBER_ID_REQUIRED. */
export async function requestMemberId(h: Harness, overrides: Partial<JoinGroupParams> = {}): Promise<string> {
  const first = await h.coordinator.joinGroup(joinParams(overrides));
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.notEqual(first.memberId, '');
  return first.memberId;
}

/** Handshake, then a parked join with the new id. */
export async function startJoin(
  h: Harness,
  overrides: Partial<JoinGroupParams> = {},
): Promise<{ memberId: string; join: Tracked<JoinGroupResult> }> {
  const memberId = await requestMemberId(h, overrides);
  const join = track(h.coordinator.joinGroup(joinParams({ ...overrides, memberId })));
  await settle();
  return { memberId, join };
}

export function syncParams(
  memberId: string,
  generationId: number,
  assignments: { memberId: string; assignment: Buffer }[] = [],
  groupId = 'g',
): Parameters<GroupCoordinator['syncGroup']>[0] {
  return { groupId, generationId, memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments };
}

/** Every member of a just-completed join syncs; the leader assigns `assignment(memberId)`. */
export async function syncAll(
  h: Harness,
  joins: JoinGroupResult[],
  assignment: (memberId: string) => Buffer = (m) => Buffer.from(`assignment-of-${m}`),
  groupId = 'g',
): Promise<Map<string, SyncGroupResult>> {
  const leader = joins.find((j) => j.memberId === j.leader);
  assert.ok(leader !== undefined, 'no leader among the joins');
  const syncs = joins.map((j) =>
    track(
      h.coordinator.syncGroup({
        ...syncParams(j.memberId, j.generationId, [], groupId),
        assignments: j.memberId === j.leader ? leader.members.map((m) => ({ memberId: m.memberId, assignment: assignment(m.memberId) })) : [],
      }),
    ),
  );
  await settle();
  const out = new Map<string, SyncGroupResult>();
  for (const [i, s] of syncs.entries()) {
    assert.ok(s.settled, `sync of ${joins[i]?.memberId} still parked`);
    out.set(joins[i]?.memberId ?? '', s.value);
  }
  return out;
}

export function protocols(...names: string[]): GroupProtocol[] {
  return names.map((name) => ({ name, metadata: Buffer.from(`meta-${name}`) }));
}

/** A log whose appends can be made to fail, to test what is acknowledged. */
export class FlakyLog implements OffsetsTopicLog {
  failing = false;
  constructor(readonly inner: MemoryOffsetsTopicLog = new MemoryOffsetsTopicLog()) {}

  async append(partition: number, records: readonly OffsetsTopicRecord[]): Promise<void> {
    if (this.failing) throw new Error('disk on fire');
    await this.inner.append(partition, records);
  }

  readAll(partition: number): AsyncIterable<OffsetsTopicRecord> {
    return this.inner.readAll(partition);
  }
}

/** A log whose appends wait until the test releases them, counting what each append carried. */
export class GatedLog implements OffsetsTopicLog {
  readonly inner = new MemoryOffsetsTopicLog();
  /** Keys of every append, in call order; transactional ones prefixed with `txn:`. */
  readonly appends: string[][] = [];
  private readonly gates: { release: () => void; fail: (err: unknown) => void }[] = [];
  private waiter: (() => void) | null = null;

  private gate(keys: string[]): Promise<void> {
    this.appends.push(keys);
    const p = new Promise<void>((release, fail) => this.gates.push({ release, fail }));
    this.waiter?.();
    return p;
  }

  async append(partition: number, records: readonly OffsetsTopicRecord[]): Promise<void> {
    await this.gate(records.map((r) => r.key.toString()));
    await this.inner.append(partition, records);
  }

  async appendTransactional(partition: number, records: readonly OffsetsTopicRecord[], producer: TxnProducer): Promise<void> {
    await this.gate(records.map((r) => `txn:${r.key.toString()}`));
    await this.inner.appendTransactional(partition, records, producer);
  }

  readAll(partition: number): AsyncIterable<OffsetsTopicRecord> {
    return this.inner.readAll(partition);
  }

  /** Waits until `n` appends have been started. */
  async started(n: number): Promise<void> {
    while (this.appends.length < n) await new Promise<void>((resolve) => (this.waiter = resolve));
  }

  /** Settles the oldest unsettled append. */
  release(err?: unknown): void {
    const g = this.gates.shift();
    assert.ok(g !== undefined, 'no append in flight');
    if (err === undefined) g.release();
    else g.fail(err);
  }
}
