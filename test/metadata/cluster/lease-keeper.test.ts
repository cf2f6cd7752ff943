import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { LeaseKeeper } from '../../../metadata/cluster/lease-keeper.js';

/** Lets the keepalive promises settle between clock steps. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

function setup(answer: () => Promise<number>) {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const sent: number[] = [];
  let revoked = 0;
  const keeper = new LeaseKeeper(1, 10n, {
    clock,
    scheduler,
    ttlMs: 9000,
    heartbeatIntervalMs: 2000,
    grantSentAt: 0,
    keepAlive: () => {
      sent.push(clock.now());
      return answer();
    },
    revoke: async () => {
      revoked++;
    },
  });
  const reasons: Array<[number, string]> = [];
  keeper.onLost((r) => reasons.push([clock.now(), r]));
  const step = async (toMs: number): Promise<void> => {
    while (clock.now() < toMs) {
      clock.advance(Math.min(500, toMs - clock.now()));
      await settle();
    }
  };
  return { clock, keeper, sent, reasons, step, revoked: () => revoked };
}

describe('LeaseKeeper', () => {
  it('renews every heartbeat interval and stays live while answered', async () => {
    const t = setup(async () => 9000);
    await t.step(30_000);
    assert.deepEqual(t.sent.slice(0, 4), [2000, 4000, 6000, 8000]);
    assert.equal(t.keeper.state, 'live');
    assert.deepEqual(t.reasons, []);
  });

  it('is lost exactly one TTL after the send time of the last acknowledged keepalive', async () => {
    let up = true;
    const t = setup(() => (up ? Promise.resolve(9000) : Promise.reject(new Error('connection refused'))));
    await t.step(6000); // acks for the keepalives sent at 2000, 4000, 6000
    up = false;
    await t.step(20_000);
    assert.equal(t.keeper.state, 'lost');
    assert.equal(t.reasons.length, 1);
    assert.equal(t.reasons[0]![0], 6000 + 9000);
    assert.match(t.reasons[0]![1], /no keepalive acknowledged within 9000 ms \(last error: connection refused\)/);
    const count = t.sent.length;
    await t.step(40_000);
    assert.equal(t.sent.length, count, 'no keepalives after the loss');
  });

  it('an unanswered keepalive is not doubled, and the deadline still decides', async () => {
    const t = setup(() => new Promise<number>(() => undefined));
    await t.step(12_000);
    assert.deepEqual(t.sent, [2000]);
    assert.equal(t.reasons[0]?.[0], 9000, 'lost at grant + TTL');
  });

  it('a lease the store reports gone is lost at once', async () => {
    const t = setup(async () => 0);
    await t.step(2000);
    assert.equal(t.keeper.state, 'lost');
    assert.match(t.reasons[0]![1], /the store reports the lease expired/);
    const late: string[] = [];
    t.keeper.onLost((r) => late.push(r));
    assert.equal(late.length, 1, 'a listener added after the loss hears it at once');
  });

  it('close revokes and is not a loss', async () => {
    const t = setup(async () => 9000);
    await t.step(3000);
    await t.keeper.close();
    assert.equal(t.keeper.state, 'closed');
    assert.equal(t.revoked(), 1);
    await t.step(30_000);
    assert.deepEqual(t.reasons, []);
  });

  it('a lost session can still be closed: its lease is revoked once, and it stays lost', async () => {
    const t = setup(async () => 0);
    await t.step(2000);
    assert.equal(t.keeper.state, 'lost');
    await t.keeper.close();
    await t.keeper.close();
    assert.equal(t.revoked(), 1);
    assert.equal(t.keeper.state, 'lost');
  });

  it("a lost session's revoke that did not reach the store is tried again by the next close; a done one is not", async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    let calls = 0;
    let storeUp = false;
    const keeper = new LeaseKeeper(1, 10n, {
      clock,
      scheduler,
      ttlMs: 9000,
      heartbeatIntervalMs: 2000,
      grantSentAt: 0,
      keepAlive: async () => 0,
      revoke: async () => {
        calls++;
        if (!storeUp) throw new Error('etcd unavailable');
      },
    });
    clock.advance(2000);
    await settle();
    assert.equal(keeper.state, 'lost');
    await assert.rejects(keeper.close(), /etcd unavailable/);
    storeUp = true;
    await keeper.close();
    await keeper.close();
    assert.equal(calls, 2, 'one failed revoke, one that took, none after');
    assert.equal(keeper.state, 'lost');
  });

  it('a lease past its lifetime reads as lost even before its timer has fired (a resumed process)', () => {
    // The keeper's clock runs on, its scheduler's clock does not: the deadline timer is overdue, as after SIGCONT.
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(new ManualClock(0));
    const keeper = new LeaseKeeper(1, 10n, { clock, scheduler, ttlMs: 9000, heartbeatIntervalMs: 2000, grantSentAt: 0, keepAlive: async () => 9000, revoke: async () => undefined });
    const reasons: string[] = [];
    keeper.onLost((r) => reasons.push(r));
    clock.advance(8999);
    assert.equal(keeper.state, 'live');
    clock.advance(1);
    assert.equal(keeper.state, 'lost');
    assert.equal(reasons.length, 1, 'its listeners hear it then, once');
    assert.match(reasons[0]!, /no keepalive acknowledged within 9000 ms/);
  });
});
