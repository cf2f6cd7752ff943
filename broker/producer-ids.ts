// Producer id allocation for InitProducerId. Ids are handed out from blocks of
// 1000, as Kafka's controller hands them to brokers (AllocateProducerIds).
// Alone, a broker persists the end of its current block in a local file
// before using any id of it, so ids are never reused after a restart. In a
// cluster the blocks come from one cluster-wide counter (the metadata store's
// compare-and-swap, `allocateProducerIds`), so no two brokers ever hand out
// the same id; the next block is fetched when 90% of the current one is used
// (as Kafka's RPCProducerIdManager prefetches), so InitProducerId rarely waits
// for the store. A store that cannot be reached gives
// COORDINATOR_LOAD_IN_PROGRESS (retriable), as Kafka answers while no block
// is available.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from './common/file-io.js';
import { ErrorCode, KafkaError } from './protocol/errors.js';

export const PRODUCER_ID_BLOCK_SIZE = 1000;
const BLOCK_SIZE = BigInt(PRODUCER_ID_BLOCK_SIZE);
const BLOCK_FILE = 'producer-id-block';

/** Hands out the first id of a new block of PRODUCER_ID_BLOCK_SIZE ids, never below `atLeast`. */
export type ProducerIdBlockSource = (atLeast: bigint) => Promise<bigint>;

interface Block {
  readonly start: bigint;
  readonly end: bigint;
}

export class ProducerIdManager {
  private current: Block = { start: 0n, end: 0n };
  private next = 0n;
  /** A fetched block not yet in use. */
  private ready: Block | null = null;
  private fetching: Promise<void> | null = null;

  private constructor(
    private readonly source: ProducerIdBlockSource,
    /** The end of the ids this broker handed out from its own file before it used a shared source. */
    private readonly floor: bigint,
  ) {}

  /** The single broker's manager: blocks from the file in `dir`. */
  static async open(dir: string): Promise<ProducerIdManager> {
    const file = await blockFile(dir);
    let persisted = await readBlockEnd(file);
    const source: ProducerIdBlockSource = async () => {
      const start = persisted;
      await writeFileAtomic(file, `${start + BLOCK_SIZE}\n`);
      persisted = start + BLOCK_SIZE;
      return start;
    };
    return new ProducerIdManager(source, 0n);
  }

  /**
   * A cluster member's manager: blocks from the cluster-wide counter. A block
   * file left from the time this broker ran alone raises every block above
   * the ids it handed out then.
   */
  static async shared(dir: string, allocate: ProducerIdBlockSource): Promise<ProducerIdManager> {
    const floor = await readBlockEnd(await blockFile(dir));
    return new ProducerIdManager(allocate, floor);
  }

  async nextProducerId(): Promise<bigint> {
    while (this.next >= this.current.end) {
      if (this.ready !== null) {
        this.current = this.ready;
        this.next = this.ready.start;
        this.ready = null;
        continue;
      }
      await this.fetch();
    }
    const id = this.next++;
    if (this.ready === null && (this.next - this.current.start) * 10n >= BLOCK_SIZE * 9n) this.fetch().catch(() => undefined);
    return id;
  }

  /** One fetch at a time, shared by every caller waiting for it. */
  private fetch(): Promise<void> {
    if (this.fetching !== null) return this.fetching;
    const p = this.source(this.floor).then(
      (start) => {
        this.ready = { start, end: start + BLOCK_SIZE };
      },
      (err: unknown) => {
        if (err instanceof KafkaError && err.code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) throw err;
        throw new KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, `No producer id block is available yet: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    this.fetching = p.finally(() => {
      this.fetching = null;
    });
    return this.fetching;
  }
}

async function blockFile(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return path.join(dir, BLOCK_FILE);
}

async function readBlockEnd(file: string): Promise<bigint> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    if (!/^\d+$/.test(text)) throw new Error(`corrupt producer id block file ${file}: '${text}'`);
    return BigInt(text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return 0n;
  }
}
