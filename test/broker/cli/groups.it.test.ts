// `sediment groups` against a real broker (Apache Kafka 4.3.1 by default; see
// cli-harness.ts). A kafkajs consumer commits in a group; the CLI's lag numbers,
// members and state are checked while it is active and after it left; resets are
// refused while it is active, and afterwards dry-run vs --execute, every strategy
// (including --to-datetime over CreateTime) and the clamping are verified with
// OffsetFetch through kafkajs; finally the group is deleted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Consumer, Kafka } from 'kafkajs';
import { cli, eventually, kafkaClient, parseTable, produce, startCliTarget, type CliTarget } from './cli-harness.js';

let target: CliTarget;
let b: string;
let kafka: Kafka;
const topic = `cli-groups-${process.pid}`;
const group = `cli-group-${process.pid}`;
const clientId = 'cli-groups-test';
// CreateTime of record i in every partition: base + i seconds.
const base = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;

before(async () => {
  target = await startCliTarget();
  b = target.bootstrap;
  kafka = kafkaClient(b, clientId);
  const created = await cli('topics', ['--bootstrap-server', b, '--create', '--topic', topic, '--partitions', '3']);
  assert.equal(created.code, 0, created.stderr);
  for (let p = 0; p < 3; p++) await produce(kafka, topic, p, 10, base);
});
after(async () => {
  await target.stop();
});

async function committed(groupId: string): Promise<number[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return (t?.partitions ?? []).sort((x, y) => x.partition - y.partition).map((p) => Number(p.offset));
  } finally {
    await admin.disconnect();
  }
}

function describeRows(stdout: string): Array<Record<string, string>> {
  return parseTable(stdout, 'GROUP').filter((r) => r['TOPIC'] === topic);
}

const ids = (rows: Array<Record<string, string>>, col: string): string[] => rows.map((r) => r[col] ?? '');

let consumer: Consumer;
let memberId = '';

test('an active group: lag per partition and max lag, members, state; reset and delete are refused', async () => {
  consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    memberId = e.payload.memberId;
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let consumed = 0;
  const all = new Promise<void>((resolve, reject) => {
    // A retriable crash (e.g. GROUP_LOAD_IN_PROGRESS while a loaded broker reads its offsets topic) restarts the consumer.
    consumer.on(consumer.events.CRASH, (e) => {
      if (!e.payload.restart) reject(e.payload.error);
    });
    consumer.run({
      autoCommit: false,
      eachMessage: async () => {
        if (++consumed === 30) resolve();
      },
    }).catch(reject);
  });
  await all;
  consumer.pause([{ topic }]);
  await consumer.commitOffsets([0, 1, 2].map((partition) => ({ topic, partition, offset: '10' })));
  for (let p = 0; p < 3; p++) await produce(kafka, topic, p, 5, base, 1000, 10);

  const d = await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group]);
  assert.equal(d.code, 0, d.stderr);
  const rows = describeRows(d.stdout);
  assert.deepEqual(ids(rows, 'PARTITION'), ['0', '1', '2']);
  assert.deepEqual(ids(rows, 'CURRENT-OFFSET'), ['10', '10', '10']);
  assert.deepEqual(ids(rows, 'LOG-END-OFFSET'), ['15', '15', '15']);
  assert.deepEqual(ids(rows, 'LAG'), ['5', '5', '5']);
  assert.deepEqual(ids(rows, 'CONSUMER-ID'), [memberId, memberId, memberId]);
  assert.deepEqual(ids(rows, 'CLIENT-ID'), [clientId, clientId, clientId]);
  assert.ok(rows.every((r) => (r['HOST'] ?? '').includes('127.0.0.1')), d.stdout);
  assert.match(d.stdout, /\nMax lag: 5\n$/);
  assert.doesNotMatch(d.stdout, /no active members/);

  const members = await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group, '--members']);
  assert.deepEqual(parseTable(members.stdout, 'GROUP').map((r) => [r['CONSUMER-ID'], r['CLIENT-ID'], r['#PARTITIONS']]), [[memberId, clientId, '3']]);
  const state = await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group, '--state']);
  assert.deepEqual(parseTable(state.stdout, 'GROUP').map((r) => [r['STATE'], r['#MEMBERS']]), [['Stable', '1']]);
  const listed = await cli('groups', ['--bootstrap-server', b, '--list', '--state']);
  assert.deepEqual(parseTable(listed.stdout, 'GROUP').filter((r) => r['GROUP'] === group).map((r) => r['STATE']), ['Stable']);

  const reset = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute']);
  assert.deepEqual(reset, {
    code: 1,
    stdout: '',
    stderr: `Error: Assignments can only be reset if the group '${group}' is inactive, but the current state is Stable.\n`,
  });
  const del = await cli('groups', ['--bootstrap-server', b, '--delete', '--group', group]);
  assert.equal(del.code, 1);
  assert.match(del.stderr, /NON_EMPTY_GROUP/);
  assert.deepEqual(await committed(group), [10, 10, 10]);
});

test('after the consumer left: no active members, lag still reported', async () => {
  await consumer.disconnect();
  await eventually('the group to become Empty', async () => (await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group, '--state'])).stdout.includes('Empty'));
  const d = await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group]);
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, new RegExp(`Consumer group '${group}' has no active members.`));
  const rows = describeRows(d.stdout);
  assert.deepEqual(ids(rows, 'LAG'), ['5', '5', '5']);
  assert.deepEqual(ids(rows, 'CONSUMER-ID'), ['-', '-', '-']);
  assert.match(d.stdout, /\nMax lag: 5\n$/);
  const list = await cli('groups', ['--bootstrap-server', b, '--list']);
  assert.ok(list.stdout.split('\n').includes(group), list.stdout);
});

