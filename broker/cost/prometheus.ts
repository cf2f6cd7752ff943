// A reader for the Prometheus text exposition format (version 0.0.4), enough to
// take counters and gauges off a broker's /metrics page: comment and TYPE/HELP
// lines are skipped, label values may hold escaped quotes, and NaN/+Inf parse.
// Pure: text in, samples out.

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export class MetricsParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetricsParseError';
  }
}

function parseValue(text: string, line: number): number {
  // As Go's ParseFloat, which Prometheus uses: NaN and Inf in any case (prom-client writes `Nan`).
  switch (text.toLowerCase()) {
    case 'nan':
      return Number.NaN;
    case '+inf':
    case 'inf':
      return Number.POSITIVE_INFINITY;
    case '-inf':
      return Number.NEGATIVE_INFINITY;
  }
  const n = Number(text);
  if (text === '' || Number.isNaN(n)) throw new MetricsParseError(`line ${line}: bad sample value '${text}'`);
  return n;
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    while (text[i] === ' ' || text[i] === ',') i++;
    if (i >= text.length) break;
    const eq = text.indexOf('=', i);
    if (eq < 0 || text[eq + 1] !== '"') throw new MetricsParseError(`line ${line}: bad label set {${text}}`);
    const name = text.slice(i, eq).trim();
    let j = eq + 2;
    let value = '';
    while (j < text.length && text[j] !== '"') {
      if (text[j] === '\\' && j + 1 < text.length) {
        const next = text[j + 1];
        value += next === 'n' ? '\n' : (next as string);
        j += 2;
      } else {
        value += text[j];
        j++;
      }
    }
    if (j >= text.length) throw new MetricsParseError(`line ${line}: unterminated label value in {${text}}`);
    labels[name] = value;
    i = j + 1;
  }
  return labels;
}

export function parsePrometheusText(text: string): Sample[] {
  const out: Sample[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = (lines[n] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    let name: string;
    let labels: Record<string, string> = {};
    let rest: string;
    const brace = line.indexOf('{');
    const space = line.search(/\s/);
    if (brace >= 0 && (space < 0 || brace < space)) {
      name = line.slice(0, brace);
      const close = line.lastIndexOf('}');
      if (close < brace) throw new MetricsParseError(`line ${n + 1}: unterminated label set`);
      labels = parseLabels(line.slice(brace + 1, close), n + 1);
      rest = line.slice(close + 1).trim();
    } else {
      if (space < 0) throw new MetricsParseError(`line ${n + 1}: no value`);
      name = line.slice(0, space);
      rest = line.slice(space).trim();
    }
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new MetricsParseError(`line ${n + 1}: bad metric name '${name}'`);
    const value = parseValue(rest.split(/\s+/)[0] ?? '', n + 1);
    out.push({ name, labels, value });
  }
  return out;
}

/** The samples of one metric, optionally only those whose labels match `match`. */
export function samplesOf(samples: readonly Sample[], name: string, match: Readonly<Record<string, string>> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

/** The sum over all label sets of the first of `names` that is present; undefined when none is. */
export function sumFirst(samples: readonly Sample[], names: readonly string[], match: Readonly<Record<string, string>> = {}): { name: string; value: number } | undefined {
  for (const name of names) {
    const found = samplesOf(samples, name, match);
    if (found.length > 0) return { name, value: found.reduce((a, s) => a + (Number.isFinite(s.value) ? s.value : 0), 0) };
  }
  return undefined;
}
