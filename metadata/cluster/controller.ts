// The cluster controller as it runs on every broker: it campaigns for the
// lease-bound `controller` key whenever the image shows none, and while this
// broker holds it, it reconciles leadership with the registered brokers
// (leader-election.ts decides, alterPartition applies with compare-and-swap),
// completes partition reassignments whose target replicas are all in the ISR
// (reassignment.ts), and every leader.imbalance.check.interval.ms moves
// leadership back to preferred replicas (auto.leader.rebalance.enable).
//
// Level-triggered: every image change schedules one reconcile of the whole
// image, so a change missed by a failed or fenced write is retried from the
// next image rather than remembered. A controller whose session is lost stops
// at once (no further write is started); writes already sent are fenced by
// the epochs they compare.
//
// Only the base (scheduler) and the store port: no broker imports.
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import { forEachBounded } from '../../broker/common/bounded-parallel.js';
import type { Scheduler, TimerHandle } from '../../broker/common/scheduler.js';
import { StalePartitionUpdateError } from './errors.js';
import type { MetadataImage } from './image.js';
import { planLeaderChanges, planPreferredLeaders, type PartitionChange } from './leader-election.js';
import { planReassignmentCompletions } from './reassignment.js';
import type { ControllerRecord } from './records.js';
import type { BrokerSession, ClusterMetadataStore } from './store.js';

/**
 * Partition writes the controller has in flight at once. One at a time, a
 * broker coming back to 3,000 partitions waited 3,000 etcd round trips for
 * them (142 s in the cluster bench at 10,000 partitions).
 */
const WRITES_IN_FLIGHT = 64;

export interface ControllerConfig {
  /** unclean.leader.election.enable (false). */
  readonly uncleanLeaderElectionEnable: boolean;
  /** auto.leader.rebalance.enable (true). */
  readonly autoLeaderRebalanceEnable: boolean;
  /** leader.imbalance.check.interval.seconds (300) in ms. */
  readonly leaderImbalanceCheckIntervalMs: number;
  /** Wait before retrying a campaign or a write the store could not take (retry.backoff.ms). */
  readonly retryBackoffMs: number;
}

export type ControllerEvent =
  | { readonly type: 'elected'; readonly controller: ControllerRecord }
  | { readonly type: 'resigned'; readonly reason: string }
  | { readonly type: 'partition-changed'; readonly change: PartitionChange }
  | { readonly type: 'write-failed'; readonly change: PartitionChange | null; readonly error: string };

export interface ControllerOptions {
  readonly store: ClusterMetadataStore;
  /** This broker's image, kept current by its follower; call imageChanged() after each change. */
  readonly image: MetadataImage;
  readonly session: BrokerSession;
  readonly scheduler: Scheduler;
  readonly config: ControllerConfig;
  readonly onEvent?: (event: ControllerEvent) => void;
}

export class ClusterController {
  private active: ControllerRecord | null = null;
  private stopped = false;
  private running = false;
  private again = false;
  private stepTimer: TimerHandle | undefined;
  private rebalanceTimer: TimerHandle | undefined;

  constructor(private readonly options: ControllerOptions) {
    options.session.onLost((reason) => this.deactivate(`the broker's session was lost (${reason})`));
  }

  /** The record of this broker's term while it is the controller, else null. */
  get controller(): ControllerRecord | null {
    return this.active;
  }

  get isActive(): boolean {
    return this.active !== null;
  }

  start(): void {
    this.schedule(0);
  }

  /** The image moved: reconcile (coalesced). */
  imageChanged(): void {
    this.schedule(0);
  }

  /** Runs one preferred-leader pass now (the timer's job; for tests and admin tools). */
  async rebalanceNow(): Promise<number> {
    if (!this.canAct()) return 0;
    return this.apply(planPreferredLeaders(this.options.image));
  }

