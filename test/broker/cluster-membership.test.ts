// ClusterMembership over the in-memory metadata twin with a manual clock: a
// broker whose session is lost registers again (a new broker epoch, the same
// incarnation id), with a backoff while the store is unreachable or another
// process holds its node id, and tells its listeners of each loss and each new
// session only once its image has caught up with the registration; stop()
// ends a re-registration in progress.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { ClusterMembership } from '../../broker/cluster-membership.js';
import { ManualClock } from '../../broker/common/clock.js';
import { ManualScheduler } from '../../broker/common/scheduler.js';
import { BrokerConfig } from '../../broker/config.js';
import { MetadataImageFollower } from '../../metadata/cluster/image-follower.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../metadata/cluster/memory-store.js';
import type { BrokerSession } from '../../metadata/cluster/store.js';

const SESSION_TIMEOUT_MS = 4000;
const HEARTBEAT_MS = 1000;
const LISTENER = { name: 'PLAINTEXT', host: '127.0.0.1', port: 9001, securityProtocol: 'PLAINTEXT' } as const;

interface Line {
  readonly level: number;
  readonly msg: string;
  readonly [k: string]: unknown;
}

class Rig {
  readonly clock = new ManualClock(1_000_000);
  readonly scheduler = new ManualScheduler(this.clock);
  readonly server = new MemoryMetadataServer(this.clock, this.scheduler);
  readonly store = new MemoryClusterMetadataStore(this.server);
  readonly lines: Line[] = [];
  readonly lost: string[] = [];
  readonly started: BrokerSession[] = [];
  /** Another broker's view of the store: what the rest of the cluster sees. */
  readonly observer = new MetadataImageFollower(new MemoryClusterMetadataStore(this.server), { scheduler: this.scheduler });
  membership!: ClusterMembership;

  constructor(private readonly dir: string) {}

  async start(): Promise<void> {
    const sink = new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') this.lines.push(JSON.parse(l) as Line);
        cb();
      },
    });
    const config = BrokerConfig.fromProperties({
      'node.id': '1',
      'log.dirs': this.dir,
      'etcd.connect': '127.0.0.1:2379/membership-test',
      'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS),
      'broker.heartbeat.interval.ms': String(HEARTBEAT_MS),
    });
    const m = await ClusterMembership.connect(config, { log: pino({ level: 'info' }, sink), clock: this.clock, scheduler: this.scheduler, store: this.store });
    assert.ok(m !== null);
    this.membership = m;
    m.onSessionLost((reason) => this.lost.push(reason));
    m.onSessionStarted((s) => this.started.push(s));
    await this.observer.start();
    await m.register(1, null, [LISTENER]);
  }

  /** Moves simulated time in steps, letting the store's promises and watches settle between them. */
  async advance(ms: number, until: () => boolean = () => false, stepMs = 100): Promise<void> {
    const end = this.clock.now() + ms;
    while (this.clock.now() < end && !until()) {
      this.clock.advance(Math.min(stepMs, end - this.clock.now()));
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    }
  }

  logged(msg: string): Line[] {
    return this.lines.filter((l) => l.msg === msg);
  }

  async stop(): Promise<void> {
    await this.membership.stop();
    await this.observer.close();
  }
}

