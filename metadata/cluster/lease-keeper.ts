// Keeps a broker's lease alive and decides, from this side alone, when the
// broker must consider it lost. Both stores use it, with their own keepalive
// call. The rule: the store extends a lease from when it *receives* a
// keepalive, which is after we sent it, so the lease is certainly alive until
// (send time of the last acknowledged keepalive) + TTL. When that moment passes
// without a newer acknowledgement, the session is lost: the broker stops acting
// as leader before the store can expire the lease and let another broker lead.
// Time and timers are injected.
import type { Clock } from '../../broker/common/clock.js';
import type { Scheduler, TimerHandle } from '../../broker/common/scheduler.js';
import type { BrokerSession, SessionState } from './store.js';

export interface LeaseKeeperOptions {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** How long the lease lives after a keepalive reaches the store (the session timeout, not the rounded-up TTL). */
  readonly ttlMs: number;
  readonly heartbeatIntervalMs: number;
  /** When the grant (or the registration) was sent: the lease is alive until this + ttlMs. */
  readonly grantSentAt: number;
  /** One keepalive; resolves with the TTL the store now gives the lease in ms (<= 0: the lease is gone). */
  readonly keepAlive: () => Promise<number>;
  /** Revokes the lease at the store (close()). */
  readonly revoke: () => Promise<void>;
}

export class LeaseKeeper implements BrokerSession {
  private current: SessionState = 'live';
  private lastAckedSentAt: number;
  private heartbeatTimer: TimerHandle | undefined;
  private deadlineTimer: TimerHandle | undefined;
  private inFlight = false;
  private lastError: string | undefined;
  private readonly lostListeners: Array<(reason: string) => void> = [];
  private lostReason: string | undefined;
  private revoked = false;

  constructor(
    readonly nodeId: number,
    readonly brokerEpoch: bigint,
    private readonly options: LeaseKeeperOptions,
  ) {
    this.lastAckedSentAt = options.grantSentAt;
    this.armDeadline();
    this.scheduleHeartbeat();
  }

  get state(): SessionState {
    // Timers can fire late (a process resumed after SIGSTOP runs its pending I/O first):
    // a lease past its certain lifetime counts as lost as soon as anyone asks.
    if (this.current === 'live' && this.options.clock.now() >= this.lastAckedSentAt + this.options.ttlMs) {
      this.lose(this.expiredReason());
    }
    return this.current;
  }

  onLost(listener: (reason: string) => void): void {
    if (this.current === 'lost' && this.lostReason !== undefined) listener(this.lostReason);
    else if (this.current === 'live') this.lostListeners.push(listener);
  }

  /**
   * Revokes the lease. A lost session is revoked too (its state stays
   * 'lost'): its broker has stopped acting on it, and the store then drops
   * its registration (and controller key) without waiting for the expiry.
   * A lost session's revoke that failed can be tried again.
   */
  async close(): Promise<void> {
    if (this.current === 'closed' || this.revoked) return;
    this.revoked = true;
    if (this.current === 'live') this.current = 'closed';
    this.stopTimers();
    try {
      await this.options.revoke();
    } catch (e) {
      // A lost session whose revoke did not reach the store (etcd down) may be revoked again later.
      if (this.current === 'lost') this.revoked = false;
      throw e;
    }
  }

  /** Stops keepalives without revoking (the store's close()): the lease runs out at the store. */
  abandon(): void {
    if (this.current !== 'live') return;
    this.current = 'closed';
    this.stopTimers();
  }

  private stopTimers(): void {
    if (this.heartbeatTimer !== undefined) this.options.scheduler.clearTimeout(this.heartbeatTimer);
    if (this.deadlineTimer !== undefined) this.options.scheduler.clearTimeout(this.deadlineTimer);
    this.heartbeatTimer = undefined;
    this.deadlineTimer = undefined;
  }

  private scheduleHeartbeat(): void {
    this.heartbeatTimer = this.options.scheduler.setTimeout(() => this.heartbeat(), this.options.heartbeatIntervalMs);
  }

  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) this.options.scheduler.clearTimeout(this.deadlineTimer);
    const remaining = this.lastAckedSentAt + this.options.ttlMs - this.options.clock.now();
    this.deadlineTimer = this.options.scheduler.setTimeout(() => {
      this.deadlineTimer = undefined;
      if (this.options.clock.now() >= this.lastAckedSentAt + this.options.ttlMs) {
        this.lose(this.expiredReason());
      } else {
        this.armDeadline();
      }
    }, remaining);
  }

  private heartbeat(): void {
    if (this.current !== 'live') return;
    this.scheduleHeartbeat();
    // A keepalive still unanswered is not doubled: if it never answers, the deadline decides.
    if (this.inFlight) return;
    this.inFlight = true;
    const sentAt = this.options.clock.now();
    this.options.keepAlive().then(
      (ttlMs) => {
        this.inFlight = false;
        if (this.current !== 'live') return;
        if (ttlMs <= 0) {
          this.lose('the store reports the lease expired');
          return;
        }
        this.lastError = undefined;
        if (sentAt > this.lastAckedSentAt && sentAt + this.options.ttlMs > this.options.clock.now()) {
          this.lastAckedSentAt = sentAt;
          this.armDeadline();
        }
      },
      (e: unknown) => {
        this.inFlight = false;
        this.lastError = e instanceof Error ? e.message : String(e);
      },
    );
  }

  private expiredReason(): string {
    return `no keepalive acknowledged within ${this.options.ttlMs} ms${this.lastError === undefined ? '' : ` (last error: ${this.lastError})`}`;
  }

  private lose(reason: string): void {
    if (this.current !== 'live') return;
    this.current = 'lost';
    this.lostReason = reason;
    this.stopTimers();
    for (const l of this.lostListeners.splice(0)) l(reason);
  }
}
