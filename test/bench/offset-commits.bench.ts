// Offset commits per second for one group: OffsetCommit requests (generation
// -1, a "simple" group) from the CLI's admin client, `inFlight` outstanding
// spread over `connections` coordinator connections, against an in-process
// broker. The broker serves one request at a time per connection (as Kafka
// mutes a channel; only Produce is pipelined), so one connection's commits
// never overlap at the coordinator: several connections, like a group's
// members, are what makes commits of one group concurrent. Several rounds;
// prints each and the median.
//   node dist/test/bench/offset-commits.bench.js [commits=20000] [inFlight=64] [connections=1] [partitions=1] [rounds=3]
import { ErrorCode } from '../../broker/protocol/errors.js';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { createTopic } from '../clients/common.js';
import { startSedimentInProcess } from '../support/sediment.js';

const [commits, inFlight, connections, partitions, rounds] = [20_000, 64, 1, 1, 3].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number, number, number, number];
const topic = 'bench-commits';

async function round(admins: readonly AdminClient[], group: string): Promise<number> {
  let next = 0;
  const offsets = (i: number) => Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: BigInt(i) }));
  const worker = async (_: unknown, w: number): Promise<void> => {
    const admin = admins[w % admins.length] as AdminClient;
    for (let i = next++; i < commits; i = next++) {
      const errors = await admin.offsetCommit(group, offsets(i));
      if (!errors.every((e) => e.errorCode === ErrorCode.NONE)) throw new Error(`commit ${i}: ${JSON.stringify(errors)}`);
    }
  };
  for (const admin of admins) await admin.offsetCommit(group, offsets(0)); // creates the group, finds the coordinator
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return commits / (Number(process.hrtime.bigint() - t0) / 1e9);
}

const broker = await startSedimentInProcess({ logLevel: 'warn' });
try {
  await createTopic(broker.bootstrap, topic, partitions);
  const admins = await Promise.all(Array.from({ length: connections }, () => AdminClient.connect(broker.bootstrap, { retryMs: 30_000 })));
  try {
    const rates: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const rate = await round(admins, `bench-group-${r}`);
      rates.push(rate);
      console.log(`round ${r + 1}: ${commits} commits (${partitions} partition(s) each), ${inFlight} in flight over ${connections} connection(s): ${rate.toFixed(0)} commits/s`);
    }
    rates.sort((a, b) => a - b);
    console.log(`median ${(rates[Math.floor(rates.length / 2)] ?? 0).toFixed(0)} commits/s`);
  } finally {
    for (const admin of admins) admin.close();
  }
} finally {
  await broker.close();
}
