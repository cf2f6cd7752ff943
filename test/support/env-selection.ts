// Subsets of a suite chosen by an environment variable (SEDIMENT_COMPAT_ONLY,
// SEDIMENT_FETCH_SESSION_CLIENTS): a name that is not one of the suite's ids is
// a typo, and the suite refuses it instead of quietly registering fewer (or no)
// tests and passing.

/** The items whose id the comma-separated `variable` names (all when unset or empty); throws on an unknown id. */
export function selectByEnv<T extends { readonly id: string }>(variable: string, items: readonly T[], env: NodeJS.ProcessEnv = process.env): T[] {
  const wanted = (env[variable] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (wanted.length === 0) return [...items];
  const known = items.map((i) => i.id);
  const unknown = wanted.filter((w) => !known.includes(w));
  if (unknown.length > 0) throw new Error(`${variable}=${env[variable] ?? ''}: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return items.filter((i) => wanted.includes(i.id));
}
