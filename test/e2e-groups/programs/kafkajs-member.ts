// One kafkajs group member in its own process, so a test can SIGKILL it (the
// coordinator then only learns of its death by the session timeout).
//   node kafkajs-member.js <bootstrap> <group> <topic> <clientId> [sessionTimeoutMs] [autoCommitIntervalMs]
// Without autoCommitIntervalMs kafkajs commits after every batch; with it, the
// member commits what it processed on that timer instead (kafkajs 2 would still
// commit after each batch with its own autoCommitInterval), so a kill leaves
// processed but uncommitted records behind.
// stdout, one JSON object a line, written synchronously (a record's line is in
// the pipe before its offset can be committed, so a kill loses no report):
//   {"ev":"join","memberId":...,"leader":true,"partitions":[...]}
//   {"ev":"rec","p":0,"o":"12","k":"key-3","v":"77"}
//   {"ev":"commit","gen":4,"p":0,"o":"13"}  (offsets kafkajs committed)
//   {"ev":"crash","error":"..."}  {"ev":"left"}
// SIGTERM: disconnect (LeaveGroup) and exit 0.
import { writeSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';

const [bootstrap, groupId, topic, clientId, sessionTimeoutArg, commitIntervalArg] = process.argv.slice(2);
if (bootstrap === undefined || groupId === undefined || topic === undefined || clientId === undefined) {
  process.stderr.write('usage: kafkajs-member <bootstrap> <group> <topic> <clientId> [sessionTimeoutMs] [autoCommitIntervalMs]\n');
  process.exit(2);
}
const sessionTimeout = Number(sessionTimeoutArg ?? '6000');
const autoCommitInterval = commitIntervalArg === undefined ? null : Number(commitIntervalArg);

function emit(o: Record<string, unknown>): void {
  writeSync(1, `${JSON.stringify(o)}\n`);
}

const kafka = new Kafka({ brokers: [bootstrap], clientId, logLevel: logLevel.NOTHING, retry: { retries: 10 } });
const consumer = kafka.consumer({ groupId, sessionTimeout, heartbeatInterval: 500, maxWaitTimeInMs: 250, rebalanceTimeout: 30_000 });

// Timer commits: next offset per partition processed since the last commit.
const pending = new Map<number, string>();

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
    emit({ ev: 'rec', p: partition, o: message.offset, k: message.key?.toString('utf8') ?? null, v: message.value?.toString('utf8') ?? null });
    if (autoCommitInterval !== null) pending.set(partition, String(BigInt(message.offset) + 1n));
  },
});
