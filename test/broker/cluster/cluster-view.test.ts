// What handlers learn from the image through ClusterView: live brokers with the
// advertised listener's endpoint, the controller, the coordinator, offline
// replicas, whether this broker may serve a partition, and who leads it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClusterView } from '../../../broker/cluster/cluster-view.js';
import { partitionMetadata } from '../../../broker/handlers/metadata-answers.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { MetadataImage } from '../../../metadata/cluster/image.js';
import type { MetadataChange, PartitionState } from '../../../metadata/cluster/records.js';
import type { TopicService } from '../../../broker/broker-context.js';

function image(live: number[], partitions: PartitionState[], controller: number | null): MetadataImage {
  const records: MetadataChange[] = [
    ...live.map((nodeId): MetadataChange => ({
      kind: 'broker',
      nodeId,
      broker: {
        nodeId,
        incarnationId: `i${nodeId}`,
        rack: nodeId === 3 ? 'r3' : null,
        endpoints: [
          { name: 'INTERNAL', host: '10.0.0.1', port: 19000 + nodeId, securityProtocol: 'PLAINTEXT' },
          { name: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + nodeId, securityProtocol: 'PLAINTEXT' },
        ],
        brokerEpoch: BigInt(nodeId),
      },
    })),
    { kind: 'topic', name: 't', topic: { topicId: 'T', name: 't', partitionCount: partitions.length, configs: {} } },
    ...partitions.map((state, partition): MetadataChange => ({ kind: 'partition', topicId: 'T', partition, state })),
    ...(controller === null ? [] : [{ kind: 'controller', controller: { nodeId: controller, brokerEpoch: BigInt(controller), controllerEpoch: 50n } } satisfies MetadataChange]),
  ];
  return MetadataImage.fromSnapshot({ revision: 60n, records, problems: [] });
}

const led = (leader: number, replicas = [leader], isr = replicas, leaderEpoch = 2): PartitionState => ({ replicas, leader, leaderEpoch, isr, partitionEpoch: 4 });

describe('ClusterView', () => {
  it('lists live brokers by the advertised listener name, the controller, and the partition count of cluster topics', () => {
    const view = new ClusterView(image([3, 1], [], 3), 1, 'PLAINTEXT');
    assert.deepEqual(view.brokers(), [
      { nodeId: 1, host: '127.0.0.1', port: 9001, rack: null },
      { nodeId: 3, host: '127.0.0.1', port: 9003, rack: 'r3' },
    ]);
    assert.equal(view.controllerId, 3);
    assert.equal(view.partitionCount('t'), 0);
    assert.equal(view.partitionCount('__consumer_offsets'), undefined);
    assert.equal(new ClusterView(image([1], [], null), 1, 'PLAINTEXT').controllerId, -1);
  });

  it('serves what it leads; elsewhere NOT_LEADER_OR_FOLLOWER with the leader and its epoch; local topics are always served', () => {
    const view = new ClusterView(image([1, 2], [led(1), led(2), led(-1, [3], [3])], 1), 1, 'PLAINTEXT');
    // Before it registers this broker leads nothing, whatever the image says (a previous run's registration).
    assert.deepEqual(view.notLeader('t', 0), { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: -1, leaderEpoch: 2 });
    view.setLive(true);
    assert.equal(view.notLeader('t', 0), null);
    assert.deepEqual(view.notLeader('t', 1), { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: 2, leaderEpoch: 2 });
    assert.deepEqual(view.notLeader('t', 2), { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: -1, leaderEpoch: 2 });
    assert.equal(view.notLeader('t', 3)?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(view.notLeader('__consumer_offsets', 7), null);
    assert.equal(view.leaderEpoch('t', 1), 2);
    assert.equal(view.leaderEpoch('__consumer_offsets', 7), 0);
    // Its session lost: it stops leading at once; local topics are still its own.
    view.setLive(false);
    assert.equal(view.notLeader('t', 0)?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(view.notLeader('__consumer_offsets', 7), null);
  });

  it('a partition with no log here: NOT_LEADER_OR_FOLLOWER for a topic the image knows (clients retry), UNKNOWN_TOPIC_OR_PARTITION otherwise', () => {
    const view = new ClusterView(image([1, 2], [led(1)], 1), 1, 'PLAINTEXT');
    assert.equal(view.notHostedError('t'), ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(view.notHostedError('nope'), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it("currentLeader (KIP-951's CurrentLeader): the image's leader and epoch, this broker too once live; -1 when unknown; undefined for local topics", () => {
    const view = new ClusterView(image([1, 2], [led(1, [1], [1], 6), led(2, [2], [2], 3), led(-1, [3], [3], 4)], 1), 1, 'PLAINTEXT');
    assert.deepEqual(view.currentLeader('t', 0), { leaderId: -1, leaderEpoch: 6 }, 'not registered yet: it does not lead');
    view.setLive(true);
    assert.deepEqual(view.currentLeader('t', 0), { leaderId: 1, leaderEpoch: 6 });
    assert.deepEqual(view.currentLeader('t', 1), { leaderId: 2, leaderEpoch: 3 });
    assert.deepEqual(view.currentLeader('t', 2), { leaderId: -1, leaderEpoch: 4 }, 'offline');
    assert.deepEqual(view.currentLeader('t', 9), { leaderId: -1, leaderEpoch: -1 }, 'no such partition');
    assert.equal(view.currentLeader('__consumer_offsets', 0), undefined);
  });

  it('Metadata answers a cluster partition from the image: leader, epoch, replicas, ISR, offline replicas', () => {
    const view = new ClusterView(image([1, 2], [led(2, [2, 3], [2, 3], 5), led(-1, [3], [3], 1)], 1), 1, 'PLAINTEXT');
    const topics = { partition: () => undefined } as unknown as TopicService;
    assert.deepEqual(partitionMetadata({ nodeId: 1, topics, cluster: view }, 't', 0), {
      errorCode: ErrorCode.NONE, partitionIndex: 0, leaderId: 2, leaderEpoch: 5, replicaNodes: [2, 3], isrNodes: [2, 3], offlineReplicas: [3],
    });
    assert.deepEqual(partitionMetadata({ nodeId: 1, topics, cluster: view }, 't', 1), {
      errorCode: ErrorCode.LEADER_NOT_AVAILABLE, partitionIndex: 1, leaderId: -1, leaderEpoch: 1, replicaNodes: [3], isrNodes: [3], offlineReplicas: [3],
    });
  });

  it('replicaRacks (the group metadata hash\'s partition racks): racks of registered replicas that have one; undefined for local topics', () => {
    const view = new ClusterView(image([1, 2, 3], [led(1, [1, 3, 3]), led(2, [2, 4])], 1), 1, 'PLAINTEXT');
    assert.deepEqual(view.replicaRacks('t', 0), ['r3', 'r3']);
    assert.deepEqual(view.replicaRacks('t', 1), [], 'broker 2 has no rack, 4 is not registered');
    assert.equal(view.replicaRacks('local', 0), undefined);
  });
});
