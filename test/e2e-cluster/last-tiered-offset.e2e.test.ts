// KIP-1023 (follower.fetch.last.tiered.offset.enable) over three `sediment
// start` processes, a real etcd and one filesystem remote store: broker 2 runs
// with the config off (Kafka's default), broker 3 with it on. A tiered topic
// on broker 1 alone, with several closed segments uploaded and its whole log
// still local, gets both as new replicas by reassignment
// (test/bench/last-tiered-offset-run.ts). Broker 2 copies the leader's whole
// log; broker 3 starts at the leader's earliest pending upload offset and
// copies only the active segment, batch for batch what the leader holds from
// there. Both join the ISR. Then the partition moves to broker 3 alone: it
// leads, and a consumer reads every record from offset 0, the older ones
// from the remote tier.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';
import { ON_BROKER, OFF_BROKER, addReplica, brokerOverrides, kcatValues, localSegments, runRound, values, type RoundResult } from '../bench/last-tiered-offset-run.js';

const TOPIC = 'kip1023';
const RECORDS = 3000;
const RECORD_BYTES = 200;
const SEGMENT_BYTES = 32_768;

let etcd: EtcdServer;
let cluster: SedimentCluster;
let remoteDir = '';

describe('KIP-1023: a replica added by reassignment starts from the last tiered offset', () => {
  before(async () => {
    requireTools(['etcd', 'kcat']);
    etcd = await startEtcd();
    remoteDir = await mkdtemp(path.join(os.tmpdir(), 'sediment-kip1023-remote-'));
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-kip1023-${process.pid}`,
      overrides: {
        'broker.session.timeout.ms': '9000',
        'broker.heartbeat.interval.ms': '2000',
        'auto.leader.rebalance.enable': 'false',
        'remote.log.storage.url': pathToFileURL(remoteDir).href,
        'remote.log.manager.task.interval.ms': '1000',
        'log.retention.check.interval.ms': '1000',
        'remote.log.metadata.topic.num.partitions': '3',
      },
      brokerOverrides,
    });
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
    if (remoteDir !== '') await rm(remoteDir, { recursive: true, force: true });
  });

  let round: RoundResult;

  it('with the config off the new replica copies the whole log; on, only what is not uploaded yet', async () => {
    round = await runRound(cluster, { topic: TOPIC, records: RECORDS, recordBytes: RECORD_BYTES, segmentBytes: SEGMENT_BYTES, first: OFF_BROKER, timeoutMs: 120_000 });
    assert.ok(round.uploadedSegments >= 8, `several tiered segments: ${round.uploadedSegments}`);
    const leaderSegs = await localSegments(cluster, 1, TOPIC);
    const hot = leaderSegs.filter((s) => s.base >= round.pendingUploadOffset).reduce((n, s) => n + s.bytes, 0);
    assert.ok(hot > 0 && hot < round.leaderLocalBytes / 4, `hot ${hot} of ${round.leaderLocalBytes} bytes`);

    assert.equal(round.off.fetchedBytes, round.leaderLocalBytes, 'off: every byte of the leader\'s log');
    assert.equal(round.off.localStart, 0n);
    assert.equal(round.on.fetchedBytes, hot, 'on: the leader\'s bytes from the pending upload offset, nothing below');
    assert.equal(round.on.localStart, round.pendingUploadOffset, 'on: its log starts at the leader\'s earliest pending upload offset');
    const onSegs = await localSegments(cluster, ON_BROKER, TOPIC);
    assert.equal(onSegs.reduce((n, s) => n + s.bytes, 0), hot, 'it holds what it fetched');
    const started = cluster.broker(ON_BROKER).logs.lines.find((l) => l['topic'] === TOPIC && typeof l.msg === 'string' && l.msg.startsWith('empty follower starts at the leader\'s last tiered offset'));
    assert.ok(started !== undefined, 'broker 3 logged the KIP-1023 start');
    assert.equal(cluster.broker(OFF_BROKER).logs.lines.some((l) => l['topic'] === TOPIC && typeof l.msg === 'string' && l.msg.startsWith('empty follower starts')), false);
  });

  it('the replica started from the tier leads and serves every record from offset 0', async () => {
    const joined = await addReplica(cluster, TOPIC, [ON_BROKER], ON_BROKER, 60_000);
    assert.equal(joined.fetchedBytes, 0, 'nothing more to copy');
    await cluster.untilMetadata(1, [TOPIC], (m) => m.topics.find((t) => t.name === TOPIC)?.partitions[0]?.leader === ON_BROKER, 30_000, 'broker 3 leads');
    assert.equal((await localSegments(cluster, ON_BROKER, TOPIC))[0]?.base, round.pendingUploadOffset, 'its local log still starts at the pending offset');
    assert.deepEqual(await kcatValues(cluster.broker(ON_BROKER).bootstrap, TOPIC), values(TOPIC, RECORDS, RECORD_BYTES));
  });
});
