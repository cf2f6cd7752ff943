// Runs async sections one at a time per key. The coordinator holds a group's
// lock across "validate, append to __consumer_offsets, apply to memory" for
// offset commits and deletions, so a deletion never misses a commit that was
// still being written.
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
