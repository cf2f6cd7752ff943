// The persisted topic registry: a TopicRegistry whose every change is written to
// `__sediment_metadata.json` in the first log directory (tmp + fsync + rename),
// and loaded at start. Mutations update memory at once and resolve once the file
// holds the new state; writes are serialized so the file only moves forward.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LogConfig } from './log-config.js';
import { writeFileAtomic } from '../broker/common/file-io.js';
import type { AlterConfigOp } from './config-alter.js';
import type { EffectiveTopicConfig } from './topic-config.js';
import {
  TopicRegistry,
  type CreateTopicRequest,
  type MutationOptions,
  type TopicBrokerSettings,
  type TopicRecord,
} from './topics.js';
import type { RandomBytes } from './uuid.js';

export const TOPIC_METADATA_FILE = '__sediment_metadata.json';
const FORMAT_VERSION = 1;

interface MetadataFileV1 {
  readonly version: 1;
  readonly topics: readonly TopicRecord[];
}

/** JSON text of the registry (stable order, one topic per line for readable diffs). */
export function encodeTopicMetadata(topics: readonly TopicRecord[]): string {
  const lines = topics.map((t) => '    ' + JSON.stringify({ name: t.name, topicId: t.topicId, partitionCount: t.partitionCount, configs: t.configs }));
  return `{\n  "version": ${FORMAT_VERSION},\n  "topics": [\n${lines.join(',\n')}${lines.length ? '\n' : ''}  ]\n}\n`;
}

/** Parses the file, checking its shape; throws with the reason on anything else. */
export function decodeTopicMetadata(text: string): TopicRecord[] {
  const data: unknown = JSON.parse(text);
  if (typeof data !== 'object' || data === null) throw new Error('topic metadata is not an object');
  const file = data as Partial<MetadataFileV1>;
  if (file.version !== FORMAT_VERSION) throw new Error(`unsupported topic metadata version ${String(file.version)}`);
  if (!Array.isArray(file.topics)) throw new Error('topic metadata has no topics array');
  return file.topics.map((t: unknown, i) => {
    const r = t as Partial<TopicRecord>;
    if (typeof r.name !== 'string' || typeof r.topicId !== 'string' || !Number.isInteger(r.partitionCount) || (r.partitionCount ?? 0) < 1) {
      throw new Error(`topic metadata entry ${i} is malformed`);
    }
    const configs: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.configs ?? {})) {
      if (typeof v !== 'string') throw new Error(`topic metadata entry ${i} (${r.name}) has a non-string config ${k}`);
      configs[k] = v;
    }
    return { name: r.name, topicId: r.topicId, partitionCount: r.partitionCount as number, configs };
  });
}

export class TopicStore {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    readonly registry: TopicRegistry,
  ) {}

  /**
   * Loads the registry from `<logDir>/__sediment_metadata.json` (empty when the
   * file does not exist yet). A corrupt file is an error: the broker must not
   * start and forget its topics.
   */
  static async open(logDir: string, broker: TopicBrokerSettings, options: { random?: RandomBytes } = {}): Promise<TopicStore> {
    const file = path.join(logDir, TOPIC_METADATA_FILE);
    let topics: TopicRecord[] = [];
    try {
      topics = decodeTopicMetadata(await readFile(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new Error(`Cannot load topic metadata from ${file}: ${(err as Error).message}`, { cause: err });
      }
    }
    return new TopicStore(file, new TopicRegistry(broker, topics, options.random));
  }

  // ---- reads (synchronous, from memory) ----

  get(name: string): TopicRecord | undefined {
    return this.registry.get(name);
  }

  getById(topicId: string): TopicRecord | undefined {
    return this.registry.getById(topicId);
  }

  has(name: string): boolean {
    return this.registry.has(name);
  }

  list(): TopicRecord[] {
    return this.registry.list();
  }

  effectiveConfig(name: string): EffectiveTopicConfig {
    return this.registry.effectiveConfig(name);
  }

  logConfig(name: string): LogConfig {
    return this.registry.logConfig(name);
  }

  // ---- mutations (validated synchronously, resolved once persisted) ----

  async create(request: CreateTopicRequest, options: MutationOptions = {}): Promise<TopicRecord> {
    const record = this.registry.create(request, options);
    if (!options.validateOnly) await this.persist();
    return record;
  }

  async delete(name: string): Promise<TopicRecord> {
    const record = this.registry.delete(name);
    await this.persist();
    return record;
  }

  async deleteById(topicId: string): Promise<TopicRecord> {
    const record = this.registry.deleteById(topicId);
    await this.persist();
    return record;
  }

  async createPartitions(
    name: string,
    count: number,
    assignments: readonly (readonly number[])[] | null = null,
    options: MutationOptions = {},
  ): Promise<TopicRecord> {
    const record = this.registry.createPartitions(name, count, assignments, options);
    if (!options.validateOnly) await this.persist();
    return record;
  }

  async alterConfigs(name: string, entries: readonly { name: string; value: string | null }[], options: MutationOptions = {}): Promise<TopicRecord> {
    const record = this.registry.alterConfigs(name, entries, options);
    if (!options.validateOnly) await this.persist();
    return record;
  }

  async incrementalAlterConfigs(name: string, ops: readonly AlterConfigOp[], options: MutationOptions = {}): Promise<TopicRecord> {
    const record = this.registry.incrementalAlterConfigs(name, ops, options);
    if (!options.validateOnly) await this.persist();
    return record;
  }

  /** Resolves when every change made so far is on disk. */
  flush(): Promise<void> {
    return this.persist();
  }

  private persist(): Promise<void> {
    // Each write snapshots the registry when it runs, so a queued write carries
    // every change made before it; a failed write does not block later ones.
    const next = this.writing.catch(() => undefined).then(() => writeFileAtomic(this.file, encodeTopicMetadata(this.registry.list())));
    this.writing = next;
    return next;
  }
}
