// Who tiers a partition in a cluster (KIP-405): its leader only. For a
// replicated partition the replica manager's role decides (the leader role
// with its epoch, taken after the epoch start is recorded), for a partition
// with one replica the image's leader, while this broker's session is live.
// Read at every RemoteLogManager run and on each role event, so a broker
// that stops leading stops copying and expiring at once.
import type { PartitionLeadership } from '../../remote-log/partition-state.js';
import type { LocalLog } from '../../remote-log/local-log.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import type { ClusterView } from './cluster-view.js';

const NOT_LEADER: PartitionLeadership = { leader: false, leaderEpoch: -1 };

export function tieringLeadership(nodeId: number, view: Pick<ClusterView, 'partition' | 'isLive'>, replicas: Pick<ReplicaManager, 'replica'> | null): (log: LocalLog) => PartitionLeadership {
  return (log) => {
    const replica = replicas?.replica(log.topic, log.partition);
    if (replica !== undefined && replica.log === (log as unknown)) {
      const role = replica.role;
      return role.kind === 'leader' ? { leader: true, leaderEpoch: role.state.leaderEpoch } : { leader: false, leaderEpoch: role.leaderEpoch };
    }
    const state = view.partition(log.topic, log.partition);
    if (state === undefined) return NOT_LEADER;
    // Several replicas but no replica-manager role yet: not before the replica manager makes this broker leader.
    const leads = state.leader === nodeId && state.replicas.length < 2 && view.isLive;
    return { leader: leads, leaderEpoch: state.leaderEpoch };
  };
}
