// Output formats of both commands, the segment-stats endpoint client, framing and
// version negotiation of the CLI's connection (against a scripted fake broker),
// and exit codes on errors.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { decodeRequestBody, decodeRequestHeader, encodeResponseMessage } from '../../../broker/protocol/frame.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { ApiKey, apis, type MetadataResponse } from '../../../broker/protocol/messages/index.js';
import { BrokerConnection, FrameReader, pickVersion } from '../../../broker/cli/broker-connection.js';
import { formatOffsets, formatResetPlan, lagOf, runGroups, type OffsetRow } from '../../../broker/cli/groups.js';
import { defaultHttpUrl, fetchPartitionStats, parsePartitionStats } from '../../../broker/cli/partition-stats.js';
import { formatTopicReport, runTopics, type PartitionReport } from '../../../broker/cli/topics.js';
import type { CliIo } from '../../../broker/cli/args.js';

function captureIo(): CliIo & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return { out: (t) => void (out += t), err: (t) => void (err += t), stdout: () => out, stderr: () => err };
}

const partition = (p: Partial<PartitionReport> & { partition: number }): PartitionReport => ({
  leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], offlineReplicas: [], logStartOffset: 0n, localLogStartOffset: 0n, highWatermark: 0n, lastStableOffset: 0n,
  latestTieredOffset: -1n, localSegments: null, localBytes: null, remoteSegments: null, remoteBytes: null, ...p,
});

test('formatTopicReport: topic line with overrides, one tab-separated line per partition, n/a for unknowns', () => {
  const text = formatTopicReport({
    name: 'orders', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', replicationFactor: 1,
    configs: [['cleanup.policy', 'compact'], ['retention.ms', '1000']],
    partitions: [
      partition({ partition: 0, logStartOffset: 100n, localLogStartOffset: 250n, highWatermark: 400n, lastStableOffset: 390n, latestTieredOffset: 249n, localSegments: 2n, localBytes: 4096n, remoteSegments: 3n, remoteBytes: 8192n }),
      partition({ partition: 1, leader: -1, leaderEpoch: -1, isr: [], offlineReplicas: [1], localLogStartOffset: null }),
    ],
  });
  assert.equal(
    text,
    'Topic: orders\tTopicId: AAAAAAAAAAAAAAAAAAAAAQ\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,retention.ms=1000\n' +
      '\tTopic: orders\tPartition: 0\tLeader: 1\tLeaderEpoch: 0\tReplicas: 1\tIsr: 1\tOffline: \tLogStartOffset: 100\tLocalLogStartOffset: 250\tHighWatermark: 400\tLastStableOffset: 390\tLatestTieredOffset: 249\tLocalSegments: 2\tLocalBytes: 4096\tRemoteSegments: 3\tRemoteBytes: 8192\n' +
      '\tTopic: orders\tPartition: 1\tLeader: none\tLeaderEpoch: n/a\tReplicas: 1\tIsr: \tOffline: 1\tLogStartOffset: 0\tLocalLogStartOffset: n/a\tHighWatermark: 0\tLastStableOffset: 0\tLatestTieredOffset: -1\tLocalSegments: n/a\tLocalBytes: n/a\tRemoteSegments: n/a\tRemoteBytes: n/a\n',
  );
});

const row = (r: Partial<OffsetRow>): OffsetRow => ({ topic: 't', partition: 0, currentOffset: null, logEndOffset: null, consumerId: null, host: null, clientId: null, ...r });

test('lagOf: end minus committed, never negative, unknown without both', () => {
  assert.equal(lagOf(row({ currentOffset: 3n, logEndOffset: 10n })), 7n);
  assert.equal(lagOf(row({ currentOffset: 12n, logEndOffset: 10n })), 0n);
  assert.equal(lagOf(row({ currentOffset: null, logEndOffset: 10n })), null);
  assert.equal(lagOf(row({ currentOffset: 3n, logEndOffset: null })), null);
});

test('formatOffsets: kafka-consumer-groups columns, dashes for unknowns, the max lag', () => {
  const text = formatOffsets('g', [
    row({ partition: 0, currentOffset: 3n, logEndOffset: 10n, consumerId: 'c-1', host: '/127.0.0.1', clientId: 'app' }),
    row({ partition: 1, logEndOffset: 5n, consumerId: 'c-1', host: '/127.0.0.1', clientId: 'app' }),
    row({ partition: 2, currentOffset: 1n, logEndOffset: 20n }),
  ]);
  assert.equal(
    text,
    'GROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST        CLIENT-ID\n' +
      'g      t      0          3               10              7    c-1          /127.0.0.1  app\n' +
      'g      t      1          -               5               -    c-1          /127.0.0.1  app\n' +
      'g      t      2          1               20              19   -            -           -\n' +
      '\nMax lag: 19\n',
  );
  assert.match(formatOffsets('g', [row({})]), /Max lag: -\n$/);
  assert.equal(formatResetPlan('g', [{ topic: 't', partition: 0, offset: 5n }]), 'GROUP  TOPIC  PARTITION  NEW-OFFSET\ng      t      0          5\n');
});

