// `sediment cost --html FILE`: one self-contained HTML page (inline CSS and
// SVG, no scripts, nothing fetched) with the inputs, two charts drawn here
// (cost by component per scenario as stacked bars; total cost over retention
// length as lines) and the tables. Pure: returns the page as a string.
import type { ComponentName } from './model.js';
import { COMPONENT_LABELS, COMPONENT_NAMES, GIB, crossAzGiB } from './model.js';
import type { CostReport, VolumeTierView } from './report.js';
import { describeInputs, formatRate, tierLabel, volumeTierView } from './report.js';
import { formatBytes, formatCount, formatDollars, formatDuration } from './units.js';

const COMPONENT_COLORS: Readonly<Record<ComponentName, string>> = {
  brokerDisk: '#4e79a7',
  objectStorage: '#f28e2b',
  putListRequests: '#e15759',
  getRequests: '#76b7b2',
  retrieval: '#edc948',
  crossAz: '#b07aa1',
};

const LINE_COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#b07aa1', '#76b7b2', '#9c755f', '#edc948'];

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A "nice" axis maximum and step: 1, 2 or 5 times a power of ten. */
export function niceScale(max: number, ticks = 5): { max: number; step: number } {
  if (!(max > 0)) return { max: 1, step: 0.2 };
  const rough = max / ticks;
  const pow = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= rough) ?? 10 * pow;
  return { max: Math.ceil(max / step) * step, step };
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

function axisLabel(v: number): string {
  if (v === 0) return '$0';
  return v >= 1000 ? `$${formatCount(v)}` : formatDollars(v);
}

