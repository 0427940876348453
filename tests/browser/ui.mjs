// SPDX-License-Identifier: MIT
// tests/browser/ui.mjs - drives the web UI in headless chromium against a running server
// ($NX_URL) and prints TAP. Steps run in order on one browser, as an engineer would use it:
// upload, library, timeline rows, zoom/pan, selection with flow edges, search, range summary,
// link round-trip, untrusted names, dependencies of every kind, a failed ingest retried,
// delete. Screenshots of each step go to $NX_SHOTS.
import { chromium } from 'playwright-core';
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const URL0 = process.env.NX_URL;
const SHOTS = process.env.NX_SHOTS || path.join(process.env.NX_TMP || '/tmp', 'shots');
const TRACES = process.env.NX_TRACES || '';
fs.mkdirSync(SHOTS, { recursive: true });

/* The main trace: a real one from ../shared/traces when present, else our hand-written one. */
const shared = TRACES && path.join(TRACES, 'hta_simple_add_a100.json.gz');
const MAIN = shared && fs.existsSync(shared) ? shared : path.join(HERE, 'data/two-gpus.json');
const XSS = path.join(HERE, 'data/xss-names.json');
const BAD = path.join(HERE, 'data/not-a-trace.txt');
const TRUNC = path.join(HERE, 'data/truncated.json');
const KINDS = path.join(HERE, 'data/kinds.json');
const EPOCH = path.join(HERE, 'data/epoch.json');

let n = 0;
let failed = 0;
const ctx = {};

async function step(name, fn) {
	n++;
	const t0 = Date.now();
	try {
		await fn();
		console.log(`ok ${n} - ${name} (${Date.now() - t0} ms)`);
	} catch (e) {
		failed++;
		console.log(`not ok ${n} - ${name}`);
		for (const line of String(e && e.stack || e).split('\n').slice(0, 8))
			console.log('#   ' + line);
		if (ctx.page)
			await ctx.page.screenshot({ path: path.join(SHOTS, `FAILED-${n}.png`) }).catch(() => {});
	}
}

function assert(cond, msg) {
	if (!cond)
		throw new Error('assertion failed: ' + msg);
}

function eq(got, want, msg) {
	const g = JSON.stringify(got);
	const w = JSON.stringify(want);
	if (g !== w)
		throw new Error(`${msg}: got ${g.slice(0, 300)}, want ${w.slice(0, 300)}`);
}

async function api(p) {
	const r = await fetch(URL0 + p);
	const t = await r.text();
	if (!r.ok)
		throw new Error(`GET ${p}: ${r.status} ${t.slice(0, 200)}`);
	return JSON.parse(t);
}

const shot = (name) => ctx.page.screenshot({ path: path.join(SHOTS, name + '.png') });
const state = () => ctx.page.evaluate(() => window.__nx.state);
const waitState = (fn, arg, timeout = 15000) => ctx.page.waitForFunction(fn, arg, { timeout, polling: 50 });

async function uploadViaPage(file) {
	const page = ctx.page;
	await page.setInputFiles('#upload-input', file);
	const base = path.basename(file);
	/* Wait for the server's answer to the upload: accepted or rejected. */
	await page.waitForFunction((b) => [...document.querySelectorAll('.upload-item')]
		.some((x) => x.textContent.includes(b) && (x.classList.contains('ok') || x.classList.contains('failed'))), base, { timeout: 30000 });
}

async function waitReady(name) {
	await ctx.page.waitForFunction((nm) => [...document.querySelectorAll('#lib-table tbody tr')]
		.some((r) => r.querySelector('td.name').textContent.includes(nm) && /ready|failed/.test(r.dataset.status)), name, { timeout: 60000 });
	const j = await api('/api/traces?limit=500');
	const t = j.traces.find((x) => x.name === name || String(x.name).includes(name));
	assert(t, `trace ${name} listed`);
	return t;
}

/* Write traceEvents to NAME in the test's directory, upload it and wait for it (uploadFromLibrary). */
async function uploadEvents(name, traceEvents) {
	const file = path.join(process.env.NX_TMP || '/tmp', name);
	fs.writeFileSync(file, JSON.stringify({ traceEvents }));
	return uploadFromLibrary(file, name);
}

/* From the library page, upload FILE and wait until the run NAME is ready or failed. */
async function uploadFromLibrary(file, name) {
	await ctx.page.goto(URL0 + '/');
	await ctx.page.waitForSelector('#library:not([hidden])');
	await uploadViaPage(file);
	return waitReady(name);
}

