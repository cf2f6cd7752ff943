// Storage priced by volume tiers, as AWS prices S3 Standard: the first 50 TB of
// a month at one rate, the next 450 TB at a lower one, the rest lower still.
// Each GB is billed at the rate of the tier it falls in (a marginal schedule, as
// income tax brackets), not the whole volume at the rate of its last tier. Pure.

/** One tier of a volume schedule. Tiers are listed in order; the last one has no bound. */
export interface VolumeTier {
  /** Where the tier ends, in GiB-months of the month's total (cumulative); null for the last tier. */
  readonly upToGB: number | null;
  /** Dollars per GiB-month inside the tier. */
  readonly gbMonth: number;
}

/** How much of a volume falls in one tier, and what it costs there. */
export interface TierBand {
  readonly fromGB: number;
  /** null: the open last tier. */
  readonly toGB: number | null;
  readonly gbMonth: number;
  /** GiB-months billed in this tier (0 for tiers the volume does not reach). */
  readonly gb: number;
  readonly cost: number;
}

export interface TieredCost {
  readonly cost: number;
  /** Every tier of the schedule, reached or not. */
  readonly bands: readonly TierBand[];
}

/** The cost of `gbMonths` under `tiers` (validated with checkVolumeTiers), tier by tier. */
export function tieredStorageCost(gbMonths: number, tiers: readonly VolumeTier[]): TieredCost {
  if (!(gbMonths >= 0) || !Number.isFinite(gbMonths)) throw new RangeError(`volume must be a finite number >= 0 (got ${gbMonths})`);
  const bands: TierBand[] = [];
  let from = 0;
  let cost = 0;
  for (const t of tiers) {
    const to = t.upToGB;
    const gb = Math.max(0, Math.min(gbMonths, to ?? Number.POSITIVE_INFINITY) - from);
    const c = gb * t.gbMonth;
    bands.push({ fromGB: from, toGB: to, gbMonth: t.gbMonth, gb, cost: c });
    cost += c;
    if (to === null) break;
    from = to;
  }
  return { cost, bands };
}

/** Why `tiers` is not a schedule (bounds increasing, prices >= 0, the last tier open), or undefined when it is one. */
export function checkVolumeTiers(tiers: readonly VolumeTier[]): string | undefined {
  if (tiers.length === 0) return 'needs at least one tier';
  let previous = 0;
  for (const [i, t] of tiers.entries()) {
    if (!(t.gbMonth >= 0) || !Number.isFinite(t.gbMonth)) return `tier ${i}: gbMonth must be a number >= 0`;
    const last = i === tiers.length - 1;
    if (last) {
      if (t.upToGB !== null) return `tier ${i}: the last tier must have "upToGB": null (no upper bound)`;
    } else {
      if (t.upToGB === null || !Number.isFinite(t.upToGB) || t.upToGB <= previous) {
        return `tier ${i}: upToGB must be a number above ${previous} (only the last tier is open)`;
      }
      previous = t.upToGB;
    }
  }
  return undefined;
}

/** Reads a sheet's `gbMonthTiers` (JSON), or returns why it cannot. */
export function parseVolumeTiers(json: unknown): readonly VolumeTier[] | string {
  if (!Array.isArray(json)) return 'must be a list of {"upToGB": number | null, "gbMonth": number}';
  const tiers: VolumeTier[] = [];
  for (const [i, t] of json.entries()) {
    if (typeof t !== 'object' || t === null || Array.isArray(t)) return `tier ${i} must be an object`;
    const o = t as Record<string, unknown>;
    const upTo = o['upToGB'];
    const price = o['gbMonth'];
    if (upTo !== null && typeof upTo !== 'number') return `tier ${i}: upToGB must be a number or null`;
    if (typeof price !== 'number') return `tier ${i}: gbMonth must be a number`;
    tiers.push({ upToGB: upTo, gbMonth: price });
  }
  return checkVolumeTiers(tiers) ?? tiers;
}
