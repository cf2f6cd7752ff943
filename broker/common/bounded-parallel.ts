// Runs an async step over a list with at most `limit` steps in flight: for
// store writes that are independent of one another (one compare-and-swap per
// partition), where one at a time costs a round trip each.

/**
 * Calls `step` for every item, at most `limit` at once, in list order of
 * starting; resolves when every call has settled. `step` handles its own
 * errors: a rejection rejects the whole call (the others still run to their end).
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, step: (item: T) => Promise<void>): Promise<void> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, not ${limit}`);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await step(items[next++]!);
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
