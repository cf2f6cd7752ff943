// The pure pieces behind the metrics and endpoints: JSON for int64 values,
// record counting in batch headers, merging segment blocks for the picture,
// and counters fed from totals that may disappear or start over.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { toJson } from '../../../broker/http/json.js';
import { mergeBlocks, type SegmentBlock } from '../../../broker/metrics/broker-view.js';
import { CumulativeCounter } from '../../../broker/metrics/cumulative-counter.js';
import { apiName, countRecords } from '../../../broker/metrics/request-metrics.js';

/** A v2 batch header (61 bytes) followed by `bodyBytes` bytes, claiming `records` records. */
function batch(records: number, bodyBytes: number, magic = 2): Buffer {
  const b = Buffer.alloc(61 + bodyBytes);
  b.writeBigInt64BE(0n, 0);
  b.writeInt32BE(49 + bodyBytes, 8);
  b.writeInt8(magic, 16);
  b.writeInt32BE(records, 57);
  return b;
}

describe('toJson', () => {
  it('writes int64 values as numbers while exact and as decimal strings beyond 2^53', () => {
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    assert.equal(toJson({ a: 5n, b: max, c: max + 1n, d: -max - 1n, e: -1n, f: 'x' }), `{"a":5,"b":${max},"c":"${max + 1n}","d":"${-max - 1n}","e":-1,"f":"x"}`);
    assert.equal(toJson([{ o: 9223372036854775807n }]), '[{"o":"9223372036854775807"}]');
  });
});

describe('countRecords', () => {
  it('sums the record counts of consecutive v2 batches', () => {
    assert.equal(countRecords(Buffer.concat([batch(3, 10), batch(1, 0), batch(250, 7)])), 254);
    assert.equal(countRecords(Buffer.alloc(0)), 0);
  });

  it('stops at a truncated batch or another magic', () => {
    const whole = batch(4, 20);
    assert.equal(countRecords(Buffer.concat([whole, batch(9, 5).subarray(0, 30)])), 4);
    assert.equal(countRecords(Buffer.concat([whole, batch(9, 5, 1)])), 4);
  });
});

describe('apiName', () => {
  it("uses Kafka's request names", () => {
    assert.equal(apiName(0), 'Produce');
    assert.equal(apiName(1), 'Fetch');
    assert.equal(apiName(18), 'ApiVersions');
    assert.equal(apiName(9999), '9999');
  });
});

describe('mergeBlocks', () => {
  const seg = (i: number, state = 'COPY_SEGMENT_FINISHED'): SegmentBlock => ({
    tier: 'remote',
    baseOffset: BigInt(i * 100),
    endOffset: BigInt(i * 100 + 99),
    sizeBytes: 1000 + i,
    count: 1,
    state,
  });

  it('keeps blocks as they are up to the limit', () => {
    const blocks = [seg(0), seg(1), seg(2)];
    assert.deepEqual(mergeBlocks(blocks, 3), blocks);
  });

  it('merges adjacent runs beyond the limit, keeping offsets, bytes and counts', () => {
    const blocks = Array.from({ length: 10 }, (_, i) => seg(i, i === 9 ? 'COPY_SEGMENT_STARTED' : 'COPY_SEGMENT_FINISHED'));
    const merged = mergeBlocks(blocks, 4);
    assert.equal(merged.length, 4);
    assert.deepEqual(merged.map((b) => [b.baseOffset, b.endOffset, b.count]), [[0n, 299n, 3], [300n, 599n, 3], [600n, 899n, 3], [900n, 999n, 1]]);
    assert.equal(merged.reduce((n, b) => n + b.sizeBytes, 0), blocks.reduce((n, b) => n + b.sizeBytes, 0));
    assert.equal(merged[3]?.state, 'COPY_SEGMENT_STARTED');
    // A run of mixed states has none.
    const mixed = mergeBlocks([seg(0), seg(1, 'DELETE_SEGMENT_STARTED'), seg(2)], 1);
    assert.equal(mixed.length, 1);
    assert.equal(mixed[0]?.state, undefined);
    assert.equal(mixed[0]?.count, 3);
  });
});

describe('CumulativeCounter', () => {
  async function value(registry: Registry, name: string, labels: string): Promise<number | undefined> {
    const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}${labels} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  }

  it('adds the increase of each source, across sources sharing labels', async () => {
    const registry = new Registry();
    const c = new CumulativeCounter({ name: 'x_total', help: 'x', labelNames: ['topic'], registry });
    c.observe('t-0', { topic: 't' }, 10);
    c.observe('t-1', { topic: 't' }, 5);
    assert.equal(await value(registry, 'x_total', '{topic="t"}'), 15);
    c.observe('t-0', { topic: 't' }, 12);
    c.observe('t-1', { topic: 't' }, 5);
    assert.equal(await value(registry, 'x_total', '{topic="t"}'), 17);
  });

  it('never goes down: a source that starts over counts from zero, a gone source keeps its counts', async () => {
    const registry = new Registry();
    const c = new CumulativeCounter({ name: 'y_total', help: 'y', labelNames: ['topic'], registry });
    c.observe('a', { topic: 't' }, 8);
    // The partition was re-created: its totals restart below the last reading.
    c.observe('a', { topic: 't' }, 3);
    assert.equal(await value(registry, 'y_total', '{topic="t"}'), 11);
    // Removed, then back from zero with more than before: all of it is new.
    c.retain(new Set());
    c.observe('a', { topic: 't' }, 20);
    assert.equal(await value(registry, 'y_total', '{topic="t"}'), 31);
    // A source seen at zero makes the series appear.
    c.observe('b', { topic: 'u' }, 0);
    assert.equal(await value(registry, 'y_total', '{topic="u"}'), 0);
  });
});
