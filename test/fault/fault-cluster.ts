// Three (or N) Sediment broker processes for the fault checker, each in its own
// network namespace (test/support/netns.ts), over one real etcd listening on
// the namespaces' bridge. A trial kills (-9), pauses (SIGSTOP), restarts and
// resumes brokers and cuts the links between them; close() undoes all of it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AdminClient, type ClusterMetadata, type TopicMetadata } from '../../broker/cli/admin-client.js';
import { brokerConfigDef } from '../../metadata/config-defs.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { BrokerNetwork, ROOT_ADDRESS, brokerAddress } from '../support/netns.js';
import { SedimentProcess, tempDataDir } from '../support/sediment.js';
import type { FaultStep } from './schedule.js';

export interface FaultClusterOptions {
  readonly nodes: number;
  readonly tiering: boolean;
  /** Where the trial's files go (log dirs, remote store); removed by close() unless keep. */
  readonly dir: string;
  readonly keep?: boolean;
}

/** Broker settings of every trial: Kafka's names; shorter timeouts than Kafka's defaults so a trial sees failover and ISR changes in seconds. */
function brokerOverrides(o: FaultClusterOptions, remoteUrl: string): Record<string, string> {
  const out: Record<string, string> = {
    'broker.session.timeout.ms': '6000',
    'broker.heartbeat.interval.ms': '1000',
    'unclean.leader.election.enable': 'false',
  };
  // Replication's own settings, where this build knows them (the replication branch adds them).
  const optional: Record<string, string> = {
    'replica.lag.time.max.ms': '6000',
    'replica.fetch.wait.max.ms': '200',
  };
  for (const [k, v] of Object.entries(optional)) if (brokerConfigDef(k) !== undefined) out[k] = v;
  if (o.tiering) {
    out['remote.log.storage.system.enable'] = 'true';
    out['remote.log.storage.url'] = remoteUrl;
    out['remote.log.manager.task.interval.ms'] = '1000';
  }
  return out;
}

export class FaultCluster {
  /** Clusters not yet closed, for a run interrupted by a signal (fault-run.ts closes them). */
  static readonly open = new Set<FaultCluster>();
  private paused = new Set<number>();

  private constructor(
    readonly etcd: EtcdServer,
    readonly network: BrokerNetwork,
    readonly brokers: ReadonlyMap<number, SedimentProcess>,
    readonly remoteUrl: string,
    private readonly o: FaultClusterOptions,
  ) {}

  static async start(o: FaultClusterOptions): Promise<FaultCluster> {
    const ids = Array.from({ length: o.nodes }, (_, i) => i + 1);
    const network = BrokerNetwork.setUp(ids);
    let etcd: EtcdServer | undefined;
    const brokers = new Map<number, SedimentProcess>();
    try {
      etcd = await startEtcd({ host: ROOT_ADDRESS });
      const remoteDir = path.join(o.dir, 'remote');
      mkdirSync(remoteDir, { recursive: true });
      const remoteUrl = pathToFileURL(remoteDir).href;
      const overrides = brokerOverrides(o, remoteUrl);
      for (const id of ids) {
        const dataDir = path.join(o.dir, `broker-${id}`);
        mkdirSync(dataDir, { recursive: true });
        const host = brokerAddress(id);
        const b = new SedimentProcess(dataDir, false, {
          host,
          wrap: BrokerNetwork.wrap(id),
          overrides: { ...overrides, 'node.id': String(id), 'etcd.connect': `${etcd.endpoint}/fault`, 'http.listeners': `http://${host}:0` },
        });
        brokers.set(id, b);
        await b.start();
      }
      const cluster = new FaultCluster(etcd, network, brokers, remoteUrl, o);
      FaultCluster.open.add(cluster);
      return cluster;
    } catch (e) {
      for (const b of brokers.values()) await b.kill().catch(() => undefined);
      await etcd?.stop().catch(() => undefined);
      network.tearDown();
      throw e;
    }
  }

  broker(id: number): SedimentProcess {
    const b = this.brokers.get(id);
    if (b === undefined) throw new Error(`no broker ${id}`);
    return b;
  }

  get nodeIds(): number[] {
    return [...this.brokers.keys()];
  }

  /** host:port of every broker (clients learn the live ones from Metadata). */
  get bootstrap(): string {
    return [...this.brokers.values()].map((b) => b.bootstrap).join(',');
  }

  /** Applies one schedule step. */
  async apply(step: FaultStep): Promise<void> {
    switch (step.kind) {
      case 'kill':
        this.paused.delete(step.node);
        await this.broker(step.node).kill();
        return;
      case 'restart':
        if (!this.broker(step.node).alive) await this.startAgain(step.node);
        return;
      case 'pause':
        this.signal(step.node, 'SIGSTOP');
        this.paused.add(step.node);
        return;
      case 'resume':
        this.signal(step.node, 'SIGCONT');
        this.paused.delete(step.node);
        return;
      case 'cut':
        this.network.cut(step.a, step.b);
        return;
      case 'heal':
        this.network.heal(step.a, step.b);
        return;
    }
  }

  private signal(id: number, sig: NodeJS.Signals): void {
    const b = this.broker(id);
    if (b.alive) process.kill(b.pid, sig);
  }

  /** Every link up, every process resumed, every killed broker started again. */
  async healAll(): Promise<void> {
    this.network.healAll();
    for (const id of [...this.paused]) this.signal(id, 'SIGCONT');
    this.paused.clear();
    for (const [id, b] of this.brokers) if (!b.alive) await this.startAgain(id);
  }

