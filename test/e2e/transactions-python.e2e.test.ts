// confluent-kafka-python (librdkafka) transactions against a Sediment child
// process: commit, abort, send_offsets_to_transaction from a group member,
// and what read_committed / read_uncommitted consumers see.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runProcess } from '../clients/common.js';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools, systemPython } from '../support/tools.js';

let broker: SedimentProcess;

before(async () => {
  requireTools(['python-confluent-kafka']);
  broker = await startSediment();
});

after(async () => {
  await broker?.close();
});

const program = String.raw`
import json, sys, time
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
bootstrap = sys.argv[1]
admin = AdminClient({'bootstrap.servers': bootstrap})
for f in admin.create_topics([NewTopic('py-in', 1, 1), NewTopic('py-out', 2, 1)]).values():
    f.result()
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'py-tx'})
p.init_transactions(30)
p.begin_transaction()
for i in range(5):
    p.produce('py-in', key=b'k%d' % i, value=b'in%d' % i)
p.commit_transaction(30)
p.begin_transaction()
p.produce('py-out', key=b'k', value=b'aborted')
p.flush()
p.abort_transaction(30)

c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'py-txn-group', 'isolation.level': 'read_committed',
              'auto.offset.reset': 'earliest', 'enable.auto.commit': False})
c.subscribe(['py-in'])
got = []
deadline = time.time() + 30
while len(got) < 5 and time.time() < deadline:
    m = c.poll(0.2)
    if m is not None and m.error() is None:
        got.append(m)
p.begin_transaction()
for m in got:
    p.produce('py-out', key=m.key(), value=b't-' + m.value())
p.send_offsets_to_transaction([TopicPartition('py-in', 0, got[-1].offset() + 1)], c.consumer_group_metadata(), 30)
p.commit_transaction(30)
committed = c.committed([TopicPartition('py-in', 0)], timeout=10)[0].offset
c.close()

def read_all(isolation):
    r = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'py-reader-' + isolation, 'isolation.level': isolation,
                  'auto.offset.reset': 'earliest', 'enable.auto.commit': False})
    tps = [TopicPartition('py-out', 0, 0), TopicPartition('py-out', 1, 0)]
    r.assign(tps)
    ends = [r.get_watermark_offsets(tp, timeout=10)[1] for tp in tps]
    values = []
    deadline = time.time() + 30
    while time.time() < deadline:
        m = r.poll(0.2)
        if m is not None and m.error() is None:
            values.append(m.value().decode())
        pos = r.position(tps)
        if all(pp.offset >= e for pp, e in zip(pos, ends)):
            break
    r.close()
    return sorted(values)
print(json.dumps({'consumed': len(got), 'committed': committed,
                  'readCommitted': read_all('read_committed'), 'readUncommitted': read_all('read_uncommitted')}))
`;

test('confluent-kafka-python: commit, abort, send_offsets_to_transaction, read_committed', { timeout: 180_000 }, async () => {
  const r = await runProcess(systemPython, ['-c', program, broker.bootstrap], { timeoutMs: 150_000 });
  assert.equal(r.code, 0, `python exited ${r.code}:\n${r.stdout}\n${r.stderr.slice(-4000)}`);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { consumed: number; committed: number; readCommitted: string[]; readUncommitted: string[] };
  assert.equal(out.consumed, 5);
  assert.equal(out.committed, 5);
  const transformed = [0, 1, 2, 3, 4].map((i) => `t-in${i}`);
  assert.deepEqual(out.readCommitted, transformed);
  assert.deepEqual(out.readUncommitted, ['aborted', ...transformed].sort());
  const errors = broker.logs.atLeast(LogLevel.error);
  assert.equal(errors.length, 0, errors.map((l) => JSON.stringify(l)).join('\n'));
});