function plan(stdout: string): string[] {
  return parseTable(stdout, 'GROUP').map((r) => `${r['TOPIC']}:${r['PARTITION']}=${r['NEW-OFFSET']}`);
}

test('reset-offsets: dry-run by default changes nothing; --execute commits', async () => {
  const dry = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-earliest']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(plan(dry.stdout), [`${topic}:0=0`, `${topic}:1=0`, `${topic}:2=0`]);
  assert.match(dry.stderr, /No action will be performed as the --execute option is missing/);
  assert.deepEqual(await committed(group), [10, 10, 10]);
  const explicit = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--dry-run']);
  assert.deepEqual([explicit.code, explicit.stderr], [0, '']);

  const exec = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-offset', '3', '--execute']);
  assert.equal(exec.code, 0, exec.stderr);
  assert.deepEqual(plan(exec.stdout), [`${topic}:0=3`, `${topic}:1=3`, `${topic}:2=3`]);
  assert.deepEqual(await committed(group), [3, 3, 3]);

  const describe = describeRows((await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group])).stdout);
  assert.deepEqual(ids(describe, 'LAG'), ['12', '12', '12']);
});

test('reset-offsets: shift-by on chosen partitions, clamping, to-latest, to-earliest', async () => {
  const shift = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', `${topic}:0`, '--shift-by', '-1', '--execute']);
  assert.deepEqual(plan(shift.stdout), [`${topic}:0=2`]);
  assert.deepEqual(await committed(group), [2, 3, 3]);

  const clamped = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', `${topic}:1,2`, '--shift-by', '100', '--dry-run']);
  assert.deepEqual(plan(clamped.stdout), [`${topic}:1=15`, `${topic}:2=15`]);
  assert.match(clamped.stderr, new RegExp(`WARN: New offset \\(103\\) is higher than latest offset for ${topic}-1. Value will be set to 15`));
  const below = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-offset', '-4', '--dry-run']);
  assert.deepEqual(plan(below.stdout), [`${topic}:0=0`, `${topic}:1=0`, `${topic}:2=0`]);

  assert.equal((await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--all-topics', '--to-latest', '--execute'])).code, 0);
  assert.deepEqual(await committed(group), [15, 15, 15]);
  assert.equal((await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute'])).code, 0);
  assert.deepEqual(await committed(group), [0, 0, 0]);
});

test('reset-offsets --to-datetime: first record at or after the time, the end when none, any zone', async () => {
  const iso = (ms: number): string => new Date(ms).toISOString();
  const exec = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-datetime', iso(base + 4500), '--execute']);
  assert.equal(exec.code, 0, exec.stderr);
  assert.deepEqual(plan(exec.stdout), [`${topic}:0=5`, `${topic}:1=5`, `${topic}:2=5`]);
  assert.deepEqual(await committed(group), [5, 5, 5]);

  // The same instant written as UTC+02:00; and exactly on a record's timestamp.
  const shifted = new Date(base + 2 * 3_600_000 + 12_000).toISOString().replace('Z', '+02:00');
  assert.deepEqual(plan((await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-datetime', shifted])).stdout), [
    `${topic}:0=12`, `${topic}:1=12`, `${topic}:2=12`,
  ]);
  const late = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-datetime', iso(base + 3_600_000_000)]);
  assert.deepEqual(plan(late.stdout), [`${topic}:0=15`, `${topic}:1=15`, `${topic}:2=15`]);
  const early = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-datetime', iso(base - 3_600_000)]);
  assert.deepEqual(plan(early.stdout), [`${topic}:0=0`, `${topic}:1=0`, `${topic}:2=0`]);
});

test('reset-offsets: unknown topic or partition is an error; a new group gets offsets', async () => {
  const unknown = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', `${topic}-nope`, '--to-earliest']);
  assert.deepEqual([unknown.code, unknown.stderr], [1, `Error: topic '${topic}-nope' does not exist\n`]);
  const badPartition = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', `${topic}:9`, '--to-earliest']);
  assert.deepEqual([badPartition.code, badPartition.stderr], [1, `Error: topic '${topic}' has no partition 9 (it has 3)\n`]);

  const fresh = `${group}-fresh`;
  const shiftless = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', fresh, '--topic', topic, '--shift-by', '1']);
  assert.equal(shiftless.code, 1);
  assert.match(shiftless.stderr, new RegExp(`cannot shift the offset of ${topic}-0: the group has no committed offset`));
  const created = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', fresh, '--topic', topic, '--to-offset', '7', '--execute']);
  assert.equal(created.code, 0, created.stderr);
  assert.deepEqual(await committed(fresh), [7, 7, 7]);
  const d = await cli('groups', ['--bootstrap-server', b, '--describe', '--group', fresh]);
  assert.deepEqual(ids(describeRows(d.stdout), 'LAG'), ['8', '8', '8']);
  assert.match(d.stdout, /Max lag: 8/);
});

test('delete: removes the group; describing or deleting it again fails', async () => {
  const del = await cli('groups', ['--bootstrap-server', b, '--delete', '--group', group, '--group', `${group}-fresh`]);
  assert.deepEqual(del, { code: 0, stdout: `Deletion of requested consumer groups ('${group}', '${group}-fresh') was successful.\n`, stderr: '' });
  const d = await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group]);
  assert.deepEqual(d, { code: 1, stdout: '', stderr: `Error: Consumer group '${group}' does not exist.\n` });
  assert.ok(!(await cli('groups', ['--bootstrap-server', b, '--list'])).stdout.split('\n').includes(group));
  const again = await cli('groups', ['--bootstrap-server', b, '--delete', '--group', group]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /GROUP_ID_NOT_FOUND/);
});
