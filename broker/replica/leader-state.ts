// What the leader of a replicated partition knows about its followers, and the
// decisions Kafka's Partition.scala takes from it. Pure: time comes in as
// arguments, nothing here does I/O; ReplicaManager applies the decisions.
//
// - A follower's fetch at offset F records F as its log end offset (LEO), and
//   Kafka's lastCaughtUpTime rule: caught up at this fetch when F reaches the
//   leader's LEO now, else at the previous fetch when F reaches the leader's
//   LEO as of that fetch (ReplicaState.updateFetchStateOrThrow).
// - The high watermark is the smallest LEO over the "maximal" ISR: the
//   committed ISR plus a member being added by an ISR change in flight (or
//   still counting one being removed), so the HW is never computed over a set
//   smaller than the one etcd may commit. It never moves back.
// - A follower out of the ISR joins (expand) once its LEO reaches the HW and
//   the start offset of this leader's epoch; an ISR member is out of sync
//   (shrink) when its LEO is not the leader's and it has not caught up for
//   replica.lag.time.max.ms.

export interface FollowerState {
  readonly replicaId: number;
  /** -1 until the first fetch of this leader term. */
  logEndOffset: bigint;
  /** The log start offset the follower sent with its last fetch (-1 before it fetched): KIP-392 picks only a replica that holds the offset. */
  logStartOffset: bigint;
  lastCaughtUpTimeMs: number;
  lastFetchLeaderLogEndOffset: bigint;
  lastFetchTimeMs: number;
  /** The broker epoch the follower sent in ReplicaState (-1 when not sent). */
  brokerEpoch: bigint;
}

export interface CommittedIsr {
  readonly isr: readonly number[];
  readonly partitionEpoch: number;
  /** The replicas at this partition epoch, when known (a reassignment changes them within a leader epoch). */
  readonly replicas?: readonly number[];
}

export class LeaderState {
  private readonly followers = new Map<number, FollowerState>();
  private committed: CommittedIsr;
  /** The ISR proposed to the store and not yet answered, or null. */
  private pending: readonly number[] | null = null;
  /** How many ISR changes this leader proposed: the last one's number. */
  private proposals = 0;
  private replicaList: readonly number[];

  constructor(
    readonly leaderId: number,
    readonly leaderEpoch: number,
    /** Where this leader's epoch starts in its log (its LEO when it became leader). */
    readonly epochStartOffset: bigint,
    replicas: readonly number[],
    committed: CommittedIsr,
    now: number,
    private readonly replicaLagTimeMaxMs: number,
  ) {
    this.committed = committed;
    this.replicaList = [...replicas];
    for (const r of replicas) {
      if (r === leaderId) continue;
      // As Kafka's resetReplicaState on becoming leader: ISR members count as caught up now.
      const caughtUp = committed.isr.includes(r) ? now : 0;
      this.followers.set(r, newFollower(r, caughtUp));
    }
  }

  get replicas(): readonly number[] {
    return this.replicaList;
  }

  /**
   * The replica set changed within this leader epoch (a reassignment started
   * or was replaced): new replicas are tracked from scratch (out of sync until
   * they catch up, as Kafka's updateAssignmentAndIsr), the others keep their
   * state, replicas that left are forgotten.
   */
  private updateReplicas(replicas: readonly number[]): void {
    this.replicaList = [...replicas];
    for (const r of replicas) if (r !== this.leaderId && !this.followers.has(r)) this.followers.set(r, newFollower(r, 0));
    for (const r of [...this.followers.keys()]) if (!replicas.includes(r)) this.followers.delete(r);
  }

  get isr(): readonly number[] {
    return this.committed.isr;
  }

  get partitionEpoch(): number {
    return this.committed.partitionEpoch;
  }

  get pendingIsr(): readonly number[] | null {
    return this.pending;
  }

  /** Committed ISR plus whatever a change in flight names. */
  get maximalIsr(): readonly number[] {
    if (this.pending === null) return this.committed.isr;
    const out = [...this.committed.isr];
    for (const r of this.pending) if (!out.includes(r)) out.push(r);
    return out;
  }

  follower(replicaId: number): FollowerState | undefined {
    return this.followers.get(replicaId);
  }

  allFollowers(): readonly FollowerState[] {
    return [...this.followers.values()];
  }

