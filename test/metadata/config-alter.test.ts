import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerConfig } from '../../broker/config.js';
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import { incrementalAlterOverrides, replaceOverrides } from '../../metadata/config-alter.js';

const b = BrokerConfig.fromProperties({}, { cwd: '/tmp' });

function kafkaError(fn: () => unknown, code: number, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof KafkaError && err.code === code && pattern.test(err.message));
}

describe('AlterConfigs (replace)', () => {
  it('the entries become the override set', () => {
    assert.deepEqual(replaceOverrides([{ name: 'retention.ms', value: '1' }]), { 'retention.ms': '1' });
    assert.deepEqual(replaceOverrides([]), {});
  });

  it('refuses duplicate keys with INVALID_REQUEST', () => {
    kafkaError(() => replaceOverrides([{ name: 'a', value: '1' }, { name: 'a', value: '2' }]), ErrorCode.INVALID_REQUEST, /duplicate config keys: a/);
  });
});

describe('IncrementalAlterConfigs', () => {
  const current = { 'retention.ms': '1000', 'segment.bytes': '2097152' };

  it('SET replaces or adds, DELETE removes (absent keys are fine)', () => {
    assert.deepEqual(
      incrementalAlterOverrides(b, current, [
        { name: 'retention.ms', op: 'SET', value: '2000' },
        { name: 'segment.bytes', op: 'DELETE', value: null },
        { name: 'flush.ms', op: 'DELETE', value: null },
        { name: 'segment.ms', op: 0, value: '100' },
      ]),
      { 'retention.ms': '2000', 'segment.ms': '100' },
    );
  });

  it('APPEND/SUBTRACT edit a list starting from its effective value, without duplicates', () => {
    assert.deepEqual(incrementalAlterOverrides(b, {}, [{ name: 'cleanup.policy', op: 'APPEND', value: 'compact,delete,compact' }]), { 'cleanup.policy': 'delete,compact' });
    assert.deepEqual(incrementalAlterOverrides(b, { 'cleanup.policy': 'delete,compact' }, [{ name: 'cleanup.policy', op: 3, value: 'delete' }]), { 'cleanup.policy': 'compact' });
    assert.deepEqual(incrementalAlterOverrides(b, {}, [{ name: 'cleanup.policy', op: 'SUBTRACT', value: 'compact' }]), { 'cleanup.policy': 'delete' });
  });

  it('APPEND to a non-list key is INVALID_CONFIG', () => {
    kafkaError(() => incrementalAlterOverrides(b, {}, [{ name: 'retention.ms', op: 'APPEND', value: '1' }]), ErrorCode.INVALID_CONFIG, /Can't APPEND to key retention.ms because its type is not LIST/);
    kafkaError(() => incrementalAlterOverrides(b, {}, [{ name: 'nope', op: 'SUBTRACT', value: '1' }]), ErrorCode.INVALID_CONFIG, /Unknown topic config name: nope/);
  });

  it('refuses duplicate keys and unknown operation codes with INVALID_REQUEST', () => {
    kafkaError(
      () => incrementalAlterOverrides(b, {}, [{ name: 'retention.ms', op: 'SET', value: '1' }, { name: 'retention.ms', op: 'DELETE', value: null }]),
      ErrorCode.INVALID_REQUEST,
      /duplicate/,
    );
    kafkaError(() => incrementalAlterOverrides(b, {}, [{ name: 'retention.ms', op: 9, value: '1' }]), ErrorCode.INVALID_REQUEST, /Unknown alter config operation type 9/);
  });
});
