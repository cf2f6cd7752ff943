// `npm run build && node dist/test/bench/last-tiered-offset.bench.js [--rounds N] [--records N] [--record-bytes N] [--segment-bytes N]`
//
// KIP-1023 (follower.fetch.last.tiered.offset.enable): what a replica added by
// reassignment copies, and how long it takes to join the ISR, with the config
// off (a full copy of the leader's local log) against on (only what is not
// uploaded yet). Three `sediment start` processes over a real etcd and a
// filesystem remote store; broker 2 has the config off, broker 3 on. Each round
// has its own tiered topic on broker 1 alone, filled by kcat and fully
// uploaded (closed segments), its whole log kept locally; then both brokers
// are added, one after the other, the first alternating between rounds, so
// both copy the same data (test/bench/last-tiered-offset-run.ts). Prints each
// round, then the medians, min-max spread and the off/on ratios.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startEtcd } from '../support/etcd.js';
import { startSedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';
import { OFF_BROKER, ON_BROKER, brokerOverrides, runRound, type RoundResult } from './last-tiered-offset-run.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;
const spread = (xs: readonly number[], f: (n: number) => string): string => `${f(Math.min(...xs))}-${f(Math.max(...xs))}`;
const ms = (n: number): string => `${n.toFixed(0)} ms`;

async function main(): Promise<void> {
  const rounds = arg('rounds', 4);
  const records = arg('records', 20_000);
  const recordBytes = arg('record-bytes', 200);
  const segmentBytes = arg('segment-bytes', 262_144);
  requireTools(['etcd', 'kcat']);
  const etcd = await startEtcd();
  const remoteDir = await mkdtemp(path.join(os.tmpdir(), 'sediment-kip1023-bench-'));
  const cluster = await startSedimentCluster({
    etcd,
    brokers: 3,
    prefix: `/bench-kip1023-${process.pid}`,
    overrides: {
      'auto.leader.rebalance.enable': 'false',
      'remote.log.storage.url': pathToFileURL(remoteDir).href,
      'remote.log.manager.task.interval.ms': '1000',
      'remote.log.metadata.topic.num.partitions': '3',
    },
    brokerOverrides,
  });
  const results: RoundResult[] = [];
  try {
    console.log(`KIP-1023 bench: ${rounds} rounds, ${records} records of ${recordBytes} B, ${segmentBytes} B segments; broker ${OFF_BROKER} off, broker ${ON_BROKER} on`);
    for (let i = 0; i < rounds; i++) {
      const first = i % 2 === 0 ? OFF_BROKER : ON_BROKER;
      const r = await runRound(cluster, { topic: `kip1023-bench-${i}`, records, recordBytes, segmentBytes, first, timeoutMs: 300_000 });
      results.push(r);
      console.log(
        `round ${i + 1} (first added: broker ${first}): leader ${kib(r.leaderLocalBytes)} local, ${r.uploadedSegments} segments tiered, pending upload offset ${r.pendingUploadOffset} of ${r.leaderLogEnd}; ` +
          `off ${kib(r.off.fetchedBytes)} in ${ms(r.off.msToIsr)}, on ${kib(r.on.fetchedBytes)} in ${ms(r.on.msToIsr)}`,
      );
    }
  } finally {
    await cluster.close();
    await etcd.stop();
    await rm(remoteDir, { recursive: true, force: true });
  }
  const offBytes = results.map((r) => r.off.fetchedBytes);
  const onBytes = results.map((r) => r.on.fetchedBytes);
  const offMs = results.map((r) => r.off.msToIsr);
  const onMs = results.map((r) => r.on.msToIsr);
  console.log('');
  console.log(`| | config off (full copy) | config on (KIP-1023) | off / on |`);
  console.log(`|---|---|---|---|`);
  console.log(`| bytes fetched by the new replica, median (range) | ${kib(median(offBytes))} (${spread(offBytes, kib)}) | ${kib(median(onBytes))} (${spread(onBytes, kib)}) | ${(median(offBytes) / median(onBytes)).toFixed(1)}x |`);
  console.log(`| reassignment to ISR, median (range) | ${ms(median(offMs))} (${spread(offMs, ms)}) | ${ms(median(onMs))} (${spread(onMs, ms)}) | ${(median(offMs) / median(onMs)).toFixed(1)}x |`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
