// Server-side subscriptions by regular expression (KIP-848
// SubscribedTopicRegex). Kafka compiles them with RE2/J and requires the
// whole topic name to match; we use JavaScript's RegExp anchored at both ends.
// The common subset (classes, alternation, quantifiers, groups) means the
// same. What differs: RE2/J has no backreferences or lookaround, JS does (we
// accept them); `\Q...\E` quoting and inline flags other than a leading
// `(?i)` are refused as invalid; POSIX classes such as `[[:alpha:]]` are a
// bracket list to JavaScript and match something else. Pure.

const cache = new Map<string, RegExp | string>();

/** The compiled pattern, or the reason it is invalid (INVALID_REGULAR_EXPRESSION). */
export function compileSubscriptionRegex(regex: string): RegExp | string {
  const hit = cache.get(regex);
  if (hit !== undefined) return hit;
  let source = regex;
  let flags = 'u';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags += 'i';
  }
  let compiled: RegExp | string;
  try {
    compiled = new RegExp(`^(?:${source})$`, flags);
  } catch (err) {
    compiled = `SubscribedTopicRegex ${regex} is not a valid regular expression: ${(err as Error).message}`;
  }
  if (cache.size > 1000) cache.clear();
  cache.set(regex, compiled);
  return compiled;
}

/** The topics of `names` the regex matches, sorted. */
export function resolveRegex(regex: string, topics: { names(): Iterable<string> }): string[] {
  const re = compileSubscriptionRegex(regex);
  if (typeof re === 'string') return [];
  const out: string[] = [];
  for (const name of topics.names()) if (re.test(name)) out.push(name);
  return out.sort();
}

export function sameTopics(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