test('parsePartitionStats: numbers or decimal strings, skips malformed entries', () => {
  const s = parsePartitionStats([
    { topic: 't', partition: 0, localSegments: 2, localBytes: '9007199254740993', remoteSegments: 1, remoteBytes: 10, highWatermark: 5 },
    { topic: 't' },
    'x',
    { topic: 't', partition: 1, localSegments: 1.5 },
  ]);
  assert.deepEqual(s, [
    { topic: 't', partition: 0, localSegments: 2n, localBytes: 9007199254740993n, remoteSegments: 1n, remoteBytes: 10n, highWatermark: 5n },
    { topic: 't', partition: 1 },
  ]);
  assert.throws(() => parsePartitionStats({}), /array/);
  assert.equal(defaultHttpUrl('10.1.2.3:9092'), 'http://10.1.2.3:9644');
  assert.equal(defaultHttpUrl('[::1]:9092,x:1'), 'http://[::1]:9644');
});

test('fetchPartitionStats: GET /v1/partitions?topic=T; null when unreachable or not JSON', async () => {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    if (req.url?.startsWith('/v1/partitions')) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify([{ topic: 'a', partition: 0, localSegments: 3, remoteSegments: 4, remoteBytes: 5, localBytes: 6 }]));
    } else {
      res.statusCode = 404;
      res.end('no');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const stats = await fetchPartitionStats(`http://127.0.0.1:${port}`, 'a');
    assert.deepEqual(stats?.get('a:0'), { topic: 'a', partition: 0, localSegments: 3n, remoteSegments: 4n, remoteBytes: 5n, localBytes: 6n });
    assert.deepEqual(seen, ['/v1/partitions?topic=a']);
    assert.equal((await fetchPartitionStats(`http://127.0.0.1:${port}`, undefined))?.size, 1);
    assert.deepEqual(seen, ['/v1/partitions?topic=a', '/v1/partitions']);
  } finally {
    await new Promise((r) => server.close(r));
  }
  assert.equal(await fetchPartitionStats(`http://127.0.0.1:${port}`, undefined), null);
});

test('FrameReader splits frames across and within chunks', () => {
  const f = new FrameReader();
  const frame = (s: string): Buffer => {
    const b = Buffer.alloc(4 + s.length);
    b.writeInt32BE(s.length);
    b.write(s, 4);
    return b;
  };
  const all = Buffer.concat([frame('abc'), frame(''), frame('hello')]);
  assert.deepEqual(f.push(all.subarray(0, 2)), []);
  assert.deepEqual(f.push(all.subarray(2, 9)).map(String), ['abc']);
  assert.deepEqual(f.push(all.subarray(9, 11)).map(String), ['']);
  assert.deepEqual(f.push(all.subarray(11)).map(String), ['hello']);
});

test('pickVersion: highest common version within the wanted range', () => {
  assert.equal(pickVersion({ min: 0, max: 10 }, { min: 1, max: 8 }), 8);
  assert.equal(pickVersion({ min: 0, max: 6 }, { min: 1, max: 8 }), 6);
  assert.equal(pickVersion({ min: 0, max: 10 }, { min: 1, max: 7 }, { min: 8 }), null);
  assert.equal(pickVersion({ min: 0, max: 10 }, { min: 0, max: 10 }, { max: 4 }), 4);
  assert.equal(pickVersion({ min: 0, max: 10 }, undefined), null);
});

