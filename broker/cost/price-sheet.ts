// Price sheets: the shipped JSON data files (one per cloud region, each with its
// date and sources), validation of a sheet read from a file, and the flat set of
// effective prices the model uses once a storage class and a disk are chosen.
// Every effective price can be overridden by key (`--price object.gbMonth=0.02`).
// Pure: no I/O (the CLI reads user-given sheet files and hands the JSON here).
import aws from './sheets/aws-us-east-1.json' with { type: 'json' };
import azure from './sheets/azure-eastus.json' with { type: 'json' };
import gcp from './sheets/gcp-us-central1.json' with { type: 'json' };
import { parseVolumeTiers, type VolumeTier } from './volume-tiers.js';

export interface ObjectStorageClassPrices {
  readonly name: string;
  /** Dollars per GiB stored for a month (with tiers: the first tier's price). */
  readonly gbMonth: number;
  /** Volume tiers (S3 Standard: first 50 TB, next 450 TB, over 500 TB), when the price falls with volume. */
  readonly gbMonthTiers?: readonly VolumeTier[];
  /** Dollars per 1,000 PUT-class requests (PutObject, CreateMultipartUpload, UploadPart, CompleteMultipartUpload). */
  readonly putPer1000: number;
  readonly listPer1000: number;
  readonly getPer1000: number;
  readonly deletePer1000: number;
  /** Dollars per GiB read back (infrequent-access classes). */
  readonly retrievalPerGB: number;
  /** Objects deleted earlier are billed as if stored this long. */
  readonly minStorageDays: number;
  /** Smaller objects are billed as this size. */
  readonly minObjectBytes: number;
}

export interface DiskPrices {
  readonly name: string;
  readonly gbMonth: number;
}

export interface PriceSheet {
  readonly id: string;
  readonly provider: string;
  readonly region: string;
  readonly currency: string;
  /** When the prices were recorded (YYYY-MM-DD). */
  readonly date: string;
  readonly sources: readonly string[];
  readonly notes: readonly string[];
  readonly defaultStorageClass: string;
  readonly defaultDisk: string;
  readonly storageClasses: Readonly<Record<string, ObjectStorageClassPrices>>;
  readonly disks: Readonly<Record<string, DiskPrices>>;
  readonly network: { readonly crossAzPerGB: number };
}

/** The prices the model reads: one storage class, one disk, the network. Keys are what --price takes. */
export interface EffectivePrices {
  readonly 'disk.gbMonth': number;
  readonly 'object.gbMonth': number;
  readonly 'object.putPer1000': number;
  readonly 'object.listPer1000': number;
  readonly 'object.getPer1000': number;
  readonly 'object.deletePer1000': number;
  readonly 'object.retrievalPerGB': number;
  readonly 'object.minStorageDays': number;
  readonly 'object.minObjectBytes': number;
  readonly 'network.crossAzPerGB': number;
  /** The storage class's volume tiers; absent: every GiB-month at object.gbMonth (also when --price sets it). */
  readonly 'object.gbMonthTiers'?: readonly VolumeTier[];
}

/** The prices --price can set (all but the tier schedule). */
export type PriceKey = Exclude<keyof EffectivePrices, 'object.gbMonthTiers'>;

export const PRICE_KEYS: readonly PriceKey[] = [
  'disk.gbMonth',
  'object.gbMonth',
  'object.putPer1000',
  'object.listPer1000',
  'object.getPer1000',
  'object.deletePer1000',
  'object.retrievalPerGB',
  'object.minStorageDays',
  'object.minObjectBytes',
  'network.crossAzPerGB',
];

/** What was priced: the sheet, the chosen class and disk, and the prices after overrides. */
export interface PriceSelection {
  readonly sheet: PriceSheet;
  readonly storageClass: string;
  readonly disk: string;
  readonly prices: EffectivePrices;
  /** The keys given with --price. */
  readonly overridden: readonly PriceKey[];
}

export class PriceSheetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PriceSheetError';
  }
}

