// Producer id allocation for InitProducerId. Ids are handed out from blocks of
// 1000 (as Kafka's controller does); the end of the current block is persisted
// before any id of it is used, so ids are never reused after a restart.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from './common/file-io.js';

const BLOCK_SIZE = 1000n;

export class ProducerIdManager {
  private next = 0n;
  private blockEnd = 0n;
  private allocating: Promise<void> | null = null;

  private constructor(private readonly file: string) {}

  static async open(dir: string): Promise<ProducerIdManager> {
    await mkdir(dir, { recursive: true });
    const m = new ProducerIdManager(path.join(dir, 'producer-id-block'));
    try {
      const text = (await readFile(m.file, 'utf8')).trim();
      if (!/^\d+$/.test(text)) throw new Error(`corrupt producer id block file ${m.file}: '${text}'`);
      m.next = BigInt(text);
      m.blockEnd = m.next;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return m;
  }

  async nextProducerId(): Promise<bigint> {
    while (this.next >= this.blockEnd) {
      if (this.allocating === null) this.allocating = this.allocateBlock().finally(() => (this.allocating = null));
      await this.allocating;
    }
    return this.next++;
  }

  private async allocateBlock(): Promise<void> {
    const end = this.blockEnd + BLOCK_SIZE;
    await writeFileAtomic(this.file, `${end}\n`);
    this.next = this.blockEnd;
    this.blockEnd = end;
  }
}
