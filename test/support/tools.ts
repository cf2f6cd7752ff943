// Detection of the external tools the real-client suites need, with one exact
// message per missing tool saying what is missing and how to install it.
// Also the single place that resolves where the reference Kafka jars live
// (test/support/install-kafka.sh resolves the same way).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type ToolName = 'java' | 'maven' | 'kafka' | 'kcat' | 'python-confluent-kafka' | 'kafkajs' | 'etcd';

export interface MissingTool {
  readonly name: ToolName;
  readonly problem: string;
  readonly fix: string;
}

/** Debian's python3-confluent-kafka is only importable by the system interpreter. */
export const systemPython: string = process.env['SEDIMENT_PYTHON'] ?? '/usr/bin/python3';
export const kcatPath: string = process.env['SEDIMENT_KCAT'] ?? 'kcat';

let cachedRoot: string | undefined;

/** The repository root: the nearest ancestor of this file holding package.json. */
export function repoRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return (cachedRoot = dir);
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export function kafkaPomPath(): string {
  return path.join(repoRoot(), 'test', 'support', 'kafka-ref', 'pom.xml');
}

export function installKafkaScript(): string {
  return path.join(repoRoot(), 'test', 'support', 'install-kafka.sh');
}

/** The Kafka version pinned in test/support/kafka-ref/pom.xml. */
export function kafkaVersion(): string {
  const pom = readFileSync(kafkaPomPath(), 'utf8');
  const m = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom);
  if (m === null || m[1] === undefined) throw new Error(`no <kafka.version> in ${kafkaPomPath()}`);
  return m[1].trim();
}

/** Where install-kafka.sh puts a release's jars (the reference release by default). */
export function kafkaLibsDir(version: string = kafkaVersion()): string {
  const override = process.env['SEDIMENT_KAFKA_LIBS'];
  if (override !== undefined && override !== '' && version === kafkaVersion()) return override;
  if (existsSync('/work/cache')) return path.join('/work/cache', 'kafka', version, 'libs');
  const cacheHome = process.env['XDG_CACHE_HOME'] ?? path.join(process.env['HOME'] ?? '/tmp', '.cache');
  return path.join(cacheHome, 'sediment', 'kafka', version, 'libs');
}

/** `java -cp` argument: every jar of the reference install (or of another installed release). */
export function kafkaClasspath(version: string = kafkaVersion()): string {
  return path.join(kafkaLibsDir(version), '*');
}

/** Kafka's LocalTieredStorage remote storage manager (kafka-storage test jar), as test/support/install-kafka-tiered-storage.sh installs it. */
export function kafkaTieredStorageJar(version: string = kafkaVersion()): string {
  return path.join(path.dirname(kafkaLibsDir(version)), 'tiered-storage', `kafka-storage-${version}-test.jar`);
}

/**
 * The compat matrix's other Java client and tool releases (older and newer than the
 * reference), each installed by `install-kafka.sh <version>` into its own directory.
 */
export const otherKafkaReleases = { older: '4.1.1', newer: '4.4.0' } as const;

/** Whether `install-kafka.sh <version>` has completed for this release. */
export function kafkaReleaseInstalled(version: string): boolean {
  const libs = kafkaLibsDir(version);
  return existsSync(path.join(libs, '.installed')) && existsSync(path.join(libs, `kafka_2.13-${version}.jar`));
}

/**
 * Where test/support/install-etcd.sh puts (or found) the etcd server: the
 * script's --print-path, which honours SEDIMENT_ETCD_BIN and its Debian fallback.
 * etcdctl is expected beside it.
 */
