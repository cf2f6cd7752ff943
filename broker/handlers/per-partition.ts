// The loops the admin handlers share, so each handler says only what is its own:
//   eachPartition       ListOffsets, DeleteRecords: every requested partition of
//                       every topic, in request order, against this broker's logs
//                       (in a cluster, NOT_LEADER_OR_FOLLOWER where it does not lead);
//   alterTopicResources AlterConfigs, IncrementalAlterConfigs: every resource,
//                       TOPIC ones altered, BROKER ones too in a cluster (dynamic broker configs), the rest refused.
import type { Logger } from 'pino';
import type { BrokerContext, PartitionView } from '../broker-context.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { ResourceType, toErrorPair } from './admin-errors.js';

/**
 * Answers each requested partition with `answer`. A partition this broker does
 * not have answers UNKNOWN_TOPIC_OR_PARTITION; a KafkaError its code; anything
 * else KAFKA_STORAGE_ERROR, logged (a disk fault or a bug, never the client's doing).
 */
export async function eachPartition<P extends { readonly partitionIndex: number }, R>(
  broker: Pick<BrokerContext, 'topics' | 'log' | 'cluster'>,
  topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly P[] }>,
  what: string,
  answer: (partition: PartitionView, requested: P, topic: string) => Promise<R>,
  failed: (requested: P, errorCode: number) => R,
): Promise<Array<{ name: string; partitions: R[] }>> {
  const out = [];
  for (const t of topics) {
    const partitions: R[] = [];
    for (const rp of t.partitions) {
      const notLeader = broker.cluster?.notLeader(t.name, rp.partitionIndex) ?? null;
      if (notLeader !== null) {
        partitions.push(failed(rp, notLeader.errorCode));
        continue;
      }
      const p = broker.topics.partition(t.name, rp.partitionIndex);
      if (p === undefined) {
        partitions.push(failed(rp, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        continue;
      }
      try {
        partitions.push(await answer(p, rp, t.name));
      } catch (err) {
        if (!(err instanceof KafkaError)) broker.log.error({ err, topic: t.name, partition: rp.partitionIndex }, `${what} failed`);
        partitions.push(failed(rp, err instanceof KafkaError ? err.code : ErrorCode.KAFKA_STORAGE_ERROR));
      }
    }
    out.push({ name: t.name, partitions });
  }
  return out;
}

interface ConfigResource {
  readonly resourceType: number;
  readonly resourceName: string;
}

export interface AlterConfigsResourceResult {
  resourceType: number;
  resourceName: string;
  errorCode: number;
  errorMessage: string | null;
}

/** Alters each TOPIC resource with `alter` (errors become that resource's code and message); other resource types are refused. */
export async function alterTopicResources<R extends ConfigResource>(
  resources: readonly R[],
  log: Logger,
  alter: (resource: R) => Promise<unknown>,
  alterBroker?: (resource: R) => Promise<unknown>,
): Promise<AlterConfigsResourceResult[]> {
  const responses: AlterConfigsResourceResult[] = [];
  for (const r of resources) {
    const base = { resourceType: r.resourceType, resourceName: r.resourceName };
    const isBroker = r.resourceType === ResourceType.BROKER && alterBroker !== undefined;
    if (r.resourceType !== ResourceType.TOPIC && !isBroker) {
      const errorMessage = r.resourceType === ResourceType.BROKER
        ? 'Dynamic broker configs need a cluster (etcd.connect); set them in server.properties'
        : `Unsupported resource type ${r.resourceType}`;
      responses.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage });
      continue;
    }
    try {
      await (isBroker ? alterBroker!(r) : alter(r));
      responses.push({ ...base, errorCode: 0, errorMessage: null });
    } catch (err) {
      responses.push({ ...base, ...toErrorPair(err, log) });
    }
  }
  return responses;
}

/** The whole-request error answer of both alter APIs: every resource with `errorCode`. */
export function alterErrorResponses(resources: readonly ConfigResource[], errorCode: number): AlterConfigsResourceResult[] {
  return resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName }));
}
