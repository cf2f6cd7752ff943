import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import {
  RemoteAbortedError,
  RemoteResourceNotFoundError,
  RemoteStorageError,
  RemoteTimeoutError,
} from '../../../remote-log/remote-storage.js';
import type { FailureKind, RetryPolicy, TransportOptions } from '../../../remote-log/objects/retry.js';
import { backoffDelay, withRetries } from '../../../remote-log/objects/retry.js';
import { classifyS3Error } from '../../../remote-log/s3/s3-client.js';

class Flaky extends Error {
  constructor(readonly kind: FailureKind) {
    super(`flaky ${kind}`);
  }
}

function options(policy: Partial<RetryPolicy>, sleeps: number[]): TransportOptions {
  return {
    policy: { maxAttempts: 4, initialBackoffMs: 100, maxBackoffMs: 1000, requestTimeoutMs: 0, ...policy },
    classify: (e) => (e instanceof Flaky ? e.kind : 'fatal'),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
  };
}

describe('withRetries', () => {
  it('retries retriable failures with exponential backoff, then succeeds', async () => {
    const sleeps: number[] = [];
    let calls = 0;
    const v = await withRetries('op', async () => {
      if (++calls < 4) throw new Flaky('retriable');
      return 'ok';
    }, options({}, sleeps));
    assert.equal(v, 'ok');
    assert.equal(calls, 4);
    assert.deepEqual(sleeps, [50, 100, 200]);
  });

  it('caps the backoff and jitters it in [0, cap]', () => {
    const p: RetryPolicy = { maxAttempts: 10, initialBackoffMs: 100, maxBackoffMs: 1000, requestTimeoutMs: 0 };
    assert.equal(backoffDelay(p, 8, () => 0.999999), 999);
    assert.equal(backoffDelay(p, 1, () => 0), 0);
  });

  it('gives up after maxAttempts with a storage error wrapping the last cause', async () => {
    const sleeps: number[] = [];
    let calls = 0;
    const err = await withRetries('GET x', async () => {
      calls++;
      throw new Flaky('retriable');
    }, options({ maxAttempts: 3 }, sleeps)).catch((e: unknown) => e);
    assert.ok(err instanceof RemoteStorageError);
    assert.equal(err.code, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.ok(err.cause instanceof Flaky);
    assert.equal(calls, 3);
    assert.equal(sleeps.length, 2);
  });

  it('does not retry fatal or not-found failures', async () => {
    let calls = 0;
    await assert.rejects(withRetries('op', async () => {
      calls++;
      throw new Flaky('fatal');
    }, options({}, [])), (e: unknown) => e instanceof RemoteStorageError && !(e instanceof RemoteResourceNotFoundError));
    await assert.rejects(withRetries('op', async () => {
      calls++;
      throw new Flaky('not-found');
    }, options({}, [])), RemoteResourceNotFoundError);
    assert.equal(calls, 2);
  });

  it('times out each attempt and reports REQUEST_TIMED_OUT when all time out', async () => {
    let calls = 0;
    const never = (signal: AbortSignal): Promise<never> => {
      calls++;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by transport'))));
    };
    const err = await withRetries('GET slow', never, options({ maxAttempts: 2, requestTimeoutMs: 20 }, [])).catch((e: unknown) => e);
    assert.ok(err instanceof RemoteTimeoutError, String(err));
    assert.equal(err.code, ErrorCode.REQUEST_TIMED_OUT);
    assert.equal(calls, 2);
  });

  it('stops at once when the caller aborts, mid-request or mid-backoff', async () => {
    const controller = new AbortController();
    const pending = withRetries('op', (signal) => new Promise((_, reject) => {
      signal.addEventListener('abort', () => reject(new Error('cancelled')));
    }), options({ requestTimeoutMs: 0 }, []), controller.signal);
    controller.abort(new Error('enough'));
    await assert.rejects(pending, (e: unknown) => e instanceof RemoteAbortedError && e.code === ErrorCode.REQUEST_TIMED_OUT);

    const c2 = new AbortController();
    const o = options({}, []);
    const p2 = withRetries('op', async () => {
      throw new Flaky('retriable');
    }, { ...o, sleep: (_ms, signal) => new Promise((_, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason));
      c2.abort(new Error('during backoff'));
    }) }, c2.signal);
    await assert.rejects(p2, RemoteAbortedError);
  });
});

describe('classifyS3Error', () => {
  const withMeta = (name: string, status: number): Error => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, $fault: 'client' });
  it('sorts S3 failures', () => {
    assert.equal(classifyS3Error(withMeta('InternalError', 500)), 'retriable');
    assert.equal(classifyS3Error(withMeta('SlowDown', 503)), 'retriable');
    assert.equal(classifyS3Error(withMeta('TooManyRequests', 429)), 'retriable');
    assert.equal(classifyS3Error(withMeta('NoSuchKey', 404)), 'not-found');
    assert.equal(classifyS3Error(withMeta('AccessDenied', 403)), 'fatal');
    assert.equal(classifyS3Error(withMeta('NoSuchBucket', 404)), 'fatal');
    assert.equal(classifyS3Error(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })), 'retriable');
    assert.equal(classifyS3Error(new TypeError('bug')), 'fatal');
  });
});