/** Stacked bars: one bar per scenario, one segment per cost component. */
export function stackedBarsSvg(r: CostReport, width = 720, height = 360): string {
  const left = 70;
  const right = 170;
  const top = 20;
  const bottom = 50;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const scale = niceScale(Math.max(...r.scenarios.map((c) => c.total), 0));
  const y = (v: number): number => top + plotH - (v / scale.max) * plotH;
  const slot = plotW / Math.max(1, r.scenarios.length);
  const barW = Math.min(80, slot * 0.6);
  const parts: string[] = [];
  for (let v = 0; v <= scale.max + scale.step / 2; v += scale.step) {
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${fmt(y(v))}" y2="${fmt(y(v))}" class="grid"/>`);
    parts.push(`<text x="${left - 6}" y="${fmt(y(v) + 4)}" text-anchor="end">${escapeHtml(axisLabel(v))}</text>`);
  }
  r.scenarios.forEach((c, i) => {
    const x = left + slot * i + (slot - barW) / 2;
    let acc = 0;
    for (const k of COMPONENT_NAMES) {
      const v = c.components[k];
      if (v <= 0) continue;
      const y0 = y(acc + v);
      const h = y(acc) - y0;
      parts.push(
        `<rect x="${fmt(x)}" y="${fmt(y0)}" width="${fmt(barW)}" height="${fmt(Math.max(h, 0.5))}" fill="${COMPONENT_COLORS[k]}" data-component="${k}">` +
          `<title>${escapeHtml(`${c.scenario}: ${COMPONENT_LABELS[k]} ${formatDollars(v)}`)}</title></rect>`,
      );
      acc += v;
    }
    parts.push(`<text x="${fmt(x + barW / 2)}" y="${fmt(y(c.total) - 5)}" text-anchor="middle" class="total">${escapeHtml(formatDollars(c.total))}</text>`);
    parts.push(`<text x="${fmt(x + barW / 2)}" y="${top + plotH + 18}" text-anchor="middle">${escapeHtml(c.scenario)}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" class="axis"/>`);
  COMPONENT_NAMES.forEach((k, i) => {
    const ly = top + 10 + i * 20;
    parts.push(`<rect x="${left + plotW + 20}" y="${ly - 10}" width="12" height="12" fill="${COMPONENT_COLORS[k]}"/>`);
    parts.push(`<text x="${left + plotW + 38}" y="${ly}">${escapeHtml(COMPONENT_LABELS[k])}</text>`);
  });
  parts.push(`<text x="${left + plotW / 2}" y="${height - 8}" text-anchor="middle" class="caption">dollars per month, by component</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="cost by component per scenario" class="chart" id="chart-components">${parts.join('')}</svg>`;
}

/** Lines: total cost of each scenario (y) against total retention (x, evenly spaced points). */
export function retentionLinesSvg(r: CostReport, width = 720, height = 360): string {
  const left = 70;
  const right = 170;
  const top = 20;
  const bottom = 50;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const points = r.overRetention;
  const names = [...new Set(points.flatMap((p) => Object.keys(p.totals)))];
  const max = Math.max(0, ...points.flatMap((p) => Object.values(p.totals)));
  const scale = niceScale(max);
  const x = (i: number): number => left + (points.length <= 1 ? plotW / 2 : (i / (points.length - 1)) * plotW);
  const y = (v: number): number => top + plotH - (v / scale.max) * plotH;
  const parts: string[] = [];
  for (let v = 0; v <= scale.max + scale.step / 2; v += scale.step) {
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${fmt(y(v))}" y2="${fmt(y(v))}" class="grid"/>`);
    parts.push(`<text x="${left - 6}" y="${fmt(y(v) + 4)}" text-anchor="end">${escapeHtml(axisLabel(v))}</text>`);
  }
  points.forEach((p, i) => {
    const chosen = p.retentionMs === r.workload.retentionMs;
    parts.push(`<text x="${fmt(x(i))}" y="${top + plotH + 18}" text-anchor="middle"${chosen ? ' class="chosen"' : ''}>${escapeHtml(formatDuration(p.retentionMs))}</text>`);
    if (chosen) parts.push(`<line x1="${fmt(x(i))}" x2="${fmt(x(i))}" y1="${top}" y2="${top + plotH}" class="marker"/>`);
  });
  names.forEach((name, n) => {
    const color = LINE_COLORS[n % LINE_COLORS.length] as string;
    const pts = points.flatMap((p, i) => {
      const v = p.totals[name];
      return v === undefined ? [] : [[x(i), y(v), v, p.retentionMs] as const];
    });
    if (pts.length === 0) return;
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([px, py]) => `${fmt(px)},${fmt(py)}`).join(' ')}" data-scenario="${escapeHtml(name)}"/>`);
    for (const [px, py, v, ret] of pts) {
      parts.push(`<circle cx="${fmt(px)}" cy="${fmt(py)}" r="3" fill="${color}"><title>${escapeHtml(`${name}, retention ${formatDuration(ret)}: ${formatDollars(v)}`)}</title></circle>`);
    }
    const ly = top + 10 + n * 20;
    parts.push(`<line x1="${left + plotW + 20}" x2="${left + plotW + 34}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="3"/>`);
    parts.push(`<text x="${left + plotW + 40}" y="${ly}">${escapeHtml(name)}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" class="axis"/>`);
  parts.push(`<text x="${left + plotW / 2}" y="${height - 8}" text-anchor="middle" class="caption">total dollars per month against total retention</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="cost over retention length" class="chart" id="chart-retention">${parts.join('')}</svg>`;
}

const TIER_COLORS = ['#f28e2b', '#f7b267', '#fbd6a8', '#fde9cf'];

/**
 * The volume tiers as one horizontal scale: each tier a band, a dashed line and
 * a label at every boundary, and a marker at each scenario's billed volume.
 */
export function volumeTiersSvg(view: VolumeTierView, r: CostReport, width = 720): string {
  const left = 20;
  const right = 20;
  const top = 34;
  const barH = 28;
  const plotW = width - left - right;
  const scenarios = r.scenarios.filter((c) => c.localRetentionMs !== null && c.objectStorageBands.length > 0);
  const lastBound = view.bands.reduce((m, b) => Math.max(m, b.toGB ?? b.fromGB), 0);
  const maxVolume = Math.max(...scenarios.map((c) => c.quantities.billedObjectGiBMonths), 0);
  const scaleMax = Math.max(lastBound * 1.15, maxVolume * 1.05, 1);
  const x = (gb: number): number => left + (Math.min(gb, scaleMax) / scaleMax) * plotW;
  const parts: string[] = [];
  view.bands.forEach((b, i) => {
    const x0 = x(b.fromGB);
    const x1 = x(b.toGB ?? scaleMax);
    const color = TIER_COLORS[i % TIER_COLORS.length] as string;
    parts.push(
      `<rect x="${fmt(x0)}" y="${top}" width="${fmt(Math.max(0, x1 - x0))}" height="${barH}" fill="${color}"><title>${escapeHtml(`${tierLabel(b, i)}: ${formatRate(b.gbMonth)} per GiB-month`)}</title></rect>`,
    );
    parts.push(`<text x="${fmt((x0 + x1) / 2)}" y="${top + barH / 2 + 4}" text-anchor="middle">${escapeHtml(formatRate(b.gbMonth))}</text>`);
    if (b.toGB !== null) {
      parts.push(`<line x1="${fmt(x1)}" x2="${fmt(x1)}" y1="${top - 14}" y2="${top + barH + 6}" class="marker tier-boundary"/>`);
      parts.push(`<text x="${fmt(x1)}" y="${top - 18}" text-anchor="middle" class="tier-boundary-label">${escapeHtml(formatBytes(b.toGB * GIB))}</text>`);
    }
  });
  // Scenarios with the same bucket (the usual case: it holds the whole retention) share one marker.
  const byVolume = new Map<string, { gb: number; names: string[] }>();
  for (const c of scenarios) {
    const key = formatBytes(c.quantities.billedObjectGiBMonths * GIB);
    const e = byVolume.get(key) ?? { gb: c.quantities.billedObjectGiBMonths, names: [] };
    e.names.push(c.scenario);
    byVolume.set(key, e);
  }
  let row = 0;
  for (const [label, { gb, names }] of byVolume) {
    const px = x(gb);
    const ty = top + barH + 22 + row * 16;
    parts.push(`<polygon points="${fmt(px - 6)},${top + barH + 12} ${fmt(px + 6)},${top + barH + 12} ${fmt(px)},${top + barH + 2}" fill="#333"/>`);
    parts.push(`<text x="${fmt(px)}" y="${ty + 6}" text-anchor="middle" class="chosen">${escapeHtml(`${label}: ${names.join(', ')}`)}</text>`);
    row++;
  }
  const height = top + barH + 40 + row * 16;
  parts.push(`<text x="${left}" y="${height - 6}" class="caption">billed GiB-months per month against the price tiers</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="object storage volume tiers" class="chart" id="chart-volume-tiers">${parts.join('')}</svg>`;
}

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, numericFrom = 1): string {
  const th = header.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const trs = rows
    .map((row) => `<tr>${row.map((c, i) => `<td${i >= numericFrom ? ' class="num"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${trs}\n</tbody></table>`;
}

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 2rem auto; max-width: 980px; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; } th, td { padding: .25rem .6rem; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f4f4f4; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; } dt { color: #555; } dd { margin: 0; }
svg.chart text { font: 12px system-ui, sans-serif; fill: #333; } svg.chart .grid { stroke: #e6e6e6; } svg.chart .axis { stroke: #888; }
svg.chart .total { font-weight: 600; } svg.chart .caption { fill: #666; } svg.chart .marker { stroke: #bbb; stroke-dasharray: 4 3; } svg.chart .chosen { font-weight: 600; }
.note { color: #555; font-size: 13px; }
`;

export function renderHtmlReport(r: CostReport): string {
  const s = r.selection.sheet;
  const inputs = describeInputs(r)
    .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`)
    .join('');
  const costRows = r.scenarios.map((c) => [
    c.scenario,
    ...COMPONENT_NAMES.map((k) => formatDollars(c.components[k])),
    formatDollars(c.total),
    c.localRetentionMs === null ? '-' : `${formatDollars(c.savingVsNoTiering)} (${(c.savingShare * 100).toFixed(0)}%)`,
  ]);
  const qRows = r.scenarios.map((c) => {
    const q = c.quantities;
    return [
      c.scenario,
      formatBytes(q.localBytes),
      formatBytes(q.provisionedDiskGiB * GIB),
      formatBytes(q.remoteBytes),
      formatCount(q.putRequests),
      formatCount(q.listRequests),
      formatCount(q.getRequests),
      formatBytes(crossAzGiB(q) * GIB),
    ];
  });
  const tiers = volumeTierView(r);
  const className = s.storageClasses[r.selection.storageClass]?.name ?? r.selection.storageClass;
  const tierSection =
    tiers === undefined
      ? ''
      : `<h2>Object storage volume tiers</h2>
<p>${escapeHtml(`${className} is priced by volume: ${tiers.schedule}. Each GiB-month is billed at the rate of the tier it falls in.`)}</p>
${volumeTiersSvg(tiers, r)}
${table(['scenario', 'billed', ...tiers.bands.map((b, i) => tierLabel(b, i)), 'object storage'], tiers.rows)}
`;
  const sources = s.sources.map((u) => `<li><a href="${escapeHtml(u)}">${escapeHtml(u)}</a></li>`).join('');
  const notes = s.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('');
  const skipped =
    r.skipped.length === 0 ? '' : `<p class="note">Skipped (local retention not below the total retention): ${escapeHtml(r.skipped.map((x) => x.name).join(', '))}.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sediment cost report: ${escapeHtml(formatBytes(r.workload.ingressBytesPerSec))}/s kept ${escapeHtml(formatDuration(r.workload.retentionMs))}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Sediment cost report</h1>
<p>What a month of this workload costs on broker disks alone, and with tiered storage keeping only the last hours or days on the brokers.</p>
<h2>Inputs</h2>
<dl>${inputs}</dl>
<h2>Cost by component</h2>
${stackedBarsSvg(r)}
${table(['scenario', ...COMPONENT_NAMES.map((k) => COMPONENT_LABELS[k]), 'total / month', 'saving'], costRows)}
${skipped}
<h2>Cost over retention length</h2>
${retentionLinesSvg(r)}
<h2>Quantities per month</h2>
${table(['scenario', 'local / replica', 'disk provisioned', 'in bucket', 'PUT', 'LIST', 'GET', 'cross-AZ'], qRows)}
${tierSection}<h2>Prices</h2>
<p>${escapeHtml(`${s.provider} ${s.region}, recorded ${s.date} (sheet ${s.id}), in ${s.currency}.`)}</p>
<ul>${sources}</ul>
<ul class="note">${notes}</ul>
</body>
</html>
`;
}