async function main() {
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	ctx.browser = browser;
	const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
	ctx.page = page;
	ctx.dialogs = [];
	ctx.errors = [];
	page.on('dialog', (d) => {
		ctx.dialogs.push(d.message());
		if (ctx.expectConfirm)
			d.accept();
		else
			d.dismiss();
	});
	page.on('pageerror', (e) => ctx.errors.push(e.message));

	await step('library page loads', async () => {
		await page.goto(URL0 + '/');
		await page.waitForSelector('#library:not([hidden])');
		await page.waitForFunction(() => document.getElementById('status-line').textContent.includes('runs'));
		eq(await page.locator('#status-line').textContent(), '0 runs', 'an empty library counts no runs');
		await shot('01-library-empty');
	});

	await step('a rejected upload shows the server\'s reason', async () => {
		await uploadViaPage(BAD);
		const item = page.locator('.upload-item', { hasText: 'not-a-trace.txt' });
		if (await item.evaluate((x) => x.classList.contains('failed'))) {
			const msg = await item.locator('.msg').textContent();
			assert(/rejected \(4\d\d/.test(msg), `message names the status: ${msg}`);
			assert(msg.length > 'rejected (415 x): '.length + 5, `message carries the detail: ${msg}`);
		} else {
			/* Accepted, then the ingest must fail and the row must say why. */
			const t = await waitReady('not-a-trace');
			eq(t.status, 'failed', 'the text file fails to ingest');
			const txt = await page.locator(`#lib-table tr[data-id="${t.id}"] .status`).textContent();
			assert(t.error && txt.includes(t.error), `row shows the server error: ${txt}`);
		}
		await shot('02-upload-rejected');
	});

	await step(`upload ${path.basename(MAIN)} through the page`, async () => {
		await uploadViaPage(MAIN);
		const item = page.locator('.upload-item', { hasText: path.basename(MAIN) });
		assert(await item.evaluate((x) => x.classList.contains('ok')), 'upload accepted: ' + await item.textContent());
		ctx.main = await waitReady(path.basename(MAIN));
		eq(ctx.main.status, 'ready', 'ingest status');
		const row = page.locator(`#lib-table tr[data-id="${ctx.main.id}"]`);
		await page.waitForFunction((id) => {
			const r = document.querySelector(`#lib-table tr[data-id="${id}"] td.devices`);
			return r && r.textContent && r.textContent !== '…';
		}, ctx.main.id);
		const cells = await row.locator('td').allTextContents();
		const events = ctx.main.slices + ctx.main.instants + ctx.main.counters;
		assert(cells[3].replace(/,/g, '') === String(events), `event count cell ${cells[3]} = ${events}`);
		await shot('03-library-uploaded');
	});

	await step('drag and drop uploads a file', async () => {
		await page.evaluate(() => {
			const ev = [{ ph: 'X', pid: 1, tid: 1, ts: 1, dur: 5, name: 'dropped-slice' },
				{ ph: 'X', pid: 1, tid: 1, ts: 2, dur: 1, name: 'dropped-child' }];
			const f = new File([JSON.stringify({ traceEvents: ev })], 'dropped.json', { type: 'application/json' });
			const dt = new DataTransfer();
			dt.items.add(f);
			document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
			document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
		});
		await page.waitForSelector('#drop-overlay', { state: 'hidden' });
		const t = await waitReady('dropped.json');
		eq([t.status, t.slices], ['ready', 2], 'dropped trace ingested');
		ctx.dropped = t;
	});

	await step('counts read in the singular where there is one', async () => {
		await page.goto(`${URL0}/#trace=${ctx.dropped.id}`);
		await waitState(() => window.__nx.state.ready);
		await page.waitForFunction(() => /unit/.test(document.getElementById('status-line').textContent));
		eq(await page.locator('#status-line').textContent(), '1 unit · 2 events', 'one thread of one process');
		await page.goto(URL0 + '/');
		await page.waitForSelector('#library:not([hidden])');
		await page.waitForFunction(() => / runs?$/.test(document.getElementById('status-line').textContent));
		const m = /^([\d,]+) (runs?)$/.exec(await page.locator('#status-line').textContent());
		assert(m && (m[1] === '1') === (m[2] === 'run'), 'the library\'s count and noun agree: ' + (m && m[0]));
	});

	await step('timeline rows match the trace units', async () => {
		await page.click(`#lib-table tr[data-id="${ctx.main.id}"] a.trace-link`);
		await waitState(() => window.__nx.state.ready);
		const u = await api(`/api/traces/${ctx.main.id}/units`);
		ctx.units = u;
		const st = await state();
		eq(st.units, u.units.map((x) => x.id), 'rows in API order');
		assert(st.stats.timelineAnswers >= 1, 'a /timeline answer arrived');
		assert(/units=/.test(st.stats.lastUrl) && /px=\d+/.test(st.stats.lastUrl), 'request names units and px: ' + st.stats.lastUrl);
		ctx.full = { start: st.start, end: st.end };
		eq(await page.locator('#crumb a.export').getAttribute('href'),
			`/api/traces/${ctx.main.id}/export?format=pftrace`, 'the header links the run\'s .pftrace export');
		await shot('04-timeline');
	});

	await step('device groups collapse and expand', async () => {
		const box = await page.locator('#tl-overlay').boundingBox();
		const dev0 = ctx.units.units[0].device_id;
		const inDev0 = ctx.units.units.filter((x) => x.device_id === dev0).length;
		await page.mouse.click(box.x + 60, box.y + 8);
		let st = await state();
		eq(st.units.length, ctx.units.units.length - inDev0, 'rows after collapsing the first device');
		await shot('05-collapsed');
		await page.mouse.click(box.x + 60, box.y + 8);
		st = await state();
		eq(st.units.length, ctx.units.units.length, 'rows after expanding');
	});

	await step('W/S zoom, A/D pan, wheel zoom issue new /timeline requests', async () => {
		const box = await page.locator('#tl-overlay').boundingBox();
		await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
		let st = await state();
		const before = st.stats.timelineRequests;
		await page.keyboard.down('w');
		await page.waitForTimeout(400);
		await page.keyboard.up('w');
		await page.waitForTimeout(100);
		const z = await state();
		assert(z.end - z.start < (st.end - st.start) * 0.8, `W zooms in: ${z.end - z.start} < ${st.end - st.start}`);
		await page.keyboard.down('d');
		await page.waitForTimeout(250);
		await page.keyboard.up('d');
		const p = await state();
		assert(p.start > z.start, 'D pans right');
		await page.mouse.wheel(0, 400);
		await page.waitForTimeout(100);
		const w = await state();
		assert(w.end - w.start > p.end - p.start, 'wheel down zooms out');
		await waitState((b) => window.__nx.state.stats.timelineAnswers > 1 && window.__nx.state.stats.timelineRequests > b, before);
		st = await state();
		const m = /start=(\d+)&end=(\d+)/.exec(decodeURIComponent(st.stats.lastUrl));
		const rel = (abs) => Number(BigInt(abs) - BigInt(st.base));
		assert(m && Math.abs(rel(m[1]) - st.start) < 2 && Math.abs(rel(m[2]) - st.end) < 2, 'last request is the visible window');
		await shot('06-zoomed');
	});

	await step('select an event with flows: edges listed and arrows drawn', async () => {
		const s = await api(`/api/traces/${ctx.main.id}/search?q=cudaLaunchKernel&limit=200`);
		let ev = null;
		for (const m of s.matches.slice(0, 60)) {
			const d = await api(`/api/traces/${ctx.main.id}/events/${m.id}`);
			if ((d.edges.out.flow || []).length || (d.edges.in.flow || []).length) {
				ev = d;
				break;
			}
		}
		assert(ev, 'some cudaLaunchKernel has a flow edge');
		ctx.ev = ev;
		const d = Math.max(ev.dur, 1000) * 20;
		await page.goto(`${URL0}/#trace=${ctx.main.id}&start=${ev.ts - d}&end=${ev.ts + d}&sel=${ev.id}`);
		await waitState((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded && window.__nx.state.ready, ev.id);
		const nOut = ev.edges.out.flow.length;
		const nIn = ev.edges.in.flow.length;
		eq(await page.locator('.edge-dir[data-dir=out] ul[data-kind=flow] a.edge-link').count(), nOut, 'out flow edges listed');
		eq(await page.locator('.edge-dir[data-dir=in] ul[data-kind=flow] a.edge-link').count(), nIn, 'in flow edges listed');
		const title = await page.locator('#tl-details h3').textContent();
		eq(title, ev.name, 'details title');
		await waitState((id) => window.__nx.state.arrows.some((a) => a.kind === 'flow' && (a.src === id || a.dst === id)), ev.id);
		const st = await state();
		const flowArrows = st.arrows.filter((a) => a.kind === 'flow');
		const want = new Set([...ev.edges.out.flow.map((e) => `${ev.id}>${e.id}`), ...ev.edges.in.flow.map((e) => `${e.id}>${ev.id}`)]);
		for (const a of flowArrows)
			assert(want.has(`${a.src}>${a.dst}`), `arrow ${a.src}>${a.dst} is one of the event's flows`);
		eq(flowArrows.length, want.size, 'one arrow per flow edge');
		await shot('07-selected-flows');
		/* The flow toggle hides them. */
		await page.uncheck('#tl-kinds input[data-kind=flow]');
		await page.waitForTimeout(100);
		eq((await state()).arrows.filter((a) => a.kind === 'flow').length, 0, 'flow arrows hidden by the toggle');
		await page.check('#tl-kinds input[data-kind=flow]');
	});

	await step('click on the canvas selects the event under the cursor', async () => {
		await page.keyboard.press('Escape');
		eq((await state()).sel, null, 'Escape clears the selection');
		const pos = await page.evaluate((id) => window.__nx.timeline.locate(id), ctx.ev.id);
		assert(pos, 'selected event is drawn');
		await page.mouse.click(pos.x, pos.y);
		await waitState((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded, ctx.ev.id);
		await page.mouse.move(pos.x, pos.y + 1);
		await page.waitForSelector('#tl-tooltip:not([hidden])');
		const tip = await page.locator('#tl-tooltip').textContent();
		assert(tip.includes(ctx.ev.name), 'hover tooltip names the event: ' + tip);
		await shot('08-clicked');
		/* Jump along an edge from the panel. */
		const first = page.locator('#tl-details a.edge-link').first();
		const target = Number(await first.getAttribute('data-eid'));
		await first.click();
		await waitState((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded, target);
		await page.locator('#tl-chain').click();
		await waitState(() => window.__nx.state.chain !== null);
		assert((await state()).chain.nodes >= 2, 'follow chain finds events');
		await page.locator('#tl-critical').click();
		await waitState(() => window.__nx.state.critical !== null);
		assert((await state()).critical >= 1, 'critical path has hops');
		await page.waitForSelector('#tl-critical-info table');
		await shot('09-chain');
	});

	await step('search: match count and next/previous', async () => {
		const q = 'cudaLaunchKernel';
		const api1 = await api(`/api/traces/${ctx.main.id}/search?q=${q}&limit=3`);
		await page.fill('#tl-search', q);
		await page.press('#tl-search', 'Enter');
		await waitState((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded, api1.matches[0].id);
		const c = await page.locator('#tl-search-count').textContent();
		eq(c.replace(/,/g, ''), `1 / ${api1.total}`, 'match count');
		if (api1.total > 1) {
			await page.press('#tl-search', 'Enter');
			await waitState((id) => window.__nx.state.sel === id, api1.matches[1].id);
			await page.press('#tl-search', 'Shift+Enter');
			await waitState((id) => window.__nx.state.sel === id, api1.matches[0].id);
		}
		await shot('10-search');
	});

	await step('shift-drag selects a range and shows a sortable summary', async () => {
		await page.locator('#tl-overlay').hover();
		await page.keyboard.press('0');
		await page.waitForTimeout(100);
		const box = await page.locator('#tl-overlay').boundingBox();
		const y = box.y + 40;
		await page.mouse.move(box.x + 260, y);
		await page.keyboard.down('Shift');
		await page.mouse.down();
		await page.mouse.move(box.x + box.width * 0.8, y, { steps: 6 });
		await page.mouse.up();
		await page.keyboard.up('Shift');
		await waitState(() => window.__nx.state.summaryRows !== null);
		const st = await state();
		const abs = (rel) => (BigInt(st.base) + BigInt(rel)).toString();
		const sum = await api(`/api/traces/${ctx.main.id}/summary?start=${abs(Math.floor(st.range.start))}&end=${abs(Math.ceil(st.range.end))}`);
		eq(st.summaryRows, sum.rows.length, 'summary rows as the API gives');
		assert(sum.rows.length > 0, 'range holds events');
		eq(await page.locator('#tl-summary tbody tr').count(), Math.min(sum.rows.length, 2000), 'table rows');
		await page.click('#tl-summary th[data-key=count]');
		const counts = (await page.locator('#tl-summary tbody tr td:nth-child(2)').allTextContents()).map((x) => Number(x.replace(/,/g, '')));
		for (let i = 1; i < counts.length; i++)
			assert(counts[i - 1] >= counts[i], 'sorted by count, descending');
		const fit = await page.evaluate(() => {
			const t = document.querySelector('#tl-summary table');
			const panel = document.getElementById('tl-panel');
			return {
				table: t.getBoundingClientRect().right <= panel.getBoundingClientRect().right - 5,
				cut: [...t.querySelectorAll('td.num, th')].filter((c) => c.scrollWidth > c.clientWidth)
					.map((c) => c.textContent).slice(0, 5),
			};
		});
		eq(fit, { table: true, cut: [] }, 'the summary fits the panel and no figure is cut off');
		await shot('11-range-summary');
	});

	await step('the URL reproduces window and selection', async () => {
		await page.fill('#tl-search', 'cudaLaunchKernel');
		await page.press('#tl-search', 'Enter');
		await page.locator('#tl-overlay').hover();
		await page.keyboard.down('w');
		await page.waitForTimeout(150);
		await page.keyboard.up('w');
		/* The URL is written 250 ms after the last change. */
		await page.waitForFunction(() => {
			const s = window.__nx.state;
			const h = new URLSearchParams(location.hash.slice(1));
			const abs = (rel) => (BigInt(s.base) + BigInt(Math.round(rel))).toString();
			return h.get('sel') === String(s.sel) && h.get('start') === abs(s.start) &&
				h.get('end') === abs(s.end);
		}, null, { timeout: 5000 });
		const st = await state();
		const url = page.url();
		assert(url.includes('sel=' + st.sel), 'URL has the selection: ' + url);
		const p2 = await ctx.browser.newPage({ viewport: { width: 1440, height: 860 } });
		await p2.goto(url);
		await p2.waitForFunction((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded && window.__nx.state.ready, st.sel, { timeout: 15000 });
		const s2 = await p2.evaluate(() => window.__nx.state);
		eq(s2.base, st.base, 'same time base');
		assert(Math.abs(s2.start - st.start) <= 1 && Math.abs(s2.end - st.end) <= 1,
			`same window to the nanosecond: ${s2.start}..${s2.end} vs ${st.start}..${st.end}`);
		eq(await p2.locator('#tl-details h3').textContent(), await page.locator('#tl-details h3').textContent(), 'same details');
		await p2.screenshot({ path: path.join(SHOTS, '12-link-reloaded.png') });
		await p2.close();
	});

	await step('names with markup are shown as text', async () => {
		await page.goto(URL0 + '/');
		await uploadViaPage(XSS);
		const t = await waitReady('xss-names.json');
		eq(t.status, 'ready', 'xss trace ingested');
		ctx.xss = t;
		await page.goto(`${URL0}/#trace=${t.id}`);
		await waitState(() => window.__nx.state.ready);
		await page.fill('#tl-search', '<img src=x onerror=alert(2)>');
		await page.press('#tl-search', 'Enter');
		await waitState(() => window.__nx.state.detailLoaded);
		eq(await page.locator('#tl-details h3').textContent(), '<img src=x onerror=alert(2)>', 'name as text');
		const box = await page.locator('#tl-overlay').boundingBox();
		await page.mouse.move(box.x + 100, box.y + 40);	/* hover the label column: tooltip with the unit name */
		await page.waitForTimeout(100);
		await shot('13-markup-names');
		const injected = await page.evaluate(() => ({
			img: document.querySelectorAll('img').length,
			scripts: [...document.scripts].filter((s) => !s.src).length,
			b: document.querySelectorAll('#tl-details b').length,
		}));
		eq(injected, { img: 0, scripts: 0, b: 0 }, 'no element made from trace data');
		eq(ctx.dialogs, [], 'no dialog fired');
	});

	await step('dependencies of every kind: listed by kind, drawn, toggled', async () => {
		const t = await uploadFromLibrary(KINDS, 'kinds.json');
		eq(t.status, 'ready', 'kinds.json ingests');
		const s = await api(`/api/traces/${t.id}/search?q=mid&limit=10`);
		const mid = s.matches.find((m) => m.name === 'mid');
		assert(mid, 'the event "mid" is found');
		const ev = await api(`/api/traces/${t.id}/events/${mid.id}`);
		const count = (dir, k) => (ev.edges[dir][k] || []).length;
		eq([count('in', 'order'), count('in', 'anti'), count('in', 'output'), count('out', 'flow')],
			[2, 1, 1, 1], 'the API has program order and a semaphore wait, anti, output in; flow out');
		await page.goto(`${URL0}/#trace=${t.id}&start=0&end=45000&sel=${mid.id}`);
		await waitState((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded &&
			window.__nx.state.ready, mid.id);
		for (const [dir, k] of [['in', 'order'], ['in', 'anti'], ['in', 'output'], ['out', 'flow']])
			eq(await page.locator(`.edge-dir[data-dir=${dir}] ul[data-kind=${k}] a.edge-link`).count(),
				count(dir, k), `${dir} ${k} edges listed`);
		const details = await page.locator('#tl-details').textContent();
		for (const label of ['S>=1', 'B[0:64]', 'B[0:32]'])
			assert(details.includes(label), `the edge label ${label} is shown`);
		await waitState(() => new Set(window.__nx.state.arrows.map((a) => a.kind)).size >= 4);
		const arrows = (await state()).arrows;
		const key = (a) => `${a.kind}:${a.src}>${a.dst}`;
		const want = [];
		for (const dir of ['in', 'out'])
			for (const [k, list] of Object.entries(ev.edges[dir]))
				for (const e of list)
					want.push(dir === 'in' ? `${k}:${e.id}>${mid.id}` : `${k}:${mid.id}>${e.id}`);
		eq([...new Set(arrows.map(key))].sort(), [...new Set(want)].sort(), 'one arrow per edge, by kind');
		await shot('14-kinds');
		await page.uncheck('#tl-kinds input[data-kind=anti]');
		await page.waitForTimeout(100);
		const left = (await state()).arrows.map((a) => a.kind);
		assert(!left.includes('anti') && left.includes('output') && left.includes('order') &&
			left.includes('flow'), 'the anti toggle hides only the anti arrow: ' + left);
		await page.check('#tl-kinds input[data-kind=anti]');
		/* The critical path ending at the selection: the API's hops, drawn and tabled. */
		const cp = await api(`/api/traces/${t.id}/critical-path?event=${mid.id}&kinds=flow,order,anti,output`);
		assert(cp.hops.length >= 2 && cp.hops[cp.hops.length - 1].id === mid.id, 'the path ends at mid');
		await page.locator('#tl-critical').click();
		await waitState((n) => window.__nx.state.critical === n &&
			window.__nx.state.arrows.filter((a) => a.kind === 'critical').length === n - 1, cp.hops.length);
		const crit = (await state()).arrows.filter((a) => a.kind === 'critical').map((a) => `${a.src}>${a.dst}`);
		eq(crit, cp.hops.slice(1).map((h, i) => `${cp.hops[i].id}>${h.id}`), 'one thick arrow per hop');
		await page.waitForSelector('#tl-critical-hops');
		assert(await page.locator('#tl-critical').isEnabled() &&
			(await page.locator('#tl-critical').innerText()) === 'Critical path',
			'the button is back once the answer is in');
		eq(await page.locator('#tl-critical-hops tbody tr').count(), cp.hops.length, 'a row per hop');
		/* The path's time by unit, named as the rows are, the bottleneck first. */
		const names = new Map((await api(`/api/traces/${t.id}/units`)).units.map((u) => [u.id, u.name]));
		eq(await page.locator('#tl-critical-units tbody td:first-child').allInnerTexts(),
			cp.units.map((u) => names.get(u.unit)), 'a row per unit on the path, largest share first');
		eq(cp.units.reduce((a, u) => a + u.hops, 0), cp.hops.length, 'the units count every hop once');
		eq(cp.units.reduce((a, u) => a + u.work_ns + u.wait_ns, 0), cp.total_ns, 'and share out the whole path');
		const byKind = Object.entries(cp.kinds).sort((a, b) => b[1].wait_ns - a[1].wait_ns || b[1].hops - a[1].hops);
		eq(await page.locator('#tl-critical-kinds span').allInnerTexts(), byKind.map(([k]) => k),
			'what the path waited via, by kind, the longest wait first');
		eq(byKind.reduce((a, [, v]) => a + v.hops, 0), cp.hops.length - 1, 'one kind per hop after the first');
		const head = await page.locator('#tl-critical-info h4').innerText();
		assert(head.includes('30.00 µs (work 26.00 µs, wait 4.000 µs)'),
			'the totals read in µs as rendered (not upper-cased to "MS"): ' + head);
		const cut = await page.locator('#tl-critical-info td.num').evaluateAll((tds) =>
			tds.filter((td) => td.scrollWidth > td.clientWidth).map((td) => td.textContent));
		eq(cut, [], 'no work or wait figure is cut off');
		await shot('14-kinds-critical');
		/* A window that starts after load ended: the path stops at the window's start. */
		const cpw = await api(`/api/traces/${t.id}/critical-path?event=${mid.id}&start=11000&kinds=flow,order,anti,output`);
		eq(cpw.hops.map((h) => h.name), ['read', 'mid'], 'the API stops at the start it is given');
		await page.goto(`${URL0}/#trace=${t.id}&start=11000&end=45000&sel=${mid.id}`);
		await waitState((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded &&
			window.__nx.state.ready && window.__nx.state.start > 10000, mid.id);
		await page.locator('#tl-critical').click();
		await waitState((n) => window.__nx.state.critical === n &&
			window.__nx.state.arrows.filter((a) => a.kind === 'critical').length === n - 1, cpw.hops.length);
		eq((await state()).arrows.filter((a) => a.kind === 'critical').map((a) => `${a.src}>${a.dst}`),
			[`${cpw.hops[0].id}>${mid.id}`], 'the page asks for the path within its window');
		eq(await page.locator('#tl-critical-info td.muted').evaluateAll((tds) => tds.map((td) => `${td.textContent}:${td.title}`)),
			[':', 'anti:B[0:64]'], 'a hop\'s kind, with its edge\'s label on hover');
		/* Zoomed in on mid alone: the arrows to events outside the window end at its edges. */
		await page.goto(`${URL0}/#trace=${t.id}&start=23000&end=29000&sel=${mid.id}`);
		await waitState((id) => window.__nx.state.sel === id && window.__nx.state.detailLoaded &&
			window.__nx.state.ready && window.__nx.state.arrows.filter((a) => a.kind !== 'critical').length >= 4 && window.__nx.state.end < 30000, mid.id);
		const edge = await page.evaluate(() => {
			const t = window.__nx.timeline;
			return { lo: 220, hi: 220 + t.plotW, arrows: window.__nx.state.arrows };
		});
		const inside = (x) => x >= edge.lo - 0.5 && x <= edge.hi + 0.5;
		eq(edge.arrows.filter((a) => a.kind !== 'critical').filter((a) => !inside(a.x0) || !inside(a.x1)).map(key), [],
			'arrows to events outside the window end at its edges');
		eq([...new Set(edge.arrows.filter((a) => a.kind !== 'critical').map(key))].sort(), [...new Set(want)].sort(), 'and none is dropped');
		await shot('14-kinds-zoomed');
		/* A slow answer: "loading…" shows while it is awaited, and goes when it is drawn. */
		await page.route('**/timeline?*', async (route) => {
			await new Promise((r) => setTimeout(r, 800));
			await route.continue();
		});
		await page.evaluate(() => document.activeElement && document.activeElement.blur());
		await page.click('#tl-zoom-out');
		await page.waitForSelector('#tl-loading:not([hidden])', { timeout: 5000 });
		await page.waitForSelector('#tl-loading', { state: 'hidden', timeout: 10000 });
		await page.unroute('**/timeline?*');
	});

	await step('epoch-clock times keep their nanoseconds (1.6e18 ns is past a double\'s integers)', async () => {
		const t = await uploadFromLibrary(EPOCH, 'epoch.json');
		eq(t.status, 'ready', 'epoch.json ingests');
		/* Times as the server writes them, read as text: JSON numbers this big lose digits. */
		const text = await (await fetch(`${URL0}/api/traces/${t.id}/search?q=second&limit=1`)).text();
		const ts = /"ts":(\d+)/.exec(text)[1];
		eq(ts, '1623142623531272128', 'the API has the exact start');
		const id = Number(/"id":(\d+)/.exec(text)[1]);
		const start = '1623142623531270800', end = '1623142623531272812';	/* 2012 ns */
		await page.goto(`${URL0}/#trace=${t.id}&start=${start}&end=${end}&sel=${id}`);
		await waitState((i) => window.__nx.state.sel === i && window.__nx.state.detailLoaded &&
			window.__nx.state.ready, id);
		const got = await page.evaluate((i) => {
			const tl = window.__nx.timeline;
			const rows = (sel) => Object.fromEntries([...document.querySelectorAll(sel)]
				.map((tr) => [tr.querySelector('th').textContent, tr.querySelector('td').textContent]));
			const kv = rows('#tl-details table.kv:not(.args) tr');
			const args = rows('#tl-details table.kv.args tr');
			return { kv, args, loc: tl.locate(i), plotW: tl.plotW, left: tl.canvas.getBoundingClientRect().left,
				window: document.getElementById('tl-window').textContent,
				hash: new URLSearchParams(location.hash.slice(1)).get('start') };
		}, id);
		eq([got.kv.start, got.kv.end, got.kv.timestamp], ['1.128 µs', '1.384 µs', '1623142623531272128 ns'],
			'start and end from the trace start, and the raw timestamp, to the nanosecond');
		eq(got.args, { correlation: '9007199254740993', start: '5' },
			'args as sent: a 2^53 + 1 id to the digit, a small "start" not taken for a time');
		assert(got.window.includes('(2.012 µs)'), 'the window is the 2012 ns asked for: ' + got.window);
		/* second's middle is 1328 + 128 ns into the window */
		const want = got.left + 220 + (1456 / 2012) * got.plotW;
		assert(Math.abs(got.loc.x - want) <= 1, `drawn where it is: x ${got.loc.x}, want ${want}`);
		eq(got.hash, start, 'the URL keeps the exact start');
		await shot('15-epoch-ns');
	});

	await step('zoomed out, long top-level spans drawn as buckets still carry their names', async () => {
		/* 4 steps of 250 ms, 2500 short children each: more events than pixels, so buckets */
		const ev = [{ name: 'thread_name', ph: 'M', pid: 1, tid: 1, args: { name: 'main' } }];
		for (let k = 0; k < 4; k++) {
			ev.push({ name: `ProfilerStep#${k}`, ph: 'X', ts: k * 250000, dur: 249000, pid: 1, tid: 1 });
			for (let i = 0; i < 2500; i++)
				ev.push({ name: `op${i % 7}`, ph: 'X', ts: k * 250000 + i * 99, dur: 60, pid: 1, tid: 1 });
		}
		const t = await uploadEvents('steps.json', ev);
		eq(t.status, 'ready', 'steps.json ingests');
		await page.goto(`${URL0}/#trace=${t.id}`);
		await waitState(() => window.__nx.state.ready && window.__nx.state.bucketLabels.length >= 4);
		eq((await state()).bucketLabels, ['ProfilerStep#0', 'ProfilerStep#1', 'ProfilerStep#2', 'ProfilerStep#3'],
			'each step is named in the top lane');
		await shot('16-bucket-labels');
	});

	await step('a trace with more rows than fit: the first rows show at the top, the last after scrolling', async () => {
		const ev = [];
		for (let k = 1; k <= 60; k++) {
			ev.push({ name: 'thread_name', ph: 'M', pid: 1, tid: k, args: { name: `worker ${k}` } });
			ev.push({ name: `task ${k}`, ph: 'X', ts: 100 * k, dur: 5000, pid: 1, tid: k });
		}
		const t = await uploadEvents('threads.json', ev);
		eq(t.status, 'ready', 'threads.json ingests');
		await page.goto(`${URL0}/#trace=${t.id}`);
		await waitState(() => window.__nx.state.ready && window.__nx.state.units.length >= 10);
		const at = (name) => page.evaluate(async (nm) => {
			const j = await (await fetch(`/api/traces/${window.__nx.state.traceId}/search?q=${encodeURIComponent(nm)}&limit=5`)).json();
			const m = j.matches.find((x) => x.name === nm);
			const sc = document.getElementById('tl-scroll').getBoundingClientRect();
			const stack = document.getElementById('tl-stack').getBoundingClientRect();
			return { loc: window.__nx.timeline.locate(m.id), top: sc.top, bottom: sc.bottom, stackTop: stack.top };
		}, name);
		const inView = (p) => p.loc && p.loc.y >= p.top && p.loc.y <= p.bottom;
		/* the canvas stays on screen above the scroll spacer (it sat below it, so tall traces were blank) */
		await waitState(() => window.__nx.state.stats.timelineAnswers > 0);
		const first = await at('task 1');
		assert(Math.abs(first.stackTop - first.top) < 2, `the canvas starts at the top of the rows: ${JSON.stringify(first)}`);
		assert(inView(first) && first.loc.y - first.top < 60, `the first row's event is at the top: ${JSON.stringify(first)}`);
		await shot('17-many-rows');
		await page.evaluate(() => { const sc = document.getElementById('tl-scroll'); sc.scrollTop = sc.scrollHeight; });
		let last = null;	/* its row's events come with the next answer */
		for (let i = 0; i < 40 && !inView(last || {}); i++) {
			last = await at('task 60');
			if (!inView(last))
				await page.waitForTimeout(100);
		}
		assert(inView(last), `scrolled to the bottom, the last row's event is on screen: ${JSON.stringify(last)}`);
		assert(Math.abs(last.stackTop - last.top) < 2, `and the canvas still fills the view: ${JSON.stringify(last)}`);
		await shot('18-many-rows-bottom');
	});

	await step('an ingest shows its phase beside its progress', async () => {
		/* a synthetic engine trace with access sets (tests/deps-gen): long enough to be seen ingesting */
		const gen = process.env.NX_DEPS_GEN;
		assert(gen && fs.existsSync(gen), `tests/deps-gen built (NX_DEPS_GEN=${gen})`);
		const file = path.join(process.env.NX_TMP || '/tmp', 'engine-600k.json');
		const fd = fs.openSync(file, 'w');
		const r = spawnSync(gen, ['-n', '600000', '-s', '5'], { stdio: ['ignore', fd, 'inherit'] });
		fs.closeSync(fd);
		eq(r.status, 0, 'deps-gen wrote the trace');
		await page.goto(URL0 + '/');
		await page.waitForSelector('#library:not([hidden])');
		/* every status text the library shows from now on, as it renders them */
		await page.evaluate(() => {
			window.nxStatuses = new Set();
			const note = () => document.querySelectorAll('#lib-table .status.busy')
				.forEach((e) => window.nxStatuses.add(e.textContent));
			new MutationObserver(note).observe(document.querySelector('#lib-table'),
				{ childList: true, subtree: true, characterData: true });
		});
		await uploadViaPage(file);
		const t = await waitReady('engine-600k.json');
		eq(t.status, 'ready', 'the engine trace is ingested');
		const seen = await page.evaluate(() => [...window.nxStatuses]);
		const phases = seen.map((x) => (/^ingesting \d+% · (\w+)$/.exec(x.replace(/\s+/g, ' ').trim()) || [])[1])
			.filter(Boolean);
		console.log(`# statuses shown: ${JSON.stringify(seen)}`);
		assert(phases.length > 0, 'a phase was shown while it ingested');
		const order = ['reading', 'sorting', 'dependencies', 'edges', 'committing'];
		assert(phases.every((p) => order.includes(p)), 'only known phases: ' + phases);
		const pcts = seen.map((x) => Number((/(\d+)%/.exec(x) || [])[1])).filter((x) => !isNaN(x));
		assert(pcts.every((x, i) => i === 0 || x >= pcts[i - 1]), 'the percentage never went down: ' + pcts);
		/* the later steps take the newest ready run for theirs */
		eq((await fetch(`${URL0}/api/traces/${t.id}`, { method: 'DELETE' })).status, 200, 'deleted again');
		ctx.engine = file;
	});

	/* From the library page, upload a copy of the engine trace under NAME (not waiting for it). */
	const uploadEngineCopy = async (name) => {
		assert(ctx.engine, 'the engine trace from the step before');
		const copy = path.join(process.env.NX_TMP || '/tmp', name);
		fs.copyFileSync(ctx.engine, copy);
		await page.goto(URL0 + '/');
		await page.waitForSelector('#library:not([hidden])');
		await uploadViaPage(copy);
	};

	await step('a run opened before its ingest ends says how far it is, then opens', async () => {
		await uploadEngineCopy('engine-open.json');
		const item = page.locator('.upload-item', { hasText: 'engine-open.json' });
		const id = (/accepted as ([0-9a-f]{16})/.exec(await item.textContent()) || [])[1];
		assert(id, 'the upload answered an id: ' + await item.textContent());
		try {
			await page.goto(`${URL0}/#trace=${id}`);
			const msg = await page.waitForSelector('#tl-details .notice', { timeout: 10000 });
			const text = await msg.textContent();
			assert(/is (queued|ingesting)( · [a-z]+)? \d+%; it opens when it is ready/.test(text), 'says how far: ' + text);
			await shot('18c-waiting');
			await page.waitForFunction(() => /^6 units/.test(document.getElementById('status-line').textContent),
				null, { timeout: 60000 });
			eq(await page.locator('#tl-details').isVisible(), false, 'the message went once it opened');
			await waitState(() => window.__nx.state.ready);
			eq((await state()).units.length, 6, 'its six units are drawn');
			await shot('18c-opened-when-ready');
		} finally {	/* the later steps take the newest ready run for theirs */
			await fetch(`${URL0}/api/traces/${id}`, { method: 'DELETE' });
		}
	});

	await step('Cancel on an ingesting run stops its ingest and removes it', async () => {
		await uploadEngineCopy('engine-cancel.json');
		const row = page.locator('#lib-table tr', { hasText: 'engine-cancel.json' });
		const btn = row.locator('button.danger.cancel');
		await btn.waitFor({ timeout: 10000 });
		eq(await btn.textContent(), 'Cancel', 'a busy run offers Cancel, not Delete');
		const id = await row.getAttribute('data-id');
		ctx.dialogs = [];
		ctx.expectConfirm = true;
		const [resp] = await Promise.all([
			page.waitForResponse((r) => r.url().endsWith(`/api/traces/${id}`) && r.request().method() === 'DELETE'),
			btn.click(),
		]);
		ctx.expectConfirm = false;
		assert(/^Stop ingesting run "engine-cancel.json"/.test(ctx.dialogs[0] || ''), 'asked first: ' + ctx.dialogs);
		eq(resp.status(), 200, 'the server deletes it');
		await page.waitForFunction((x) => !document.querySelector(`#lib-table tr[data-id="${x}"]`), id);
		eq((await fetch(`${URL0}/api/traces/${id}`)).status, 404, 'the run is gone');
		ctx.dialogs = [];
		await shot('18b-cancelled');
	});

	await step('a failed ingest shows its reason and a Retry button that ingests it again', async () => {
		const t = await uploadFromLibrary(TRUNC, 'truncated.json');
		eq(t.status, 'failed', 'the truncated trace fails to ingest');
		const row = `#lib-table tr[data-id="${t.id}"]`;
		await page.waitForSelector(`${row}[data-status="failed"] button.retry`);
		const reason = await page.locator(`${row} .status.failed`).textContent();
		assert(/truncated JSON/.test(reason), 'the reason is shown: ' + reason);
		eq(await page.locator('#lib-table tr[data-status="ready"] button.retry').count(), 0,
			'no Retry on ready runs');
		eq(await page.locator(`${row} td.row-actions`).evaluate((e) => getComputedStyle(e).display),
			'table-cell', 'Retry and Delete sit in their column');
		/* a ready run downloads as a Perfetto trace; a failed one has nothing to export */
		eq(await page.locator(`${row} a.export`).count(), 0, 'no export link on a failed run');
		const ready = page.locator('#lib-table tr[data-status="ready"]').first();
		const rid = await ready.getAttribute('data-id');
		eq(await ready.locator('a.export').getAttribute('href'), `/api/traces/${rid}/export?format=pftrace`,
			'a ready run links its .pftrace export');
		const [dl] = await Promise.all([page.waitForEvent('download'), ready.locator('a.export').click()]);
		assert(/\.pftrace$/.test(dl.suggestedFilename()), 'downloaded as .pftrace: ' + dl.suggestedFilename());
		const bytes = fs.readFileSync(await dl.path());
		const want = Buffer.from(await (await fetch(`${URL0}/api/traces/${rid}/export?format=pftrace`)).arrayBuffer());
		assert(bytes.length > 0 && bytes.equals(want), `the download is the export (${bytes.length} bytes)`);
		const [resp] = await Promise.all([
			page.waitForResponse((r) => r.url().endsWith(`/api/traces/${t.id}/retry`) &&
				r.request().method() === 'POST'),
			page.click(`${row} button.retry`),
		]);
		eq(resp.status(), 202, 'the retry is accepted');
		let j;
		for (let i = 0; i < 100; i++) {
			j = await api(`/api/traces/${t.id}`);
			if (j.status === 'failed')
				break;
			await page.waitForTimeout(100);
		}
		eq(j.status, 'failed', 'the same bytes fail again');
		assert(/truncated JSON/.test(j.error || ''), 'for the same reason: ' + j.error);
		await page.waitForSelector(`${row}[data-status="failed"] button.retry`);
		await shot('19-retry-failed');
		eq(ctx.dialogs, [], 'no dialog fired');
	});

	await step('help overlay and delete with confirmation', async () => {
		await page.evaluate(() => document.activeElement && document.activeElement.blur());
		await page.keyboard.press('?');
		await page.waitForSelector('#help:not([hidden])');
		await shot('14-help');
		await page.keyboard.press('Escape');
		await page.waitForSelector('#help', { state: 'hidden' });
		await page.goto(URL0 + '/');
		await page.waitForSelector(`#lib-table tr[data-id="${ctx.xss.id}"]`);
		const text = await page.locator(`#lib-table tr[data-id="${ctx.xss.id}"] td.name`).textContent();
		assert(text.includes('xss-names.json'), 'row name');
		await page.fill('#lib-search', 'xss-names');
		await page.waitForFunction(() => document.querySelectorAll('#lib-table tbody tr').length === 1);
		await page.fill('#lib-search', '');
		await page.waitForFunction(() => document.querySelectorAll('#lib-table tbody tr').length >= 2);
		ctx.expectConfirm = true;
		await page.click(`#lib-table tr[data-id="${ctx.xss.id}"] button.danger`);
		await page.waitForSelector(`#lib-table tr[data-id="${ctx.xss.id}"]`, { state: 'detached', timeout: 10000 });
		ctx.expectConfirm = false;
		assert(ctx.dialogs.length === 1 && /Delete run/.test(ctx.dialogs[0]), 'asked first: ' + ctx.dialogs);
		const r = await fetch(`${URL0}/api/traces/${ctx.xss.id}`);
		eq(r.status, 404, 'trace gone from the API');
		await shot('15-deleted');
	});

	await step('slice labels contrast with their fill on every hue', async () => {
		const worst = await page.evaluate(async () => {
			const u = await import('/js/util.js');
			const rgb = (css) => {
				const c = document.createElement('canvas').getContext('2d');
				c.fillStyle = css;
				c.fillRect(0, 0, 1, 1);
				return [...c.getImageData(0, 0, 1, 1).data].slice(0, 3);
			};
			const lum = ([r, g, b]) => {
				const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
				return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
			};
			let min = Infinity, at = '';
			for (let i = 0; i < 2000; i++) {
				const name = 'op' + i;
				const a = lum(rgb(u.nameColour(name))), b = lum(rgb(u.nameTextColour(name)));
				const c = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
				if (c < min) {
					min = c;
					at = name;
				}
			}
			return { min, at };
		});
		assert(worst.min >= 3.5, `contrast at least 3.5:1 (worst ${worst.min.toFixed(2)} for ${worst.at})`);
	});

	await step('no script errors in the page', async () => {
		eq(ctx.errors, [], 'page errors');
	});

	await browser.close();
	console.log(`1..${n}`);
	console.log(`# ${n - failed} passed, ${failed} failed`);
	process.exit(failed ? 1 : 0);
}

main().catch((e) => {
	console.log(`not ok ${n + 1} - harness: ${String(e && e.message || e).split('\n')[0]}`);
	console.log(`1..${n + 1}`);
	process.exit(1);
});
