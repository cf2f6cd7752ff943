// Group configs of share groups (Kafka's GroupConfig, resource type GROUP = 32
// in IncrementalAlterConfigs / DescribeConfigs): per group id, overrides of
// the broker defaults. Kafka keeps them in its metadata log. Alone, they are a
// small JSON file in the first log directory, rewritten on every change, so
// they survive a restart; in a cluster they are in the cluster metadata
// (ClusterGroupConfigs: set on one broker, they hold on every broker).
//   share.auto.offset.reset          latest | earliest | by_duration:<ISO-8601>  (latest)
//   share.isolation.level            read_uncommitted | read_committed            (read_uncommitted)
//   share.record.lock.duration.ms    group.share.min/max.record.lock.duration.ms  (group.share.record.lock.duration.ms)
//   share.delivery.count.limit       2..10                                        (group.share.delivery.count.limit)
//   share.partition.max.record.locks 100..10000                                   (group.share.partition.max.record.locks)
//   share.session.timeout.ms         group.share.min/max.session.timeout.ms       (group.share.session.timeout.ms)
//   share.heartbeat.interval.ms      group.share.min/max.heartbeat.interval.ms    (group.share.heartbeat.interval.ms)
import { readFileIfExists, writeFileAtomic } from '../common/file-io.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

/** An ISO-8601 duration as share.auto.offset.reset's by_duration takes it (PnDTnHnMn.nS), in ms. */
export function parseIsoDurationMs(text: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text.trim().toUpperCase());
  if (m === null || text.trim().toUpperCase() === 'P' || text.trim().toUpperCase().endsWith('T')) throw new KafkaError(ErrorCode.INVALID_CONFIG, `${text} is not an ISO-8601 duration`);
  const [, d, h, mi, s] = m;
  return (Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3_600 + Number(mi ?? 0) * 60 + Number(s ?? 0)) * 1000;
}

export interface ShareBrokerDefaults {
  readonly recordLockDurationMs: number;
  readonly minRecordLockDurationMs: number;
  readonly maxRecordLockDurationMs: number;
  readonly deliveryCountLimit: number;
  readonly maxRecordLocks: number;
  readonly sessionTimeoutMs: number;
  readonly minSessionTimeoutMs: number;
  readonly maxSessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly minHeartbeatIntervalMs: number;
  readonly maxHeartbeatIntervalMs: number;
}

export interface GroupConfigEntry {
  readonly name: string;
  readonly value: string;
  /** true: set for this group; false: the default. */
  readonly isOverride: boolean;
}

export type AlterOp = { readonly name: string; readonly op: number; readonly value: string | null };

/** Where the overrides are kept when not in the local file: the cluster metadata. */
export interface GroupConfigSource {
  /** The group's overrides as this broker sees them now. */
  overrides(groupId: string): ReadonlyMap<string, string>;
  /** Sets (string) or removes (null) overrides; resolves once `overrides` shows the change. */
  write(groupId: string, changes: Readonly<Record<string, string | null>>): Promise<void>;
}

const SET = 0;
const DELETE = 1;

