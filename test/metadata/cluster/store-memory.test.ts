// The store contract against the in-memory twin, on a manual clock: leases
// expire when the test moves time, not after real waiting.
import { describe } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import type { ClusterMetadataStore } from '../../../metadata/cluster/store.js';
import { storeContract, type StoreHarness } from './store.contract.js';

const STEP_MS = 50;

async function memoryHarness(): Promise<StoreHarness> {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const server = new MemoryMetadataServer(clock, scheduler);
  const twin = (s: ClusterMetadataStore): MemoryClusterMetadataStore => {
    if (!(s instanceof MemoryClusterMetadataStore)) throw new Error('not a twin client');
    return s;
  };
  const clients: MemoryClusterMetadataStore[] = [];
  return {
    async client() {
      const c = new MemoryClusterMetadataStore(server);
      clients.push(c);
      return c;
    },
    cut: (s) => twin(s).setReachable(false),
    heal: (s) => twin(s).setReachable(true),
    async compact() {
      server.compact();
    },
    async writeRaw(key, value) {
      server.commit([{ type: 'put', key, value }]);
    },
    async readRaw(key) {
      return server.get(key)?.value;
    },
    async within<T>(p: Promise<T>, maxMs: number, what: string): Promise<T> {
      let settled = false;
      const tracked = p.finally(() => {
        settled = true;
      });
      tracked.catch(() => undefined);
      // Let pending promise work run, then move simulated time one step at a time.
      for (let waited = 0; ; waited += STEP_MS) {
        for (let i = 0; i < 5 && !settled; i++) await new Promise((r) => setImmediate(r));
        if (settled) return tracked;
        if (waited >= maxMs) throw new Error(`${what}: did not happen within ${maxMs} ms of simulated time`);
        clock.advance(STEP_MS);
      }
    },
    session: { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 },
    scheduler,
    async close() {
      for (const c of clients) await c.close();
    },
  };
}

describe('ClusterMetadataStore contract: in-memory twin', () => {
  storeContract(memoryHarness);
});
