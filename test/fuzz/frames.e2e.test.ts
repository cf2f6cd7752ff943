// Fuzzing a running Sediment broker (child process) over real sockets:
// mutated captured requests, garbage headers and bodies, random and oversized
// frames, truncated frames, and valid Produce requests carrying corrupted record
// batches. Each case runs on its own connection; the broker must answer as Kafka
// does or close that connection, never crash, never store or serve a corrupt
// batch, and keep serving well-behaved clients on other connections: between
// rounds a long-lived raw connection, a kafkajs producer and kcat must still
// work and the log must hold exactly the accepted records.
//   SEDIMENT_FUZZ_SEED=<n>   another deterministic run (default below)
//   SEDIMENT_FUZZ_CASES=<n>  total cases (default 3000)
//   SEDIMENT_FUZZ_DEBUG=<file>  append every case and its outcome to <file>
import assert from 'node:assert/strict';
import { appendFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { ZERO_UUID } from '../../broker/protocol/reader.js';
import { runProcess } from '../clients/common.js';
import { kcatPath, requireTools } from '../support/tools.js';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { generateCase, type CaseContext, type FrameCase, type VersionRange } from './cases.js';
import { loadGoldenRequests } from './golden-frames.js';
import { Ledger, judge } from './judge.js';
import { Prng } from './prng.js';
import { exchange } from './raw-client.js';

const seed = Number(process.env['SEDIMENT_FUZZ_SEED'] ?? 0x5ed1);
const totalCases = Number(process.env['SEDIMENT_FUZZ_CASES'] ?? 3000);
const rounds = 10;
const concurrency = 16;
const caseTimeoutMs = 2000;
const maxRequestBytes = 1024 * 1024;
const targetTopic = 'fuzz-target';
const targetPartitions = 3;
const healthTopic = 'fuzz-health';

let broker: SedimentProcess;
let keepalive: BrokerConnection;
let producer: Producer;
let ctx: CaseContext;
const ledger = new Ledger();
const rng = new Prng(seed);
const failures: string[] = [];
const byCategory = new Map<string, { cases: number; outcomes: Map<string, number> }>();
/** Requests left unanswered at the timeout (a long poll may legitimately wait), by source. */
const silentBySource = new Map<string, number>();
let healthSeq = 0;

/** The topic's id, from Metadata v10+ (Produce v13 names topics by id). */
async function topicIdOf(conn: BrokerConnection, name: string): Promise<string> {
  const { body } = await conn.send(apis.Metadata, () => ({
    topics: [{ name, topicId: ZERO_UUID }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  }), { min: 10 });
  const id = body.topics[0]?.topicId;
  assert.ok(id !== undefined && id !== ZERO_UUID, `topic id of ${name}`);
  return id;
}

before(async () => {
  requireTools(['kcat', 'kafkajs']);
  broker = await startSediment({ overrides: { 'socket.request.max.bytes': String(maxRequestBytes) } });
  const kafka = new Kafka({ clientId: 'fuzz-health', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: targetTopic, numPartitions: targetPartitions }, { topic: healthTopic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  keepalive = await BrokerConnection.connect('127.0.0.1', broker.port, { clientId: 'fuzz-keepalive' });
  const supported = new Map<number, VersionRange>();
  for (let k = 0; k < 100; k++) {
    const r = keepalive.supported(k);
    if (r !== undefined) supported.set(k, r);
  }
  const golden = loadGoldenRequests();
  assert.ok(golden.length > 20, `golden request frames found: ${golden.length}`);
  ctx = {
    golden,
    supported,
    maxRequestBytes,
    produceTarget: { topic: targetTopic, partitions: targetPartitions, topicId: await topicIdOf(keepalive, targetTopic), maxVersion: supported.get(0)?.max ?? 9 },
  };
});

after(async () => {
  keepalive?.close();
  await producer?.disconnect().catch(() => undefined);
  await broker?.close();
  const lines = [`\nfuzz seed ${seed}: ${totalCases} cases; ${ledger.acceptedCount} produce partitions accepted; rejections by error code ${JSON.stringify([...ledger.rejectedByCode])}`];
  for (const [c, s] of [...byCategory].sort()) lines.push(`  ${c.padEnd(16)} ${String(s.cases).padStart(5)}  ${JSON.stringify(Object.fromEntries(s.outcomes))}`);
  lines.push(`  unanswered after ${caseTimeoutMs} ms, by source: ${JSON.stringify(Object.fromEntries([...silentBySource].sort()))}`);
  console.log(lines.join('\n'));
});

const debugLog = process.env['SEDIMENT_FUZZ_DEBUG'];

async function runCase(c: FrameCase): Promise<void> {
  if (debugLog !== undefined) appendFileSync(debugLog, `${Date.now()} start ${c.id} [${c.category}] ${c.what}\n`);
  const o = await exchange(broker.port, c.chunks, {
    timeoutMs: caseTimeoutMs,
    expectFrames: c.expect === 'close' ? 0 : Math.max(1, c.correlationIds.length),
    ...(c.halfClose === true ? { halfClose: true } : {}),
    ...(c.separateWrites === true ? { separateWrites: true } : {}),
  });
  if (debugLog !== undefined) appendFileSync(debugLog, `${Date.now()} end ${c.id} ${o.kind} ${Math.round(o.ms)} ms\n`);
  const stats = byCategory.get(c.category) ?? { cases: 0, outcomes: new Map<string, number>() };
  stats.cases++;
  stats.outcomes.set(o.kind, (stats.outcomes.get(o.kind) ?? 0) + 1);
  byCategory.set(c.category, stats);
  if (o.kind === 'silent') {
    const source = c.what.split(':')[0] ?? c.what;
    silentBySource.set(source, (silentBySource.get(source) ?? 0) + 1);
  }
  failures.push(...judge(c, o, ledger));
}

async function runRound(cases: FrameCase[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) await runCase(cases[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Well-behaved traffic while a round runs: kafkajs produces to the health topic
 * and the long-lived raw connection asks for Metadata, one request at a time,
 * until `stop` resolves. Returns how many of each succeeded and the first errors.
 */
async function backgroundTraffic(stop: Promise<void>): Promise<{ produced: number; metadata: number; errors: string[] }> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  const result = { produced: 0, metadata: 0, errors: [] as string[] };
  const produceLoop = async (): Promise<void> => {
    while (!stopped) {
      try {
        const [m] = await producer.send({ topic: healthTopic, acks: -1, messages: [{ key: `bg-${++healthSeq}`, value: 'during a round' }] });
        if (m?.errorCode === 0) result.produced++;
        else result.errors.push(`kafkajs produce error ${m?.errorCode}`);
      } catch (e) {
        result.errors.push(`kafkajs produce: ${String(e)}`);
      }
    }
  };
  const metadataLoop = async (): Promise<void> => {
    while (!stopped) {
      try {
        const { body } = await keepalive.send(apis.Metadata, () => ({ topics: [{ topicId: ZERO_UUID, name: targetTopic }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
        if (body.topics[0]?.errorCode === 0) result.metadata++;
        else result.errors.push(`metadata error ${body.topics[0]?.errorCode}`);
      } catch (e) {
        result.errors.push(`keepalive metadata: ${String(e)}`);
        return;
      }
    }
  };
  await Promise.all([produceLoop(), metadataLoop()]);
  return result;
}

async function endOffsets(): Promise<number[]> {
  const { body } = await keepalive.send(apis.ListOffsets, () => ({
    replicaId: -1,
    isolationLevel: 0,
    timeoutMs: 10_000,
    topics: [{ name: targetTopic, partitions: Array.from({ length: targetPartitions }, (_, p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 })) }],
  }));
  const parts = body.topics[0]?.partitions ?? [];
  return Array.from({ length: targetPartitions }, (_, p) => Number(parts.find((x) => x.partitionIndex === p)?.offset ?? -1));
}

/** The broker runs, the long-lived connection still answers, and kafkajs + kcat produce and fetch. */
async function checkHealth(label: string): Promise<void> {
  assert.ok(broker.alive, `${label}: broker process alive (exit: ${JSON.stringify(broker.exit)})\n${broker.logs.tail(20)}`);
  const key = `health-${++healthSeq}`;
  const [meta] = await producer.send({ topic: healthTopic, acks: -1, messages: [{ key, value: label }] });
  assert.ok(meta !== undefined && meta.errorCode === 0, `${label}: kafkajs produce`);
  const fetched = await runProcess(kcatPath, ['-C', '-b', broker.bootstrap, '-t', healthTopic, '-p', '0', '-o', String(meta.baseOffset), '-c', '1', '-e', '-q', '-f', '%k'], { timeoutMs: 20_000 });
  assert.equal(fetched.code, 0, `${label}: kcat fetch: ${fetched.stderr}`);
  assert.equal(fetched.stdout, key, `${label}: kcat fetched the record kafkajs produced`);
  const ends = await endOffsets();
  assert.deepEqual(ends, ledger.endOffsets(targetPartitions), `${label}: ${targetTopic} end offsets = accepted records (same long-lived connection)`);
}

describe(`fuzz: ${totalCases} cases in ${rounds} rounds, seed ${seed}`, () => {
  test('healthy before fuzzing', async () => {
    await checkHealth('before');
  });

  for (let r = 0; r < rounds; r++) {
    const n = Math.floor(totalCases / rounds) + (r < totalCases % rounds ? 1 : 0);
    test(`round ${r + 1}: ${n} cases, then a well-behaved client works`, async () => {
      const firstId = r * Math.floor(totalCases / rounds) + Math.min(r, totalCases % rounds);
      const cases = Array.from({ length: n }, (_, k) => generateCase(ctx, rng, firstId + k));
      const before = failures.length;
      let roundDone!: () => void;
      const traffic = backgroundTraffic(new Promise<void>((resolve) => (roundDone = resolve)));
      await runRound(cases);
      roundDone();
      const bg = await traffic;
      assert.deepEqual(bg.errors.slice(0, 5), [], 'well-behaved clients during the round');
      assert.ok(bg.produced > 0 && bg.metadata > 0, `well-behaved clients were served during the round: ${JSON.stringify(bg)}`);
      const mine = failures.slice(before);
      let health: unknown = null;
      await checkHealth(`after round ${r + 1}`).catch((e: unknown) => (health = e));
      assert.equal(mine.length, 0, `${mine.length} cases misbehaved:\n${mine.slice(0, 30).join('\n')}${health === null ? '' : `\nand the health check failed: ${String(health)}`}`);
      if (health !== null) throw health;
    });
  }

  test('compressed batches whose payload does not decode are refused (Kafka decompresses to validate)', () => {
    const bad = ledger.compressedPayloadAccepted;
    assert.equal(bad.length, 0, `${bad.length} accepted:\n${bad.slice(0, 10).join('\n')}`);
  });

  test('acknowledged offsets tile each partition exactly', () => {
    assert.deepEqual(ledger.checkTiling(targetPartitions), []);
  });

  test(`${targetTopic} serves exactly the accepted records (kcat)`, async () => {
    const r = await runProcess(kcatPath, ['-C', '-b', broker.bootstrap, '-t', targetTopic, '-o', 'beginning', '-e', '-q', '-f', '%p %o %k\n'], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.trim(), '', 'kcat reports no errors (a corrupt batch would)');
    const got = new Map<string, string>();
    for (const line of r.stdout.split('\n')) {
      const m = /^(\d+) (\d+) (.*)$/.exec(line);
      if (m !== null) got.set(`${m[1]}/${m[2]}`, m[3]!);
    }
    const ends = ledger.endOffsets(targetPartitions);
    assert.equal(got.size, ends.reduce((s, e) => s + e, 0), 'records served = records accepted');
    for (const a of ledger.accepted) {
      for (let k = 0; k < a.count; k++) {
        const key = got.get(`${a.partition}/${a.baseOffset + k}`);
        assert.ok(key !== undefined, `partition ${a.partition} offset ${a.baseOffset + k} (case ${a.caseId}) is served`);
        if (a.keys !== undefined) assert.equal(key, a.keys[k], `partition ${a.partition} offset ${a.baseOffset + k} (case ${a.caseId})`);
      }
    }
  });

  test('odd topic names created nothing outside the log directory and no illegal partition directories', () => {
    const legal = /^[a-zA-Z0-9._-]{1,249}-\d+$/;
    const known = new Set(['meta.properties', 'topics', 'producer-ids', 'cleaner-offset-checkpoint']);
    const odd = readdirSync(broker.dataDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !legal.test(e.name) && !known.has(e.name) && e.name !== 'remote')
      .map((e) => e.name);
    assert.deepEqual(odd, [], 'directories that are not <legal topic>-<partition>');
    const partitionDirs = readdirSync(broker.dataDir).filter((n) => legal.test(n));
    assert.ok(partitionDirs.every((n) => !/^\.\.?-\d+$/.test(n)), 'no "." or ".." topics');
    const siblings = readdirSync(path.dirname(broker.dataDir)).filter((n) => /^(escape|b)-\d+$/.test(n));
    assert.deepEqual(siblings, [], 'nothing created next to the log directory');
  });

  test('the broker logged no internal errors', () => {
    const errors = broker.logs.atLeast(LogLevel.error);
    assert.equal(errors.length, 0, errors.slice(0, 20).map((l) => JSON.stringify(l)).join('\n'));
  });
});