export class ShareGroupConfigs {
  private overrides = new Map<string, Map<string, string>>();
  /** The last save, so the next one starts after it (save()). */
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly defaults: ShareBrokerDefaults,
    private readonly file: string | null,
    /** A cluster: the overrides are there, not in `file`. */
    private readonly source: GroupConfigSource | null = null,
  ) {}

  private overridesOf(groupId: string): ReadonlyMap<string, string> | undefined {
    return this.source === null ? this.overrides.get(groupId) : this.source.overrides(groupId);
  }

  async load(): Promise<void> {
    if (this.file === null || this.source !== null) return;
    const buf = await readFileIfExists(this.file);
    if (buf === null) return;
    const parsed = JSON.parse(buf.toString('utf8')) as Record<string, Record<string, string>>;
    this.overrides = new Map(Object.entries(parsed).map(([g, c]) => [g, new Map(Object.entries(c))]));
  }

  private defaultOf(name: string): string {
    const d = this.defaults;
    switch (name) {
      case 'share.auto.offset.reset': return 'latest';
      case 'share.isolation.level': return 'read_uncommitted';
      case 'share.record.lock.duration.ms': return String(d.recordLockDurationMs);
      case 'share.delivery.count.limit': return String(d.deliveryCountLimit);
      case 'share.partition.max.record.locks': return String(d.maxRecordLocks);
      case 'share.session.timeout.ms': return String(d.sessionTimeoutMs);
      case 'share.heartbeat.interval.ms': return String(d.heartbeatIntervalMs);
      default: throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown group config name: ${name}`);
    }
  }

  static readonly NAMES = ['share.auto.offset.reset', 'share.delivery.count.limit', 'share.heartbeat.interval.ms', 'share.isolation.level', 'share.partition.max.record.locks', 'share.record.lock.duration.ms', 'share.session.timeout.ms'] as const;

  private validate(name: string, value: string): void {
    const d = this.defaults;
    const intIn = (min: number, max: number): void => {
      const n = Number(value);
      if (!/^-?\d+$/.test(value) || n < min || n > max) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${value} for configuration ${name}: must be an integer in [${min}, ${max}]`);
    };
    switch (name) {
      case 'share.auto.offset.reset':
        if (value === 'latest' || value === 'earliest') return;
        if (value.startsWith('by_duration:')) {
          parseIsoDurationMs(value.slice('by_duration:'.length));
          return;
        }
        throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${value} for configuration share.auto.offset.reset: latest, earliest or by_duration:<duration>`);
      case 'share.isolation.level':
        if (value === 'read_uncommitted' || value === 'read_committed') return;
        throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${value} for configuration share.isolation.level`);
      case 'share.record.lock.duration.ms': return intIn(d.minRecordLockDurationMs, d.maxRecordLockDurationMs);
      case 'share.delivery.count.limit': return intIn(2, 10);
      case 'share.partition.max.record.locks': return intIn(100, 10000);
      case 'share.session.timeout.ms': return intIn(d.minSessionTimeoutMs, d.maxSessionTimeoutMs);
      case 'share.heartbeat.interval.ms': return intIn(d.minHeartbeatIntervalMs, d.maxHeartbeatIntervalMs);
      default: this.defaultOf(name);
    }
  }

  get(groupId: string, name: string): string {
    return this.overridesOf(groupId)?.get(name) ?? this.defaultOf(name);
  }

  describe(groupId: string): GroupConfigEntry[] {
    const o = this.overridesOf(groupId);
    return ShareGroupConfigs.NAMES.map((name) => ({ name, value: this.get(groupId, name), isOverride: o?.has(name) ?? false }));
  }

  /** IncrementalAlterConfigs SET/DELETE on one group (APPEND/SUBTRACT have no list configs here); all or nothing. */
  async alter(groupId: string, ops: readonly AlterOp[], validateOnly: boolean): Promise<void> {
    const before = this.overridesOf(groupId) ?? new Map<string, string>();
    const next = new Map(before);
    for (const op of ops) {
      if (op.op === SET) {
        if (op.value === null) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Null value not supported for ${op.name}`);
        this.validate(op.name, op.value);
        next.set(op.name, op.value);
      } else if (op.op === DELETE) {
        this.defaultOf(op.name);
        next.delete(op.name);
      } else {
        throw new KafkaError(ErrorCode.INVALID_CONFIG, `Operation ${op.op} is not allowed on group config ${op.name}`);
      }
    }
    if (validateOnly) return;
    if (this.source !== null) {
      const changes: Record<string, string | null> = {};
      for (const [k, v] of next) if (before.get(k) !== v) changes[k] = v;
      for (const k of before.keys()) if (!next.has(k)) changes[k] = null;
      if (Object.keys(changes).length > 0) await this.source.write(groupId, changes);
      return;
    }
    if (next.size === 0) this.overrides.delete(groupId);
    else this.overrides.set(groupId, next);
    await this.save();
  }

  async forget(groupId: string): Promise<void> {
    if (this.source !== null) {
      const names = [...this.source.overrides(groupId).keys()];
      if (names.length > 0) await this.source.write(groupId, Object.fromEntries(names.map((n) => [n, null])));
      return;
    }
    if (this.overrides.delete(groupId)) await this.save();
  }

  /**
   * Writes the overrides as they are when its turn comes. Saves run one after
   * another: two at once share the file's temporary name, and the second
   * rename found it gone (ENOENT) when two members set configs together.
   */
  private save(): Promise<void> {
    const file = this.file;
    if (file === null) return Promise.resolve();
    const write = async (): Promise<void> => {
      const obj = Object.fromEntries([...this.overrides].map(([g, c]) => [g, Object.fromEntries(c)]));
      await writeFileAtomic(file, JSON.stringify(obj, null, 1));
    };
    const done = this.saving.then(write, write);
    this.saving = done.catch(() => undefined);
    return done;
  }

  autoOffsetReset(groupId: string): string {
    return this.get(groupId, 'share.auto.offset.reset');
  }
  readCommitted(groupId: string): boolean {
    return this.get(groupId, 'share.isolation.level') === 'read_committed';
  }
  recordLockDurationMs(groupId: string): number {
    return Number(this.get(groupId, 'share.record.lock.duration.ms'));
  }
  deliveryCountLimit(groupId: string): number {
    return Number(this.get(groupId, 'share.delivery.count.limit'));
  }
  maxRecordLocks(groupId: string): number {
    return Number(this.get(groupId, 'share.partition.max.record.locks'));
  }
  sessionTimeoutMs(groupId: string): number {
    return Number(this.get(groupId, 'share.session.timeout.ms'));
  }
  heartbeatIntervalMs(groupId: string): number {
    return Number(this.get(groupId, 'share.heartbeat.interval.ms'));
  }
}
