// Share group configs (Kafka's GROUP config resource) in a cluster: kept in
// the cluster metadata under configs/groups/<group id>/, as Kafka keeps them
// in its metadata log, so IncrementalAlterConfigs on any broker sets them for
// every broker. Reads come from this broker's image; a write returns once the
// image shows it (so a DescribeConfigs on the same broker sees it at once).
import type { MetadataImage } from '../../metadata/cluster/image.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';
import type { GroupConfigSource } from '../share/share-group-configs.js';

export function clusterGroupConfigs(o: {
  readonly image: MetadataImage;
  readonly store: Pick<ClusterMetadataStore, 'alterConfigs'>;
  /** Resolves once `done` holds on this broker's image (REQUEST_TIMED_OUT after a while). */
  readonly waitFor: (done: () => boolean, what: string) => Promise<void>;
}): GroupConfigSource {
  const overrides = (groupId: string): ReadonlyMap<string, string> => o.image.configs({ type: 'group', groupId });
  return {
    overrides,
    async write(groupId, changes) {
      await o.store.alterConfigs({ type: 'group', groupId }, changes);
      await o.waitFor(() => Object.entries(changes).every(([k, v]) => (overrides(groupId).get(k) ?? null) === v), `configs of group ${groupId}`);
    },
  };
}
