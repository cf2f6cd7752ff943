// DescribeLogDirs (key 35), versions 1-5.
// Per log directory (log.dirs), the partitions it holds with their local size
// (the local tier only: remote bytes are not on a broker disk), offset lag 0
// (no replicas to lag behind), no future replicas. From v4 the directory's
// total and usable bytes come from statfs; from v5 IsCordoned (KIP-1066), always
// false (no directory is ever cordoned here). A null topic list means all.
import { statfs } from 'node:fs/promises';
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DescribeLogDirsRequest, DescribeLogDirsResponse, DescribeLogDirsResponseDescribeLogDirsTopic } from '../protocol/messages/describe-log-dirs.js';

async function diskBytes(dir: string): Promise<{ totalBytes: bigint; usableBytes: bigint }> {
  try {
    const s = await statfs(dir, { bigint: true });
    return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
  } catch {
    return { totalBytes: -1n, usableBytes: -1n };
  }
}

export const handler: ApiHandler<DescribeLogDirsRequest, DescribeLogDirsResponse, BrokerContext> = {
  apiKey: 35,
  minVersion: 1,
  maxVersion: 5,
  async handle(broker, req) {
    const wanted = req.topics ?? broker.topics.store.list().map((t) => ({ topic: t.name, partitions: Array.from({ length: t.partitionCount }, (_, i) => i) }));
    const byDir = new Map<string, Map<string, DescribeLogDirsResponseDescribeLogDirsTopic>>();
    for (const dir of broker.config.logDirs) byDir.set(dir, new Map());
    for (const w of wanted) {
      for (const p of w.partitions) {
        const view = broker.topics.partition(w.topic, p);
        if (view === undefined) continue;
        const topics = byDir.get(view.logDir) ?? new Map<string, DescribeLogDirsResponseDescribeLogDirsTopic>();
        byDir.set(view.logDir, topics);
        let entry = topics.get(w.topic);
        if (entry === undefined) topics.set(w.topic, (entry = { name: w.topic, partitions: [] }));
        entry.partitions.push({ partitionIndex: p, partitionSize: BigInt(view.localSizeBytes), offsetLag: 0n, isFutureKey: false });
      }
    }
    const results = [];
    for (const [logDir, topics] of byDir) {
      results.push({ errorCode: 0, logDir, topics: [...topics.values()], ...(await diskBytes(logDir)), isCordoned: false });
    }
    return { throttleTimeMs: 0, errorCode: 0, results };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, results: [] };
  },
};