describe('ClusterMembership re-registration (in-memory metadata twin, manual clock)', () => {
  let dir: string;
  let rig: Rig;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-membership-'));
    rig = new Rig(dir);
    await rig.start();
  });
  afterEach(async () => {
    await rig.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the first registration is a session start, with the process incarnation id', () => {
    assert.equal(rig.started.length, 1);
    const first = rig.started[0]!;
    assert.equal(first.state, 'live');
    assert.equal(rig.observer.image.broker(1)?.brokerEpoch, first.brokerEpoch);
    assert.equal(rig.observer.image.broker(1)?.incarnationId, rig.membership.incarnationId);
  });

  it('a session lost while etcd is unreachable: listeners told at once, retried with backoff, registered again under a higher broker epoch once reachable', async () => {
    const first = rig.started[0]!;
    rig.store.setReachable(false);
    await rig.advance(SESSION_TIMEOUT_MS + 2000, () => rig.lost.length > 0 && rig.observer.image.broker(1) === undefined);
    assert.equal(rig.lost.length, 1);
    assert.equal(first.state, 'lost');
    assert.equal(rig.observer.image.broker(1), undefined, 'the rest of the cluster saw the registration expire');
    // Unreachable for a while longer: attempts back off (100 ms doubling), each logged, none succeeds.
    await rig.advance(3000);
    const retries = rig.logged('cannot register again yet; retrying');
    assert.ok(retries.length >= 3 && retries.length <= 6, `backoff: ${retries.length} attempts in 3 s`);
    const waits = retries.map((l) => l['retryInMs'] as number);
    assert.deepEqual(waits.slice(0, 3), [100, 200, 400]);
    assert.equal(rig.started.length, 1);
    rig.store.setReachable(true);
    await rig.advance(SESSION_TIMEOUT_MS, () => rig.started.length === 2);
    assert.equal(rig.started.length, 2, 'registered again within the maximum backoff (broker.session.timeout.ms)');
    const second = rig.started[1]!;
    assert.equal(second.state, 'live');
    assert.ok(second.brokerEpoch > first.brokerEpoch, `broker epoch ${second.brokerEpoch} > ${first.brokerEpoch}`);
    assert.equal(rig.membership.session, second);
    assert.ok(rig.membership.image.revision >= second.brokerEpoch, 'the session starts only once the image has reached the registration');
    await rig.advance(200, () => rig.observer.image.broker(1) !== undefined);
    assert.equal(rig.observer.image.broker(1)?.brokerEpoch, second.brokerEpoch);
    assert.equal(rig.observer.image.broker(1)?.incarnationId, rig.membership.incarnationId, 'one incarnation id per process');
    const again = rig.logged('registered in the cluster again');
    assert.equal(again.length, 1);
    assert.equal(again[0]!['previousBrokerEpoch'], String(first.brokerEpoch));
    // The new session is kept alive as the first was, and a second loss is handled the same way.
    await rig.advance(3 * SESSION_TIMEOUT_MS);
    assert.equal(second.state, 'live');
    rig.store.setReachable(false);
    await rig.advance(SESSION_TIMEOUT_MS + 1000, () => rig.lost.length === 2);
    rig.store.setReachable(true);
    await rig.advance(2 * SESSION_TIMEOUT_MS, () => rig.started.length === 3);
    assert.equal(rig.started.length, 3);
    assert.ok(rig.started[2]!.brokerEpoch > second.brokerEpoch);
  });

  it('another process holding the node id: DUPLICATE_BROKER_REGISTRATION is retried (logged as such) until that registration goes', async () => {
    rig.store.setReachable(false);
    await rig.advance(SESSION_TIMEOUT_MS + 2000, () => rig.observer.image.broker(1) === undefined && rig.lost.length === 1);
    assert.equal(rig.observer.image.broker(1), undefined);
    const intruder = new MemoryClusterMetadataStore(rig.server);
    const held = await intruder.registerBroker({ nodeId: 1, incarnationId: 'another-process', rack: null, endpoints: [] }, { sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: HEARTBEAT_MS });
    rig.store.setReachable(true);
    await rig.advance(3 * SESSION_TIMEOUT_MS);
    assert.equal(rig.started.length, 1, 'not registered while another live broker holds node 1');
    assert.ok(rig.logged('cannot register again: another broker process holds this node.id; retrying').length >= 2, 'each refusal is logged');
    assert.equal(held.state, 'live');
    await held.close();
    await rig.advance(SESSION_TIMEOUT_MS + 1000, () => rig.started.length === 2);
    assert.equal(rig.started.length, 2, 'registered once the other registration went');
    assert.equal(rig.observer.image.broker(1)?.incarnationId, rig.membership.incarnationId);
    await intruder.close();
  });

  it('stop() during a re-registration ends it: nothing registers afterwards', async () => {
    rig.store.setReachable(false);
    await rig.advance(SESSION_TIMEOUT_MS + 2000, () => rig.lost.length === 1 && rig.observer.image.broker(1) === undefined);
    await rig.advance(1000);
    await rig.membership.stop();
    rig.store.setReachable(true);
    await rig.advance(3 * SESSION_TIMEOUT_MS);
    assert.equal(rig.started.length, 1);
    assert.equal(rig.observer.image.broker(1), undefined);
  });
});
