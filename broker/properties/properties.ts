// Java `.properties` text, as java.util.Properties.load reads it: `#`/`!`
// comment lines, `key=value`, `key: value` or `key value`, logical lines
// continued with an odd number of trailing backslashes (leading blanks of the
// continuation dropped), escapes `\t \n \r \f \uNNNN` and `\x` -> `x`. The last
// occurrence of a key wins. Java reads a byte stream as ISO-8859-1; Sediment
// reads text, so callers decode the file as UTF-8 (a superset for ASCII files).
import { ConfigError } from '../../metadata/config-schema.js';

export interface PropertyEntry {
  readonly key: string;
  readonly value: string;
  /** 1-based number of the natural line the entry starts on, for messages. */
  readonly line: number;
}

const BLANK = new Set([' ', '\t', '\f']);

/** Parses properties text into entries in file order (duplicates kept; see toMap). */
export function parsePropertiesEntries(text: string): PropertyEntry[] {
  const natural = text.split(/\r\n|\r|\n/);
  const entries: PropertyEntry[] = [];
  let i = 0;
  while (i < natural.length) {
    const startLine = i + 1;
    let line = stripLeading(natural[i] ?? '');
    i++;
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    // Join continuation lines: an odd count of trailing backslashes continues.
    let logical = '';
    for (;;) {
      if (endsWithContinuation(line)) {
        logical += line.slice(0, -1);
        if (i >= natural.length) break;
        line = stripLeading(natural[i] ?? '');
        i++;
        continue;
      }
      logical += line;
      break;
    }
    const { key, value } = splitKeyValue(logical, startLine);
    entries.push({ key, value, line: startLine });
  }
  return entries;
}

/** Parses properties text into a map; a later key replaces an earlier one. */
export function parseProperties(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const e of parsePropertiesEntries(text)) map.set(e.key, e.value);
  return map;
}

function stripLeading(s: string): string {
  let k = 0;
  while (k < s.length && BLANK.has(s[k] as string)) k++;
  return s.slice(k);
}

function endsWithContinuation(s: string): boolean {
  let n = 0;
  for (let k = s.length - 1; k >= 0 && s[k] === '\\'; k--) n++;
  return n % 2 === 1;
}

function splitKeyValue(logical: string, line: number): { key: string; value: string } {
  let k = 0;
  let keyEnd = logical.length;
  while (k < logical.length) {
    const c = logical[k] as string;
    if (c === '\\') {
      k += 2;
      continue;
    }
    if (c === '=' || c === ':' || BLANK.has(c)) {
      keyEnd = k;
      break;
    }
    k++;
  }
  let v = Math.min(keyEnd, logical.length);
  while (v < logical.length && BLANK.has(logical[v] as string)) v++;
  if (v < logical.length && (logical[v] === '=' || logical[v] === ':')) {
    v++;
    while (v < logical.length && BLANK.has(logical[v] as string)) v++;
  }
  return {
    key: unescape(logical.slice(0, keyEnd), line),
    value: unescape(logical.slice(v), line),
  };
}

function unescape(s: string, line: number): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let k = 0; k < s.length; k++) {
    const c = s[k] as string;
    if (c !== '\\') {
      out += c;
      continue;
    }
    k++;
    if (k >= s.length) break; // a lone trailing backslash at end of file
    const e = s[k] as string;
    switch (e) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        const hex = s.slice(k + 1, k + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          throw new ConfigError('', `Malformed \\uxxxx encoding on line ${line}`);
        }
        out += String.fromCharCode(parseInt(hex, 16));
        k += 4;
        break;
      }
      default:
        out += e;
    }
  }
  return out;
}

/**
 * `--override key=value` arguments, split at the first `=` as kafka-server-start
 * does. The value may be empty; a missing `=` or an empty key is an error.
 */
export function parseOverrides(overrides: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0) throw new ConfigError(o, `Invalid --override '${o}': expected key=value`);
    map.set(o.slice(0, eq).trim(), o.slice(eq + 1));
  }
  return map;
}