  /** Stops acting and gives the key up (if the session still lives) so another broker takes over without waiting for the lease. */
  async stop(reason = 'stopping'): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.stepTimer !== undefined) this.options.scheduler.clearTimeout(this.stepTimer);
    this.stepTimer = undefined;
    const wasActive = this.active !== null;
    this.deactivate(reason);
    if (wasActive && this.options.session.state === 'live') {
      await this.options.store.resignController(this.options.session).catch(() => undefined);
    }
  }

  private canAct(): boolean {
    return !this.stopped && this.active !== null && this.options.session.state === 'live';
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.stepTimer !== undefined) {
      if (delayMs > 0) return; // a step is already due sooner or as soon
      this.options.scheduler.clearTimeout(this.stepTimer);
    }
    this.stepTimer = this.options.scheduler.setTimeout(() => {
      this.stepTimer = undefined;
      void this.step();
    }, delayMs);
  }

  private async step(): Promise<void> {
    if (this.stopped || this.options.session.state !== 'live') return;
    this.running = true;
    this.again = false;
    let retry = false;
    try {
      retry = !(await this.reconcileRole());
      if (!retry && this.canAct()) {
        // Leadership first: a completion planned on the same image is then fenced and re-planned.
        const changes = [...planLeaderChanges(this.options.image, this.options.config), ...planReassignmentCompletions(this.options.image)];
        const failed = (await this.apply(changes)) < changes.length;
        if (failed) this.again = true;
      }
    } finally {
      this.running = false;
    }
    if (retry) this.schedule(this.options.config.retryBackoffMs);
    else if (this.again) this.schedule(this.options.config.retryBackoffMs);
  }

  /** Campaigns when the image shows no controller; tracks whether this broker is it. False: retry later. */
  private async reconcileRole(): Promise<boolean> {
    const { image, session, store } = this.options;
    const shown = image.controller;
    if (shown !== null) {
      if (shown.nodeId === session.nodeId && shown.brokerEpoch === session.brokerEpoch) this.activate(shown);
      else if (this.active !== null) this.deactivate(`node ${shown.nodeId} is the controller`);
      return true;
    }
    if (this.active !== null) return true; // our own key, not yet seen by the image
    try {
      const won = await store.campaignController(session);
      if (won !== null) this.activate(won);
      return true;
    } catch (e) {
      this.options.onEvent?.({ type: 'write-failed', change: null, error: `campaign: ${message(e)}` });
      return false;
    }
  }

  private activate(record: ControllerRecord): void {
    if (this.stopped || this.options.session.state !== 'live') return;
    if (this.active?.controllerEpoch === record.controllerEpoch) return;
    this.active = record;
    this.options.onEvent?.({ type: 'elected', controller: record });
    this.armRebalance();
  }

  private deactivate(reason: string): void {
    if (this.rebalanceTimer !== undefined) this.options.scheduler.clearTimeout(this.rebalanceTimer);
    this.rebalanceTimer = undefined;
    if (this.active === null) return;
    this.active = null;
    this.options.onEvent?.({ type: 'resigned', reason });
  }

  private armRebalance(): void {
    const { autoLeaderRebalanceEnable, leaderImbalanceCheckIntervalMs } = this.options.config;
    if (!autoLeaderRebalanceEnable || this.rebalanceTimer !== undefined) return;
    this.rebalanceTimer = this.options.scheduler.setTimeout(() => {
      this.rebalanceTimer = undefined;
      if (!this.canAct()) return;
      void this.rebalanceNow().finally(() => {
        if (this.canAct()) this.armRebalance();
      });
    }, leaderImbalanceCheckIntervalMs);
  }

  /**
   * Applies changes, up to WRITES_IN_FLIGHT at once (each is its own
   * compare-and-swap on one partition, independent of the others), while this
   * broker may act; returns how many took.
   */
  private async apply(changes: readonly PartitionChange[]): Promise<number> {
    let applied = 0;
    await forEachBounded(changes, WRITES_IN_FLIGHT, async (change) => {
      if (!this.canAct()) return;
      try {
        await this.options.store.alterPartition(change.ref, change.expected, change.proposal);
        applied++;
        this.options.onEvent?.({ type: 'partition-changed', change });
      } catch (e) {
        // Fenced: the image is behind the store; its next change re-plans this partition.
        if (e instanceof StalePartitionUpdateError) return;
        if (e instanceof KafkaError && e.code === ErrorCode.UNKNOWN_TOPIC_ID) return; // deleted meanwhile
        this.options.onEvent?.({ type: 'write-failed', change, error: message(e) });
      }
    });
    return applied;
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
