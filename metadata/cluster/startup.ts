// The start-up rules of a broker in an etcd cluster: reach the store (retrying
// an unreachable etcd, with a line naming the endpoints, for a bounded time),
// check its layout and cluster id, then register this broker (refused while a
// live broker holds the node id). Errors other than "unreachable" end start-up
// at once: they will not go away by waiting.
import type { Clock } from '../../broker/common/clock.js';
import type { Scheduler } from '../../broker/common/scheduler.js';
import { MetadataStoreUnavailableError } from './errors.js';
import type { BrokerRegistration } from './records.js';
import type { BrokerSession, ClusterMetadataStore, InitializeOptions, SessionOptions } from './store.js';

export interface StartupOptions {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** etcd.connection.timeout.ms: how long an unreachable store is retried. */
  readonly connectionTimeoutMs: number;
  /** Pause between attempts. */
  readonly retryBackoffMs?: number;
  /** Each failed attempt, for the log (the message names the store's endpoints). */
  readonly onRetry?: (message: string) => void;
}

/** Runs `attempt` until it succeeds, fails with a non-retriable error, or the time is up. */
export async function retryUnavailable<T>(store: ClusterMetadataStore, what: string, attempt: () => Promise<T>, options: StartupOptions): Promise<T> {
  const start = options.clock.now();
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof MetadataStoreUnavailableError)) throw e;
      const elapsed = options.clock.now() - start;
      if (elapsed >= options.connectionTimeoutMs) {
        throw new MetadataStoreUnavailableError(
          `Could not ${what}: ${store.description} unreachable for ${elapsed} ms (etcd.connection.timeout.ms=${options.connectionTimeoutMs}, ${n} attempts): ${e.message}`,
          { cause: e },
        );
      }
      options.onRetry?.(`${store.description} unreachable (attempt ${n}, ${elapsed} of ${options.connectionTimeoutMs} ms): ${e.message}; retrying`);
      const wait = Math.min(options.retryBackoffMs ?? 1000, options.connectionTimeoutMs - elapsed);
      await new Promise<void>((resolve) => options.scheduler.setTimeout(resolve, wait));
    }
  }
}

/** Initializes (or checks) the store and registers this broker; returns the cluster id and the session. */
export async function joinCluster(
  store: ClusterMetadataStore,
  init: InitializeOptions,
  registration: BrokerRegistration,
  session: SessionOptions,
  options: StartupOptions,
): Promise<{ clusterId: string; session: BrokerSession }> {
  const clusterId = await retryUnavailable(store, 'read the cluster metadata', () => store.initialize(init), options);
  const brokerSession = await retryUnavailable(store, `register node ${registration.nodeId}`, () => store.registerBroker(registration, session), options);
  return { clusterId, session: brokerSession };
}
