// Lease-bound controller election, one contract for every ClusterMetadataStore:
// run against the in-memory twin (controller-election-memory.test.ts) and a
// real etcd (controller-election-etcd.it.test.ts).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import type { BrokerRegistration } from '../../../metadata/cluster/records.js';
import type { ClusterMetadataStore, SessionOptions } from '../../../metadata/cluster/store.js';
import type { Scheduler } from '../../../broker/common/scheduler.js';

export interface ElectionHarness {
  /** A new client (one broker's connection) of this harness's store, initialized. */
  client(): Promise<ClusterMetadataStore>;
  /** Resolves with `p` once it settles, letting (twin: simulated) time pass; fails after `maxMs`. */
  within<T>(p: Promise<T>, maxMs: number, what: string): Promise<T>;
  readonly session: SessionOptions;
  readonly scheduler: Scheduler;
  close(): Promise<void>;
}

let incarnation = 0;
function registration(nodeId: number): BrokerRegistration {
  return { nodeId, incarnationId: `ctl-${nodeId}-${++incarnation}`, rack: null, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9100 + nodeId, securityProtocol: 'PLAINTEXT' }] };
}

export function electionContract(make: () => Promise<ElectionHarness>): void {
  it('one of several concurrent campaigns wins; the others see it held; the image shows the controller', async () => {
    const h = await make();
    try {
      const stores = await Promise.all([1, 2, 3].map(() => h.client()));
      const sessions = await Promise.all(stores.map((s, i) => s.registerBroker(registration(i + 1), h.session)));
      const results = await Promise.all(stores.map((s, i) => s.campaignController(sessions[i]!)));
      const winners = results.filter((r) => r !== null);
      assert.equal(winners.length, 1, `winners: ${JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
      const won = winners[0]!;
      const winnerIndex = results.indexOf(won);
      assert.equal(won.nodeId, winnerIndex + 1);
      assert.equal(won.brokerEpoch, sessions[winnerIndex]!.brokerEpoch);
      // Campaigning again while holding it returns the same term.
      assert.deepEqual(await stores[winnerIndex]!.campaignController(sessions[winnerIndex]!), won);
      const follower = new MetadataImageFollower(stores[0]!, { scheduler: h.scheduler });
      await follower.start();
      assert.equal(follower.image.controllerId, won.nodeId);
      assert.equal(follower.image.controller?.controllerEpoch, won.controllerEpoch);
      await follower.close();
    } finally {
      await h.close();
    }
  });

  it('resigning hands the key to the next campaign, with a higher controller epoch; a non-holder resigning changes nothing', async () => {
    const h = await make();
    try {
      const [a, b] = await Promise.all([h.client(), h.client()]);
      const sa = await a!.registerBroker(registration(1), h.session);
      const sb = await b!.registerBroker(registration(2), h.session);
      const first = await a!.campaignController(sa);
      assert.equal(first?.nodeId, 1);
      await b!.resignController(sb);
      assert.equal(await b!.campaignController(sb), null, 'a non-holder resigning leaves the controller in place');
      await a!.resignController(sa);
      const second = await b!.campaignController(sb);
      assert.equal(second?.nodeId, 2);
      assert.ok(second!.controllerEpoch > first!.controllerEpoch, `${second!.controllerEpoch} > ${first!.controllerEpoch}`);
    } finally {
      await h.close();
    }
  });

  it("the key is bound to the controller's lease: when its session ends, the watchers see no controller and another broker wins", async () => {
    const h = await make();
    try {
      const [a, b] = await Promise.all([h.client(), h.client()]);
      const sa = await a!.registerBroker(registration(1), h.session);
      const sb = await b!.registerBroker(registration(2), h.session);
      assert.equal((await a!.campaignController(sa))?.nodeId, 1);
      let noController: () => void = () => undefined;
      const gone = new Promise<void>((resolve) => (noController = resolve));
      const follower = new MetadataImageFollower(b!, {
        scheduler: h.scheduler,
        onChange: () => {
          if (follower.image.controllerId === -1) noController();
        },
      });
      await follower.start();
      assert.equal(follower.image.controllerId, 1);
      await sa.close();
      // Revoked, so at once; the bound allows for a loaded machine's watch delivery.
      await h.within(gone, h.session.sessionTimeoutMs + 3000, 'controller key removed with the lease');
      assert.equal((await b!.campaignController(sb))?.nodeId, 2);
      await follower.close();
    } finally {
      await h.close();
    }
  });

  it('a session that is no longer live cannot campaign (NOT_CONTROLLER)', async () => {
    const h = await make();
    try {
      const a = await h.client();
      const sa = await a.registerBroker(registration(1), h.session);
      await sa.close();
      await assert.rejects(a.campaignController(sa), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_CONTROLLER);
    } finally {
      await h.close();
    }
  });
}
