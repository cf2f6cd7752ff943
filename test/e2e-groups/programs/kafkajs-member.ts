// One kafkajs group member in its own process, so a test can SIGKILL it (the
// coordinator then only learns of its death by the session timeout).
//   node kafkajs-member.js --bootstrap H:P --group G --topic T --client-id C
//     [--session-timeout MS] [--rebalance-timeout MS] [--commit-interval MS]
// Without --commit-interval kafkajs commits after every batch; with it, the
// member commits what it processed on that timer instead (kafkajs 2 would still
// commit after each batch with its own autoCommitInterval), so a kill leaves
// processed but uncommitted records behind.
// stdout, one JSON object a line, written synchronously (a record's line is in
// the pipe before its offset can be committed, so a kill loses no report):
//   {"ev":"join","memberId":...,"leader":true,"partitions":[...]}
//   {"ev":"rec","p":0,"o":"12","k":"key-3","v":"77"}
//   {"ev":"commit","gen":4,"p":0,"o":"13"}  (offsets kafkajs committed)
//   {"ev":"blocked"} {"ev":"unblocked"}  {"ev":"crash","error":"..."}  {"ev":"left"}
// stdin: "block MS" makes the next message's processing take MS (no heartbeats
// meanwhile: kafkajs heartbeats between messages). SIGTERM: disconnect
// (LeaveGroup) and exit 0.
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';

const { values: opts } = parseArgs({
  options: {
    bootstrap: { type: 'string' },
    group: { type: 'string' },
    topic: { type: 'string' },
    'client-id': { type: 'string', default: 'kafkajs-member' },
    'session-timeout': { type: 'string', default: '6000' },
    'rebalance-timeout': { type: 'string', default: '30000' },
    'commit-interval': { type: 'string' },
  },
});
const { bootstrap, group: groupId, topic } = opts;
if (bootstrap === undefined || groupId === undefined || topic === undefined) {
  process.stderr.write('usage: kafkajs-member --bootstrap H:P --group G --topic T [--client-id C] [--session-timeout MS] [--rebalance-timeout MS] [--commit-interval MS]\n');
  process.exit(2);
}
const autoCommitInterval = opts['commit-interval'] === undefined ? null : Number(opts['commit-interval']);

function emit(o: Record<string, unknown>): void {
  writeSync(1, `${JSON.stringify(o)}\n`);
}

const kafka = new Kafka({ brokers: [bootstrap], clientId: opts['client-id'], logLevel: logLevel.NOTHING, retry: { retries: 10 } });
const consumer = kafka.consumer({
  groupId,
  sessionTimeout: Number(opts['session-timeout']),
  rebalanceTimeout: Number(opts['rebalance-timeout']),
  heartbeatInterval: 500,
  maxWaitTimeInMs: 250,
});

// Timer commits: next offset per partition processed since the last commit.
const pending = new Map<number, string>();
let blockMs = 0;

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = /^block (\d+)$/.exec(line.trim());
  if (m !== null) blockMs = Number(m[1]);
});

consumer.on(consumer.events.GROUP_JOIN, (e) => {
  const partitions = [...(e.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
  for (const p of [...pending.keys()]) if (!partitions.includes(p)) pending.delete(p);
  emit({ ev: 'join', memberId: e.payload.memberId, leader: e.payload.isLeader, partitions });
});
consumer.on(consumer.events.COMMIT_OFFSETS, (e) => {
  for (const t of e.payload.topics) for (const p of t.partitions) emit({ ev: 'commit', gen: e.payload.groupGenerationId, p: Number(p.partition), o: p.offset });
});
consumer.on(consumer.events.CRASH, (e) => emit({ ev: 'crash', error: String(e.payload.error), restart: e.payload.restart }));

let leaving = false;
process.on('SIGTERM', () => {
  if (leaving) return;
  leaving = true;
  void consumer.disconnect().then(
    () => {
      emit({ ev: 'left' });
      process.exit(0);
    },
    (err: unknown) => {
      emit({ ev: 'crash', error: String(err) });
      process.exit(1);
    },
  );
});

if (autoCommitInterval !== null) {
  setInterval(() => {
    if (pending.size === 0 || leaving) return;
    const offsets = [...pending].map(([partition, offset]) => ({ topic, partition, offset }));
    pending.clear();
    // A commit refused during a rebalance is simply lost: the next owner re-reads those records.
    consumer.commitOffsets(offsets).catch((err: unknown) => emit({ ev: 'commit-failed', error: String(err) }));
  }, autoCommitInterval);
}

await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
await consumer.run({
  autoCommit: autoCommitInterval === null,
  eachMessage: async ({ partition, message }) => {
    if (blockMs > 0) {
      const ms = blockMs;
      blockMs = 0;
      emit({ ev: 'blocked', ms });
      await new Promise((r) => setTimeout(r, ms));
      emit({ ev: 'unblocked' });
    }
    emit({ ev: 'rec', p: partition, o: message.offset, k: message.key?.toString('utf8') ?? null, v: message.value?.toString('utf8') ?? null });
    if (autoCommitInterval !== null) pending.set(partition, String(BigInt(message.offset) + 1n));
  },
});
