// SPDX-License-Identifier: MIT
// bench/web-bench.mjs URL TRACE_ID - time to first drawn timeline and frame times while panning
// and zooming, in headless chromium (Debian's) driven by playwright-core from tests/browser.
// Prints one JSON object. Frame interval = time between requestAnimationFrame callbacks while a
// key is held (the page redraws on every one); draw = the timeline's own draw() time.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../tests/browser/package.json'));
const { chromium } = require('playwright-core');
const [url, id] = process.argv.slice(2);

const pct = (a, p) => {
	if (!a.length)
		return null;
	const s = [...a].sort((x, y) => x - y);
	return Math.round(s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))] * 100) / 100;
};

const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
const res = { trace: id };
const t0 = Date.now();
await page.goto(`${url}/#trace=${id}`);
await page.waitForFunction(() => window.__nx.state.ready, null, { timeout: 60000, polling: 'raf' });
res.first_draw_wall_ms = Date.now() - t0;
res.first_draw_page_ms = Math.round(await page.evaluate(() => window.__nx.state.stats.firstDrawMs));
res.units = (await page.evaluate(() => window.__nx.state.units)).length;

async function phase(name, fn) {
	await page.evaluate(() => {
		window.__fr = [];
		window.__run = true;
		window.__d0 = window.__nx.timeline.perf.drawMs.length;
		window.__f0 = window.__nx.timeline.perf.fetchMs.length;
		window.__r0 = window.__nx.state.stats.timelineRequests;
		let last = performance.now();
		const tick = (now) => {
			window.__fr.push(now - last);
			last = now;
			if (window.__run)
				requestAnimationFrame(tick);
		};
		requestAnimationFrame(tick);
	});
	await fn();
	await page.waitForTimeout(300);
	const r = await page.evaluate(() => {
		window.__run = false;
		const p = window.__nx.timeline.perf;
		return { frames: window.__fr.slice(2), draw: p.drawMs.slice(window.__d0), fetch: p.fetchMs.slice(window.__f0),
			requests: window.__nx.state.stats.timelineRequests - window.__r0 };
	});
	res[name] = {
		frame_median_ms: pct(r.frames, 0.5), frame_p95_ms: pct(r.frames, 0.95), frames: r.frames.length,
		draw_median_ms: pct(r.draw, 0.5), draw_p95_ms: pct(r.draw, 0.95),
		timeline_requests: r.requests, fetch_median_ms: pct(r.fetch, 0.5), fetch_p95_ms: pct(r.fetch, 0.95),
	};
}

const box = await page.locator('#tl-overlay').boundingBox();
await page.mouse.move(box.x + box.width * 0.6, box.y + 60);
/* Zoom in first so that panning moves through detail, not the whole trace. */
await phase('zoom_in', async () => {
	await page.keyboard.down('w');
	await page.waitForTimeout(1500);
	await page.keyboard.up('w');
});
await phase('pan', async () => {
	await page.keyboard.down('d');
	await page.waitForTimeout(2500);
	await page.keyboard.up('d');
	await page.keyboard.down('a');
	await page.waitForTimeout(1500);
	await page.keyboard.up('a');
});
await phase('zoom_out', async () => {
	await page.keyboard.down('s');
	await page.waitForTimeout(1500);
	await page.keyboard.up('s');
});
await phase('wheel_drag', async () => {
	for (let i = 0; i < 15; i++) {
		await page.mouse.wheel(0, -120);
		await page.waitForTimeout(30);
	}
	await page.mouse.move(box.x + box.width * 0.7, box.y + 200);
	await page.mouse.down();
	await page.mouse.move(box.x + box.width * 0.3, box.y + 200, { steps: 60 });
	await page.mouse.up();
});
console.log(JSON.stringify(res));
await browser.close();
