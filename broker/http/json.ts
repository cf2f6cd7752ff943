// JSON for the HTTP endpoints: bigints become numbers while exact (|n| <= 2^53 - 1)
// and decimal strings beyond, which is what broker/cli/partition-stats.ts reads.

export function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value !== 'bigint') return value;
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value.toString();
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, jsonValue);
}