const CLASS_FIELDS = ['gbMonth', 'putPer1000', 'listPer1000', 'getPer1000', 'deletePer1000', 'retrievalPerGB', 'minStorageDays', 'minObjectBytes'] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the shape of a sheet (from a shipped file or a user's); the message names the bad field. */
export function parsePriceSheet(json: unknown, origin: string): PriceSheet {
  const bad = (what: string): never => {
    throw new PriceSheetError(`price sheet ${origin}: ${what}`);
  };
  if (!isRecord(json)) return bad('not a JSON object');
  const str = (k: string): string => {
    const v = json[k];
    return typeof v === 'string' && v !== '' ? v : bad(`"${k}" must be a non-empty string`);
  };
  const num = (o: Record<string, unknown>, k: string, where: string): number => {
    const v = o[k];
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : bad(`${where}.${k} must be a number >= 0`);
  };
  const date = str('date');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) bad('"date" must be YYYY-MM-DD');
  const sources = json['sources'];
  if (!Array.isArray(sources) || sources.length === 0 || !sources.every((s) => typeof s === 'string' && /^https?:\/\//.test(s))) {
    bad('"sources" must be a non-empty list of URLs');
  }
  const notes = json['notes'] ?? [];
  if (!Array.isArray(notes) || !notes.every((s) => typeof s === 'string')) bad('"notes" must be a list of strings');
  const classesIn = json['storageClasses'];
  if (!isRecord(classesIn) || Object.keys(classesIn).length === 0) return bad('"storageClasses" must be a non-empty object');
  const storageClasses: Record<string, ObjectStorageClassPrices> = {};
  for (const [id, c] of Object.entries(classesIn)) {
    if (!isRecord(c)) return bad(`storageClasses.${id} must be an object`);
    const name = typeof c['name'] === 'string' ? c['name'] : bad(`storageClasses.${id}.name must be a string`);
    const entry: Record<string, number> = {};
    for (const f of CLASS_FIELDS) entry[f] = num(c, f, `storageClasses.${id}`);
    const flat = entry as Omit<ObjectStorageClassPrices, 'name' | 'gbMonthTiers'>;
    let tiers: readonly VolumeTier[] | undefined;
    if (c['gbMonthTiers'] !== undefined) {
      const parsed = parseVolumeTiers(c['gbMonthTiers']);
      if (typeof parsed === 'string') return bad(`storageClasses.${id}.gbMonthTiers ${parsed}`);
      // gbMonth stays the first tier's price, so a reader of the flat price is not misled.
      if (parsed[0]?.gbMonth !== flat.gbMonth) return bad(`storageClasses.${id}.gbMonth must equal the first tier's gbMonth (${parsed[0]?.gbMonth})`);
      tiers = parsed;
    }
    storageClasses[id] = { name, ...flat, ...(tiers === undefined ? {} : { gbMonthTiers: tiers }) };
  }
  const disksIn = json['disks'];
  if (!isRecord(disksIn) || Object.keys(disksIn).length === 0) return bad('"disks" must be a non-empty object');
  const disks: Record<string, DiskPrices> = {};
  for (const [id, d] of Object.entries(disksIn)) {
    if (!isRecord(d)) return bad(`disks.${id} must be an object`);
    const name = typeof d['name'] === 'string' ? d['name'] : bad(`disks.${id}.name must be a string`);
    disks[id] = { name, gbMonth: num(d, 'gbMonth', `disks.${id}`) };
  }
  const network = json['network'];
  if (!isRecord(network)) return bad('"network" must be an object');
  const sheet: PriceSheet = {
    id: str('id'),
    provider: str('provider'),
    region: str('region'),
    currency: str('currency'),
    date,
    sources: sources as string[],
    notes: notes as string[],
    defaultStorageClass: str('defaultStorageClass'),
    defaultDisk: str('defaultDisk'),
    storageClasses,
    disks,
    network: { crossAzPerGB: num(network, 'crossAzPerGB', 'network') },
  };
  if (storageClasses[sheet.defaultStorageClass] === undefined) bad(`defaultStorageClass "${sheet.defaultStorageClass}" is not in storageClasses`);
  if (disks[sheet.defaultDisk] === undefined) bad(`defaultDisk "${sheet.defaultDisk}" is not in disks`);
  return sheet;
}

/** The shipped sheets, by id. */
export const BUILTIN_SHEETS: ReadonlyMap<string, PriceSheet> = new Map(
  [aws, gcp, azure].map((j) => {
    const s = parsePriceSheet(j, `broker/cost/sheets/${(j as { id: string }).id}.json`);
    return [s.id, s] as const;
  }),
);

/** Short names for the shipped sheets. */
export const SHEET_ALIASES: Readonly<Record<string, string>> = { aws: 'aws-us-east-1', gcp: 'gcp-us-central1', azure: 'azure-eastus' };

export function builtinSheet(name: string): PriceSheet | undefined {
  return BUILTIN_SHEETS.get(SHEET_ALIASES[name] ?? name);
}

export function isPriceKey(k: string): k is PriceKey {
  return (PRICE_KEYS as readonly string[]).includes(k);
}

/** Chooses a class and a disk (the sheet's defaults when not given) and applies overrides. */
export function selectPrices(
  sheet: PriceSheet,
  choice: { storageClass?: string; disk?: string; overrides?: Readonly<Partial<Record<PriceKey, number>>> } = {},
): PriceSelection {
  const classId = choice.storageClass ?? sheet.defaultStorageClass;
  const diskId = choice.disk ?? sheet.defaultDisk;
  const c = sheet.storageClasses[classId];
  if (c === undefined) throw new PriceSheetError(`storage class "${classId}" is not in ${sheet.id}; choose one of: ${Object.keys(sheet.storageClasses).join(', ')}`);
  const d = sheet.disks[diskId];
  if (d === undefined) throw new PriceSheetError(`disk "${diskId}" is not in ${sheet.id}; choose one of: ${Object.keys(sheet.disks).join(', ')}`);
  const base: EffectivePrices = {
    'disk.gbMonth': d.gbMonth,
    'object.gbMonth': c.gbMonth,
    'object.putPer1000': c.putPer1000,
    'object.listPer1000': c.listPer1000,
    'object.getPer1000': c.getPer1000,
    'object.deletePer1000': c.deletePer1000,
    'object.retrievalPerGB': c.retrievalPerGB,
    'object.minStorageDays': c.minStorageDays,
    'object.minObjectBytes': c.minObjectBytes,
    'network.crossAzPerGB': sheet.network.crossAzPerGB,
  };
  const overrides = choice.overrides ?? {};
  const overridden: PriceKey[] = [];
  const prices: Record<PriceKey, number> = { ...base };
  for (const [k, v] of Object.entries(overrides)) {
    if (!isPriceKey(k)) throw new PriceSheetError(`unknown price key "${k}"; known: ${PRICE_KEYS.join(', ')}`);
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new PriceSheetError(`price ${k} must be a number >= 0`);
    prices[k] = v;
    overridden.push(k);
  }
  // A storage price given on the command line replaces the whole schedule.
  const tiers = c.gbMonthTiers !== undefined && !overridden.includes('object.gbMonth') ? { 'object.gbMonthTiers': c.gbMonthTiers } : {};
  return { sheet, storageClass: classId, disk: diskId, prices: { ...prices, ...tiers }, overridden };
}
