// Sediment-specific partition numbers the Kafka protocol has no request for:
// local and remote segment counts and bytes. The broker's HTTP listener serves
// them at GET <http>/v1/partitions[?topic=T] as a JSON array of
//   { topic, partition, logStartOffset, localLogStartOffset, highWatermark,
//     lastStableOffset, localSegments, localBytes, remoteSegments, remoteBytes }
// (numbers, or decimal strings for values beyond 2^53). Any other broker (or a
// Sediment without the listener) simply yields no stats and the CLI prints n/a.

export interface PartitionStats {
  readonly topic: string;
  readonly partition: number;
  readonly logStartOffset?: bigint;
  readonly localLogStartOffset?: bigint;
  readonly highWatermark?: bigint;
  readonly lastStableOffset?: bigint;
  readonly localSegments?: bigint;
  readonly localBytes?: bigint;
  readonly remoteSegments?: bigint;
  readonly remoteBytes?: bigint;
}

const numericFields = [
  'logStartOffset',
  'localLogStartOffset',
  'highWatermark',
  'lastStableOffset',
  'localSegments',
  'localBytes',
  'remoteSegments',
  'remoteBytes',
] as const;

function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  return undefined;
}

/** Parses the endpoint's JSON; entries without a topic and partition are skipped. */
export function parsePartitionStats(json: unknown): PartitionStats[] {
  if (!Array.isArray(json)) throw new Error('expected a JSON array');
  const out: PartitionStats[] = [];
  for (const e of json as unknown[]) {
    if (typeof e !== 'object' || e === null) continue;
    const o = e as Record<string, unknown>;
    if (typeof o['topic'] !== 'string' || typeof o['partition'] !== 'number') continue;
    const s: { -readonly [K in keyof PartitionStats]: PartitionStats[K] } = { topic: o['topic'], partition: o['partition'] };
    for (const f of numericFields) {
      const v = toBigInt(o[f]);
      if (v !== undefined) s[f] = v;
    }
    out.push(s);
  }
  return out;
}

/** The default HTTP base URL: the bootstrap host on Sediment's default HTTP port. */
export function defaultHttpUrl(bootstrap: string, port = 9644): string {
  const first = bootstrap.split(',')[0]?.trim() ?? '';
  const m = /^(\[[^\]]+\]|[^:]+):\d+$/.exec(first);
  const host = m?.[1] ?? '127.0.0.1';
  return `http://${host}:${port}`;
}

/**
 * Fetches the stats, keyed `topic:partition`; null when the endpoint is not
 * reachable or does not answer with the expected JSON.
 */
export async function fetchPartitionStats(baseUrl: string, topic: string | undefined, timeoutMs = 3000): Promise<Map<string, PartitionStats> | null> {
  const url = new URL('/v1/partitions', baseUrl);
  if (topic !== undefined) url.searchParams.set('topic', topic);
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    if (!res.ok) return null;
    const stats = parsePartitionStats(await res.json());
    return new Map(stats.map((s) => [`${s.topic}:${s.partition}`, s]));
  } catch {
    return null;
  }
}
