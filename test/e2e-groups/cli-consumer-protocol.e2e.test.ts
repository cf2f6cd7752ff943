// Kafka's own tools (the reference 4.3.1 release and 4.4.0) with KIP-848
// consumer groups: kafka-console-consumer --consumer-property
// group.protocol=consumer reads a topic in a consumer group and commits;
// kafka-consumer-groups --list --type shows the group's type; --describe
// gives the lag; --describe --members --verbose shows a running member's
// epoch and assignment; --reset-offsets --to-earliest --execute rewinds the
// empty consumer group.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTopic } from '../clients/common.js';
import { cliJvmOptions } from '../compat/kafka-cli.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { KafkaTool } from '../support/kafka-reference.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { kafkaClasspath, kafkaReleaseInstalled, kafkaVersion, otherKafkaReleases, repoRoot, requireTools } from '../support/tools.js';
import { compileGroupMember, JavaMember } from './java-member.js';
import { eventually, ProcessedLedger } from './support.js';

const partitions = 3;
const records = 300;
let broker: SedimentProcess;
let classDir: string;
const members: JavaMember[] = [];

function tool(version: string, mainClass: string, args: readonly string[], input = ''): Promise<{ stdout: string; stderr: string }> {
  const log4j = path.join(repoRoot(), 'test', 'compat', 'java', 'log4j2.properties');
  const child = spawn('java', [...cliJvmOptions, `-Dlog4j2.configurationFile=${log4j}`, '-cp', kafkaClasspath(version), mainClass, '--bootstrap-server', broker.bootstrap, ...args]);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      const r = { stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
      if (code !== 0) reject(new Error(`${mainClass} ${args.join(' ')}: exit ${code}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`));
      else resolve(r);
    });
  });
}

/** GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ... rows of --describe. */
function lagRows(stdout: string, group: string, topic: string): { partition: number; current: string; lag: string }[] {
  return stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[0] === group && f[1] === topic)
    .map((f) => ({ partition: Number(f[2]), current: f[3] ?? '', lag: f[5] ?? '' }))
    .sort((a, b) => a.partition - b.partition);
}

before(async () => {
  requireTools(['java', 'kafka']);
  classDir = compileGroupMember();
  broker = await startSediment();
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
});

const versions = [kafkaVersion(), otherKafkaReleases.newer];

for (const version of versions) {
  test(`Kafka ${version} tools with a consumer-protocol group`, { timeout: 600_000 }, async () => {
    assert.ok(kafkaReleaseInstalled(version), `Kafka ${version} is not installed: bash test/support/install-kafka.sh ${version}`);
    const topic = `cli-848-${version}`;
    const group = `g-cli-848-${version}`;
    await createTopic(broker.bootstrap, topic, partitions);
    const lines = Array.from({ length: records }, (_, i) => `k${i}\tv${i}\n`).join('');
    await tool(version, KafkaTool.consoleProducer, ['--topic', topic, '--property', 'parse.key=true'], lines);

    const consumed = await tool(version, KafkaTool.consoleConsumer, [
      '--topic', topic, '--group', group, '--from-beginning', '--max-messages', String(records), '--timeout-ms', '60000',
      '--consumer-property', 'group.protocol=consumer',
    ]);
    assert.equal(consumed.stdout.split('\n').filter((l) => l.startsWith('v')).length, records, consumed.stderr.slice(-2000));
    assert.match(consumed.stderr, new RegExp(`Processed a total of ${records} messages`));

    const listed = await tool(version, KafkaTool.consumerGroups, ['--list', '--type']);
    assert.match(listed.stdout, new RegExp(`${group}\\s+Consumer`, 'i'), listed.stdout);

    const described = await tool(version, KafkaTool.consumerGroups, ['--describe', '--group', group]);
    const rows = lagRows(described.stdout, group, topic);
    assert.equal(rows.length, partitions, described.stdout);
    for (const r of rows) assert.equal(r.lag, '0', described.stdout);

    // A running member: --members --verbose shows its epoch and assignment.
    const ledger = new ProcessedLedger();
    const m = new JavaMember({ classDir, bootstrap: broker.bootstrap, topic, group: `${group}-live`, sessionTimeoutMs: 45_000, ledger, name: `live-${version}`, protocol: 'consumer' });
    members.push(m);
    await eventually('the live member to own every partition', async () => m.partitions.length === partitions, 180_000, () => m.proc.diagnostics());
    const verbose = await tool(version, KafkaTool.consumerGroups, ['--describe', '--group', `${group}-live`, '--members', '--verbose']);
    const memberId = String(m.status?.['memberId']);
    assert.ok(verbose.stdout.includes(memberId), verbose.stdout);
    const row = verbose.stdout.split('\n').find((l) => l.includes(memberId)) ?? '';
    assert.match(row, new RegExp(`${topic}:0,1,2`), verbose.stdout);
    const state = await tool(version, KafkaTool.consumerGroups, ['--describe', '--group', `${group}-live`, '--state']);
    assert.match(state.stdout, /Stable/, state.stdout);
    await m.stop();

    const reset = await tool(version, KafkaTool.consumerGroups, ['--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute']);
    const newOffsets = reset.stdout.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f[0] === group && f[1] === topic);
    assert.equal(newOffsets.length, partitions, reset.stdout);
    for (const f of newOffsets) assert.equal(f[3], '0', reset.stdout);
    const after = lagRows((await tool(version, KafkaTool.consumerGroups, ['--describe', '--group', group])).stdout, group, topic);
    assert.equal(after.reduce((n, r) => n + Number(r.lag), 0), records);
    assertNoBrokerErrors(broker.logs);
  });
}
