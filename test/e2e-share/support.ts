// Shared by the share-group end-to-end suites: KafkaShareConsumer processes
// (java/ShareMember.java, compiled at test time), the ledger of what they
// delivered and acknowledged, and topic set-up through kafkajs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { KafkaTool, runKafkaTool } from '../support/kafka-reference.js';
import { kafkaClasspath, repoRoot } from '../support/tools.js';
import { JsonLineProcess, type JsonEvent } from '../e2e-groups/support.js';

const javaDir = path.join(repoRoot(), 'test', 'e2e-share', 'java');

/** Compiles ShareMember.java into a fresh temporary directory (the caller removes it). */
export function compileShareMember(): string {
  const classes = mkdtempSync(path.join(os.tmpdir(), 'sediment-share-java-'));
  const r = spawnSync('javac', ['-d', classes, '-cp', kafkaClasspath(), path.join(javaDir, 'ShareMember.java')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return classes;
}

export interface MemberEnv {
  readonly classes: string;
  readonly bootstrap: string;
  /** Every member started, to kill what is left at the end. */
  readonly members: ShareMember[];
}

export interface Delivery {
  readonly p: number;
  readonly o: number;
  readonly v: string;
  readonly dc: number;
  readonly member: string;
}

/** Every delivery and acknowledgement any member of a test reported, in arrival order. */
export class Ledger {
  readonly deliveries: Delivery[] = [];
  readonly acks: { p: number; o: number; type: string; member: string; at: number }[] = [];

  seen(v: string): Delivery[] {
    return this.deliveries.filter((d) => d.v === v);
  }

  distinct(): Set<string> {
    return new Set(this.deliveries.map((d) => d.v));
  }

  /** Records delivered again after an acknowledgement of theirs was reported (commitSync returned it without error). */
  redeliveredAfterAck(): { p: number; o: number; v: string; member: string }[] {
    const out: { p: number; o: number; v: string; member: string }[] = [];
    for (const a of this.acks) {
      if (a.type !== 'ACCEPT' && a.type !== 'REJECT') continue;
      for (const d of this.deliveries.slice(a.at)) if (d.p === a.p && d.o === a.o) out.push({ p: d.p, o: d.o, v: d.v, member: d.member });
    }
    return out;
  }
}

export class ShareMember {
  readonly proc: JsonLineProcess;
  /** `error` events: the consumer failed. */
  readonly errors: string[] = [];
  /** `ack-error` events: an acknowledgement commit failed (retriable around a failover). */
  readonly ackErrors: string[] = [];
  idle = 0;

  constructor(env: MemberEnv, readonly name: string, ledger: Ledger, group: string, topic: string, mode: 'implicit' | 'explicit', hold: boolean, groupConfigs: Record<string, string>) {
    const configs = Object.entries(groupConfigs).map(([k, v]) => `${k}=${v}`).join(',');
    this.proc = new JsonLineProcess(
      `share ${name}`,
      'java',
      [
        `-Dlog4j2.configurationFile=${path.join(repoRoot(), 'test', 'e2e-groups', 'java', 'log4j2.properties')}`,
        '-cp', `${env.classes}${path.delimiter}${kafkaClasspath()}`,
        'ShareMember', env.bootstrap, group, topic, mode, hold ? 'hold' : '-', configs === '' ? '-' : configs,
      ],
      (e: JsonEvent) => {
        if (e.ev === 'rec') ledger.deliveries.push({ p: Number(e['p']), o: Number(e['o']), v: String(e['v']), dc: Number(e['dc']), member: name });
        else if (e.ev === 'ack') ledger.acks.push({ p: Number(e['p']), o: Number(e['o']), type: String(e['type']), member: name, at: ledger.deliveries.length });
        else if (e.ev === 'idle') this.idle++;
        else if (e.ev === 'error' || e.ev === 'ack-error') this.errors.push(String(e['error']));
        if (e.ev === 'ack-error') this.ackErrors.push(String(e['error']));
      },
      (e) => e.ev !== 'rec' && e.ev !== 'idle',
    );
    env.members.push(this);
  }

  async stop(): Promise<void> {
    this.proc.send('stop');
    const exit = await this.proc.waitExit(90_000);
    assert.deepEqual(exit, { code: 0, signal: null }, this.proc.diagnostics());
  }
}

export async function createAndProduce(bootstrap: string, topic: string, partitions: number, values: readonly string[], configs: Readonly<Record<string, string>> = {}, replicationFactor = -1): Promise<void> {
  const kafka = new Kafka({ clientId: 'share-e2e', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }], waitForLeaders: true });
  await admin.disconnect();
  await produce(bootstrap, topic, partitions, values);
}

/** Round-robin over the partitions, in batches of ten (acks=all). */
export async function produce(bootstrap: string, topic: string, partitions: number, values: readonly string[]): Promise<void> {
  const kafka = new Kafka({ clientId: 'share-e2e', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  // Round-robin over the partitions, in small batches so acquisitions span several batches.
  for (let i = 0; i < values.length; i += 10) {
    await producer.send({ topic, messages: values.slice(i, i + 10).map((value, j) => ({ value, partition: (i / 10 + j) % partitions })) });
  }
  await producer.disconnect();
}


/** Runs kafka-share-groups (4.3.1) against `bootstrap` with `args`: its stdout; rejects on a non-zero exit. */
export async function shareGroupsTool(bootstrap: string, ...args: string[]): Promise<string> {
  return (await runKafkaTool(KafkaTool.shareGroups, ['--bootstrap-server', bootstrap, ...args])).stdout;
}

/** The rows of a tool's table whose first column is `group`, split on whitespace. */
export function groupRows(output: string, group: string): string[][] {
  return output.split('\n').map((l) => l.trim().split(/\s+/)).filter((c) => c[0] === group);
}
