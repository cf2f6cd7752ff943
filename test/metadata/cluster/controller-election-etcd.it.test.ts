// The controller-election contract against a real etcd (test/support/etcd.ts),
// each test under its own key prefix, with 2 s sessions; waits are for events, bounded.
import { after, before, describe } from 'node:test';
import { systemScheduler } from '../../../broker/common/scheduler.js';
import { EtcdClusterMetadataStore } from '../../../metadata/cluster/etcd-store.js';
import { startEtcd, type EtcdServer } from '../../support/etcd.js';
import { electionContract, type ElectionHarness } from './controller-election.contract.js';

let etcd: EtcdServer;
let prefixes = 0;

async function etcdHarness(): Promise<ElectionHarness> {
  const prefix = `/election-${process.pid}-${++prefixes}`;
  const clients: EtcdClusterMetadataStore[] = [];
  return {
    async client() {
      const store = new EtcdClusterMetadataStore({ connect: { endpoints: [etcd.endpoint], prefix }, requestTimeoutMs: 5000 });
      clients.push(store);
      await store.initialize({ proposedClusterId: 'election-etcd' });
      return store;
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
      for (const s of clients) await s.close();
    },
  };
}

describe('controller election contract: real etcd', () => {
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    await etcd?.stop();
  });
  electionContract(etcdHarness);
});
