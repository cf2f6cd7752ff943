// Summarises a V8 .cpuprofile (written by `node --cpu-prof`): self time per
// function and per source file, as a share of all samples and of the busy
// (non-idle) samples; with --under, the inclusive time (self + callees) of the
// frames whose function or file contains each pattern. Pure apart from the CLI
// at the bottom:
//   node dist/test/bench/cpu-profile-summary.js <file.cpuprofile> [top] [--under PATTERN]...
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly name: string;
  readonly selfMs: number;
  /** Share of all sampled time, idle included. */
  readonly pctTotal: number;
  /** Share of the time the thread was not idle. */
  readonly pctBusy: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly idleMs: number;
  readonly byFunction: SelfTime[];
  readonly byFile: SelfTime[];
}

const IDLE = '(idle)';

/** Shortens a file URL to its path inside the repository or node_modules. */
function shortUrl(url: string): string {
  if (url === '') return '';
  const p = url.replace(/^file:\/\//, '');
  const nm = p.lastIndexOf('/node_modules/');
  if (nm >= 0) return p.slice(nm + 1);
  const dist = p.indexOf('/dist/');
  if (dist >= 0) return p.slice(dist + '/dist/'.length);
  return p;
}

function functionKey(f: CallFrame): string {
  const name = f.functionName === '' ? '(anonymous)' : f.functionName;
  const url = shortUrl(f.url);
  return url === '' ? name : `${name} ${url}:${f.lineNumber + 1}`;
}

function fileKey(f: CallFrame): string {
  if (f.url === '') return f.functionName.startsWith('(') ? f.functionName : '(native)';
  return shortUrl(f.url);
}

function rank(times: Map<string, number>, totalMs: number, busyMs: number): SelfTime[] {
  return [...times.entries()]
    .map(([name, selfMs]) => ({ name, selfMs, pctTotal: (100 * selfMs) / totalMs, pctBusy: name === IDLE ? 0 : (100 * selfMs) / busyMs }))
    .sort((a, b) => b.selfMs - a.selfMs);
}

/**
 * Self time of each sample is the delta to the next sample (the last one's is
 * the delta to endTime), the convention of Chrome DevTools.
 */
export function summarizeProfile(profile: CpuProfile): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let sampleTime = profile.startTime;
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    sampleTime += profile.timeDeltas[i] ?? 0;
    const next = i + 1 < profile.samples.length ? sampleTime + (profile.timeDeltas[i + 1] ?? 0) : profile.endTime;
    const us = Math.max(0, next - sampleTime);
    const node = byId.get(profile.samples[i]!);
    if (node === undefined) continue;
    totalUs += us;
    const fk = functionKey(node.callFrame);
    fn.set(fk, (fn.get(fk) ?? 0) + us / 1000);
    const uk = fileKey(node.callFrame);
    file.set(uk, (file.get(uk) ?? 0) + us / 1000);
  }
  const totalMs = totalUs / 1000;
  const idleMs = fn.get(IDLE) ?? 0;
  const busyMs = Math.max(totalMs - idleMs, 1e-9);
  return { totalMs, idleMs, byFunction: rank(fn, totalMs, busyMs), byFile: rank(file, totalMs, busyMs) };
}

export interface InclusiveTime {
  readonly pattern: string;
  readonly ms: number;
  readonly pctBusy: number;
}

/**
 * Busy time spent inside a frame matching each pattern (a substring of the
 * function name with its file, as `functionKey` prints it): the samples with
 * such a frame anywhere on their stack. Async continuations start new stacks,
 * so time is charged to the code that resumed, not to whoever awaited.
 */
export function inclusiveTimes(profile: CpuProfile, patterns: readonly string[]): InclusiveTime[] {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const matches = new Map<number, boolean[]>();
  const stackMatches = (id: number): boolean[] => {
    const known = matches.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const above = up === undefined ? patterns.map(() => false) : stackMatches(up);
    const key = node === undefined ? '' : functionKey(node.callFrame);
    const mine = above.map((m, i) => m || key.includes(patterns[i] as string));
    matches.set(id, mine);
    return mine;
  };
  const ms = patterns.map(() => 0);
  let busyMs = 0;
  let sampleTime = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    sampleTime += profile.timeDeltas[i] ?? 0;
    const next = i + 1 < profile.samples.length ? sampleTime + (profile.timeDeltas[i + 1] ?? 0) : profile.endTime;
    const sampleMs = Math.max(0, next - sampleTime) / 1000;
    const id = profile.samples[i] as number;
    if (byId.get(id)?.callFrame.functionName === IDLE) continue;
    busyMs += sampleMs;
    stackMatches(id).forEach((m, k) => {
      if (m) ms[k] = (ms[k] ?? 0) + sampleMs;
    });
  }
  return patterns.map((pattern, k) => ({ pattern, ms: ms[k] ?? 0, pctBusy: busyMs > 0 ? (100 * (ms[k] ?? 0)) / busyMs : 0 }));
}

export function formatInclusive(rows: readonly InclusiveTime[]): string {
  const lines = ['| frames matching (self + callees) | ms | % of busy |', '| --- | ---: | ---: |'];
  for (const r of rows) lines.push(`| \`${r.pattern}\` | ${r.ms.toFixed(0)} | ${r.pctBusy.toFixed(1)} |`);
  return lines.join('\n');
}

export function formatSummary(s: ProfileSummary, top: number): string {
  const lines = [`sampled ${(s.totalMs / 1000).toFixed(1)} s, idle ${(s.idleMs / 1000).toFixed(1)} s (${((100 * s.idleMs) / s.totalMs).toFixed(1)}%)`, ''];
  const table = (title: string, rows: readonly SelfTime[]): void => {
    lines.push(`| ${title} | self ms | % of busy | % of all |`, '| --- | ---: | ---: | ---: |');
    for (const r of rows.filter((x) => x.name !== IDLE).slice(0, top)) {
      lines.push(`| \`${r.name}\` | ${r.selfMs.toFixed(0)} | ${r.pctBusy.toFixed(1)} | ${r.pctTotal.toFixed(1)} |`);
    }
    lines.push('');
  };
  table('function (self time)', s.byFunction);
  table('file (self time)', s.byFile);
  return lines.join('\n');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const under: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--under') under.push(args[++i] ?? '');
    else positional.push(args[i] as string);
  }
  const file = positional[0];
  if (file === undefined || under.includes('')) {
    console.error('usage: node dist/test/bench/cpu-profile-summary.js <file.cpuprofile> [top] [--under PATTERN]...');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  console.log(formatSummary(summarizeProfile(profile), Number(positional[1] ?? 25)));
  if (under.length > 0) console.log(formatInclusive(inclusiveTimes(profile, under)));
}
