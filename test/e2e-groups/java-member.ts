// Java group members (java/GroupMember.java, kafka-clients, the reference release with
// CooperativeStickyAssignor) for the consumer-group suites: compiled with javac
// against the reference Kafka jars at test time, run as child processes that
// report callbacks, records and commits as JSON lines.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kafkaClasspath, repoRoot } from '../support/tools.js';
import { JsonLineProcess, type JsonEvent, type ProcessedLedger } from './support.js';

const javaDir = path.join(repoRoot(), 'test', 'e2e-groups', 'java');

/** Compiles GroupMember.java into a fresh temporary directory (the caller removes it). */
export function compileGroupMember(): string {
  const javac = spawnSync('javac', ['-version'], { encoding: 'utf8' });
  if (javac.status !== 0) throw new Error('missing tool: javac (a JDK 17+). Install it with: apt-get install -y openjdk-17-jdk-headless');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'e2e-groups-java-'));
  const source = path.join(javaDir, 'GroupMember.java');
  const r = spawnSync('javac', ['-cp', kafkaClasspath(), '-d', dir, source], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`javac ${source} failed:\n${r.stdout}${r.stderr}`);
  return dir;
}

export interface JavaMemberOptions {
  readonly classDir: string;
  readonly bootstrap: string;
  readonly topic: string;
  readonly group: string;
  /** group.instance.id; dynamic membership without it. */
  readonly instanceId?: string;
  readonly sessionTimeoutMs: number;
  /** Records processed by the member are entered here. */
  readonly ledger: ProcessedLedger;
  /** A label for messages (default: the instance id). */
  readonly name?: string;
  /** group.protocol (default classic); with consumer, `assignor` is group.remote.assignor. */
  readonly protocol?: 'classic' | 'consumer';
  readonly assignor?: string;
}

/** One GroupMember.java process and what it reported. */
export class JavaMember {
  readonly name: string;
  readonly proc: JsonLineProcess;
  /** Rebalance callbacks (assigned/revoked/lost) in order. */
  readonly callbacks: JsonEvent[] = [];
  /** Generation ids seen in status lines and commits. */
  readonly gens = new Set<number>();
  status: JsonEvent | null = null;
  readonly errors: string[] = [];
  /** Callbacks seen before "stop" was sent (close() itself revokes the member's own partitions). */
  callbacksBeforeStop: number | null = null;

  constructor(readonly options: JavaMemberOptions) {
    this.name = options.name ?? options.instanceId ?? 'java';
    const o = options;
    this.proc = new JsonLineProcess(
      `java ${this.name}`,
      'java',
      [
        `-Dlog4j2.configurationFile=${path.join(javaDir, 'log4j2.properties')}`,
        '-cp', `${o.classDir}${path.delimiter}${kafkaClasspath()}`,
        'GroupMember', o.bootstrap, o.topic, o.group, o.instanceId ?? '-', String(o.sessionTimeoutMs),
        ...(o.protocol === undefined ? [] : [o.protocol, ...(o.assignor === undefined ? [] : [o.assignor])]),
      ],
      (e) => this.onEvent(e),
      (e) => e.ev === 'closed' || e.ev === 'error' || e.ev === 'assigned' || e.ev === 'revoked' || e.ev === 'lost',
    );
  }

  private onEvent(e: JsonEvent): void {
    switch (e.ev) {
      case 'rec':
        this.options.ledger.record(Number(e['p']), BigInt(Number(e['o'])), String(e['v']));
        break;
      case 'assigned':
      case 'revoked':
      case 'lost':
        this.callbacks.push(e);
        break;
      case 'status':
        this.status = e;
        if (Number(e['gen']) > 0) this.gens.add(Number(e['gen']));
        break;
      case 'commit':
        this.gens.add(Number(e['gen']));
        break;
      case 'error':
        this.errors.push(String(e['error']));
        break;
    }
  }

  /** The partitions the member says it owns (its last status line). */
  get partitions(): number[] {
    return ((this.status?.['partitions'] as number[] | undefined) ?? []).slice().sort((a, b) => a - b);
  }

  /** Closes the consumer ("stop" on stdin) and waits for a clean exit. */
  async stop(): Promise<void> {
    this.callbacksBeforeStop = this.callbacks.length;
    this.proc.send('stop');
    const exit = await this.proc.waitExit(60_000);
    assert.deepEqual(exit, { code: 0, signal: null }, this.proc.diagnostics());
    assert.ok(this.proc.events.some((e) => e.ev === 'closed'), this.proc.diagnostics());
  }
}
