// One trial of the fault checker:
//   1. 3 brokers (own network namespaces) over etcd; an RF 3 topic with
//      min.insync.replicas=2 (tiering on in some trials: file:// store,
//      segments rolled every few seconds, short local retention);
//   2. the franz-go workload writes unique values while the seeded schedule
//      kills, pauses, restarts and cuts;
//   3. heal everything, wait for the ISR to be full;
//   4. availability: one broker killed leaves every partition writable
//      (acks=all); a second one killed refuses acks=all with
//      NOT_ENOUGH_REPLICAS and still serves reads; both restarted, ISR full;
//   5. stop the workload, stop the brokers (SIGTERM), read every replica's
//      files and check (checker.ts).
import { AdminClient } from '../../broker/cli/admin-client.js';
import { errorName } from '../../broker/protocol/errors.js';
import { type Ack, type Finding, type FindingKind, type PartitionEvidence, type Verdict, check } from './checker.js';
import { FaultCluster, trialDir } from './fault-cluster.js';
import { readHighWatermarks, readLocalLog, readRemoteLog } from './replica-logs.js';
import { Rng, type Schedule, describeStep, faultCount } from './schedule.js';
import { Workload, probe, type ProbeResult } from './workload.js';
import type { PartitionMetadata, TopicMetadata } from '../../broker/cli/admin-client.js';

export interface TrialOptions {
  readonly workloadBin: string;
  readonly partitions: number;
  readonly producers: number;
  /** Records per second over all producers. */
  readonly rate: number;
  /** How long to wait for a full ISR after creation and after each heal (default 90 s). */
  readonly isrWaitMs?: number;
  /** Keep the trial's files (log dirs, remote store) for a post-mortem. */
  readonly keep?: boolean;
  readonly log: (line: string) => void;
}

export interface TrialResult {
  readonly seed: number;
  readonly tiering: boolean;
  readonly faults: number;
  readonly verdict: Verdict;
  /** Availability and harness findings (the checker's come in verdict.findings). */
  readonly findings: readonly Finding[];
  readonly failedRecords: number;
  readonly unfinishedRecords: number;
  readonly ms: number;
  readonly dir: string;
}

const LEADERS_MOVED_MS = 30_000;
const NOT_ENOUGH = new Set(['NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND']);

function isrFull(replicas: number) {
  return (t: TopicMetadata): boolean => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0 && p.isr.length === replicas);
}

/** A partition led, with every one of its replicas in the ISR. */
function partitionFull(p: PartitionMetadata): boolean {
  return p.leader >= 0 && p.isr.length === p.replicas.length;
}

/** Every partition of the topic (whatever its replication factor: internal topics' too) has its full ISR. */
function isrFullOfItsReplicas(t: TopicMetadata): boolean {
  return t.partitions.every(partitionFull);
}

