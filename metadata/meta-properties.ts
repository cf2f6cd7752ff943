// `meta.properties` in every log directory, as Kafka (KRaft, version 1) writes
// it: cluster.id, node.id, directory.id, version. Kafka needs `kafka-storage
// format` first; Sediment formats an empty directory on first start instead,
// generating the cluster id once and reusing it for every log directory.
// Later starts check that the directories agree with each other and with the
// configured node.id / cluster.id, so a data directory is never silently
// adopted by another node.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from './config-schema.js';
import { writeFileAtomic } from '../broker/common/file-io.js';
import { isValidUuid, randomUuid, type RandomBytes } from './uuid.js';

export const META_PROPERTIES_FILE = 'meta.properties';

export interface MetaProperties {
  readonly version: 1;
  readonly clusterId: string;
  readonly nodeId: number;
  readonly directoryId: string;
}

/** The file text; `#` header lines as java.util.Properties.store writes them. */
export function encodeMetaProperties(meta: MetaProperties, now: Date = new Date()): string {
  return [
    '#',
    `#${now.toUTCString()}`,
    `node.id=${meta.nodeId}`,
    `directory.id=${meta.directoryId}`,
    `version=${meta.version}`,
    `cluster.id=${meta.clusterId}`,
    '',
  ].join('\n');
}

/** Parses the file; `file` only names it in error messages. */
export function decodeMetaProperties(text: string, file = META_PROPERTIES_FILE): MetaProperties {
  const props = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (m) props.set(m[1] as string, (m[2] as string).trim());
  }
  const version = props.get('version');
  if (version !== '1') {
    throw new Error(`${file}: unsupported meta.properties version ${version ?? '(missing)'}; Sediment reads version 1 (KRaft)`);
  }
  const clusterId = props.get('cluster.id');
  if (clusterId === undefined || !isValidUuid(clusterId)) throw new Error(`${file}: missing or invalid cluster.id`);
  const nodeIdText = props.get('node.id');
  if (nodeIdText === undefined || !/^\d+$/.test(nodeIdText)) throw new Error(`${file}: missing or invalid node.id`);
  const directoryId = props.get('directory.id');
  if (directoryId === undefined || !isValidUuid(directoryId)) throw new Error(`${file}: missing or invalid directory.id`);
  return { version: 1, clusterId, nodeId: Number(nodeIdText), directoryId };
}

export interface LogDirsIdentity {
  readonly clusterId: string;
  readonly nodeId: number;
  /** directory.id per log dir, in the order given. */
  readonly directoryIds: readonly string[];
  /** Log dirs formatted by this call (empty on a normal restart). */
  readonly formatted: readonly string[];
}

/**
 * Reads meta.properties from each log dir (creating missing directories),
 * checks them, and writes it where absent. Throws ConfigError when the stored
 * node.id or cluster.id contradicts the configuration or another directory.
 */
export async function ensureMetaProperties(
  logDirs: readonly string[],
  config: { nodeId: number; clusterId: string | null },
  options: { random?: RandomBytes; now?: Date } = {},
): Promise<LogDirsIdentity> {
  const existing: (MetaProperties | null)[] = [];
  for (const dir of logDirs) {
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, META_PROPERTIES_FILE);
    let text: string | null = null;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    existing.push(text === null ? null : decodeMetaProperties(text, file));
  }

  let clusterId = config.clusterId;
  existing.forEach((meta, i) => {
    if (meta === null) return;
    const file = path.join(logDirs[i] as string, META_PROPERTIES_FILE);
    if (meta.nodeId !== config.nodeId) {
      throw new ConfigError('node.id', `Stored node id ${meta.nodeId} in ${file} doesn't match the configured node.id ${config.nodeId}`);
    }
    if (clusterId !== null && meta.clusterId !== clusterId) {
      const what = config.clusterId !== null ? 'the configured cluster.id' : 'the cluster id of another log directory';
      throw new ConfigError('cluster.id', `Stored cluster id ${meta.clusterId} in ${file} doesn't match ${what} ${clusterId}`);
    }
    clusterId = meta.clusterId;
  });
  const resolvedClusterId = clusterId ?? randomUuid(options.random);

  const ids = new Set<string>();
  const directoryIds: string[] = [];
  const formatted: string[] = [];
  for (let i = 0; i < logDirs.length; i++) {
    const dir = logDirs[i] as string;
    const meta = existing[i];
    if (meta !== null && meta !== undefined) {
      if (ids.has(meta.directoryId)) throw new Error(`${dir}: duplicate directory.id ${meta.directoryId}`);
      ids.add(meta.directoryId);
      directoryIds.push(meta.directoryId);
      continue;
    }
    let directoryId = randomUuid(options.random);
    while (ids.has(directoryId)) directoryId = randomUuid(options.random);
    ids.add(directoryId);
    const fresh: MetaProperties = { version: 1, clusterId: resolvedClusterId, nodeId: config.nodeId, directoryId };
    await writeFileAtomic(path.join(dir, META_PROPERTIES_FILE), encodeMetaProperties(fresh, options.now));
    directoryIds.push(directoryId);
    formatted.push(dir);
  }
  return { clusterId: resolvedClusterId, nodeId: config.nodeId, directoryIds, formatted };
}
