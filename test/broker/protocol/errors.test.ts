import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, KafkaError, errorName, errorTable, isRetriable } from '../../../broker/protocol/errors.js';

test('error table: every code, names and retriability from errors.json', () => {
  assert.equal(ErrorCode.NONE, 0);
  assert.equal(ErrorCode.UNKNOWN_SERVER_ERROR, -1);
  assert.equal(ErrorCode.CORRUPT_MESSAGE, 2);
  assert.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER, 6);
  assert.equal(ErrorCode.UNSUPPORTED_VERSION, 35);
  assert.equal(ErrorCode.KAFKA_STORAGE_ERROR, 56);
  assert.ok(errorTable.length > 100);
  const codes = new Set(errorTable.map((e) => e.code));
  assert.equal(codes.size, errorTable.length, 'codes are unique');
  for (const e of errorTable) assert.equal(ErrorCode[e.name], e.code);
  assert.equal(errorName(3), 'UNKNOWN_TOPIC_OR_PARTITION');
  assert.equal(errorName(12345), 'UNKNOWN_ERROR_12345');
  assert.equal(isRetriable(ErrorCode.NOT_LEADER_OR_FOLLOWER), true);
  assert.equal(isRetriable(ErrorCode.TOPIC_AUTHORIZATION_FAILED), false);
  assert.equal(isRetriable(12345), false);
});

test('KafkaError carries a code and an optional cause', () => {
  const cause = new Error('disk');
  const e = new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, 'write failed', { cause });
  assert.equal(e.code, 56);
  assert.equal(e.cause, cause);
  assert.equal(e.errorName, 'KAFKA_STORAGE_ERROR');
  assert.equal(e.retriable, true);
  assert.ok(e instanceof Error);
});
