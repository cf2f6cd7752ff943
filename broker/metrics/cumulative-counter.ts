// A Prometheus counter fed from totals kept elsewhere (the RemoteLogManager's
// per-partition counters, the caches' counters, the group coordinator's
// rebalance counts). Each source is read at scrape time and only its increase
// since the last read is added, so the counter never goes down when a source
// disappears (a partition removed, a topic deleted) or starts again from zero
// (a partition re-added): its earlier counts stay in the total.
import { Counter, type Registry } from 'prom-client';

export class CumulativeCounter<L extends string> {
  readonly counter: Counter<L>;
  private readonly last = new Map<string, number>();

  /** `collect` runs before each scrape reads the counter (it brings the totals up to date). */
  constructor(options: { name: string; help: string; labelNames: readonly L[]; registry: Registry; collect?: () => void }) {
    const collect = options.collect;
    this.counter = new Counter<L>({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      registers: [options.registry],
      ...(collect === undefined ? {} : { collect: () => collect() }),
    });
  }

  /**
   * Records that source `key` (with `labels`) has counted `total` so far. A
   * total below the last one means the source started again from zero.
   */
  observe(key: string, labels: Partial<Record<L, string | number>>, total: number): void {
    const before = this.last.get(key);
    const delta = before === undefined || total < before ? total : total - before;
    this.last.set(key, total);
    this.counter.inc(labels, delta);
  }

  /** Forgets sources not in `live` (their counts stay in the counter). */
  retain(live: ReadonlySet<string>): void {
    for (const key of this.last.keys()) if (!live.has(key)) this.last.delete(key);
  }
}
