// The console end to end in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core) against a real in-process broker tiering into its
// file:// store: the page lists the topics and the consumer groups with their
// lag, and, after the RemoteLogManager copied the closed segments, its tier
// picture shows remote segments without the page being reloaded. The picture
// is checked twice: in the DOM (rects with data-tier="remote") and in a
// screenshot (pixels of the remote colour), saved under the test's temp dir
// (or kept in $SEDIMENT_CONSOLE_SCREENSHOTS when set, to look at them).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startHttpServer, type HttpServerHandle } from '../../broker/http/http-server.js';
import { silentLogger } from '../../broker/common/logger.js';
import type { RemoteLogManager } from '../../remote-log/remote-log-manager.js';
import { createTopic, getJson, produce, startTestBroker, tieredTopicConfigs, tieringOverrides, type TestBroker } from '../broker/http/harness.js';
import { countColor, countNonBackground, decodePng } from './png.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** --remote in the page's CSS (#2f64d6). */
const REMOTE_RGB = [0x2f, 0x64, 0xd6] as const;
const GROUP = 'console-readers';

/** A fixed cost report, as the cost model would serve it, for the cost panel. */
const COST_REPORT = [
  { scenario: 'no tiering', components: { brokerDisk: 912.4, objectStorage: 0 }, total: 912.4, savingVsNoTiering: 0, savingPercent: 0 },
  { scenario: 'local 1d', components: { brokerDisk: 45.1, objectStorage: 120.75 }, total: 165.85, savingVsNoTiering: 746.55, savingPercent: 81.8 },
];

interface PartitionJson {
  topic: string;
  partition: number;
  highWatermark: number;
  remoteSegments: number;
  localSegments: number;
}

describe('console in headless Chromium', () => {
  let t: TestBroker;
  let rlm: RemoteLogManager;
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  /** Where the screenshots go. */
  let shots: string;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`);
    dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-console-'));
    shots = process.env['SEDIMENT_CONSOLE_SCREENSHOTS'] ?? dir;
    mkdirSync(shots, { recursive: true });
    t = await startTestBroker(
      { ...tieringOverrides, 'remote.log.manager.task.interval.ms': '600000' },
      { routes: { '/v1/cost': () => ({ status: 200, contentType: 'application/json', body: JSON.stringify(COST_REPORT) }) } },
    );
    assert.ok(t.broker.remoteLogManager !== null);
    rlm = t.broker.remoteLogManager;
    const admin = t.kafka().admin();
    await admin.connect();
    await createTopic(admin, 'tiered', 1, tieredTopicConfigs);
    await createTopic(admin, 'plain', 2, { 'remote.storage.enable': 'false' });
    await admin.disconnect();
    await produce(t, 'tiered', 0, 500, 1000, 50);
    await produce(t, 'plain', 0, 20, 100, 20);
    await produce(t, 'plain', 1, 20, 100, 20);
    // A group that read everything of `plain`, then 5 records it has not read.
    const consumer = t.kafka('console-consumer').consumer({ groupId: GROUP });
    await consumer.connect();
    await consumer.subscribe({ topic: 'plain', fromBeginning: true });
    let seen = 0;
    await new Promise<void>((resolve) => {
      void consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          await consumer.commitOffsets([{ topic, partition, offset: String(BigInt(message.offset) + 1n) }]);
          if (++seen === 40) resolve();
        },
      });
    });
    await consumer.disconnect();
    await produce(t, 'plain', 1, 5, 100, 5);

    context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1400, height: 1000 },
    });
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    await t?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the topics, partitions and the consumer group with its lag', async () => {
    await page.goto(t.baseUrl + '/');
    await page.waitForSelector('[data-topic="tiered"] svg.tiers', { timeout: 10_000 });
    assert.equal(await page.title(), 'Sediment console');
    const topics = await page.$$eval('#topics-body .topic', (els) => els.map((e) => e.getAttribute('data-topic')));
    assert.deepEqual(topics, ['plain', 'tiered']);
    assert.equal(await page.locator('[data-topic="plain"] tbody tr').count(), 2);
    assert.equal(await page.locator('[data-topic="tiered"] .badge.tiered').count(), 1);
    // Before any copy: closed local segments and the active one, nothing remote.
    assert.equal(await page.locator('[data-topic="tiered"] rect[data-tier="remote"]').count(), 0);
    assert.ok((await page.locator('[data-topic="tiered"] rect[data-tier="local"]').count()) >= 3);
    assert.equal(await page.locator('[data-topic="tiered"] rect[data-tier="active"]').count(), 1);
    for (const marker of ['log-start', 'local-start', 'high-watermark']) {
      assert.equal(await page.locator(`[data-topic="tiered"] line[data-marker="${marker}"]`).count(), 1, marker);
    }
    assert.equal(await page.getAttribute('[data-topic="tiered"] line[data-marker="high-watermark"]', 'data-offset'), '500');
    // Internal topics stay hidden until asked for.
    assert.equal(await page.locator('[data-topic="__consumer_offsets"]').count(), 0);

    await page.waitForSelector(`tr[data-group="${GROUP}"]`, { timeout: 10_000 });
    assert.equal((await page.textContent(`tr[data-group="${GROUP}"] td.max-lag`))?.trim(), '5');
    assert.equal(await page.isHidden(`tr[data-group-detail="${GROUP}"]`), true);
    await page.click(`button.toggle[data-group="${GROUP}"]`);
    assert.equal(await page.isVisible(`tr[data-group-detail="${GROUP}"]`), true);
    const lags = await page.$$eval(`tr[data-group-detail="${GROUP}"] tbody tr`, (rows) =>
      rows.map((r) => [r.getAttribute('data-partition'), r.querySelector('td.lag')?.textContent ?? '']),
    );
    assert.deepEqual(lags, [['0', '0'], ['1', '5']]);
    // The cost panel shows the cost route's scenarios.
    await page.waitForSelector('#cost-body table', { timeout: 10_000 });
    assert.equal((await page.textContent('#cost-body tr[data-scenario="local 1d"] td.total'))?.trim(), '$165.85');
    assert.match((await page.textContent('#cost-body tr[data-scenario="local 1d"]')) ?? '', /\$746\.55 \(81\.8 %\)/);
  });

  it('after tiering, the picture shows remote segments without a reload (DOM and screenshot)', async () => {
    // Page functions are given as source text: this project compiles without the DOM types.
    await page.evaluate("window.loadMarker = 'same page'");
    // The group's partitions stay open across redraws.
    assert.equal(await page.getAttribute(`button.toggle[data-group="${GROUP}"]`, 'aria-expanded'), 'true');

    await rlm.runOnce();
    const [p] = await getJson<PartitionJson[]>(t, '/v1/partitions?topic=tiered');
    assert.ok(p !== undefined && p.remoteSegments >= 3, `remote segments: ${p?.remoteSegments}`);
    await page.waitForFunction(
      `document.querySelectorAll('[data-topic="tiered"] rect[data-tier="remote"]').length === ${p.remoteSegments}`,
      undefined,
      { timeout: 10_000 },
    );
    assert.equal(await page.evaluate('window.loadMarker'), 'same page');
    assert.equal(await page.isVisible(`tr[data-group-detail="${GROUP}"]`), true);
    const states = await page.$$eval('[data-topic="tiered"] rect[data-tier="remote"]', (els) => els.map((e) => e.getAttribute('data-state')));
    assert.ok(states.every((s) => s === 'COPY_SEGMENT_FINISHED'));
    await page.waitForSelector('#tiering-body tr[data-topic="tiered"]', { timeout: 10_000 });

    const picturePng = await page.locator('[data-topic="tiered"] svg.tiers').first().screenshot();
    writeFileSync(path.join(shots, 'tier-picture.png'), picturePng);
    const picture = decodePng(picturePng);
    // 620 x 44 CSS pixels, plus one where the box starts at a fractional position.
    assert.ok(picture.width >= 620 && picture.width <= 621, `picture width ${picture.width}`);
    assert.ok(picture.height >= 44 && picture.height <= 45, `picture height ${picture.height}`);
    // Remote segments fill the upper lane (14 px high) over a good share of the width.
    const remotePixels = countColor(picture, REMOTE_RGB);
    assert.ok(remotePixels > 14 * 100, `remote-coloured pixels in the picture: ${remotePixels}`);

    const pagePng = await page.screenshot({ fullPage: false });
    writeFileSync(path.join(shots, 'console.png'), pagePng);
    const shot = decodePng(pagePng);
    assert.equal(shot.width, 1400);
    assert.equal(shot.height, 1000);
    assert.ok(countNonBackground(shot) > shot.width * shot.height * 0.05, 'the page screenshot is not blank');
    assert.ok(countColor(shot, REMOTE_RGB) >= remotePixels);
  });

  it('shows the cost placeholder when the broker serves no cost report', async () => {
    let bare: HttpServerHandle | undefined;
    const second = await context.newPage();
    try {
      bare = await startHttpServer({ ...t.parts, listeners: [{ host: '127.0.0.1', port: 0 }], logger: silentLogger() });
      await second.goto(`http://127.0.0.1:${bare.port}/`);
      await second.waitForSelector('[data-topic="tiered"] rect[data-tier="remote"]', { timeout: 10_000 });
      assert.match((await second.textContent('#cost-body')) ?? '', /not available/);
    } finally {
      await second.close();
      await bare?.stop();
    }
  });
});
