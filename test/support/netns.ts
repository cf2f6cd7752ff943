// Network namespaces for the fault tests: one namespace per broker, each with a
// veth pair into a bridge in the root namespace, so every broker has an address
// of its own (10.77.0.<n>) and links between two brokers can be cut for real.
// The root namespace (etcd, the test's clients) keeps the bridge address
// 10.77.0.254 and reaches every broker; a cut only touches the two brokers.
//
// A cut is a blackhole route on both ends (`ip route add blackhole <peer>/32`
// inside each namespace): packets between the two are dropped silently, open
// connections stall and time out as they do across a failed switch, new ones
// hang in SYN_SENT. Nothing is proxied, so the brokers' advertised listeners in
// etcd are the addresses clients and peers really use. Healing deletes the
// routes.
//
// Needs root (CAP_NET_ADMIN) and iproute2. Names carry a prefix; setUp()
// removes leftovers of an earlier run that died before tearDown().
import { execFileSync } from 'node:child_process';

export const NETNS_PREFIX = 'sedfault';

/** The bridge's address in the root namespace (etcd listens here). */
export const ROOT_ADDRESS = '10.77.0.254';

export function brokerAddress(nodeId: number): string {
  if (!Number.isInteger(nodeId) || nodeId < 1 || nodeId > 250) throw new RangeError(`node id ${nodeId} out of 1..250`);
  return `10.77.0.${nodeId}`;
}

function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function ipQuiet(args: readonly string[]): void {
  try {
    ip(args);
  } catch {
    // Already gone: cleanup is idempotent.
  }
}

export class BrokerNetwork {
  private readonly cuts = new Set<string>();

  private constructor(readonly nodeIds: readonly number[]) {}

  /** The namespace a broker runs in. */
  static namespace(nodeId: number): string {
    return `${NETNS_PREFIX}-${nodeId}`;
  }

  private static bridge = `${NETNS_PREFIX}-br`;

  /** The command prefix that runs a program inside the broker's namespace (`ip netns exec` execs it: the pid stays the program's). */
  static wrap(nodeId: number): string[] {
    return ['ip', 'netns', 'exec', BrokerNetwork.namespace(nodeId)];
  }

  /** Removes every namespace and link with our prefix (leftovers of a run that did not tear down). */
  static cleanLeftovers(): void {
    let names: string[] = [];
    try {
      names = ip(['netns', 'list']).split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n.startsWith(`${NETNS_PREFIX}-`));
    } catch {
      names = [];
    }
    for (const n of names) ipQuiet(['netns', 'del', n]);
    let links: string[] = [];
    try {
      links = ip(['-o', 'link', 'show'])
        .split('\n')
        .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '')
        .filter((n) => n.startsWith(NETNS_PREFIX));
    } catch {
      links = [];
    }
    for (const l of links) ipQuiet(['link', 'del', l]);
  }

  /** Builds the bridge and one namespace per node id; throws with iproute2's message when it cannot (not root, no netns support). */
  static setUp(nodeIds: readonly number[]): BrokerNetwork {
    BrokerNetwork.cleanLeftovers();
    const br = BrokerNetwork.bridge;
    try {
      ip(['link', 'add', br, 'type', 'bridge']);
      ip(['addr', 'add', `${ROOT_ADDRESS}/24`, 'dev', br]);
      ip(['link', 'set', br, 'up']);
      for (const id of nodeIds) {
        const ns = BrokerNetwork.namespace(id);
        const host = `${NETNS_PREFIX}-h${id}`;
        const inner = `${NETNS_PREFIX}-n${id}`;
        ip(['netns', 'add', ns]);
        ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', inner]);
        ip(['link', 'set', inner, 'netns', ns]);
        ip(['link', 'set', host, 'master', br]);
        ip(['link', 'set', host, 'up']);
        ip(['-n', ns, 'addr', 'add', `${brokerAddress(id)}/24`, 'dev', inner]);
        ip(['-n', ns, 'link', 'set', inner, 'up']);
        ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      }
    } catch (e) {
      BrokerNetwork.cleanLeftovers();
      const why = e instanceof Error ? e.message : String(e);
      throw new Error(`network namespaces for the fault test could not be made (root and iproute2 are needed): ${why}`);
    }
    return new BrokerNetwork([...nodeIds]);
  }

  private static key(a: number, b: number): string {
    return a < b ? `${a}-${b}` : `${b}-${a}`;
  }

  /** Cuts the link between two brokers in both directions. */
  cut(a: number, b: number): void {
    if (a === b) throw new RangeError('a link joins two different brokers');
    const k = BrokerNetwork.key(a, b);
    if (this.cuts.has(k)) return;
    ip(['-n', BrokerNetwork.namespace(a), 'route', 'add', 'blackhole', `${brokerAddress(b)}/32`]);
    ip(['-n', BrokerNetwork.namespace(b), 'route', 'add', 'blackhole', `${brokerAddress(a)}/32`]);
    this.cuts.add(k);
  }

  heal(a: number, b: number): void {
    const k = BrokerNetwork.key(a, b);
    if (!this.cuts.has(k)) return;
    ipQuiet(['-n', BrokerNetwork.namespace(a), 'route', 'del', 'blackhole', `${brokerAddress(b)}/32`]);
    ipQuiet(['-n', BrokerNetwork.namespace(b), 'route', 'del', 'blackhole', `${brokerAddress(a)}/32`]);
    this.cuts.delete(k);
  }

  healAll(): void {
    for (const k of [...this.cuts]) {
      const [a, b] = k.split('-').map(Number);
      if (a !== undefined && b !== undefined) this.heal(a, b);
    }
  }

  /** Links cut now, as "a-b". */
  get cutLinks(): readonly string[] {
    return [...this.cuts];
  }

  tearDown(): void {
    this.cuts.clear();
    BrokerNetwork.cleanLeftovers();
  }
}
