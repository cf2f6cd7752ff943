// Compatibility-matrix driver for kcat (librdkafka). kcat has no admin API, so
// the topic is created with kafkajs's admin client, and kcat's group offsets are
// read back with it too. kcat produces stdin lines "key<TAB>value" with headers
// fixed per run, so each codec slice runs one `kcat -P -p <p>` per partition
// (headers src=kcat, part=<p>; librdkafka's CreateTime); the group consumer is
// `kcat -G <group> -o beginning -e -J` (balanced consumer, commits on exit);
// offsets are listed with `kcat -Q` (-2 earliest, -1 latest, timestamps).
import { Kafka, logLevel } from 'kafkajs';
import { createTopic, runProcess, type ProcessResult } from '../clients/common.js';
import { consumeKcatJson, partitionLines } from '../clients/kcat-common.js';
import { kcatPath } from '../support/tools.js';
import { OperationReport, codecSlices, type CompatRunOptions, type CompatSummary } from './summary.js';
import { PlacedVerifier, Placement } from './verify.js';

const client = 'kcat';

/** kcat with `input` on stdin (null: none). */
function kcat(args: readonly string[], input: Iterable<string> | null, timeoutMs: number): Promise<ProcessResult> {
  return runProcess(kcatPath, args, { ...(input === null ? {} : { input }), timeoutMs });
}

function consumeGroup(o: CompatRunOptions, v: PlacedVerifier): Promise<void> {
  return consumeKcatJson(['-b', o.bootstrap, '-G', o.group, o.topic, '-o', 'beginning', '-e', '-q', '-J'], {
    label: 'kcat -G',
    timeoutMs: o.timeoutMs,
    error: (m) => v.error(m),
    consumed: () => v.consumed,
    onRecord: (r) => v.observe(r),
  });
}

/** `kcat -Q` for one offset or timestamp on every partition. */
async function query(o: CompatRunOptions, at: number): Promise<Map<number, number>> {
  const args = ['-Q', '-b', o.bootstrap];
  for (let p = 0; p < o.partitions; p++) args.push('-t', `${o.topic}:${p}:${at}`);
  const r = await kcat(args, null, 60_000);
  if (r.code !== 0) throw new Error(`kcat -Q ${at}: exit ${r.code ?? r.signal}: ${r.stderr.trim().slice(-500)}`);
  const got = new Map<number, number>();
  for (const m of r.stdout.matchAll(/^(.*) \[(\d+)\] offset (-?\d+)$/gm)) if (m[1] === o.topic) got.set(Number(m[2]), Number(m[3]));
  return got;
}

export async function runKcatCompat(o: CompatRunOptions): Promise<CompatSummary> {
  const version = await kcat(['-V'], null, 10_000);
  const clientVersion = `${/Version (\S+)/.exec(version.stdout + version.stderr)?.[1] ?? '?'} (librdkafka ${/librdkafka (\d\S*)/.exec(version.stdout + version.stderr)?.[1] ?? '?'})`;
  const report = new OperationReport(client, clientVersion, o.codecs, true, o.count);
  const placement = Placement.modulo(o.count, o.partitions);
  const headersOf = (i: number): Array<[string, string]> => [
    ['src', client],
    ['part', String(i % o.partitions)],
  ];
  let window = { start: Date.now(), end: Date.now() };
  const v0: { v: PlacedVerifier | null } = { v: null };

  await report.op('createTopic', async () => {
    await createTopic(o.bootstrap, o.topic, o.partitions);
    return 'n/a for kcat: created with kafkajs admin';
  });

  await report.op('produce', async () => {
    window = { start: Date.now(), end: Date.now() };
    const parts: string[] = [];
    for (const { codec, from, to } of codecSlices(o.count, o.codecs)) {
      const runs = Array.from({ length: o.partitions }, async (_, p) => {
        const args = ['-P', '-b', o.bootstrap, '-t', o.topic, '-p', String(p), '-K', '\t', '-H', `src=${client}`, '-H', `part=${p}`, '-z', codec, '-X', 'enable.idempotence=true', '-X', 'linger.ms=5'];
        const r = await kcat(args, partitionLines(from, to, o.partitions, p), o.timeoutMs);
        if (r.code !== 0 || /error|fail/i.test(r.stderr)) report.error(`kcat -P ${codec} partition ${p}: exit ${r.code ?? r.signal}: ${r.stderr.trim().slice(-800)}`);
      });
      await Promise.all(runs);
      parts.push(`${codec} ${to - from}`);
    }
    window = { start: window.start, end: Date.now() };
    return `${o.count} records (${parts.join(', ')}), idempotent`;
  });

  await report.op('consumeGroup', async () => {
    const v = new PlacedVerifier(placement, headersOf, window);
    v0.v = v;
    await consumeGroup(o, v);
    v.finish();
    for (const e of v.errors) report.error(e);
    return `${v.consumed} records, committed on exit`;
  });

  await report.op('listOffsets', async () => {
    const v = v0.v;
    if (v === null) throw new Error('nothing consumed');
    const expect = (what: string, got: Map<number, number>, want: (p: number) => number): void => {
      for (let p = 0; p < o.partitions; p++) if (got.get(p) !== want(p)) report.error(`${what} partition ${p}: ${got.get(p) ?? 'missing'}, expected ${want(p)}`);
    };
    expect('-2 (earliest)', await query(o, -2), () => 0);
    expect('-1 (latest)', await query(o, -1), (p) => placement.counts[p]!);
    const samples = v.sampleTimestamps();
    for (const ts of samples) expect(`timestamp ${ts}`, await query(o, ts), (p) => v.offsetForTimestamp(p, ts));
    return `-2, -1, ${samples.length} timestamps`;
  });

  await report.op('groupLag', async () => {
    const admin = new Kafka({ clientId: 'sediment-compat-kcat-lag', brokers: [o.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId: o.group, topics: [o.topic] });
      const ends = await admin.fetchTopicOffsets(o.topic);
      let total = 0;
      for (let p = 0; p < o.partitions; p++) {
        const c = committed?.partitions.find((x) => x.partition === p);
        const end = ends.find((x) => x.partition === p);
        const lag = Number(end?.high ?? -1) - Number(c?.offset ?? -1);
        if (Number(c?.offset) !== placement.counts[p] || lag !== 0) report.error(`partition ${p}: committed ${c?.offset}, high ${end?.high}, expected ${placement.counts[p]} and lag 0`);
        total += lag;
      }
      return `kcat's commits (read with kafkajs admin): total lag ${total}`;
    } finally {
      await admin.disconnect();
    }
  });

  return report.summary();
}
