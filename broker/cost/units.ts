// Parsing and printing of the quantities `sediment cost` takes and shows:
// sizes (1GiB, 500MB), rates (10MiB/s, 2TB/day), durations (90m, 7d, 1y) and
// dollars. Decimal prefixes (KB, MB, GB, TB) are powers of 1000, binary ones
// (KiB, MiB, GiB, TiB) powers of 1024; a bare number is bytes or milliseconds.

export class UnitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnitError';
  }
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  pb: 1e15,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  pib: 1024 ** 5,
};

const DURATION_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  y: 365 * 86_400_000,
};

const NUMBER = '([0-9]+(?:\\.[0-9]+)?(?:e[+-]?[0-9]+)?)';

/** `1GiB`, `500MB`, `1048576` -> bytes. */
export function parseSize(text: string, what = 'size'): number {
  const m = new RegExp(`^${NUMBER}\\s*([a-z]*)$`, 'i').exec(text.trim());
  const factor = m === null ? undefined : m[2] === '' ? 1 : SIZE_UNITS[(m[2] as string).toLowerCase()];
  if (m === null || factor === undefined) throw new UnitError(`${what}: cannot read '${text}' (want e.g. 1GiB, 500MB or a number of bytes)`);
  return Number(m[1]) * factor;
}

/** `90m`, `7d`, `1y`, `3600000` -> milliseconds. */
export function parseDuration(text: string, what = 'duration'): number {
  const m = new RegExp(`^${NUMBER}\\s*([a-z]*)$`, 'i').exec(text.trim());
  const factor = m === null ? undefined : m[2] === '' ? 1 : DURATION_UNITS[(m[2] as string).toLowerCase()];
  if (m === null || factor === undefined) throw new UnitError(`${what}: cannot read '${text}' (want e.g. 90m, 12h, 7d, 1y or a number of milliseconds)`);
  return Number(m[1]) * factor;
}

/** `10MiB/s`, `2TB/day`, `36GB/h`, `1000000` (bytes per second) -> bytes per second. */
export function parseRate(text: string, what = 'rate'): number {
  const t = text.trim();
  const slash = t.indexOf('/');
  if (slash < 0) return parseSize(t, what);
  const per = t.slice(slash + 1).trim().toLowerCase();
  const perMs = per === 'day' ? DURATION_UNITS['d'] : per === 'hour' ? DURATION_UNITS['h'] : per === 'sec' ? 1000 : DURATION_UNITS[per];
  if (perMs === undefined) throw new UnitError(`${what}: cannot read the time unit of '${text}' (want /s, /h or /d)`);
  return (parseSize(t.slice(0, slash), what) * 1000) / perMs;
}

/** A share as `0.05` or `5%`. */
export function parseShare(text: string, what = 'share'): number {
  const t = text.trim();
  const pct = t.endsWith('%');
  const n = Number(pct ? t.slice(0, -1) : t);
  if (t === '' || !Number.isFinite(n)) throw new UnitError(`${what}: cannot read '${text}' (want e.g. 0.05 or 5%)`);
  return pct ? n / 100 : n;
}

/** Bytes in binary units, three significant digits: `1.00 GiB`, `512 MiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? String(Math.round(v)) : v.toPrecision(3)} ${units[i]}`;
}

/** The shortest exact duration text: `1h`, `7d`, `90m`, else hours with decimals. */
export function formatDuration(ms: number): string {
  for (const [unit, f] of [['y', DURATION_UNITS['y']], ['d', DURATION_UNITS['d']], ['h', DURATION_UNITS['h']], ['m', DURATION_UNITS['m']], ['s', DURATION_UNITS['s']]] as const) {
    if (f !== undefined && ms >= f && ms % f === 0) return `${ms / f}${unit}`;
  }
  return ms >= 3_600_000 ? `${(ms / 3_600_000).toFixed(2)}h` : `${ms}ms`;
}

/** Dollars with thousands separators and cents: `$1,234.56`; negative as `-$12.00`. */
export function formatDollars(v: number): string {
  const sign = v < 0 ? '-' : '';
  const abs = Math.abs(v);
  const fixed = abs >= 100 ? abs.toFixed(0) : abs.toFixed(2);
  const [int, frac] = fixed.split('.') as [string, string | undefined];
  return `${sign}$${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac === undefined ? '' : `.${frac}`}`;
}

/** A count with SI suffixes: `1.23M`, `45.6k`, `12`. */
export function formatCount(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${(n / 1e9).toPrecision(3)}G`;
  if (abs >= 1e6) return `${(n / 1e6).toPrecision(3)}M`;
  if (abs >= 1e3) return `${(n / 1e3).toPrecision(3)}k`;
  return String(Math.round(n));
}
