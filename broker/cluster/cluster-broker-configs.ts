// Dynamic broker configs in a cluster: AlterConfigs / IncrementalAlterConfigs
// on BROKER resources write the layer into the metadata store (any broker
// accepts the change: "" is the cluster-wide default, "<node id>" one broker's
// own layer), and every broker follows the image: when its layers change it
// rebuilds its DynamicBrokerConfig and re-applies every partition log's config
// (Kafka's DynamicLogConfig.reconfigure; topic overrides still win).
import type { Logger } from 'pino';
import type { AlterConfigOp } from '../../metadata/config-alter.js';
import { brokerConfigDef } from '../../metadata/config-defs.js';
import {
  applyLayerChanges,
  checkDynamicKeys,
  incrementalLayerChanges,
  replaceLayer,
  type DynamicConfigChanges,
} from '../../metadata/dynamic-broker-configs.js';
import type { MetadataImage } from '../../metadata/cluster/image.js';
import type { ConfigResource } from '../../metadata/cluster/records.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';
import type { DynamicBrokerConfig, DynamicLayers } from '../dynamic-broker-config.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

/** What the AlterConfigs handlers call for BROKER resources. */
export interface BrokerConfigAdmin {
  /** The config DescribeConfigs reads (static with the dynamic layers). */
  readonly view: DynamicBrokerConfig;
  /** AlterConfigs: the entries become the layer's whole content. */
  alter(resourceName: string, entries: readonly { name: string; value: string | null }[], validateOnly: boolean): Promise<void>;
  /** IncrementalAlterConfigs on the layer. */
  incrementalAlter(resourceName: string, ops: readonly AlterConfigOp[], validateOnly: boolean): Promise<void>;
}

export interface ClusterBrokerConfigsOptions {
  readonly store: ClusterMetadataStore;
  readonly image: MetadataImage;
  readonly dynamic: DynamicBrokerConfig;
  readonly nodeId: number;
  /** Resolves once this broker's image shows the revision (read-your-writes for the next DescribeConfigs). */
  readonly waitForRevision: (revision: bigint) => Promise<void>;
  /** The layers changed the effective config: re-apply the partition logs' configs. */
  readonly onApplied: (changed: readonly string[]) => void;
  readonly log: Logger;
}

/** The layers of node `nodeId` as an image shows them. */
export function layersFrom(image: MetadataImage, nodeId: number): DynamicLayers {
  return { defaults: image.configs({ type: 'cluster' }), perBroker: image.configs({ type: 'broker', nodeId }) };
}

/** "" is the cluster-wide default, a decimal node id one broker; anything else INVALID_REQUEST. */
export function brokerResource(resourceName: string): ConfigResource {
  if (resourceName === '') return { type: 'cluster' };
  if (!/^(0|[1-9][0-9]{0,9})$/.test(resourceName) || Number(resourceName) > 2147483647) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `Invalid broker id ${resourceName}: expected a node id or the empty string (the cluster default)`);
  }
  return { type: 'broker', nodeId: Number(resourceName) };
}

export class ClusterBrokerConfigs implements BrokerConfigAdmin {
  private lastFailure: string | null = null;

  constructor(private readonly o: ClusterBrokerConfigsOptions) {}

  get view(): DynamicBrokerConfig {
    return this.o.dynamic;
  }

  async alter(resourceName: string, entries: readonly { name: string; value: string | null }[], validateOnly: boolean): Promise<void> {
    const resource = brokerResource(resourceName);
    await this.write(resource, replaceLayer(this.tableLayer(resource), entries), validateOnly);
  }

  async incrementalAlter(resourceName: string, ops: readonly AlterConfigOp[], validateOnly: boolean): Promise<void> {
    const resource = brokerResource(resourceName);
    const changes = incrementalLayerChanges(this.tableLayer(resource), ops, (name) => this.o.dynamic.get(name));
    await this.write(resource, changes, validateOnly);
  }

  /**
   * The layer's keys of the broker config table; the replication throttle
   * rates stored beside them (broker/cluster/dynamic-broker-configs.ts) are
   * not this module's, and AlterConfigs' replace leaves them alone.
   */
  private tableLayer(resource: ConfigResource): Map<string, string> {
    return new Map([...this.o.image.configs(resource)].filter(([k]) => brokerConfigDef(k) !== undefined));
  }

  /** The image changed: takes this broker's layers if they differ from those in force. */
  imageChanged(): void {
    let changed: string[];
    try {
      changed = this.o.dynamic.apply(layersFrom(this.o.image, this.o.nodeId));
      this.lastFailure = null;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (message !== this.lastFailure) this.o.log.error({ err: message }, 'dynamic broker configs in the cluster metadata do not validate; keeping the configs in force');
      this.lastFailure = message;
      return;
    }
    if (changed.length === 0) return;
    this.o.log.info({ changed, defaults: Object.fromEntries(this.o.dynamic.dynamicDefaultConfigs()), broker: Object.fromEntries(this.o.dynamic.dynamicBrokerConfigs()) }, 'dynamic broker configs changed');
    this.o.onApplied(changed);
  }

  private async write(resource: ConfigResource, changes: DynamicConfigChanges, validateOnly: boolean): Promise<void> {
    checkDynamicKeys(changes);
    // Validated as this broker would build it; for another node's layer, over this broker's static config.
    const defaults = resource.type === 'cluster' ? applyLayerChanges(this.o.image.configs(resource), changes) : this.o.image.configs({ type: 'cluster' });
    const own: ConfigResource = resource.type === 'broker' ? resource : { type: 'broker', nodeId: this.o.nodeId };
    const perBroker = resource.type === 'broker' ? applyLayerChanges(this.o.image.configs(resource), changes) : this.o.image.configs(own);
    this.o.dynamic.build({ defaults, perBroker });
    if (validateOnly || Object.keys(changes).length === 0) return;
    const revision = await this.o.store.alterConfigs(resource, changes);
    if (revision > 0n) await this.o.waitForRevision(revision);
  }
}
