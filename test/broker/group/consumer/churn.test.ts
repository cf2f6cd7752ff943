// Seeded churn: members join, leave, are killed, hold revocations and
// heartbeat in random order. At every step no partition has two live owners
// (the clients' view) and the coordinator never records two holders; at the
// end the group settles with every partition owned exactly once.
// SEDIMENT_SEED=<n> replays a run; the seed is printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, SimulatedMember, assertOneOwner, startConsumerHarness } from './consumer-harness.js';

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const baseSeed = process.env.SEDIMENT_SEED === undefined ? Date.now() % 1_000_000 : Number(process.env.SEDIMENT_SEED);

for (const [runIndex, assignor] of [[0, 'uniform'], [1, 'range'], [2, 'uniform']] as const) {
  test(`churn keeps one owner per partition (${assignor}, run ${runIndex})`, async () => {
    const seed = baseSeed + runIndex;
    console.log(`churn seed ${seed} (SEDIMENT_SEED=${seed} to replay)`);
    const rnd = mulberry32(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const h = await startConsumerHarness({ config: { sessionTimeoutMs: 45_000 } });
    h.topics.add('t', 12);
    h.topics.add('u', 5);
    const live: SimulatedMember[] = [];
    let next = 0;
    const join = (): void => {
      const subs = rnd() < 0.3 ? ['t'] : ['t', 'u'];
      const instance = rnd() < 0.3 ? { instanceId: `inst-${next}` } : {};
      live.push(new SimulatedMember(h, `m${next++}`, { subscribedTopicNames: subs, serverAssignor: assignor, rebalanceTimeoutMs: 20_000, ...instance }));
    };
    for (let i = 0; i < 3; i++) join();
    for (let step = 0; step < 400; step++) {
      const r = rnd();
      if (r < 0.05 && live.length < 8) join();
      else if (r < 0.08 && live.length > 1) {
        const m = pick(live);
        await m.leave();
        live.splice(live.indexOf(m), 1);
      } else if (r < 0.1 && live.length > 1) {
        // Killed: it stops, and its partitions come back after its session timeout.
        live.splice(live.indexOf(pick(live)), 1);
      } else if (r < 0.15) {
        const m = pick(live);
        m.holding = !m.holding;
      } else if (r < 0.2) {
        await h.advance(1_000);
      } else {
        const m = pick(live);
        const res = await m.heartbeat();
        assert.ok(
          [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH].includes(res.errorCode as 0),
          `step ${step}: ${m.memberId} got ${res.errorCode} ${res.errorMessage ?? ''}`,
        );
      }
      // A member that does not revoke within its rebalance timeout is fenced and its
      // partitions move on (KIP-848); until its next heartbeat it still believes it owns
      // them (the client's lost-partitions case, its commits fenced by member epoch).
      // Only such a member may be missing from the group; the others own each partition once.
      const inGroup = new Set(h.coordinator.consumerGroupDescribe(['g'])[0]?.members.map((x) => x.memberId) ?? []);
      const fencedUnaware = live.filter((m) => m.epoch > 0 && !inGroup.has(m.memberId));
      for (const m of fencedUnaware) assert.ok(m.revoking, `step ${step}: ${m.memberId} left the group while not holding a revocation (seed ${seed})`);
      assertOneOwner(live.filter((m) => !fencedUnaware.includes(m)), `at step ${step} (seed ${seed})`);
      const group = h.coordinator.consumer.groups.get('g');
      assert.deepEqual(group?.doubleOwned() ?? [], [], `coordinator at step ${step} (seed ${seed})`);
    }
    // Settle: everyone releases what it holds and heartbeats until stable;
    // the killed members' sessions run out meanwhile.
    for (const m of live) m.holding = false;
    for (let round = 0; round < 60; round++) {
      for (const m of live) await m.heartbeat();
      assertOneOwner(live, `settling (seed ${seed})`);
      await h.advance(1_000);
    }
    for (const m of live) await m.heartbeat();
    const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
    assert.equal(d.groupState, 'Stable', `seed ${seed}`);
    assert.equal(d.members.length, live.length);
    const owned = live.reduce((n, m) => n + m.ownedCount(), 0);
    const subscribedU = live.some((m) => m.ownedList().length >= 0 && d.members.find((x) => x.memberId === m.memberId)?.subscribedTopicNames.includes('u'));
    assert.equal(owned, 12 + (subscribedU ? 5 : 0), `seed ${seed}`);
  });
}
