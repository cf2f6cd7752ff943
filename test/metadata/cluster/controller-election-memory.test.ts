// The controller-election contract against the in-memory twin, on a manual clock.
import { describe } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import { electionContract, type ElectionHarness } from './controller-election.contract.js';

const STEP_MS = 50;

async function memoryHarness(): Promise<ElectionHarness> {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const server = new MemoryMetadataServer(clock, scheduler);
  const clients: MemoryClusterMetadataStore[] = [];
  return {
    async client() {
      const c = new MemoryClusterMetadataStore(server);
      await c.initialize({ proposedClusterId: 'election-twin' });
      clients.push(c);
      return c;
    },
    async within<T>(p: Promise<T>, maxMs: number, what: string): Promise<T> {
      let settled = false;
      const tracked = p.finally(() => {
        settled = true;
      });
      tracked.catch(() => undefined);
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

describe('controller election contract: in-memory twin', () => {
  electionContract(memoryHarness);
});
