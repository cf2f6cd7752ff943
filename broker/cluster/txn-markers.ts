// Where a transaction's COMMIT/ABORT markers go. Alone, or for a partition
// this broker leads, the marker is appended to the local log. In a cluster a
// partition led by another broker gets it through Kafka's WriteTxnMarkers
// (key 27), sent by this broker, as Kafka's transaction coordinator sends it
// to each partition leader; that broker's handler appends it and, for a
// __consumer_offsets partition, completes the transaction's offsets in its
// group coordinator. A partition without a leader, or a leader that cannot be
// reached or answers an error, fails the write with a retriable error: the
// transaction coordinator retries the markers later (the transaction stays
// PrepareCommit/PrepareAbort in __transaction_state until every marker is in).
//
// One connection per destination broker, opened on first use and again after
// it fails; requests on it are pipelined.
import type { Logger } from 'pino';
import { apis } from '../protocol/messages/index.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import type { TopicPartition, } from '../txn/txn-state.js';
import type { TxnMarker } from '../txn/txn-coordinator.js';
import type { ClusterView } from './cluster-view.js';
import { InterBrokerConnections } from './inter-broker-connections.js';

export type LocalMarkerWriter = (tp: TopicPartition, marker: TxnMarker) => Promise<void>;

export class TxnMarkerRouter {
  private readonly connections: InterBrokerConnections;

  constructor(
    private readonly o: {
      readonly view: ClusterView | null;
      readonly local: LocalMarkerWriter;
      /** request.timeout.ms of the inter-broker calls. */
      readonly requestTimeoutMs: number;
      readonly log: Logger;
    },
  ) {
    this.connections = new InterBrokerConnections({
      endpoint: (nodeId) => o.view?.endpoint(nodeId),
      clientId: `sediment-txn-markers-${o.view?.nodeId ?? -1}`,
      timeoutMs: o.requestTimeoutMs,
      codes: { stopping: ErrorCode.NOT_COORDINATOR, unreachable: ErrorCode.NOT_LEADER_OR_FOLLOWER },
      onConnectFailed: (nodeId, err) => o.log.warn({ nodeId, err: err instanceof Error ? err.message : String(err) }, 'could not connect to the partition leader for transaction markers'),
    });
  }

  /** Appends the marker to the partition's log, here or at its leader. */
  async write(tp: TopicPartition, marker: TxnMarker): Promise<void> {
    const view = this.o.view;
    const state = view?.partition(tp.topic, tp.partition);
    if (view === null || state === undefined) {
      // Alone, or a partition the cluster does not know: the local log decides (UNKNOWN_TOPIC_OR_PARTITION when it is gone).
      if (view !== null && view.isClusterTopic(tp.topic)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${tp.topic}-${tp.partition} does not exist`);
      return this.o.local(tp, marker);
    }
    if (state.leader === view.nodeId) return this.o.local(tp, marker);
    if (state.leader < 0) throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `${tp.topic}-${tp.partition} has no leader: its transaction marker waits`);
    await this.sendTo(state.leader, tp, marker);
  }

  close(): void {
    this.connections.close();
  }

  private async sendTo(nodeId: number, tp: TopicPartition, marker: TxnMarker): Promise<void> {
    const conn = await this.connections.get(nodeId);
    let body;
    try {
      ({ body } = await conn.send(apis.WriteTxnMarkers, () => ({
        markers: [
          {
            producerId: marker.producerId,
            producerEpoch: marker.producerEpoch,
            transactionResult: marker.type === 'COMMIT',
            topics: [{ name: tp.topic, partitionIndexes: [tp.partition] }],
            coordinatorEpoch: marker.coordinatorEpoch,
            transactionVersion: 0,
          },
        ],
      }), { max: 1 }));
    } catch (err) {
      this.connections.drop(nodeId, conn);
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `WriteTxnMarkers to node ${nodeId} for ${tp.topic}-${tp.partition} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    const code = body.markers[0]?.topics[0]?.partitions[0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    if (code === ErrorCode.NONE) return;
    throw new KafkaError(code, `node ${nodeId} refused the ${marker.type} marker for ${tp.topic}-${tp.partition}: ${errorName(code)}`);
  }

}
