import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PlacedVerifier, Placement, keyedPartition, murmur2 } from './verify.js';
import { recordKey, recordValue } from '../clients/content.js';

test("murmur2 matches Kafka's Utils.murmur2 (values from kafka-clients 4.1.1)", () => {
  const cases: Array<[string, number]> = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['abc', 479470107],
    ['k-0', 43242055],
    ['k-12345', -1163402821],
    ['', 275646681],
    ['k-49999', 1890866327],
  ];
  for (const [s, want] of cases) assert.equal(murmur2(Buffer.from(s, 'utf8')), want, s);
  // As observed from the console producer: k-0 on partition 1, k-1 on partition 2 of 3.
  assert.equal(keyedPartition('k-0', 3), 1);
  assert.equal(keyedPartition('k-1', 3), 2);
});

test('PlacedVerifier: offsets follow the placement; gaps, duplicates, wrong bytes and time going back are errors', () => {
  const placement = new Placement(6, 2, (i) => (i < 4 ? 0 : 1));
  assert.deepEqual(placement.counts, [4, 2]);
  const headers = (i: number): Array<[string, string]> => [['idx', String(i)]];
  const rec = (partition: number, offset: number, i: number, timestamp: number) => ({
    partition, offset, key: recordKey(i), value: recordValue(i), headers: headers(i), timestamp, createTime: true,
  });
  const ok = new PlacedVerifier(placement, headers, { start: 1000, end: 2000 });
  [rec(0, 0, 0, 1000), rec(0, 1, 1, 1000), rec(1, 0, 4, 1500), rec(0, 2, 2, 1200), rec(0, 3, 3, 1300), rec(1, 1, 5, 1600)].forEach((r) => ok.observe(r));
  ok.finish();
  assert.deepEqual(ok.errors, []);
  assert.ok(ok.complete);
  assert.equal(ok.offsetForTimestamp(0, 1100), 2);
  assert.equal(ok.offsetForTimestamp(0, 1000), 0);
  assert.equal(ok.offsetForTimestamp(1, 1601), -1);

  const bad = new PlacedVerifier(placement, headers, { start: 1000, end: 2000 });
  bad.observe(rec(0, 0, 0, 1000));
  bad.observe(rec(0, 2, 2, 1200)); // gap
  bad.observe({ ...rec(0, 3, 3, 1100), value: 'x' }); // wrong value, time goes back
  bad.observe(rec(1, 0, 0, 1500)); // duplicate
  bad.observe(rec(1, 1, 5, 9000)); // outside the window
  bad.finish();
  const text = bad.errors.join('\n');
  for (const want of ['gap or reorder', 'value of record 3 differs', 'goes back', 'duplicate of record 0', 'outside the produce window', 'records missing']) {
    assert.match(text, new RegExp(want));
  }
});
