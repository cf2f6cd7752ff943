// The store contract against a real etcd (test/support/etcd.ts), each test under
// its own key prefix. Each client reaches etcd through its own cut proxy, so one
// broker can be cut off while the others keep talking to etcd. Leases are short
// (2 s sessions) and every wait is for an event, bounded.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { systemScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { BrokerConfig } from '../../../broker/config.js';
import { etcdSettingsFrom } from '../../../metadata/cluster/etcd-config.js';
import { EtcdClusterMetadataStore } from '../../../metadata/cluster/etcd-store.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import type { ClusterMetadataStore } from '../../../metadata/cluster/store.js';
import { startCutProxy, type CutProxy } from '../../support/cut-proxy.js';
import { startEtcd, type EtcdServer } from '../../support/etcd.js';
import { storeContract, type StoreHarness } from './store.contract.js';

let etcd: EtcdServer;
let prefixes = 0;

async function etcdHarness(): Promise<StoreHarness> {
  const prefix = `/contract-${process.pid}-${++prefixes}`;
  const proxies = new Map<ClusterMetadataStore, CutProxy>();
  const direct = new EtcdClusterMetadataStore({ connect: { endpoints: [etcd.endpoint], prefix } });
  const proxyOf = (s: ClusterMetadataStore): CutProxy => {
    const p = proxies.get(s);
    if (p === undefined) throw new Error('not a client of this harness');
    return p;
  };
  return {
    async client() {
      const proxy = await startCutProxy({ host: etcd.host, port: etcd.port });
      const store = new EtcdClusterMetadataStore({ connect: { endpoints: [`${proxy.host}:${proxy.port}`], prefix }, requestTimeoutMs: 1000 });
      proxies.set(store, proxy);
      return store;
    },
    cut: (s) => proxyOf(s).cut(),
    heal: (s) => proxyOf(s).heal(),
    async compact() {
      const rev = BigInt(JSON.parse(etcd.etcdctl(['endpoint', 'status', '-w', 'json']))[0].Status.header.revision);
      await direct.compact(rev);
    },
    async writeRaw(key, value) {
      etcd.etcdctl(['put', `${prefix}/${key}`, value]);
    },
    async readRaw(key) {
      const out = etcd.etcdctl(['get', `${prefix}/${key}`, '--print-value-only']);
      return out === '' ? undefined : out.replace(/\n$/, '');
    },
    async within<T>(p: Promise<T>, maxMs: number, what: string): Promise<T> {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: did not happen within ${maxMs} ms`)), maxMs);
      });
      try {
        return await Promise.race([p, bound]);
      } finally {
        clearTimeout(timer);
      }
    },
    session: { sessionTimeoutMs: 2000, heartbeatIntervalMs: 500 },
    scheduler: systemScheduler,
    async close() {
      for (const [s, p] of proxies) {
        p.heal();
        await s.close();
        await p.close();
      }
      await direct.close();
    },
  };
}

describe('ClusterMetadataStore contract: real etcd', () => {
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    await etcd?.stop();
  });

  storeContract(etcdHarness);

  it('etcd killed and restarted: the watch resumes without a reload and a session within its timeout stays live', async () => {
    const prefix = `/restart-${process.pid}`;
    const connect = { endpoints: [etcd.endpoint], prefix };
    const a = new EtcdClusterMetadataStore({ connect, requestTimeoutMs: 1000 });
    const b = new EtcdClusterMetadataStore({ connect, requestTimeoutMs: 1000 });
    const follower = new MetadataImageFollower(b, { scheduler: systemScheduler });
    try {
      await a.initialize({ proposedClusterId: 'c' });
      await follower.start();
      const session = await a.registerBroker({ nodeId: 1, incarnationId: 'i', rack: null, endpoints: [] }, { sessionTimeoutMs: 9000, heartbeatIntervalMs: 500 });
      await follower.waitForRevision(session.brokerEpoch);
      await etcd.kill('SIGKILL');
      await etcd.restart();
      // Calls fail (retriably) until the client has reconnected; bounded by the session timeout.
      const deadline = Date.now() + 9000;
      let rev: bigint | undefined;
      while (rev === undefined) {
        try {
          rev = await a.createTopic({ topicId: 'tid', name: 'after-restart', partitionCount: 1, configs: {} }, [{ replicas: [1], leader: 1, leaderEpoch: 0, isr: [1] }]);
        } catch (e) {
          assert.ok(e instanceof KafkaError && e.retriable, String(e));
          if (Date.now() > deadline) throw e;
          await new Promise((r) => setTimeout(r, 100)); // retry backoff, as a controller would
        }
      }
      await follower.waitForRevision(rev);
      assert.equal(follower.image.topic('after-restart')?.topicId, 'tid');
      assert.equal(follower.reloadCount, 0);
      assert.equal(session.state, 'live');
      assert.equal(follower.image.broker(1)?.incarnationId, 'i');
    } finally {
      await follower.close();
      await a.close();
      await b.close();
    }
  });

  it('keys are readable with etcdctl get --prefix', async () => {
    const prefix = `/readable-${process.pid}`;
    const store = new EtcdClusterMetadataStore({ connect: { endpoints: [etcd.endpoint], prefix } });
    try {
      await store.initialize({ proposedClusterId: 'readable-cluster' });
      await store.createTopic({ topicId: 'tid', name: 'orders', partitionCount: 1, configs: {} }, [{ replicas: [1], leader: 1, leaderEpoch: 0, isr: [1] }]);
      const session = await store.registerBroker(
        { nodeId: 1, incarnationId: 'inc', rack: null, endpoints: [{ name: 'PLAINTEXT', host: 'localhost', port: 9092, securityProtocol: 'PLAINTEXT' }] },
        { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 },
      );
      const lines = etcd.etcdctl(['get', '--prefix', `${prefix}/`]).trim().split('\n');
      assert.deepEqual(lines, [
        `${prefix}/brokers/1`,
        '{"nodeId":1,"incarnationId":"inc","rack":null,"endpoints":[{"name":"PLAINTEXT","host":"localhost","port":9092,"securityProtocol":"PLAINTEXT"}]}',
        `${prefix}/cluster/id`,
        'readable-cluster',
        `${prefix}/layout`,
        '{"version":1}',
        `${prefix}/partitions/tid/0`,
        '{"replicas":[1],"leader":1,"leaderEpoch":0,"isr":[1],"partitionEpoch":0}',
        `${prefix}/topics/orders`,
        '{"topicId":"tid","name":"orders","partitionCount":1,"configs":{}}',
      ]);
      await session.close();
      assert.equal(etcd.etcdctl(['get', `${prefix}/brokers/1`]), '', 'closing the session revokes the lease and the registration');
    } finally {
      await store.close();
    }
  });
});

describe('etcd authentication (etcd.username / etcd.password)', () => {
  let secured: EtcdServer;
  before(async () => {
    secured = await startEtcd();
    secured.etcdctl(['user', 'add', 'root:root-secret']);
    secured.etcdctl(['user', 'add', 'sediment:broker-secret']);
    secured.etcdctl(['role', 'add', 'sediment-role']);
    secured.etcdctl(['role', 'grant-permission', 'sediment-role', '--prefix=true', 'readwrite', '/sediment/']);
    secured.etcdctl(['user', 'grant-role', 'sediment', 'sediment-role']);
    secured.etcdctl(['auth', 'enable']);
  });
  after(async () => {
    await secured?.stop();
  });

  it('a user with the prefix granted works; a wrong password or a prefix outside the grant fails at once, not retriably', async () => {
    const good = new EtcdClusterMetadataStore({ connect: { endpoints: [secured.endpoint], prefix: '/sediment' }, auth: { username: 'sediment', password: 'broker-secret' } });
    const badPassword = new EtcdClusterMetadataStore({ connect: { endpoints: [secured.endpoint], prefix: '/sediment' }, auth: { username: 'sediment', password: 'nope' } });
    const outside = new EtcdClusterMetadataStore({ connect: { endpoints: [secured.endpoint], prefix: '/other' }, auth: { username: 'sediment', password: 'broker-secret' } });
    try {
      assert.equal(await good.initialize({ proposedClusterId: 'secured' }), 'secured');
      const session = await good.registerBroker({ nodeId: 1, incarnationId: 'i', rack: null, endpoints: [] }, { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 });
      assert.equal(session.state, 'live');
      await session.close();
      await assert.rejects(badPassword.initialize({ proposedClusterId: 'x' }), (e: unknown) => {
        assert.ok(e instanceof KafkaError, String(e));
        assert.equal(e.code, ErrorCode.SASL_AUTHENTICATION_FAILED, e.message);
        assert.equal(e.retriable, false);
        return true;
      });
      await assert.rejects(outside.initialize({ proposedClusterId: 'x' }), (e: unknown) => {
        assert.ok(e instanceof KafkaError, String(e));
        assert.equal(e.code, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, e.message);
        return true;
      });
    } finally {
      await good.close();
      await badPassword.close();
      await outside.close();
    }
  });
});

describe('etcd over TLS (etcd.ssl.*)', () => {
  let secured: EtcdServer;
  before(async () => {
    secured = await startEtcd({ tls: true });
  });
  after(async () => {
    await secured?.stop();
  });

  it('the broker keys (truststore, keystore) reach an etcd that requires client certificates; without the keystore it is refused', async () => {
    const files = secured.tlsFiles;
    assert.ok(files !== undefined);
    const props = {
      'etcd.connect': `${secured.endpoint}/tls`,
      'etcd.ssl.client.enable': 'true',
      'etcd.ssl.truststore.location': files.ca,
      'etcd.ssl.keystore.location': files.clientKeystore,
      'etcd.request.timeout.ms': '2000',
    };
    const settings = etcdSettingsFrom(BrokerConfig.fromProperties(props, { cwd: '/tmp' }));
    assert.ok(settings !== null);
    const store = new EtcdClusterMetadataStore(settings.store);
    try {
      assert.equal(await store.initialize({ proposedClusterId: 'over-tls' }), 'over-tls');
      const session = await store.registerBroker({ nodeId: 1, incarnationId: 'i', rack: null, endpoints: [] }, settings.session);
      assert.equal(session.state, 'live');
      await session.close();
      assert.match(secured.etcdctl(['get', '/tls/cluster/id', '--print-value-only']), /over-tls/);
      const refused = new EtcdClusterMetadataStore({ connect: settings.store.connect, requestTimeoutMs: 2000, tls: { rootCertificate: readFileSync(files.ca) } });
      try {
        await assert.rejects(refused.initialize({ proposedClusterId: 'x' }), (e: unknown) => e instanceof KafkaError);
      } finally {
        await refused.close();
      }
    } finally {
      await store.close();
    }
  });
});
