// The console at `/`: one self-contained read-only page (inline CSS and JS, no
// build step, no external requests). Every 2 s it polls /v1/partitions?segments=1,
// /v1/groups and /v1/tiering and redraws in place; /v1/cost (the cost report)
// is shown when the broker serves it. Names from the broker are put in the DOM
// as text, never as markup.
//
// The tier picture of a partition is an SVG with two lanes on one offset axis:
// the remote tier above (each remote segment a rect with data-tier="remote"
// and data-state), the local tier below (closed segments data-tier="local",
// the active segment data-tier="active"), and markers (data-marker) at the log
// start, local log start and high watermark offsets.
//
// In a cluster a column shows the replication picture of each partition: the
// leader, leader epoch and ISR, and per replica its log end offset against the
// high watermark (data-replica, data-in-sync, data-leo), as this broker knows
// it: the leader knows every follower's, a follower only its own.
//
// The page script is kept free of backquotes and dollar-brace sequences so the
// whole page can live in this raw template string.

export const CONSOLE_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sediment console</title>
<style>
  :root { --remote: #2f64d6; --remote-pending: #a9c0f0; --local: #2f9a4c; --active: #e8891d; --ink: #1d2330; --muted: #6b7383; --line: #dde1e8; --bg: #f6f7f9; --bad: #c23a2b; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
  header { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: #1d2330; color: #fff; }
  header h1 { font-size: 18px; margin: 0; font-weight: 600; letter-spacing: .02em; }
  header .status { margin-left: auto; font-size: 12px; color: #c7ccd6; display: flex; gap: 12px; align-items: center; }
  .dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; background: #888; margin-right: 5px; vertical-align: middle; }
  .dot.ok { background: #3ccf6e; } .dot.bad { background: #ff5a4a; }
  main { padding: 12px 20px 40px; max-width: 1500px; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 14px 0; padding: 12px 16px; }
  section > h2 { font-size: 15px; margin: 0 0 10px; }
  h3 { font-size: 14px; margin: 14px 0 6px; display: flex; gap: 8px; align-items: baseline; }
  .badge { font-size: 11px; padding: 1px 6px; border-radius: 9px; background: #e8ecf3; color: #3a4252; font-weight: 500; }
  .badge.tiered { background: #dfe8fb; color: #1f4fb5; }
  table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
  th, td { text-align: right; padding: 4px 8px; border-bottom: 1px solid #eef0f4; white-space: nowrap; vertical-align: middle; }
  th { font-weight: 600; color: var(--muted); font-size: 12px; }
  th:first-child, td:first-child, td.text, th.text { text-align: left; }
  td.picture { width: 640px; text-align: left; }
  .muted { color: var(--muted); }
  .bad { color: var(--bad); }
  .legend { display: flex; gap: 14px; font-size: 12px; color: var(--muted); margin: 4px 0 8px; flex-wrap: wrap; }
  .swatch { display: inline-block; width: 12px; height: 10px; margin-right: 4px; vertical-align: middle; border-radius: 2px; }
  .marks { font-size: 11px; color: var(--muted); }
  svg.tiers { display: block; }
  svg.tiers .lane { fill: #f1f3f6; }
  svg.tiers rect[data-tier="remote"] { fill: var(--remote); }
  svg.tiers rect[data-tier="remote"][data-state="COPY_SEGMENT_STARTED"], svg.tiers rect[data-tier="remote"][data-state="DELETE_SEGMENT_STARTED"] { fill: var(--remote-pending); }
  svg.tiers rect[data-tier="local"] { fill: var(--local); }
  svg.tiers rect[data-tier="active"] { fill: var(--active); }
  svg.tiers line[data-marker="log-start"] { stroke: #39404d; }
  svg.tiers line[data-marker="local-start"] { stroke: var(--local); stroke-dasharray: 3 2; }
  svg.tiers line[data-marker="high-watermark"] { stroke: var(--bad); }
  button.toggle { border: 0; background: none; padding: 0; font: inherit; color: inherit; cursor: pointer; }
  tr.detail > td { padding: 2px 0 10px 22px; background: #fafbfc; }
  tr.detail table th, tr.detail table td { font-size: 13px; }
  .empty { color: var(--muted); font-style: italic; }
  .kv { display: flex; gap: 22px; flex-wrap: wrap; margin-bottom: 8px; }
  .kv div span { display: block; font-size: 11px; color: var(--muted); }
  .kv div b { font-size: 16px; font-weight: 600; font-variant-numeric: tabular-nums; }
  label.toggle { font-size: 12px; color: #c7ccd6; }
</style>
</head>
<body>
<header>
  <h1>Sediment</h1>
  <span class="badge" style="background:#2d3546;color:#c7ccd6">read-only console</span>
  <div class="status">
    <label class="toggle"><input type="checkbox" id="show-internal"> internal topics</label>
    <span id="status"><span class="dot"></span>connecting</span>
  </div>
</header>
<main>
  <section id="topics"><h2>Topics and partitions</h2>
    <div class="legend">
      <span><span class="swatch" style="background:var(--remote)"></span>remote segment</span>
      <span><span class="swatch" style="background:var(--remote-pending)"></span>remote, copy or delete in progress</span>
      <span><span class="swatch" style="background:var(--local)"></span>local segment</span>
      <span><span class="swatch" style="background:var(--active)"></span>active segment</span>
      <span><span class="swatch" style="background:#39404d;width:2px"></span>log start</span>
      <span><span class="swatch" style="background:var(--local);width:2px"></span>local log start</span>
      <span><span class="swatch" style="background:var(--bad);width:2px"></span>high watermark</span>
    </div>
    <div id="topics-body"><p class="empty">loading</p></div>
  </section>
  <section id="groups"><h2>Consumer groups</h2><div id="groups-body"><p class="empty">loading</p></div></section>
  <section id="tiering"><h2>Tiered storage</h2><div id="tiering-body"><p class="empty">loading</p></div></section>
  <section id="cost"><h2>Cost report</h2><div id="cost-body"><p class="empty">The cost report is not available on this broker.</p></div></section>
</main>
<script>
(function () {
  'use strict';
  var POLL_MS = 2000;
  var COST_RETRY_MS = 30000;
  var SVG_NS = 'http://www.w3.org/2000/svg';
  var PICTURE_W = 620, LANE_H = 14, REMOTE_Y = 5, LOCAL_Y = 25, PICTURE_H = 44;
  var openGroups = {};
  var lastCostTry = -Infinity;

  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) el.setAttribute(k, String(attrs[k]));
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function s(tag, attrs) {
    var el = document.createElementNS(SVG_NS, tag);
    if (attrs) for (var k in attrs) el.setAttribute(k, String(attrs[k]));
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(el, c); }); return; }
    el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
  function num(v) { return typeof v === 'number' ? v : Number(v); }
  function fmtInt(v) { if (v === null || v === undefined) return '-'; var n = num(v); return isFinite(n) && Math.abs(n) < 1e15 ? n.toLocaleString('en-US') : String(v); }
  function fmtBytes(v) {
    var n = num(v); if (!isFinite(n)) return String(v);
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? String(n) : n.toFixed(n >= 100 ? 0 : 1)) + ' ' + units[i];
  }
  function td(v, cls) { return h('td', cls ? { 'class': cls } : null, v); }

  async function getJson(path) {
    var res = await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store' });
    if (!res.ok) { var e = new Error(path + ': HTTP ' + res.status); e.status = res.status; throw e; }
    return res.json();
  }

  // ---- the tier picture ----
  function picture(p) {
    var blocks = p.segments || [];
    var lo = num(p.logStartOffset), hi = Math.max(num(p.logEndOffset), num(p.highWatermark));
    blocks.forEach(function (b) { lo = Math.min(lo, num(b.baseOffset)); hi = Math.max(hi, num(b.endOffset) + 1); });
    if (!(hi > lo)) hi = lo + 1;
    var span = hi - lo;
    function x(o) { return 2 + ((num(o) - lo) / span) * (PICTURE_W - 4); }
    var svg = s('svg', { 'class': 'tiers', width: PICTURE_W, height: PICTURE_H, viewBox: '0 0 ' + PICTURE_W + ' ' + PICTURE_H, role: 'img',
      'aria-label': p.topic + '-' + p.partition + ' across the tiers' });
    svg.appendChild(s('rect', { 'class': 'lane', x: 0, y: REMOTE_Y, width: PICTURE_W, height: LANE_H }));
    svg.appendChild(s('rect', { 'class': 'lane', x: 0, y: LOCAL_Y, width: PICTURE_W, height: LANE_H }));
    blocks.forEach(function (b) {
      var x0 = x(b.baseOffset);
      var empty = num(b.endOffset) < num(b.baseOffset);
      var w = empty ? 2 : Math.max(2, x(num(b.endOffset) + 1) - x0 - 1);
      var attrs = { x: x0.toFixed(1), y: b.tier === 'remote' ? REMOTE_Y : LOCAL_Y, width: w.toFixed(1), height: LANE_H, 'data-tier': b.tier,
        'data-base-offset': b.baseOffset, 'data-end-offset': b.endOffset };
      if (b.state) attrs['data-state'] = b.state;
      var title = (b.count > 1 ? b.count + ' ' + b.tier + ' segments ' : b.tier + ' segment ') + b.baseOffset + '..' + b.endOffset +
        ', ' + fmtBytes(b.sizeBytes) + (b.state ? ', ' + b.state : '');
      svg.appendChild(s('rect', attrs, s('title', null, title)));
    });
    [['log-start', p.logStartOffset, 'log start offset'], ['local-start', p.localLogStartOffset, 'local log start offset'], ['high-watermark', p.highWatermark, 'high watermark']]
      .forEach(function (m) {
        var xm = x(m[1]).toFixed(1);
        svg.appendChild(s('line', { x1: xm, x2: xm, y1: 1, y2: PICTURE_H - 1, 'stroke-width': 2, 'data-marker': m[0], 'data-offset': m[1] },
          s('title', null, m[2] + ' ' + m[1])));
      });
    return h('div', null, svg,
      h('div', { 'class': 'marks' }, 'start ' + fmtInt(p.logStartOffset) + ' \u00b7 local start ' + fmtInt(p.localLogStartOffset) +
        ' \u00b7 HW ' + fmtInt(p.highWatermark) + ' \u00b7 end ' + fmtInt(p.logEndOffset)));
  }

  // Leader, epoch and ISR, then one line per replica: its log end offset against the high
  // watermark (+n: above it, not yet committed; -n: behind it), out-of-sync replicas in red.
  function replication(p) {
    var r = p.replication;
    var hw = num(p.highWatermark);
    var head = h('div', { 'class': 'marks' }, (r.leader < 0 ? 'offline' : 'leader ' + r.leader) + ' \u00b7 epoch ' + r.leaderEpoch + ' \u00b7 ISR [' + r.isr.join(',') + ']');
    var lines = r.replicas.map(function (x) {
      var leo = x.logEndOffset === null || num(x.logEndOffset) < 0 ? null : num(x.logEndOffset);
      var diff = leo === null ? '' : ' (' + (leo - hw >= 0 ? '+' : '') + (leo - hw).toLocaleString('en-US') + ')';
      return h('div', { 'class': x.inSync ? '' : 'bad', 'data-replica': x.nodeId, 'data-in-sync': String(x.inSync), 'data-leo': leo === null ? '' : String(leo) },
        (x.nodeId === r.leader ? '\u2605 ' : '\u00a0\u00a0 ') + x.nodeId + ': ' + (leo === null ? 'LEO ?' : 'LEO ' + fmtInt(leo) + diff) + (x.inSync ? '' : ' \u00b7 out of sync'));
    });
    return [head].concat(lines);
  }

  function renderTopics(partitions) {
    var showInternal = document.getElementById('show-internal').checked;
    var byTopic = {};
    var order = [];
    partitions.forEach(function (p) {
      if (p.internal && !showInternal) return;
      if (!byTopic[p.topic]) { byTopic[p.topic] = []; order.push(p.topic); }
      byTopic[p.topic].push(p);
    });
    var body = document.getElementById('topics-body');
    if (order.length === 0) { body.replaceChildren(h('p', { 'class': 'empty' }, 'No topics.')); return; }
    body.replaceChildren.apply(body, order.map(function (topic) {
      var parts = byTopic[topic];
      var first = parts[0];
      var remoteBytes = parts.reduce(function (n, p) { return n + num(p.remoteBytes); }, 0);
      var localBytes = parts.reduce(function (n, p) { return n + num(p.localBytes); }, 0);
      var replicated = parts.some(function (p) { return !!p.replication; });
      var rows = parts.map(function (p) {
        return h('tr', { 'data-partition': p.partition },
          td(p.partition), td(fmtInt(p.logStartOffset)), td(fmtInt(p.localLogStartOffset)), td(fmtInt(p.highWatermark)),
          td(fmtInt(p.lastStableOffset)), td(p.localSegments + ' / ' + fmtBytes(p.localBytes)), td(p.remoteSegments + ' / ' + fmtBytes(p.remoteBytes)),
          replicated ? h('td', { 'class': 'replication text' }, replication(p)) : null,
          h('td', { 'class': 'picture' }, picture(p)));
      });
      return h('div', { 'class': 'topic', 'data-topic': topic },
        h('h3', null, h('span', { 'class': 'topic-name' }, topic),
          first.tiered ? h('span', { 'class': 'badge tiered' }, 'tiered') : null,
          first.internal ? h('span', { 'class': 'badge' }, 'internal') : null,
          h('span', { 'class': 'muted' }, parts.length + (parts.length === 1 ? ' partition' : ' partitions') + ' \u00b7 local ' + fmtBytes(localBytes) + ' \u00b7 remote ' + fmtBytes(remoteBytes))),
        h('table', null,
          h('thead', null, h('tr', null, h('th', null, 'Partition'), h('th', null, 'Log start'), h('th', null, 'Local start'), h('th', null, 'High watermark'),
            h('th', null, 'LSO'), h('th', null, 'Local segs / bytes'), h('th', null, 'Remote segs / bytes'),
            replicated ? h('th', { 'class': 'text' }, 'Replicas: log end vs HW') : null, h('th', { 'class': 'text' }, 'Across the tiers'))),
          h('tbody', null, rows)));
    }));
  }

  function renderGroups(groups) {
    var body = document.getElementById('groups-body');
    if (groups.length === 0) { body.replaceChildren(h('p', { 'class': 'empty' }, 'No consumer groups.')); return; }
    var rows = [];
    groups.forEach(function (g) {
      var open = !!openGroups[g.groupId];
      var toggle = h('button', { 'class': 'toggle', type: 'button', 'aria-expanded': String(open), 'data-group': g.groupId },
        (open ? '\u25be ' : '\u25b8 ') + g.groupId);
      var detail = h('tr', { 'class': 'detail', 'data-group-detail': g.groupId },
        h('td', { colspan: 6 },
          g.partitions.length === 0 ? h('p', { 'class': 'empty' }, 'No committed offsets.') :
            h('table', null,
              h('thead', null, h('tr', null, h('th', null, 'Topic'), h('th', null, 'Partition'), h('th', null, 'Committed'), h('th', null, 'High watermark'), h('th', null, 'Lag'))),
              h('tbody', null, g.partitions.map(function (p) {
                return h('tr', { 'data-topic': p.topic, 'data-partition': p.partition },
                  td(p.topic, 'text'), td(p.partition), td(fmtInt(p.committedOffset)), td(fmtInt(p.highWatermark)), td(p.lag === null ? '-' : fmtInt(p.lag), 'lag'));
              })))));
      detail.hidden = !open;
      toggle.addEventListener('click', function () {
        openGroups[g.groupId] = !openGroups[g.groupId];
        detail.hidden = !openGroups[g.groupId];
        toggle.setAttribute('aria-expanded', String(openGroups[g.groupId]));
        toggle.textContent = (openGroups[g.groupId] ? '\u25be ' : '\u25b8 ') + g.groupId;
      });
      rows.push(h('tr', { 'data-group': g.groupId },
        h('td', { 'class': 'text' }, toggle), td(g.state, 'text'), td(g.members), td(g.rebalances), td(fmtInt(g.totalLag)), td(fmtInt(g.maxLag), 'max-lag')));
      rows.push(detail);
    });
    body.replaceChildren(h('table', null,
      h('thead', null, h('tr', null, h('th', null, 'Group'), h('th', { 'class': 'text' }, 'State'), h('th', null, 'Members'), h('th', null, 'Rebalances'),
        h('th', null, 'Total lag'), h('th', null, 'Max lag'))),
      h('tbody', null, rows)));
  }

  function renderTiering(t) {
    var body = document.getElementById('tiering-body');
    if (!t.enabled) { body.replaceChildren(h('p', { 'class': 'empty' }, 'Tiered storage is off (remote.log.storage.system.enable=false).')); return; }
    function kv(label, value) { return h('div', null, h('span', null, label), h('b', null, value)); }
    var c = t.chunkCache, ic = t.indexCache;
    var hitRatio = c.hits + c.misses > 0 ? (100 * c.hits / (c.hits + c.misses)).toFixed(1) + ' %' : '-';
    var summary = h('div', { 'class': 'kv' },
      kv('Copy lag', fmtBytes(t.totals.copyLagBytes) + ' / ' + t.totals.copyLagSegments + ' seg'),
      kv('Delete lag', fmtBytes(t.totals.deleteLagBytes) + ' / ' + t.totals.deleteLagSegments + ' seg'),
      kv('Remote log', fmtBytes(t.totals.remoteBytes) + ' / ' + t.totals.remoteSegments + ' seg'),
      kv('Chunk cache', fmtBytes(c.bytes) + ', hits ' + hitRatio),
      kv('Index cache', fmtBytes(ic.bytes) + ', ' + ic.hits + ' hits / ' + ic.misses + ' misses'),
      kv('Remote reads in flight', String(t.readerQueueDepth)));
    var table = t.partitions.length === 0 ? h('p', { 'class': 'empty' }, 'No tiered partitions.') :
      h('table', null,
        h('thead', null, h('tr', null, h('th', null, 'Partition'), h('th', null, 'Copy lag'), h('th', null, 'Copy lag segs'), h('th', null, 'Delete lag'),
          h('th', null, 'Remote'), h('th', null, 'Highest remote offset'), h('th', null, 'Copied'), h('th', null, 'Copy errors'), h('th', null, 'Remote reads'),
          h('th', { 'class': 'text' }, 'Last error'))),
        h('tbody', null, t.partitions.map(function (p) {
          return h('tr', { 'data-topic': p.topic, 'data-partition': p.partition },
            td(p.topic + '-' + p.partition), td(fmtBytes(p.copyLagBytes), 'copy-lag'), td(p.copyLagSegments), td(fmtBytes(p.deleteLagBytes) + ' / ' + p.deleteLagSegments),
            td(fmtBytes(p.remoteBytes) + ' / ' + p.remoteSegments), td(fmtInt(p.highestRemoteOffset)), td(fmtBytes(p.copyBytes)),
            td(p.copyErrors, p.copyErrors > 0 ? 'bad' : null), td(p.fetchRequests), td(p.lastError === null ? '' : p.lastError, p.lastError === null ? 'text' : 'text bad'));
        })));
    body.replaceChildren(summary, table);
  }

  // The cost report (the cost model's JSON, when the broker serves /v1/cost): one object per scenario
  // with its components and total in dollars per month, and the saving against no tiering.
  function renderCost(report) {
    var body = document.getElementById('cost-body');
    var scenarios = Array.isArray(report) ? report : (report && Array.isArray(report.scenarios) ? report.scenarios : null);
    if (!scenarios) { body.replaceChildren(h('pre', null, JSON.stringify(report, null, 2))); return; }
    var keys = [];
    scenarios.forEach(function (sc) {
      var comp = sc.components || {};
      Object.keys(comp).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); });
    });
    function money(v) { var n = num(v); return isFinite(n) ? '$' + n.toFixed(2) : '-'; }
    var saving = scenarios.some(function (sc) { return sc.savingVsNoTiering !== undefined; });
    body.replaceChildren(h('table', null,
      h('thead', null, h('tr', null, h('th', null, 'Scenario'), keys.map(function (k) { return h('th', null, k); }), h('th', null, 'Total / month'),
        saving ? h('th', null, 'Saving vs no tiering') : null)),
      h('tbody', null, scenarios.map(function (sc) {
        var comp = sc.components || {};
        return h('tr', { 'data-scenario': sc.scenario || sc.name || '' }, td(sc.scenario || sc.name || '', 'text'), keys.map(function (k) {
          var v = comp[k]; return td(v && typeof v === 'object' ? money(v.total !== undefined ? v.total : v.cost) : money(v));
        }), td(money(sc.total), 'total'),
          saving ? td(sc.savingVsNoTiering === undefined ? '-' : money(sc.savingVsNoTiering) + (sc.savingPercent !== undefined ? ' (' + sc.savingPercent + ' %)' : '')) : null);
      }))));
  }

  var costAvailable = null;
  async function pollCost() {
    var now = Date.now();
    if (costAvailable === false && now - lastCostTry < COST_RETRY_MS) return;
    lastCostTry = now;
    try {
      renderCost(await getJson('/v1/cost'));
      costAvailable = true;
    } catch (e) {
      costAvailable = false;
    }
  }

  var inFlight = false;
  var lastPartitions = null;
  async function poll() {
    if (inFlight) return;
    inFlight = true;
    var status = document.getElementById('status');
    try {
      var results = await Promise.all([getJson('/v1/partitions?segments=1'), getJson('/v1/groups'), getJson('/v1/tiering')]);
      lastPartitions = results[0];
      renderTopics(results[0]);
      renderGroups(results[1]);
      renderTiering(results[2]);
      await pollCost();
      status.replaceChildren(h('span', { 'class': 'dot ok' }), 'updated ' + new Date().toLocaleTimeString());
      document.body.setAttribute('data-updated', String(Date.now()));
    } catch (e) {
      status.replaceChildren(h('span', { 'class': 'dot bad' }), 'broker unreachable: ' + (e && e.message ? e.message : String(e)));
    } finally {
      inFlight = false;
    }
  }
  document.getElementById('show-internal').addEventListener('change', function () { if (lastPartitions) renderTopics(lastPartitions); });
  poll();
  setInterval(poll, POLL_MS);
})();
</script>
</body>
</html>
`;
