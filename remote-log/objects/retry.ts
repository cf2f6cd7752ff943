// The transport layer between a thin object-store client and the storage
// logic: one request attempt at a time, each bounded by its own timeout and by
// the caller's AbortSignal, retried with exponential backoff and full jitter
// while the failure is retriable. What counts as retriable is the backend's
// call (classify); everything that leaves here is a RemoteStorageError.
import {
  RemoteAbortedError,
  RemoteResourceNotFoundError,
  RemoteStorageError,
  RemoteTimeoutError,
} from '../remote-storage.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Bound on one attempt, from sending to the last body byte; 0 means none. */
  readonly requestTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  initialBackoffMs: 100,
  maxBackoffMs: 5_000,
  requestTimeoutMs: 30_000,
};

export type FailureKind = 'retriable' | 'fatal' | 'not-found';

export interface TransportOptions {
  readonly policy: RetryPolicy;
  /** Sorts a failure that was neither a timeout nor the caller's abort. */
  readonly classify: (error: unknown) => FailureKind;
  /** Backoff wait; tests inject an instant one. Must reject when the signal fires. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1): the jitter source. */
  readonly random?: () => number;
  /** Told before each retry (metrics, logs). */
  readonly onRetry?: (info: { what: string; attempt: number; delayMs: number; error: unknown }) => void;
}

export function validatePolicy(p: RetryPolicy): void {
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 1) throw new RangeError(`maxAttempts must be >= 1: ${p.maxAttempts}`);
  for (const [name, v] of [
    ['initialBackoffMs', p.initialBackoffMs],
    ['maxBackoffMs', p.maxBackoffMs],
    ['requestTimeoutMs', p.requestTimeoutMs],
  ] as const) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name} must be >= 0: ${v}`);
  }
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Full jitter: uniform in [0, min(max, initial * 2^(attempt-1))]. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const cap = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(random() * cap);
}

class AttemptTimeout extends Error {}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs `op` under the policy; `what` names the request in errors ("GET s3://b/k"). */
export async function withRetries<T>(
  what: string,
  op: (signal: AbortSignal) => Promise<T>,
  options: TransportOptions,
  signal?: AbortSignal,
): Promise<T> {
  const { policy, classify } = options;
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  let lastTimedOut = false;
  let lastError: unknown;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw new RemoteAbortedError(`${what}: aborted`, { cause: signal.reason });
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      policy.requestTimeoutMs > 0
        ? setTimeout(() => controller.abort(new AttemptTimeout(`${what}: no answer within ${policy.requestTimeoutMs} ms`)), policy.requestTimeoutMs)
        : undefined;
    try {
      return await op(controller.signal);
    } catch (e) {
      if (signal?.aborted) throw new RemoteAbortedError(`${what}: aborted`, { cause: signal.reason ?? e });
      lastTimedOut = controller.signal.aborted && controller.signal.reason instanceof AttemptTimeout;
      lastError = lastTimedOut ? controller.signal.reason : e;
      if (!lastTimedOut) {
        if (e instanceof RemoteResourceNotFoundError) throw e;
        const kind = classify(e);
        if (kind === 'not-found') throw new RemoteResourceNotFoundError(`${what}: not found`, { cause: e });
        if (kind === 'fatal') {
          throw e instanceof RemoteStorageError ? e : new RemoteStorageError(`${what}: ${message(e)}`, { cause: e });
        }
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    if (attempt >= policy.maxAttempts) break;
    const delayMs = backoffDelay(policy, attempt, random);
    options.onRetry?.({ what, attempt, delayMs, error: lastError });
    try {
      await sleep(delayMs, signal);
    } catch (e) {
      throw new RemoteAbortedError(`${what}: aborted`, { cause: signal?.reason ?? e });
    }
  }
  const tries = `${policy.maxAttempts} attempt${policy.maxAttempts === 1 ? '' : 's'}`;
  if (lastTimedOut) {
    throw new RemoteTimeoutError(`${what}: timed out (${policy.requestTimeoutMs} ms) on each of ${tries}`, { cause: lastError });
  }
  throw new RemoteStorageError(`${what}: failed after ${tries}: ${message(lastError)}`, { cause: lastError });
}
