// Keeps a MetadataImage current from a ClusterMetadataStore: load, then watch
// from the snapshot's revision. The store's watch resumes itself after a
// reconnect; when it reports that its revision was compacted, the follower
// loads a fresh snapshot and watches from there (retrying the load while the
// store is unreachable). Readers see the image; nothing here is on a request path.
import type { Scheduler, TimerHandle } from '../../broker/common/scheduler.js';
import { MetadataImage } from './image.js';
import type { MetadataChange } from './records.js';
import type { ClusterMetadataStore, MetadataWatch } from './store.js';

export interface ImageFollowerOptions {
  readonly scheduler: Scheduler;
  /** Delay between reload attempts while the store is unreachable. */
  readonly reloadRetryMs?: number;
  /** After each applied revision. */
  readonly onChange?: (revision: bigint, changes: readonly MetadataChange[]) => void;
  /** After a full reload (start-up excluded), with the reason. */
  readonly onReload?: (reason: string) => void;
  /** Undecodable records, reload failures: for the log. */
  readonly onProblem?: (problem: string) => void;
  readonly onConnectionChange?: (connected: boolean) => void;
}

export class MetadataImageFollower {
  readonly image = new MetadataImage();
  private watchHandle: MetadataWatch | undefined;
  private closed = false;
  private retryTimer: TimerHandle | undefined;
  private readonly waiters: Array<{ revision: bigint; resolve: () => void }> = [];
  private reloads = 0;

  constructor(
    private readonly store: ClusterMetadataStore,
    private readonly options: ImageFollowerOptions,
  ) {}

  /** How many times the image was rebuilt from a snapshot after a compaction. */
  get reloadCount(): number {
    return this.reloads;
  }

  /** Loads the image and starts following; rejects when the store cannot be read. */
  async start(): Promise<void> {
    await this.loadAndWatch();
  }

  /** Resolves once the image reflects `revision` (a write's returned revision): read-your-writes for admin requests. */
  waitForRevision(revision: bigint): Promise<void> {
    if (this.image.revision >= revision) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ revision, resolve }));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) this.options.scheduler.clearTimeout(this.retryTimer);
    await this.watchHandle?.close();
    this.watchHandle = undefined;
  }

  private async loadAndWatch(): Promise<void> {
    const snapshot = await this.store.load();
    if (this.closed) return;
    for (const p of snapshot.problems) this.options.onProblem?.(`skipped an unreadable record: ${p}`);
    this.image.reset(snapshot);
    this.wakeWaiters();
    this.watchHandle = this.store.watch(snapshot.revision, {
      onChanges: (revision, changes) => {
        if (this.image.apply(revision, changes)) {
          this.options.onChange?.(revision, changes);
          this.wakeWaiters();
        }
      },
      onCompacted: (compactRevision) => {
        this.watchHandle = undefined;
        this.reload(`the watch's revision ${this.image.revision} was compacted (compaction at ${compactRevision})`);
      },
      onInvalid: (problem) => this.options.onProblem?.(`skipped an unreadable record: ${problem}`),
      onConnectionChange: (connected) => this.options.onConnectionChange?.(connected),
    });
  }

  private reload(reason: string): void {
    if (this.closed) return;
    this.loadAndWatch().then(
      () => {
        this.reloads++;
        this.options.onReload?.(reason);
      },
      (e: unknown) => {
        this.options.onProblem?.(`reload failed (${e instanceof Error ? e.message : String(e)}); retrying`);
        this.retryTimer = this.options.scheduler.setTimeout(() => this.reload(reason), this.options.reloadRetryMs ?? 1000);
      },
    );
  }

  private wakeWaiters(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (this.image.revision >= w.revision) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }
}