export function etcdBinaryPath(): string {
  const fromEnv = process.env['SEDIMENT_ETCD_BIN'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const r = spawnSync('bash', [path.join(repoRoot(), 'test', 'support', 'install-etcd.sh'), '--print-path'], { encoding: 'utf8' });
  const bin = (r.stdout ?? '').trim();
  if (r.status !== 0 || bin === '') throw new Error(`test/support/install-etcd.sh --print-path failed: ${r.stderr ?? ''}`);
  return bin;
}

function run(cmd: string, args: readonly string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

const fixes = {
  java: 'apt-get install -y openjdk-17-jre-headless',
  maven: 'apt-get install -y maven',
  kcat: 'apt-get install -y kcat',
  python: "apt-get install -y python3-confluent-kafka (Debian's module is seen by /usr/bin/python3, not by another python3 on PATH; override with SEDIMENT_PYTHON)",
} as const;

function check(name: ToolName): MissingTool | null {
  switch (name) {
    case 'java': {
      const r = run('java', ['-version']);
      if (!r.ok) return { name, problem: 'java not found on PATH', fix: fixes.java };
      const m = /version "(\d+)/.exec(r.out);
      const major = m?.[1] === undefined ? 0 : Number(m[1]);
      if (major < 17) return { name, problem: `java ${major} found, Kafka 4.x needs 17+`, fix: fixes.java };
      return null;
    }
    case 'maven':
      return run('mvn', ['-v']).ok ? null : { name, problem: 'mvn not found on PATH', fix: fixes.maven };
    case 'kafka': {
      const libs = kafkaLibsDir();
      const version = kafkaVersion();
      if (kafkaReleaseInstalled(version)) return null;
      return {
        name,
        problem: `Apache Kafka ${version} jars not found in ${libs}`,
        fix: `bash ${path.relative(process.cwd(), installKafkaScript()) || installKafkaScript()} (needs java and mvn; SEDIMENT_KAFKA_LIBS overrides the directory)`,
      };
    }
    case 'kcat':
      return run(kcatPath, ['-V']).ok ? null : { name, problem: `${kcatPath} not found`, fix: fixes.kcat };
    case 'python-confluent-kafka':
      return run(systemPython, ['-c', 'import confluent_kafka'])
        .ok
        ? null
        : { name, problem: `confluent_kafka not importable by ${systemPython}`, fix: fixes.python };
    case 'etcd': {
      const bin = etcdBinaryPath();
      const ctl = path.join(path.dirname(bin), 'etcdctl');
      if (existsSync(bin) && existsSync(ctl)) return null;
      return {
        name,
        problem: `etcd server or etcdctl not found (${existsSync(bin) ? ctl : bin})`,
        fix: 'bash test/support/install-etcd.sh (needs go; a few minutes; SEDIMENT_ETCD_BIN overrides)',
      };
    }
    case 'kafkajs':
      return existsSync(path.join(repoRoot(), 'node_modules', 'kafkajs', 'package.json'))
        ? null
        : { name, problem: 'kafkajs not installed', fix: 'npm install' };
  }
}

const cache = new Map<ToolName, MissingTool | null>();

export function findMissingTools(names: readonly ToolName[]): MissingTool[] {
  const out: MissingTool[] = [];
  for (const name of names) {
    let result = cache.get(name);
    if (result === undefined) {
      result = check(name);
      cache.set(name, result);
    }
    if (result !== null) out.push(result);
  }
  return out;
}

export function missingToolsMessage(missing: readonly MissingTool[]): string {
  return missing.map((m) => `missing tool: ${m.problem}. Install it with: ${m.fix}`).join('\n');
}

/** Throws one Error listing every missing tool among `names`. */
export function requireTools(names: readonly ToolName[]): void {
  const missing = findMissingTools(names);
  if (missing.length > 0) throw new Error(missingToolsMessage(missing));
}

/** The tools each real-client wrapper needs, for runners that check up front. */
export const toolsFor = {
  kafkaReference: ['java', 'kafka'],
  kafkajs: ['kafkajs'],
  python: ['python-confluent-kafka'],
  kcat: ['kcat'],
  etcd: ['etcd'],
} as const satisfies Record<string, readonly ToolName[]>;