/** A fake broker: answers ApiVersions v3 with UNSUPPORTED_VERSION (in v0, like Kafka), v0 normally, and Metadata. */
async function fakeBroker(): Promise<{ port: number; requests: Array<[number, number]>; close(): Promise<void> }> {
  const requests: Array<[number, number]> = [];
  let ownPort = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    const frames = new FrameReader();
    sock.on('data', (chunk: Buffer) => {
      for (const payload of frames.push(chunk)) {
        const h = decodeRequestHeader(payload);
        requests.push([h.apiKey, h.apiVersion]);
        let out: Buffer[];
        if (h.apiKey === ApiKey.ApiVersions) {
          const apiKeys = [
            { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 2 },
            { apiKey: ApiKey.Metadata, minVersion: 0, maxVersion: 4 },
          ];
          const unsupported = h.apiVersion > 2;
          out = encodeResponseMessage(apis.ApiVersions, 0, h.correlationId, { errorCode: unsupported ? ErrorCode.UNSUPPORTED_VERSION : 0, apiKeys, throttleTimeMs: 0 });
        } else {
          decodeRequestBody(h, payload);
          const md: MetadataResponse = {
            errorCode: 0, throttleTimeMs: 0, brokers: [{ nodeId: 7, host: '127.0.0.1', port: ownPort, rack: null }], clusterId: 'c', controllerId: 7,
            topics: ['zeta', '__consumer_offsets', 'alpha'].map((name) => ({
              errorCode: 0, name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA', isInternal: name.startsWith('__'), partitions: [], topicAuthorizedOperations: 0,
            })),
            clusterAuthorizedOperations: 0,
          };
          out = encodeResponseMessage(apis.Metadata, h.apiVersion, h.correlationId, md);
        }
        for (const c of out) sock.write(c);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  ownPort = (server.address() as net.AddressInfo).port;
  return {
    port: ownPort,
    requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

test('BrokerConnection falls back to ApiVersions v0 and uses the highest common version', async () => {
  const b = await fakeBroker();
  try {
    const conn = await BrokerConnection.connect('127.0.0.1', b.port);
    assert.deepEqual(conn.supported(ApiKey.Metadata), { min: 0, max: 4 });
    assert.equal(conn.versionFor(apis.Metadata), 4);
    const { version } = await conn.send(apis.Metadata, () => ({ topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
    assert.equal(version, 4);
    await assert.rejects(conn.send(apis.ListGroups, () => ({ statesFilter: [], typesFilter: [] })), /does not support it for ListGroups/);
    conn.close();
    assert.deepEqual(b.requests, [[ApiKey.ApiVersions, 3], [ApiKey.ApiVersions, 0], [ApiKey.Metadata, 4]]);
  } finally {
    await b.close();
  }
});

test('topics --list against the fake broker: sorted names, --exclude-internal', async () => {
  const b = await fakeBroker();
  try {
    const io = captureIo();
    assert.equal(await runTopics(['--bootstrap-server', `127.0.0.1:${b.port}`, '--list'], io), 0);
    assert.equal(io.stdout(), '__consumer_offsets\nalpha\nzeta\n');
    const io2 = captureIo();
    assert.equal(await runTopics(['--bootstrap-server', `127.0.0.1:${b.port}`, '--list', '--exclude-internal'], io2), 0);
    assert.equal(io2.stdout(), 'alpha\nzeta\n');
    const io3 = captureIo();
    assert.equal(await runGroups(['--bootstrap-server', `127.0.0.1:${b.port}`, '--list'], io3), 1);
    assert.match(io3.stderr(), /does not support it for ListGroups/);
  } finally {
    await b.close();
  }
});

test('exit codes: 2 with usage on bad arguments, 1 with a message when the broker is unreachable', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const usage = captureIo();
  assert.equal(await runTopics(['--describe'], usage), 2);
  assert.match(usage.stderr(), /--bootstrap-server is required[\s\S]*usage: sediment topics/);
  const down = captureIo();
  assert.equal(await runTopics(['--bootstrap-server', `127.0.0.1:${port}`, '--list'], down), 1);
  assert.match(down.stderr(), new RegExp(`cannot connect to 127.0.0.1:${port}: connect ECONNREFUSED`));
  const g = captureIo();
  assert.equal(await runGroups(['--bootstrap-server', `127.0.0.1:${port}`, '--describe', '--group', 'g'], g), 1);
  assert.match(g.stderr(), /ECONNREFUSED/);
  const help = captureIo();
  assert.equal(await runGroups(['--help'], help), 0);
  assert.match(help.stdout(), /--reset-offsets/);
  const bad = captureIo();
  assert.equal(await runTopics(['--bootstrap-server', 'nohostport', '--list'], bad), 1);
  assert.match(bad.stderr(), /invalid broker address 'nohostport'/);
});

test('formatTopicReport: a replicated partition shows its leader epoch, replicas, ISR and offline replicas', () => {
  const text = formatTopicReport({
    name: 'r', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', replicationFactor: 3, configs: [],
    partitions: [
      partition({ partition: 0, leader: 2, leaderEpoch: 7, replicas: [3, 2, 1], isr: [2, 1], offlineReplicas: [3] }),
      partition({ partition: 1, leader: -1, leaderEpoch: 8, replicas: [3], isr: [3], offlineReplicas: [3] }),
    ],
  });
  const rows = text.split('\n').slice(1, 3).map((l) => l.split('\t').slice(2, 8));
  assert.deepEqual(rows, [
    ['Partition: 0', 'Leader: 2', 'LeaderEpoch: 7', 'Replicas: 3,2,1', 'Isr: 2,1', 'Offline: 3'],
    ['Partition: 1', 'Leader: none', 'LeaderEpoch: 8', 'Replicas: 3', 'Isr: 3', 'Offline: 3'],
  ]);
});
