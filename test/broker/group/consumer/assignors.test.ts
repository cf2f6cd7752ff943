import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rangeAssign, uniformAssign, type AssignorMember } from '../../../../broker/group/consumer/assignors.js';

function member(memberId: string, topics: string[], current: Record<string, number[]> = {}): AssignorMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    subscribedTopicIds: new Set(topics),
    currentTarget: new Map(Object.entries(current).map(([t, ps]) => [t, new Set(ps)])),
  };
}

const count = (a: Map<string, Set<number>> | undefined): number => [...(a ?? new Map<string, Set<number>>()).values()].reduce((n, s) => n + s.size, 0);

function everyPartitionOnce(result: Map<string, Map<string, Set<number>>>, counts: Map<string, number>): void {
  const seen = new Set<string>();
  for (const a of result.values()) {
    for (const [t, ps] of a) {
      for (const p of ps) {
        assert.ok(!seen.has(`${t}:${p}`), `${t}:${p} twice`);
        seen.add(`${t}:${p}`);
      }
    }
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  assert.equal(seen.size, total);
}

test('uniform: every partition once, counts within one for equal subscriptions', () => {
  const partitionCounts = new Map([['a', 7], ['b', 3]]);
  const result = uniformAssign({ members: [member('m1', ['a', 'b']), member('m2', ['a', 'b']), member('m3', ['a', 'b'])], partitionCounts });
  everyPartitionOnce(result, partitionCounts);
  const sizes = [...result.values()].map(count).sort();
  assert.deepEqual(sizes, [3, 3, 4]);
});

test('uniform: sticky, a new member takes only its share from the others', () => {
  const partitionCounts = new Map([['a', 6]]);
  const result = uniformAssign({
    members: [member('m1', ['a'], { a: [0, 1, 2] }), member('m2', ['a'], { a: [3, 4, 5] }), member('m3', ['a'])],
    partitionCounts,
  });
  everyPartitionOnce(result, partitionCounts);
  assert.equal(count(result.get('m3')), 2);
  // Each old member keeps two of its own three.
  for (const [m, own] of [['m1', [0, 1, 2]], ['m2', [3, 4, 5]]] as const) {
    const kept = [...(result.get(m)?.get('a') ?? [])].filter((p) => (own as readonly number[]).includes(p));
    assert.equal(kept.length, 2, `${m} kept ${kept.join(',')}`);
  }
});

test('uniform: heterogeneous subscriptions only give members their topics', () => {
  const partitionCounts = new Map([['a', 4], ['b', 2]]);
  const result = uniformAssign({ members: [member('m1', ['a']), member('m2', ['a', 'b'])], partitionCounts });
  everyPartitionOnce(result, partitionCounts);
  assert.equal(result.get('m1')?.has('b') ?? false, false);
  assert.equal(count(result.get('m1')), 3);
  assert.equal(count(result.get('m2')), 3);
});

test('range: contiguous ranges by sorted member id, the first ones one more', () => {
  const result = rangeAssign({ members: [member('b', ['t']), member('a', ['t']), member('c', ['t'])], partitionCounts: new Map([['t', 7]]) });
  assert.deepEqual([...(result.get('a')?.get('t') ?? [])], [0, 1, 2]);
  assert.deepEqual([...(result.get('b')?.get('t') ?? [])], [3, 4]);
  assert.deepEqual([...(result.get('c')?.get('t') ?? [])], [5, 6]);
});

// Kafka 4.3.1's server-side assignors have no rack logic (removed in 3.8, KAFKA-16694):
// members' racks must not change what uniform or range assign.
test('uniform and range: member racks do not change the assignment, as in Kafka 4.3.1', () => {
  const partitionCounts = new Map([['a', 5], ['b', 4]]);
  const plain = [member('m1', ['a', 'b'], { a: [0, 1] }), member('m2', ['a', 'b']), member('m3', ['a'])];
  const racked = plain.map((m, i) => ({ ...m, rackId: `rack-${i % 2}` }));
  for (const assign of [uniformAssign, rangeAssign]) {
    const withRacks = assign({ members: racked, partitionCounts });
    everyPartitionOnce(withRacks, partitionCounts);
    assert.deepEqual(withRacks, assign({ members: plain, partitionCounts }), assign.name);
  }
});
