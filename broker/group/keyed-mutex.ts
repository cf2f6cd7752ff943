// Runs async sections one at a time per key, and tracks the writes a section
// left in flight. An offset commit validates and queues its append under the
// group's lock, then releases it while the append is written (so the commits
// of one group share appends) and applies to memory when it is durable.
// Deletions and expiry, under the lock, first wait for the commits in flight
// (`InflightWrites.settled`), so they never miss a commit still being written.
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, section: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(section);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  get activeKeys(): number {
    return this.tails.size;
  }
}

/** Per key, the writes started under a lock and not yet applied; they settle in start order. */
export class InflightWrites {
  private readonly byKey = new Map<string, { count: number; last: Promise<void> }>();

  /** `applied` settles once the write is applied (or failed); writes of one key settle in `begin` order. */
  begin(key: string, applied: Promise<void>): void {
    const entry = this.byKey.get(key);
    const last = applied.catch(() => undefined);
    if (entry === undefined) this.byKey.set(key, { count: 1, last });
    else {
      entry.count++;
      entry.last = last;
    }
  }

  end(key: string): void {
    const entry = this.byKey.get(key);
    if (entry === undefined) return;
    if (--entry.count <= 0) this.byKey.delete(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** Resolves when every write of the key begun so far has settled. */
  async settled(key: string): Promise<void> {
    await this.byKey.get(key)?.last;
  }
}