export async function runTrial(schedule: Schedule, o: TrialOptions): Promise<TrialResult> {
  const started = Date.now();
  const ISR_FULL_MS = o.isrWaitMs ?? 90_000;
  const findings: Finding[] = [];
  const harness = (detail: string, partition = -1, kind: FindingKind = 'harness'): void => {
    findings.push({ kind, partition, detail });
    o.log(`  ! ${detail}`);
  };
  const dir = trialDir();
  const topic = `fault-${schedule.seed}`;
  const rng = new Rng(schedule.seed ^ 0x5eed);
  o.log(`trial seed ${schedule.seed}${schedule.tiering ? ' (tiering on)' : ''}: ${schedule.steps.map(describeStep).join(', ') || 'no faults'}`);
  const cluster = await FaultCluster.start({ nodes: 3, tiering: schedule.tiering, dir, keep: o.keep });
  let workload: Workload | undefined;
  const acks: Ack[] = [];
  let failedRecords = 0;
  let unfinishedRecords = 0;
  let faults = faultCount(schedule);
  let verdict: Verdict = { acknowledged: 0, losses: 0, duplicates: 0, findings: [] };
  try {
    const configs = new Map([['min.insync.replicas', '2']]);
    if (schedule.tiering) {
      configs.set('remote.storage.enable', 'true');
      configs.set('segment.ms', '3000');
      configs.set('local.retention.ms', '4000');
    }
    const admin = await AdminClient.connect(cluster.bootstrap, { timeoutMs: 30_000 });
    try {
      const [created] = await admin.createTopics([{ name: topic, numPartitions: o.partitions, replicationFactor: 3, configs }]);
      if (created === undefined || created.errorCode !== 0) throw new Error(`CreateTopics ${topic} RF 3: ${created === undefined ? 'no answer' : `${errorName(created.errorCode)} ${created.errorMessage ?? ''}`}`);
    } finally {
      admin.close();
    }
    const ready = await cluster.until(topic, isrFull(3), ISR_FULL_MS);
    if (!ready.ok) harness(`after creation the ISR of ${topic} is not full within ${ISR_FULL_MS} ms: ${JSON.stringify(ready.last)}`, -1, 'isr');

    workload = Workload.start(o.workloadBin, { bootstrap: cluster.bootstrap, topic, partitions: o.partitions, producers: o.producers, prefix: `s${schedule.seed}`, rate: o.rate, drainMs: 30_000 });
    const t0 = Date.now();
    for (const step of schedule.steps) {
      const wait = t0 + step.atMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await cluster.apply(step);
    }
    const rest = t0 + schedule.durationMs - Date.now();
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    o.log(`  schedule done: ${workload.acknowledged} acknowledged so far; healing`);
    await cluster.healAll();
    const healed = await cluster.until(topic, isrFull(3), ISR_FULL_MS);
    if (!healed.ok) harness(`after healing the ISR is not full within ${ISR_FULL_MS} ms: ${JSON.stringify(healed.last)}`, -1, 'isr');

    // Availability: one down, then two down.
    // The survivor of the two-down check is an ISR member of every partition where one exists (with a full ISR: any broker).
    const inEveryIsr = cluster.nodeIds.filter((n) => typeof healed.last !== 'string' && healed.last.partitions.every((p) => p.isr.includes(n)));
    const survivorPick = rng.pick(inEveryIsr.length > 0 ? inEveryIsr : cluster.nodeIds);
    const others = cluster.nodeIds.filter((n) => n !== survivorPick);
    const [x, y] = rng.next() < 0.5 ? others : [...others].reverse();
    if (x === undefined || y === undefined) throw new Error('need 3 brokers');
    await cluster.broker(x).kill();
    faults++;
    const moved = await cluster.until(topic, (t) => t.partitions.every((p) => p.leader >= 0 && p.leader !== x), LEADERS_MOVED_MS);
    if (!moved.ok) harness(`broker ${x} killed: leadership did not move within ${LEADERS_MOVED_MS} ms: ${JSON.stringify(moved.last)}`, -1, 'availability');
    const one = await probe(o.workloadBin, { bootstrap: cluster.bootstrap, topic, partitions: o.partitions, timeoutMs: 20_000 });
    for (const r of one) {
      if (r.produced) acks.push({ partition: r.partition, offset: BigInt(r.offset), value: r.value });
      else harness(`one broker (${x}) down: partition ${r.partition} refused an acks=all write (${r.error})`, r.partition, 'availability');
    }
    await cluster.broker(y).kill();
    faults++;
    const survivor = cluster.nodeIds.find((n) => n !== x && n !== y);
    const shrunk = await cluster.until(topic, (t) => t.partitions.every((p) => p.leader === survivor && !p.isr.includes(y)), LEADERS_MOVED_MS);
    if (!shrunk.ok) harness(`brokers ${x} and ${y} killed: broker ${survivor} does not lead every partition alone within ${LEADERS_MOVED_MS} ms: ${JSON.stringify(shrunk.last)}`, -1, 'availability');
    const two: ProbeResult[] = await probe(o.workloadBin, { bootstrap: cluster.bootstrap, topic, partitions: o.partitions, timeoutMs: 10_000 });
    for (const r of two) {
      if (r.produced) harness(`two brokers (${x}, ${y}) down: partition ${r.partition} acknowledged an acks=all write at ${r.offset} with min.insync.replicas=2`, r.partition, 'availability');
      else if (!NOT_ENOUGH.has(r.error)) harness(`two brokers down: partition ${r.partition} refused with ${r.error}, not NOT_ENOUGH_REPLICAS`, r.partition, 'availability');
      if (r.read === 0) harness(`two brokers down: partition ${r.partition} served no read`, r.partition, 'availability');
    }
    o.log(`  availability: one down ${one.filter((r) => r.produced).length}/${o.partitions} writable; two down ${two.filter((r) => NOT_ENOUGH.has(r.error)).length}/${o.partitions} NOT_ENOUGH_REPLICAS, ${two.filter((r) => r.read > 0).length}/${o.partitions} readable`);
    await cluster.healAll();
    const back = await cluster.until(topic, isrFull(3), ISR_FULL_MS);
    if (!back.ok) harness(`after the availability check the ISR is not full within ${ISR_FULL_MS} ms: ${JSON.stringify(back.last)}`, -1, 'isr');

    // The console's replication picture and the metrics agree with the cluster's metadata. The
    // metrics count every partition a broker leads, internal topics' too (as Kafka's
    // UnderReplicatedPartitions): those must be fully replicated first, which is itself checked.
    if (back.ok && typeof back.last !== 'string') {
      const everyTopic = await cluster.untilEveryTopic(isrFullOfItsReplicas, ISR_FULL_MS);
      if (!everyTopic.ok) {
        const rest = typeof everyTopic.notYet === 'string' ? everyTopic.notYet : everyTopic.notYet.map((t) => `${t.name} ${JSON.stringify(t.partitions.filter((p) => !partitionFull(p)))}`).join('; ');
        harness(`after the availability check not every partition has its full ISR within ${ISR_FULL_MS} ms: ${rest.slice(0, 600)}`, -1, 'isr');
      } else {
        for (const f of await checkObservability(cluster, topic, back.last)) harness(f, -1, 'observability');
      }
    }

    const result = await workload.stop();
    workload = undefined;
    acks.push(...result.acks);
    failedRecords = result.failed.length;
    unfinishedRecords = result.unfinished;
    const final = await cluster.until(topic, isrFull(3), 10_000);
    const finalMd = typeof final.last === 'string' ? undefined : final.last;
    // The leaders' high watermarks as clients see them (ListOffsets latest), before the brokers stop:
    // the checker takes the highest of these and the brokers' replication-offset-checkpoints.
    const liveHw = new Map<number, bigint>();
    try {
      const admin2 = await AdminClient.connect(cluster.bootstrap, { timeoutMs: 10_000 });
      try {
        for (const a of await admin2.listOffsets(Array.from({ length: o.partitions }, (_, partition) => ({ topic, partition, timestamp: -1n })))) {
          if (a.errorCode === 0) liveHw.set(a.partition, a.offset);
          else harness(`ListOffsets latest of partition ${a.partition}: ${errorName(a.errorCode)}`, a.partition);
        }
      } finally {
        admin2.close();
      }
    } catch (e) {
      harness(`ListOffsets latest before stopping: ${e instanceof Error ? e.message : String(e)}`);
    }
    o.log(`  workload: ${result.acks.length} acknowledged, ${failedRecords} failed, ${unfinishedRecords} unfinished; high watermarks ${JSON.stringify([...liveHw].map(([p, hw]) => `${p}:${hw}`))}; stopping brokers`);
    for (const p of await cluster.stopAll()) harness(p);
    for (const u of cluster.uncleanExits()) harness(`crash: ${u.slice(0, 2000)}`, -1, 'crash');
    if (cluster.restartsRefused > 0) o.log(`  note: ${cluster.restartsRefused} restart(s) refused with DUPLICATE_BROKER_REGISTRATION (the killed run's session still live) and retried`);

    const hws = new Map<number, Map<string, bigint> | null>();
    for (const id of cluster.nodeIds) hws.set(id, await readHighWatermarks(cluster.logDir(id)));
    const checkpointed = [...hws].filter(([, m]) => m !== null).map(([id]) => id);
    o.log(`  replication-offset-checkpoint written by brokers [${checkpointed.join(',')}]`);
    const evidence: PartitionEvidence[] = [];
    for (let p = 0; p < o.partitions; p++) {
      const md = finalMd?.partitions.find((x) => x.partition === p);
      const replicas = await Promise.all(cluster.nodeIds.map((id) => readLocalLog(id, cluster.logDir(id), topic, p)));
      let hw: bigint | null = liveHw.get(p) ?? null;
      for (const m of hws.values()) {
        const v = m?.get(`${topic}-${p}`);
        if (v !== undefined && (hw === null || v > hw)) hw = v;
      }
      evidence.push({
        partition: p,
        isr: md?.isr ?? [],
        highWatermark: hw,
        replicas,
        remote: schedule.tiering ? await readRemoteLog(cluster.remoteUrl, topic, p) : null,
      });
    }
    verdict = check(acks, evidence);
  } finally {
    workload?.kill();
    await cluster.close();
  }
  const r: TrialResult = { seed: schedule.seed, tiering: schedule.tiering, faults, verdict, findings, failedRecords, unfinishedRecords, ms: Date.now() - started, dir };
  o.log(`  verdict: ${verdict.acknowledged} acknowledged, ${verdict.losses} lost, ${verdict.duplicates} duplicated, ${verdict.findings.length + findings.length} findings (${((r.ms) / 1000).toFixed(0)} s)`);
  for (const f of verdict.findings.slice(0, 30)) o.log(`  ! [${f.kind}] p${f.partition} ${f.detail}`);
  return r;
}

