// The store contract against a real etcd (test/support/etcd.ts), each test under
// its own key prefix. Each client reaches etcd through its own cut proxy, so one
// broker can be cut off while the others keep talking to etcd. Leases are short
// (2 s sessions) and every wait is for an event, bounded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemScheduler } from '../../../broker/scheduler.js';
import { EtcdClusterMetadataStore } from '../../../metadata/cluster/etcd-store.js';
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