  /**
   * A fetch from `replicaId` at `fetchOffset` (with the follower's log start
   * offset, -1 when not sent); false when it is not a replica of this partition.
   */
  updateFollowerFetch(replicaId: number, fetchOffset: bigint, leaderLogEndOffset: bigint, brokerEpoch: bigint, now: number, followerLogStartOffset = -1n): boolean {
    const f = this.followers.get(replicaId);
    if (f === undefined) return false;
    if (fetchOffset >= leaderLogEndOffset) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, now);
    else if (fetchOffset >= f.lastFetchLeaderLogEndOffset && f.lastFetchLeaderLogEndOffset >= 0n) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    f.logEndOffset = fetchOffset;
    f.logStartOffset = followerLogStartOffset;
    f.lastFetchLeaderLogEndOffset = leaderLogEndOffset;
    f.lastFetchTimeMs = now;
    f.brokerEpoch = brokerEpoch;
    return true;
  }

  /** Kafka's maybeIncrementLeaderHW candidate: min LEO over the maximal ISR (the leader's LEO included). */
  highWatermarkCandidate(leaderLogEndOffset: bigint): bigint {
    let hw = leaderLogEndOffset;
    for (const r of this.maximalIsr) {
      if (r === this.leaderId) continue;
      const leo = this.followers.get(r)?.logEndOffset ?? -1n;
      if (leo < hw) hw = leo;
    }
    return hw;
  }

  /**
   * The ISR to propose when `replicaId` may join, or null (Kafka's
   * isFollowerInSync + maybeExpandIsr). `registeredEpoch` is the broker epoch
   * of the replica's current registration in the image (undefined when it is
   * not registered); KIP-903: a follower whose fetch carried another epoch is
   * a stale incarnation of that broker and does not join.
   */
  expansion(replicaId: number, highWatermark: bigint, registeredEpoch: (replicaId: number) => bigint | undefined): number[] | null {
    if (this.pending !== null || this.committed.isr.includes(replicaId)) return null;
    const f = this.followers.get(replicaId);
    if (f === undefined || !brokerEpochIsrEligible(f.brokerEpoch, registeredEpoch(replicaId))) return null;
    if (f.logEndOffset < highWatermark || f.logEndOffset < this.epochStartOffset) return null;
    return [...this.committed.isr, replicaId];
  }

  /**
   * Why `replicaId`, out of the ISR, has not joined it (for the log: an ISR that
   * stays small has a reason a person can read), or null when it is in the ISR.
   */
  notJoiningReason(replicaId: number, highWatermark: bigint, registeredEpoch: bigint | undefined, now: number): string | null {
    if (this.committed.isr.includes(replicaId)) return null;
    const f = this.followers.get(replicaId);
    if (f === undefined) return 'not a replica';
    if (f.logEndOffset < 0n) return 'has not fetched from this leader';
    if (this.pending !== null) return `an ISR change to [${this.pending.join(',')}] is in flight`;
    if (!brokerEpochIsrEligible(f.brokerEpoch, registeredEpoch)) {
      return registeredEpoch === undefined ? 'is not registered' : `fetched with broker epoch ${f.brokerEpoch}, registered with ${registeredEpoch}`;
    }
    if (f.logEndOffset < highWatermark) return `log end ${f.logEndOffset} below the high watermark ${highWatermark}`;
    if (f.logEndOffset < this.epochStartOffset) return `log end ${f.logEndOffset} below the epoch start ${this.epochStartOffset}`;
    return `caught up (log end ${f.logEndOffset}); last fetch ${now - f.lastFetchTimeMs} ms ago`;
  }

  /** ISR members that are out of sync at `now` (Kafka's getOutOfSyncReplicas). */
  outOfSync(leaderLogEndOffset: bigint, now: number): number[] {
    const out: number[] = [];
    for (const r of this.committed.isr) {
      if (r === this.leaderId) continue;
      const f = this.followers.get(r);
      if (f === undefined) continue;
      if (f.logEndOffset !== leaderLogEndOffset && now - f.lastCaughtUpTimeMs > this.replicaLagTimeMaxMs) out.push(r);
    }
    return out;
  }

  /** The ISR to propose without the out-of-sync members, or null. Never removes the leader. */
  shrink(leaderLogEndOffset: bigint, now: number): { isr: number[]; removed: number[] } | null {
    if (this.pending !== null) return null;
    const removed = this.outOfSync(leaderLogEndOffset, now);
    if (removed.length === 0) return null;
    return { isr: this.committed.isr.filter((r) => !removed.includes(r)), removed };
  }

  /** An ISR change was sent to the store; the number names it in committedIsr and proposalFailed. */
  proposed(isr: readonly number[]): number {
    this.pending = [...isr];
    return ++this.proposals;
  }

  /**
   * The image showed a new partition state (no `proposal`), or the store
   * answered proposal `proposal` (accepted, or refused with its state then).
   * A state older than the one held is not applied: the answer to a change can
   * arrive after the image has shown a later one (the controller's, through
   * the watch), and taking it then would put this leader's ISR back to an
   * epoch etcd has left, with members the partition no longer has (it would
   * then never propose them again: the frozen ISR of issue 14). As Kafka's
   * Partition ignores an AlterPartition answer once its state has moved on.
   */
  committedIsr(committed: CommittedIsr, proposal?: number): void {
    if (proposal !== undefined && proposal !== this.proposals) return; // a superseded proposal's answer
    if (committed.partitionEpoch >= this.committed.partitionEpoch) {
      if (committed.replicas !== undefined) this.updateReplicas(committed.replicas);
      this.committed = { isr: [...committed.isr], partitionEpoch: committed.partitionEpoch };
    }
    this.pending = null;
  }

  /** Proposal `proposal` failed without an answer (store unreachable): it is retried on the next check. */
  proposalFailed(proposal: number): void {
    if (proposal === this.proposals) this.pending = null;
  }
}

/**
 * Kafka's isBrokerEpochIsrEligible (KIP-903): a registered broker whose fetch
 * sent no epoch (-1, Fetch below v15) or the epoch of its current registration.
 */
export function brokerEpochIsrEligible(fetchedEpoch: bigint, registeredEpoch: bigint | undefined): boolean {
  if (registeredEpoch === undefined) return false;
  return fetchedEpoch === -1n || fetchedEpoch === registeredEpoch;
}

function newFollower(replicaId: number, lastCaughtUpTimeMs: number): FollowerState {
  return { replicaId, logEndOffset: -1n, logStartOffset: -1n, lastCaughtUpTimeMs, lastFetchLeaderLogEndOffset: -1n, lastFetchTimeMs: 0, brokerEpoch: -1n };
}