interface PartitionsAnswer {
  partition: number;
  highWatermark: number;
  replication?: { leader: number; leaderEpoch: number; isr: number[]; replicas: Array<{ nodeId: number; inSync: boolean; logEndOffset: number | null }> };
}

/**
 * With a full ISR: each partition's leader shows, in /v1/partitions, the
 * metadata's leader, epoch and ISR and a log end offset for every replica;
 * every broker's /metrics reports no under-replicated and no under-min-ISR
 * partition. (Followers may still be a fetch behind: LEOs are not compared.)
 */
async function checkObservability(cluster: FaultCluster, topic: string, md: TopicMetadata): Promise<string[]> {
  const problems: string[] = [];
  const byLeader = new Map<number, PartitionsAnswer[]>();
  try {
    for (const id of new Set(md.partitions.map((p) => p.leader))) byLeader.set(id, JSON.parse(await cluster.http(id, `/v1/partitions?topic=${topic}`)) as PartitionsAnswer[]);
    for (const p of md.partitions) {
      const shown = byLeader.get(p.leader)?.find((x) => x.partition === p.partition)?.replication;
      if (shown === undefined) {
        problems.push(`console: leader ${p.leader} of partition ${p.partition} shows no replication picture`);
        continue;
      }
      if (shown.leader !== p.leader || shown.leaderEpoch !== p.leaderEpoch || JSON.stringify([...shown.isr].sort()) !== JSON.stringify([...p.isr].sort())) {
        problems.push(`console: partition ${p.partition} shows leader ${shown.leader} epoch ${shown.leaderEpoch} ISR ${JSON.stringify(shown.isr)}; metadata says ${p.leader} ${p.leaderEpoch} ${JSON.stringify(p.isr)}`);
      }
      const unknown = shown.replicas.filter((r) => r.logEndOffset === null || r.logEndOffset < 0).map((r) => r.nodeId);
      if (unknown.length > 0) problems.push(`console: leader ${p.leader} of partition ${p.partition} knows no log end offset of replicas ${unknown.join(',')}`);
    }
    for (const id of cluster.nodeIds) {
      const text = await cluster.http(id, '/metrics');
      for (const name of ['sediment_under_replicated_partitions', 'sediment_under_min_isr_partitions']) {
        const v = Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1] ?? NaN);
        if (v !== 0) problems.push(`metrics: broker ${id} reports ${name} ${v} with a full ISR`);
      }
    }
  } catch (e) {
    problems.push(`console/metrics: ${e instanceof Error ? e.message : String(e)}`);
  }
  return problems;
}

export function trialPassed(r: TrialResult): boolean {
  return r.verdict.losses === 0 && r.verdict.duplicates === 0 && r.verdict.findings.length === 0 && r.findings.length === 0;
}
