// etcd.connect, in the zookeeper.connect convention: host:port[,host:port...][/prefix].
// The prefix (Kafka's "chroot") defaults to /sediment so that a shared etcd
// keeps Sediment's keys apart; `/` alone means the root. Pure.
import { ConfigError } from '../config-schema.js';

export interface EtcdConnect {
  /** host:port, IPv6 literals bracketed, as given. */
  readonly endpoints: readonly string[];
  /** No trailing slash; '' is the root. Every key is `${prefix}/${relativeKey}`. */
  readonly prefix: string;
}

export const DEFAULT_ETCD_PREFIX = '/sediment';

export function parseEtcdConnect(value: string): EtcdConnect {
  const text = value.trim();
  const slash = text.indexOf('/');
  const hostsPart = slash === -1 ? text : text.slice(0, slash);
  const prefixPart = slash === -1 ? DEFAULT_ETCD_PREFIX : text.slice(slash);
  if (hostsPart === '') throw new ConfigError('etcd.connect', `Invalid value ${value} for configuration etcd.connect: no host:port before the prefix`);
  const endpoints = hostsPart.split(',').map((h) => h.trim());
  for (const e of endpoints) {
    const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(e);
    if (m === null || Number(m[2]) < 1 || Number(m[2]) > 65535) {
      throw new ConfigError('etcd.connect', `Invalid value ${value} for configuration etcd.connect: '${e}' is not host:port (expected host:port[,host:port...][/prefix])`);
    }
  }
  const prefix = prefixPart.replace(/\/+$/, '');
  if (/\/\//.test(prefix) || /\s/.test(prefix)) {
    throw new ConfigError('etcd.connect', `Invalid value ${value} for configuration etcd.connect: the prefix '${prefixPart}' has an empty segment or a space`);
  }
  return { endpoints, prefix };
}

/** For log lines and errors: the form it was configured in. */
export function describeEtcdConnect(c: EtcdConnect): string {
  return `${c.endpoints.join(',')}${c.prefix === '' ? '/' : c.prefix}`;
}
