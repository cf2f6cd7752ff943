import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { DuplicateBrokerRegistrationError, IncompatibleLayoutError } from '../../../metadata/cluster/errors.js';
import { etcdSettingsFrom, splitKeystore } from '../../../metadata/cluster/etcd-config.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import { joinCluster } from '../../../metadata/cluster/startup.js';
import { ConfigError } from '../../../metadata/config-schema.js';
import { BrokerConfig } from '../../../broker/config.js';

const reg = (nodeId: number) => ({ nodeId, incarnationId: `inc-${nodeId}`, rack: null, endpoints: [] });
const session = { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 };

function world() {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const server = new MemoryMetadataServer(clock, scheduler);
  return { clock, scheduler, server };
}

/** Moves the manual clock until `p` settles. */
async function drive<T>(clock: ManualClock, p: Promise<T>): Promise<T> {
  let done = false;
  const tracked = p.finally(() => {
    done = true;
  });
  tracked.catch(() => undefined);
  while (!done) {
    for (let i = 0; i < 3 && !done; i++) await new Promise((r) => setImmediate(r));
    if (!done) clock.advance(100);
  }
  return tracked;
}

describe('joining a cluster at start-up', () => {
  it('retries an unreachable store, naming it, then joins once it is reachable', async () => {
    const { clock, scheduler, server } = world();
    const store = new MemoryClusterMetadataStore(server);
    store.setReachable(false);
    const lines: string[] = [];
    const joining = joinCluster(store, { proposedClusterId: 'c' }, reg(1), session, {
      clock,
      scheduler,
      connectionTimeoutMs: 18_000,
      onRetry: (m) => {
        lines.push(m);
        if (lines.length === 3) store.setReachable(true);
      },
    });
    const joined = await drive(clock, joining);
    assert.equal(joined.clusterId, 'c');
    assert.equal(joined.session.state, 'live');
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^memory unreachable \(attempt 1, 0 of 18000 ms\)/);
  });

  it('gives up after etcd.connection.timeout.ms with a retriable error', async () => {
    const { clock, scheduler, server } = world();
    const store = new MemoryClusterMetadataStore(server);
    store.setReachable(false);
    const joining = joinCluster(store, { proposedClusterId: 'c' }, reg(1), session, { clock, scheduler, connectionTimeoutMs: 5000, retryBackoffMs: 1000 });
    await assert.rejects(drive(clock, joining), (e: unknown) => {
      assert.ok(e instanceof KafkaError && e.code === ErrorCode.REQUEST_TIMED_OUT);
      assert.match(e.message, /unreachable for 5000 ms \(etcd.connection.timeout.ms=5000, 6 attempts\)/);
      return true;
    });
    assert.equal(clock.now(), 5000);
  });

  it('does not wait out errors that waiting cannot fix', async () => {
    const { clock, scheduler, server } = world();
    server.commit([{ type: 'put', key: 'layout', value: '{"version":9}' }]);
    const store = new MemoryClusterMetadataStore(server);
    await assert.rejects(joinCluster(store, { proposedClusterId: 'c' }, reg(1), session, { clock, scheduler, connectionTimeoutMs: 5000 }), IncompatibleLayoutError);
    assert.equal(clock.now(), 0);
  });

  it('a node id held by a live broker ends start-up at once, naming the holder', async () => {
    const { clock, scheduler, server } = world();
    const first = new MemoryClusterMetadataStore(server);
    await joinCluster(first, { proposedClusterId: 'c' }, reg(1), session, { clock, scheduler, connectionTimeoutMs: 5000 });
    const second = new MemoryClusterMetadataStore(server);
    await assert.rejects(joinCluster(second, { proposedClusterId: 'c' }, reg(1), session, { clock, scheduler, connectionTimeoutMs: 5000 }), (e: unknown) => {
      assert.ok(e instanceof DuplicateBrokerRegistrationError);
      assert.match(e.message, /node.id 1 is already registered by a live broker \(incarnation inc-1/);
      return true;
    });
  });
});

describe('etcd settings from the broker config', () => {
  const base = { 'etcd.connect': 'a:1,b:2/x' };
  it('unset etcd.connect: none (single broker)', () => {
    assert.equal(etcdSettingsFrom(BrokerConfig.fromProperties({}, { cwd: '/tmp' })), null);
  });

  it('endpoints, prefix, session and timeouts', () => {
    const s = etcdSettingsFrom(BrokerConfig.fromProperties({ ...base, 'etcd.username': 'u', 'etcd.password': 'p' }, { cwd: '/tmp' }));
    assert.deepEqual(s, {
      store: { connect: { endpoints: ['a:1', 'b:2'], prefix: '/x' }, requestTimeoutMs: 5000, auth: { username: 'u', password: 'p' } },
      session: { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 },
      connectionTimeoutMs: 18000,
    });
  });

  it('refuses a heartbeat not shorter than the session, half the credentials, TLS without a truststore', () => {
    const bad = (props: Record<string, string>, key: string): void => {
      assert.throws(() => etcdSettingsFrom(BrokerConfig.fromProperties({ ...base, ...props }, { cwd: '/tmp' }), () => Buffer.from('')), (e: unknown) => e instanceof ConfigError && e.key === key);
    };
    bad({ 'broker.heartbeat.interval.ms': '9000' }, 'broker.heartbeat.interval.ms');
    bad({ 'etcd.username': 'u' }, 'etcd.password');
    bad({ 'etcd.ssl.client.enable': 'true' }, 'etcd.ssl.truststore.location');
    assert.throws(() => BrokerConfig.fromProperties({ 'etcd.connect': 'nohost' }, { cwd: '/tmp' }), /etcd.connect/);
  });

  it('TLS: the truststore and a keystore split into key and chain; unreadable files name their key', () => {
    const cert = '-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----';
    const key = '-----BEGIN PRIVATE KEY-----\nBBB\n-----END PRIVATE KEY-----';
    const files: Record<string, string> = { '/ca.pem': cert, '/ks.pem': `${key}\n${cert}\n${cert}\n` };
    const read = (p: string): Buffer => {
      const f = files[p];
      if (f === undefined) throw new Error('ENOENT');
      return Buffer.from(f);
    };
    const props = { ...base, 'etcd.ssl.client.enable': 'true', 'etcd.ssl.truststore.location': '/ca.pem', 'etcd.ssl.keystore.location': '/ks.pem' };
    const s = etcdSettingsFrom(BrokerConfig.fromProperties(props, { cwd: '/tmp' }), read);
    assert.equal(s?.store.tls?.rootCertificate.toString(), cert);
    assert.equal(s?.store.tls?.privateKey?.toString(), `${key}\n`);
    assert.equal(s?.store.tls?.certChain?.toString(), `${cert}\n${cert}\n`);
    assert.throws(() => etcdSettingsFrom(BrokerConfig.fromProperties({ ...props, 'etcd.ssl.truststore.location': '/nope' }, { cwd: '/tmp' }), read), (e: unknown) => e instanceof ConfigError && e.key === 'etcd.ssl.truststore.location' && /ENOENT/.test(e.message));
    assert.throws(() => splitKeystore(Buffer.from(cert)), /one PEM private key/);
    assert.throws(() => splitKeystore(Buffer.from('-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n-----END ENCRYPTED PRIVATE KEY-----')), /encrypted/);
  });
});
