// From the broker's etcd.* keys to the etcd store's options: the endpoints and
// prefix of etcd.connect, TLS material read from the PEM files, credentials.
// Reads files once at start-up; a missing or unreadable file is a ConfigError
// naming the key.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config-schema.js';
import { parseEtcdConnect } from './etcd-connect.js';
import type { EtcdStoreOptions } from './etcd-store.js';
import type { SessionOptions } from './store.js';

/** The part of the broker config this reads (BrokerConfig has it). */
export interface EtcdConfigSource {
  getString(name: string): string | null;
  getInt(name: string): number;
  getBoolean(name: string): boolean;
}

export interface EtcdClusterSettings {
  readonly store: EtcdStoreOptions;
  readonly session: SessionOptions;
  readonly connectionTimeoutMs: number;
}

/** Null when etcd.connect is not set (the single-broker default). */
export function etcdSettingsFrom(config: EtcdConfigSource, readFile: (path: string) => Buffer = (p) => readFileSync(p)): EtcdClusterSettings | null {
  const connectText = config.getString('etcd.connect');
  if (connectText === null || connectText.trim() === '') return null;
  const connect = parseEtcdConnect(connectText);
  const session: SessionOptions = {
    sessionTimeoutMs: config.getInt('broker.session.timeout.ms'),
    heartbeatIntervalMs: config.getInt('broker.heartbeat.interval.ms'),
  };
  if (session.heartbeatIntervalMs >= session.sessionTimeoutMs) {
    throw new ConfigError(
      'broker.heartbeat.interval.ms',
      `broker.heartbeat.interval.ms (${session.heartbeatIntervalMs}) must be less than broker.session.timeout.ms (${session.sessionTimeoutMs})`,
    );
  }
  const read = (key: string): Buffer | undefined => {
    const path = config.getString(key);
    if (path === null) return undefined;
    try {
      return readFile(path);
    } catch (e) {
      throw new ConfigError(key, `Cannot read ${key}=${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  let tls: EtcdStoreOptions['tls'];
  if (config.getBoolean('etcd.ssl.client.enable')) {
    const trust = read('etcd.ssl.truststore.location');
    if (trust === undefined) throw new ConfigError('etcd.ssl.truststore.location', 'etcd.ssl.client.enable=true needs etcd.ssl.truststore.location (a PEM file of CA certificates)');
    const keystore = read('etcd.ssl.keystore.location');
    if (keystore === undefined) {
      tls = { rootCertificate: trust };
    } else {
      const { privateKey, certChain } = splitKeystore(keystore);
      tls = { rootCertificate: trust, privateKey, certChain };
    }
  }
  const username = config.getString('etcd.username');
  const password = config.getString('etcd.password');
  if ((username === null) !== (password === null)) {
    throw new ConfigError(username === null ? 'etcd.username' : 'etcd.password', 'etcd.username and etcd.password go together');
  }
  return {
    store: {
      connect,
      requestTimeoutMs: config.getInt('etcd.request.timeout.ms'),
      ...(tls === undefined ? {} : { tls }),
      ...(username === null || password === null ? {} : { auth: { username, password } }),
    },
    session,
    connectionTimeoutMs: config.getInt('etcd.connection.timeout.ms'),
  };
}

/** A PEM keystore: its private key block and its certificate blocks, in order. */
export function splitKeystore(pem: Buffer): { privateKey: Buffer; certChain: Buffer } {
  const text = pem.toString('utf8');
  const blocks = text.match(/-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g) ?? [];
  const keys = blocks.filter((b) => /^-----BEGIN (?:RSA |EC |)PRIVATE KEY-----/.test(b));
  const certs = blocks.filter((b) => b.startsWith('-----BEGIN CERTIFICATE-----'));
  if (blocks.some((b) => b.startsWith('-----BEGIN ENCRYPTED PRIVATE KEY-----'))) {
    throw new ConfigError('etcd.ssl.keystore.location', 'the private key in etcd.ssl.keystore.location is encrypted; Sediment needs an unencrypted PEM key');
  }
  if (keys.length !== 1 || certs.length === 0) {
    throw new ConfigError('etcd.ssl.keystore.location', `etcd.ssl.keystore.location must hold one PEM private key and its certificate chain (found ${keys.length} keys, ${certs.length} certificates)`);
  }
  return { privateKey: Buffer.from(`${keys[0]!}\n`), certChain: Buffer.from(`${certs.join('\n')}\n`) };
}
