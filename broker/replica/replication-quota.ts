// Replication throttles (Kafka's ReplicationQuotaManager, KIP-73), one for the
// leader side and one for the follower side of a broker. A partition is
// throttled on this broker when its topic's
// `leader.replication.throttled.replicas` (leader side) or
// `follower.replication.throttled.replicas` (follower side) lists
// `<partition>:<this broker id>`, or is `*`; the limit is the broker's dynamic
// `leader.replication.throttled.rate` / `follower.replication.throttled.rate`
// (bytes/s, Long.MAX_VALUE: none). While the measured rate of throttled
// replication bytes is above the limit, the leader answers throttled
// partitions of out-of-sync followers without records and the follower leaves
// its throttled out-of-sync partitions out of its fetches; in-sync replicas are
// never throttled. The rate is Kafka's sampled Rate: 11 samples
// (replication.quota.window.num) of 1 s (replication.quota.window.size.seconds),
// over an elapsed time of at least 10 samples, so a fresh quota allows a first
// burst of ten seconds' worth. Pure: time comes from the injected clock.
import type { Clock } from '../common/clock.js';

/** replication.quota.window.num (Kafka's default). */
export const REPLICATION_QUOTA_WINDOW_NUM = 11;
/** replication.quota.window.size.seconds (Kafka's default), in ms. */
export const REPLICATION_QUOTA_WINDOW_MS = 1000;
/** Long.MAX_VALUE as the configs' default: no throttle. */
export const UNLIMITED_RATE = 9223372036854775807;

export const LEADER_THROTTLED_RATE = 'leader.replication.throttled.rate';
export const FOLLOWER_THROTTLED_RATE = 'follower.replication.throttled.rate';
export const LEADER_THROTTLED_REPLICAS = 'leader.replication.throttled.replicas';
export const FOLLOWER_THROTTLED_REPLICAS = 'follower.replication.throttled.replicas';

/**
 * Whether a `*.replication.throttled.replicas` value names `partition` on
 * broker `nodeId`: `*`, or a comma-separated list of `partition:brokerId`.
 */
export function throttledOn(value: string | undefined, partition: number, nodeId: number): boolean {
  if (value === undefined) return false;
  const v = value.trim();
  if (v === '') return false;
  if (v === '*') return true;
  return v.split(',').some((entry) => {
    const [p, b] = entry.trim().split(':');
    return Number(p) === partition && Number(b) === nodeId;
  });
}

/** A rate limit in bytes/s from a config value: UNLIMITED_RATE when unset or not a non-negative number. */
export function parseRate(value: string | undefined): number {
  if (value === undefined || !/^\d+$/.test(value.trim())) return UNLIMITED_RATE;
  return Number(value.trim());
}

export interface ReplicationQuotaOptions {
  readonly clock: Clock;
  /** The limit now, in bytes/s (read on every check: the config is dynamic). */
  readonly limit: () => number;
  /** Whether the partition is throttled on this broker now (its topic's config). */
  readonly throttled: (topic: string, partition: number) => boolean;
  readonly windowNum?: number;
  readonly windowMs?: number;
}

interface Sample {
  start: number;
  bytes: number;
}

export class ReplicationQuota {
  private readonly samples: Sample[] = [];
  private readonly windowNum: number;
  private readonly windowMs: number;

  constructor(private readonly o: ReplicationQuotaOptions) {
    this.windowNum = o.windowNum ?? REPLICATION_QUOTA_WINDOW_NUM;
    this.windowMs = o.windowMs ?? REPLICATION_QUOTA_WINDOW_MS;
  }

  isThrottled(topic: string, partition: number): boolean {
    return this.o.throttled(topic, partition);
  }

  /** Bytes of throttled partitions replicated just now. */
  record(bytes: number): void {
    if (bytes <= 0) return;
    const now = this.o.clock.now();
    this.expire(now);
    const last = this.samples[this.samples.length - 1];
    if (last !== undefined && now < last.start + this.windowMs) last.bytes += bytes;
    else this.samples.push({ start: now, bytes });
  }

  /** Bytes per second over the window (Kafka's Rate: elapsed time of at least windowNum - 1 samples). */
  rate(): number {
    const now = this.o.clock.now();
    this.expire(now);
    const first = this.samples[0];
    if (first === undefined) return 0;
    const total = this.samples.reduce((n, s) => n + s.bytes, 0);
    const elapsed = Math.max(now - first.start, (this.windowNum - 1) * this.windowMs);
    return (total * 1000) / elapsed;
  }

  isQuotaExceeded(): boolean {
    const limit = this.o.limit();
    return limit < UNLIMITED_RATE && this.rate() > limit;
  }

  private expire(now: number): void {
    while (this.samples.length > 0 && this.samples[0]!.start + this.windowNum * this.windowMs <= now) this.samples.shift();
  }
}