  /** Restarts refused because the killed run's registration is still live (until its session times out). */
  restartsRefused = 0;

  /**
   * Starts a killed broker again as a supervisor would (systemd Restart=always):
   * a broker killed -9 less than broker.session.timeout.ms ago finds its old
   * registration still live and exits with DUPLICATE_BROKER_REGISTRATION; it
   * is started again each second until the old lease has expired.
   */
  private async startAgain(id: number): Promise<void> {
    const b = this.broker(id);
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await b.start();
        return;
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        if (!msg.includes('already registered') || Date.now() > deadline) throw e;
        b.acceptFailedStart();
        this.restartsRefused++;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** Metadata for `topic` from the first broker that answers (admin connection per call: brokers come and go). */
  /** Metadata of `topic`, or of every topic, internal ones included (null), from the first live broker that answers. */
  async metadata(topic: string | null): Promise<ClusterMetadata> {
    let last: unknown = new Error('no broker alive');
    for (const [id, b] of this.brokers) {
      if (!b.alive || this.paused.has(id)) continue;
      try {
        const admin = await AdminClient.connect(b.bootstrap, { timeoutMs: 5000 });
        try {
          return await admin.metadata(topic === null ? null : [topic]);
        } finally {
          admin.close();
        }
      } catch (e) {
        last = e;
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  }

  /**
   * Polls metadata (there is no event to await from outside the brokers)
   * until `done` holds for the topic; resolves with the last answer and
   * whether it held within `timeoutMs`.
   */
  async until(topic: string, done: (t: TopicMetadata) => boolean, timeoutMs: number): Promise<{ ok: boolean; last: TopicMetadata | string }> {
    const deadline = Date.now() + timeoutMs;
    let last: TopicMetadata | string = 'no answer';
    for (;;) {
      try {
        const t = (await this.metadata(topic)).topics.find((x) => x.name === topic);
        if (t !== undefined) {
          last = t;
          if (done(t)) return { ok: true, last };
        }
      } catch (e) {
        last = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() >= deadline) return { ok: false, last };
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /**
   * Polls the metadata of every topic, internal ones included, until `done`
   * holds for each of them; resolves with whether it held within `timeoutMs`
   * and the topics for which it did not, last seen.
   */
  async untilEveryTopic(done: (t: TopicMetadata) => boolean, timeoutMs: number): Promise<{ ok: boolean; notYet: TopicMetadata[] | string }> {
    const deadline = Date.now() + timeoutMs;
    let notYet: TopicMetadata[] | string = 'no answer';
    for (;;) {
      try {
        notYet = (await this.metadata(null)).topics.filter((t) => !done(t));
        if (notYet.length === 0) return { ok: true, notYet };
      } catch (e) {
        notYet = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() >= deadline) return { ok: false, notYet };
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The broker's HTTP port (console, /metrics, /v1/partitions), from its start-up line. */
  httpPort(id: number): number | undefined {
    const line = this.broker(id).logs.lines.find((l) => l.msg === 'sediment broker started');
    const port = line?.['httpPort'];
    return typeof port === 'number' ? port : undefined;
  }

  /** GET of the broker's HTTP listener (in its namespace, reached over the bridge). */
  async http(id: number, pathAndQuery: string): Promise<string> {
    const port = this.httpPort(id);
    if (port === undefined) throw new Error(`broker ${id}: no httpPort in its start-up line`);
    const res = await fetch(`http://${brokerAddress(id)}:${port}${pathAndQuery}`, { signal: AbortSignal.timeout(5000) });
    if (res.status !== 200) throw new Error(`broker ${id} ${pathAndQuery}: HTTP ${res.status}`);
    return res.text();
  }

  logDir(id: number): string {
    return this.broker(id).dataDir;
  }

  /** SIGTERM to every broker, one after another (clean shutdown writes the checkpoints). */
  async stopAll(): Promise<string[]> {
    const problems: string[] = [];
    for (const [id, b] of this.brokers) {
      try {
        // A non-zero exit is recorded by SedimentProcess among its unclean exits (uncleanExits() reports it).
        await b.stop(60_000);
      } catch (e) {
        problems.push(`broker ${id}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    return problems;
  }

  /** Crashes of this trial: runs that ended without being asked to. */
  uncleanExits(): string[] {
    return [...this.brokers].flatMap(([id, b]) => b.uncleanExits.map((u) => `broker ${id}: ${u}`));
  }

  async close(): Promise<void> {
    FaultCluster.open.delete(this);
    for (const id of this.paused) this.signal(id, 'SIGCONT');
    for (const b of this.brokers.values()) await b.kill().catch(() => undefined);
    await this.etcd.stop().catch(() => undefined);
    this.network.tearDown();
    if (this.o.keep !== true) rmSync(this.o.dir, { recursive: true, force: true });
    else this.writeLogs();
  }

  /** For a post-mortem (--keep): each broker's log lines, every run, as `broker-<id>.log` (JSON lines) in the trial dir. */
  private writeLogs(): void {
    for (const [id, b] of this.brokers) {
      const runs = [...b.previousLogs, b.logs];
      const text = runs.map((l, i) => [`# run ${i + 1}`, ...l.lines.map((x) => JSON.stringify(x)), ...l.other].join('\n')).join('\n');
      writeFileSync(path.join(this.o.dir, `broker-${id}.log`), `${text}\n`);
    }
  }
}

export function trialDir(): string {
  return tempDataDir('sediment-fault-');
}
