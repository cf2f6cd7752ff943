// Command-line option parsing shared by `sediment topics` and `sediment groups`:
// long options only, `--name value` or `--name=value`, flags, and repeatable
// options. Pure; errors are UsageError so the commands can print usage.

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type OptionKind = 'flag' | 'value' | 'multi';

export interface OptionSpec {
  readonly kind: OptionKind;
  readonly help: string;
  /** Placeholder shown in usage for value options. */
  readonly arg?: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export class ParsedArgs {
  constructor(
    private readonly flags: ReadonlySet<string>,
    private readonly values: ReadonlyMap<string, readonly string[]>,
  ) {}

  has(name: string): boolean {
    return this.flags.has(name) || this.values.has(name);
  }

  /** The value of a single-valued option, or undefined. */
  value(name: string): string | undefined {
    const v = this.values.get(name);
    return v === undefined ? undefined : v[v.length - 1];
  }

  /** Every value of a repeatable option, in order. */
  all(name: string): readonly string[] {
    return this.values.get(name) ?? [];
  }

  required(name: string, why: string): string {
    const v = this.value(name);
    if (v === undefined) throw new UsageError(`--${name} is required ${why}`);
    return v;
  }

  /** An integer option within [min, max]. */
  int(name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const v = this.value(name);
    if (v === undefined) return undefined;
    return parseIntStrict(v, `--${name}`, min, max);
  }

  /** Exactly one of `names` was given; returns it. */
  oneOf(names: readonly string[], what: string): string {
    const given = names.filter((n) => this.has(n));
    if (given.length !== 1) {
      const list = names.map((n) => `--${n}`).join(', ');
      throw new UsageError(given.length === 0 ? `exactly one of ${list} is required ${what}` : `only one of ${list} may be given (got ${given.map((n) => `--${n}`).join(', ')})`);
    }
    return given[0] as string;
  }
}

export function parseIntStrict(s: string, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^[+-]?\d+$/.test(s.trim())) throw new UsageError(`${what} must be an integer, got '${s}'`);
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${what} must be between ${min} and ${max}, got ${s}`);
  return n;
}

export function parseBigIntStrict(s: string, what: string): bigint {
  if (!/^[+-]?\d+$/.test(s.trim())) throw new UsageError(`${what} must be an integer, got '${s}'`);
  const n = BigInt(s.trim());
  if (n > 0x7fffffffffffffffn || n < -0x8000000000000000n) throw new UsageError(`${what} is out of the int64 range: ${s}`);
  return n;
}

export function parseArgs(argv: readonly string[], specs: OptionSpecs): ParsedArgs {
  const flags = new Set<string>();
  const values = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--') || arg === '--') throw new UsageError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const spec = specs[name];
    if (spec === undefined) throw new UsageError(`unknown option --${name}`);
    if (spec.kind === 'flag') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags.add(name);
      continue;
    }
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) throw new UsageError(`--${name} needs a value`);
      value = next;
      i++;
    }
    const list = values.get(name);
    if (list !== undefined && spec.kind === 'value') throw new UsageError(`--${name} given more than once`);
    if (list === undefined) values.set(name, [value]);
    else list.push(value);
  }
  return new ParsedArgs(flags, values);
}

/** `key=value` (the value may contain '='). */
export function parseKeyValue(s: string, what: string): [string, string] {
  const eq = s.indexOf('=');
  if (eq <= 0) throw new UsageError(`${what} must be key=value, got '${s}'`);
  return [s.slice(0, eq).trim(), s.slice(eq + 1)];
}

export function usageText(synopsis: string, specs: OptionSpecs): string {
  const rows = Object.entries(specs).map(([name, s]) => [`--${name}${s.kind === 'flag' ? '' : ` <${s.arg ?? 'value'}>`}`, s.help + (s.kind === 'multi' ? ' (repeatable)' : '')] as const);
  const width = Math.max(...rows.map((r) => r[0].length));
  return `${synopsis}\n\n${rows.map(([l, h]) => `  ${l.padEnd(width)}  ${h}`).join('\n')}\n`;
}

/** Where commands write: process streams by default, buffers in tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CliIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};
