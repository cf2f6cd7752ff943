// Brokers with etcd.connect, as real `sediment start` processes against a real
// etcd: a broker registers itself under a lease; a second broker with the same
// node.id refuses to start, naming the id and the holder; another node id joins
// the same cluster id; SIGTERM deregisters at once, kill -9 lets the lease run
// out, after which the node id can start again; an unreachable etcd ends
// start-up with a non-zero exit after etcd.connection.timeout.ms.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { systemScheduler } from '../../broker/common/scheduler.js';
import { EtcdClusterMetadataStore } from '../../metadata/cluster/etcd-store.js';
import { MetadataImageFollower } from '../../metadata/cluster/image-follower.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { SedimentProcess, startSediment, tempDataDir } from '../support/sediment.js';

let etcd: EtcdServer;
const prefix = `/e2e-${process.pid}`;

function brokerOverrides(nodeId: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'node.id': String(nodeId),
    'etcd.connect': `${etcd.endpoint}${prefix}`,
    'broker.session.timeout.ms': '2000',
    'broker.heartbeat.interval.ms': '500',
    'remote.log.storage.system.enable': 'false',
    ...extra,
  };
}

function clusterIdIn(dataDir: string): string {
  return /^cluster\.id=(.+)$/m.exec(readFileSync(path.join(dataDir, 'meta.properties'), 'utf8'))?.[1] ?? '';
}

/** Starts a broker that must fail start-up; resolves with its exit and its output. */
async function failedStart(overrides: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = new SedimentProcess(tempDataDir(), true, { overrides, startTimeoutMs: 60_000 });
  try {
    await assert.rejects(p.start(), /exited \(\d+\) during start-up/);
    p.acceptFailedStart();
    return { code: p.exit?.code ?? null, output: p.logs.tail(200) };
  } finally {
    await p.close();
  }
}

describe('brokers registering in etcd', () => {
  let watcherStore: EtcdClusterMetadataStore;
  let follower: MetadataImageFollower;
  const checks = new Set<() => void>();
  /** Resolves when the followed image satisfies `predicate` (checked on every change). */
  const imageUntil = (predicate: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!predicate()) return;
        checks.delete(check);
        resolve();
      };
      checks.add(check);
      check();
    });

  before(async () => {
    etcd = await startEtcd();
    watcherStore = new EtcdClusterMetadataStore({ connect: { endpoints: [etcd.endpoint], prefix } });
  });
  after(async () => {
    await follower?.close();
    await watcherStore?.close();
    await etcd?.stop();
  });

  it('registers, refuses a live duplicate node.id naming the holder, joins another node id, deregisters on SIGTERM, re-registers at once after kill -9 once the old lease expires', async () => {
    const a = await startSediment({ overrides: brokerOverrides(1, { 'broker.rack': 'r1' }) });
    try {
      follower = new MetadataImageFollower(watcherStore, { scheduler: systemScheduler, onChange: () => [...checks].forEach((c) => c()) });
      await follower.start();
      const reg = follower.image.broker(1);
      assert.ok(reg !== undefined, 'broker 1 registered before it said it started');
      assert.deepEqual(reg.endpoints, [{ name: 'PLAINTEXT', host: '127.0.0.1', port: a.port, securityProtocol: 'PLAINTEXT' }]);
      assert.equal(reg.rack, 'r1');
      const clusterId = clusterIdIn(a.dataDir);
      assert.equal(follower.image.clusterId, clusterId, 'the store and meta.properties name one cluster');

      const dup = await failedStart(brokerOverrides(1));
      assert.equal(dup.code, 1);
      assert.match(dup.output, new RegExp(`node.id 1 is already registered by a live broker \\(incarnation ${reg.incarnationId}, PLAINTEXT://127.0.0.1:${a.port}, rack r1`));
      assert.equal(follower.image.broker(1)?.incarnationId, reg.incarnationId, 'the holder is untouched');

      const b = await startSediment({ overrides: brokerOverrides(2) });
      try {
        assert.equal(clusterIdIn(b.dataDir), clusterId);
        await imageUntil(() => follower.image.broker(2) !== undefined);
        assert.deepEqual(follower.image.brokers().map((x) => x.nodeId), [1, 2]);

        // SIGTERM: deregistered before the process exits (the lease is revoked, not left to expire).
        assert.deepEqual(await b.stop(), { code: 0, signal: null });
        const snap = await watcherStore.load();
        assert.deepEqual(snap.records.filter((r) => r.kind === 'broker').map((r) => (r.kind === 'broker' ? r.nodeId : -1)), [1]);
      } finally {
        await b.close();
      }

      // kill -9: the registration stays until the lease (2 s) runs out; node 1 started again at once
      // waits for it (logging why) instead of failing, then registers with a new broker epoch.
      const epoch = reg.brokerEpoch;
      await a.kill();
      assert.ok(follower.image.broker(1) !== undefined, 'still registered right after the kill');
      await a.start();
      const again = (await watcherStore.load()).records.find((r) => r.kind === 'broker' && r.nodeId === 1);
      assert.ok(again?.kind === 'broker' && again.broker !== null && again.broker.brokerEpoch > epoch);
    } finally {
      await a.close();
    }
  });

  it('a broker restarted within its old lease (kill -9, 30 s session) waits for the old registration to expire, logging why, then registers', async () => {
    // A session long enough that the restarted process is up before the old lease runs out.
    const overrides = brokerOverrides(7, { 'broker.session.timeout.ms': '30000', 'broker.heartbeat.interval.ms': '1000' });
    const c = await startSediment({ overrides });
    try {
      follower ??= new MetadataImageFollower(watcherStore, { scheduler: systemScheduler, onChange: () => [...checks].forEach((x) => x()) });
      if (follower.image.revision === 0n) await follower.start();
      await imageUntil(() => follower.image.broker(7) !== undefined);
      const old = follower.image.broker(7)!;
      await c.kill();
      const restartAt = Date.now();
      await c.start();
      const waited = c.logs.lines.find((l) => /node.id 7 is still registered: waiting up to 31000 ms/.test(String(l['msg'])));
      assert.ok(waited !== undefined, `no wait logged:\n${c.logs.tail()}`);
      await imageUntil(() => (follower.image.broker(7)?.brokerEpoch ?? 0n) > old.brokerEpoch);
      const took = Date.now() - restartAt;
      assert.notEqual(follower.image.broker(7)?.incarnationId, old.incarnationId);
      console.log(`# node 7 restarted within its old lease: registered ${took} ms after the restart began`);
    } finally {
      await c.close();
    }
  });

  it('an unreachable etcd is retried, naming the endpoints, and start-up exits non-zero after etcd.connection.timeout.ms', async () => {
    const started = Date.now();
    const r = await failedStart({ ...brokerOverrides(3), 'etcd.connect': '127.0.0.1:1/nowhere', 'etcd.connection.timeout.ms': '3000', 'etcd.request.timeout.ms': '500' });
    const took = Date.now() - started;
    assert.equal(r.code, 1);
    assert.match(r.output, /etcd 127\.0\.0\.1:1\/nowhere unreachable \(attempt 1/);
    assert.match(r.output, /unreachable for \d+ ms \(etcd.connection.timeout.ms=3000/);
    assert.ok(took < 30_000, `gave up in ${took} ms`);
  });
});
