// SPDX-License-Identifier: MIT
// web/js/timeline.js - the timeline page: canvas rows per hardware unit grouped by device,
// windowed fetches of /timeline (events or summary buckets), navigation, selection details,
// dependency arrows, search, range summary and the URL state.
//
// Time is held as ns in doubles. Data for a unit stays cached until newer data for it arrives,
// so panning and zooming keep drawing the previous answer while the next one is on its way.
import { el, clear, fmtDur, fmtPrecise, fmtTick, niceStep, fmtCount, fmtCountOf, nameColour, nameTextColour, KINDS, KIND_COLOUR, debounce, isTyping } from './util.js';
import { getJSON, getTrace, qs, tracePath, setTimeBase, timeBaseText, toAbs, fromAbs } from './api.js';

const LABEL_W = 220;

/* "GPU 0 (python3.10)", "python3.10 (CPU)": the device's name, and its label when it adds something. */
function devTitle(d) {
	const name = d.name || d.label || 'device ' + d.id;
	return d.label && d.label !== name ? `${name} (${d.label})` : name;
}	/* left label column, css px */
const SLICE_H = 18;	/* one nesting level */
const ROW_PAD = 3;
const GROUP_H = 22;
const COUNTER_H = 40;
const AXIS_H = 26;
const MIN_SPAN = 20;	/* ns */
const CHAIN_BUDGET = 2000;
const MAX_ARROWS = 5000;

export class Timeline {
	constructor(root) {
		this.root = root;
		this.$ = (s) => root.querySelector(s);
		this.canvas = this.$('#tl-canvas');
		this.overlay = this.$('#tl-overlay');
		this.axis = this.$('#tl-axis');
		this.scroller = this.$('#tl-scroll');
		this.spacer = this.$('#tl-spacer');
		this.stack = this.$('#tl-stack');
		this.tooltip = this.$('#tl-tooltip');
		this.panel = { empty: this.$('#tl-panel-empty'), details: this.$('#tl-details'), summary: this.$('#tl-summary') };
		this.traceId = null;
		this.reset();
		this.kindsOn = { flow: true, order: true, anti: true, output: true };
		this.keys = new Set();
		this.fetchSoon = debounce(() => this.fetchWindow(), 40);
		this.saveUrlSoon = debounce(() => this.saveUrl(), 250);
		this.resizeObs = new ResizeObserver(() => this.resize());
		this.resizeObs.observe(this.stack);
		this.buildKindToggles();
		this.installInput();
	}

	reset() {
		this.trace = null;
		this.base = '0';
		this.devices = [];
		this.units = [];
		this.unitById = new Map();
		this.rows = [];
		this.rowByUnit = new Map();
		this.collapsed = new Set();
		this.cache = new Map();
		this.start = 0;
		this.end = 1;
		this.sel = null;
		this.detail = null;
		this.chain = null;
		this.critical = null;
		this.range = null;
		this.search = { q: '', total: 0, matches: [], idx: -1 };
		this.arrows = [];
		this.inflight = null;
		this.pending = false;
		this.lastKey = '';
		this.lastFetchAt = 0;
		this.stats = { timelineRequests: 0, timelineAnswers: 0, frames: 0, firstDrawMs: null, lastUrl: '' };
		this.perf = { drawMs: [], fetchMs: [] };	/* bounded samples for bench/web-bench.mjs */
		this.loadedAt = 0;
		this.ready = false;
		this.summaryRows = null;
	}

	/* ---------- page life ---------- */

	async show(id, params) {
		/* URL times are absolute: read them against the trace's time base once it is known */
		const want = {
			start: params.has('start') ? params.get('start') : null,
			end: params.has('end') ? params.get('end') : null,
			sel: params.has('sel') ? Number(params.get('sel')) : null,
		};
		const rel = () => {
			want.start = want.start === null ? null : fromAbs(want.start);
			want.end = want.end === null ? null : fromAbs(want.end);
		};
		if (id === this.traceId && this.trace) {
			setTimeBase(this.base);
			rel();
			if (want.start !== null && want.end !== null && (want.start !== Math.round(this.start) || want.end !== Math.round(this.end)))
				this.setWindow(want.start, want.end);
			if (want.sel !== null && (!this.sel || this.sel.id !== want.sel))
				this.select(want.sel);
			return;
		}
		const waited = this.waitingFor === id;	/* looking again: the message stays meanwhile */
		this.waitingFor = null;
		clearTimeout(this.waitTimer);
		this.inflight?.ac.abort();
		this.reset();
		setTimeBase(null);	/* getTrace() sets the new one */
		this.traceId = id;
		this.loadedAt = performance.now();
		if (!waited) {
			this.hidePanels();
			document.getElementById('crumb').textContent = ' / ' + id;
			document.getElementById('status-line').textContent = 'loading…';
		}
		try {
			const t = await getTrace(tracePath(id));
			if (this.traceId !== id)
				return;
			if (t.status === 'queued' || t.status === 'ingesting') {
				/* a link followed before the ingest ended: say how far it is, open it when ready */
				const pct = Math.round((t.progress || 0) * 100);
				document.getElementById('status-line').textContent = '';
				this.showMessage(`${t.name || id} is ${t.status}${t.phase ? ' · ' + t.phase : ''} ${pct}%; it opens when it is ready.`, 'notice');
				this.waitingFor = id;
				this.waitTimer = setTimeout(() => {
					if (this.traceId === id && !this.trace)
						this.show(id, params);
				}, 700);
				return;
			}
			this.hidePanels();	/* a waiting message goes */
			const u = await getJSON(tracePath(id) + '/units');
			if (this.traceId !== id)
				return;
			this.base = timeBaseText();
			rel();
			this.trace = t;
			this.devices = u.devices || t.devices || [];
			this.units = u.units || [];
			for (const x of this.units)
				this.unitById.set(x.id, x);
		} catch (e) {
			document.getElementById('status-line').textContent = '';
			this.showMessage(`Cannot open trace ${id}: ${e.message}`);
			return;
		}
		const crumb = document.getElementById('crumb');
		crumb.textContent = ' / ' + (this.trace.name || id) + ' ';
		crumb.append(el('a', { class: 'button small export', href: tracePath(id) + '/export?format=pftrace', download: '',
			title: 'Download this run as a Perfetto trace (.pftrace), to open in ui.perfetto.dev' }, '.pftrace'));
		document.title = 'neuron-explorer: ' + (this.trace.name || id);
		document.getElementById('status-line').textContent =
			`${fmtCountOf(this.units.length, 'unit')} · ${fmtCountOf((this.trace.slices || 0) + (this.trace.instants || 0) + (this.trace.counters || 0), 'event')}`;
		if (this.trace.status && this.trace.status !== 'ready')
			this.showMessage(`Trace ${id} is ${this.trace.status}${this.trace.error ? ': ' + this.trace.error : ''}.`);
		this.layout();
		this.resize();
		const t0 = this.trace.start_ns ?? 0;
		const t1 = Math.max(this.trace.end_ns ?? t0 + 1, t0 + MIN_SPAN);
		if (want.start !== null && want.end !== null && want.end > want.start)
			this.setWindow(want.start, want.end);
		else
			this.setWindow(t0, t1);
		if (want.sel !== null)
			this.select(want.sel);
	}

	hide() {
		clearTimeout(this.waitTimer);
		this.waitingFor = null;
		this.inflight?.ac.abort();
		this.inflight = null;
		this.keys.clear();
		setTimeBase(null);	/* the library's times are absolute */
	}

	/** showMessage(msg, cls): msg in the side panel, styled as an 'error' (default) or a 'notice'. */
	showMessage(msg, cls = 'error') {
		this.hidePanels();
		this.panel.empty.hidden = true;
		clear(this.panel.details).append(el('div', { class: cls }, msg));
		this.panel.details.hidden = false;
	}

	hidePanels() {
		this.panel.details.hidden = true;
		this.panel.summary.hidden = true;
		this.panel.empty.hidden = false;
	}

	/* ---------- layout ---------- */

	layout() {
		const byDev = new Map();
		const order = [];
		for (const u of this.units) {
			if (!byDev.has(u.device_id)) {
				byDev.set(u.device_id, []);
				order.push(u.device_id);
			}
			byDev.get(u.device_id).push(u);
		}
		const devById = new Map(this.devices.map((d) => [d.id, d]));
		this.rows = [];
		this.rowByUnit = new Map();
		let y = 0;
		for (const did of order) {
			const d = devById.get(did) || { id: did, name: 'device ' + did };
			const list = byDev.get(did);
			const g = { type: 'group', device: d, y, h: GROUP_H, units: list };
			this.rows.push(g);
			y += GROUP_H;
			const collapsed = this.collapsed.has(did);
			for (const u of list) {
				const h = u.kind === 'counter' ? COUNTER_H : (Math.max(0, u.max_depth || 0) + 1) * SLICE_H + 2 * ROW_PAD;
				const r = { type: 'unit', unit: u, y, h: collapsed ? 0 : h, group: g };
				this.rowByUnit.set(u.id, r);
				if (!collapsed) {
					this.rows.push(r);
					y += h;
				}
			}
		}
		this.totalH = y;
		this.spacer.style.height = Math.max(0, this.totalH - this.stack.clientHeight) + 'px';
	}

	resize() {
		const dpr = window.devicePixelRatio || 1;
		this.dpr = dpr;
		this.w = this.stack.clientWidth;
		this.h = this.stack.clientHeight;
		for (const c of [this.canvas, this.overlay]) {
			c.width = Math.max(1, Math.round(this.w * dpr));
			c.height = Math.max(1, Math.round(this.h * dpr));
			c.style.width = this.w + 'px';
			c.style.height = this.h + 'px';
		}
		const aw = this.axis.clientWidth;
		this.axis.width = Math.max(1, Math.round(aw * dpr));
		this.axis.height = Math.round(AXIS_H * dpr);
		if (this.rows.length)
			this.spacer.style.height = Math.max(0, this.totalH - this.h) + 'px';
		this.redraw();
		this.fetchSoon();
	}

	get plotW() {
		return Math.max(1, this.w - LABEL_W);
	}

	get scale() {	/* css px per ns */
		return this.plotW / (this.end - this.start);
	}

	X(ts) {
		return LABEL_W + (ts - this.start) * this.scale;
	}

	T(x) {
		return this.start + (x - LABEL_W) / this.scale;
	}

	visibleRows() {
		const top = this.scroller.scrollTop;
		const bot = top + this.h;
		return this.rows.filter((r) => r.y + r.h > top && r.y < bot);
	}

	/* ---------- window ---------- */

	setWindow(s, e) {
		const t0 = this.trace?.start_ns ?? 0;
		const t1 = this.trace?.end_ns ?? t0 + 1;
		const full = Math.max(t1 - t0, MIN_SPAN);
		let span = Math.min(Math.max(e - s, MIN_SPAN), full * 4);
		let mid = (s + e) / 2;
		mid = Math.min(Math.max(mid, t0 - full), t1 + full);
		this.start = mid - span / 2;
		this.end = mid + span / 2;
		this.redraw();
		if (!this.inflight && performance.now() - (this.lastFetchAt || 0) > 120) {
			this.fetchSoon.cancel();
			this.fetchWindow();
		} else {
			this.fetchSoon();
		}
		this.saveUrlSoon();
	}

	zoom(factor, atX) {
		const x = atX ?? LABEL_W + this.plotW / 2;
		const t = this.T(x);
		const s = t - (t - this.start) * factor;
		const e = t + (this.end - t) * factor;
		this.setWindow(s, e);
	}

	pan(px) {
		const dt = px / this.scale;
		this.setWindow(this.start + dt, this.end + dt);
	}

	fitAll() {
		this.setWindow(this.trace.start_ns, Math.max(this.trace.end_ns, this.trace.start_ns + MIN_SPAN));
	}

	fitEvent(ev) {
		const d = Math.max(ev.dur || 0, 1000);
		this.setWindow(ev.ts - d * 0.15, ev.ts + d * 1.15);
	}

	saveUrl() {
		if (!this.traceId || location.hash.indexOf('trace=') < 0)
			return;
		const p = new URLSearchParams();
		p.set('trace', this.traceId);
		p.set('start', toAbs(this.start));
		p.set('end', toAbs(this.end));
		if (this.sel)
			p.set('sel', String(this.sel.id));
		history.replaceState(null, '', '#' + p.toString());
	}

	/* ---------- data ---------- */

	/*
	 * fetchWindow(): ask /timeline for the visible rows and window. At most one request is in
	 * flight: while one runs and still covers most of the view, the next waits for it (its
	 * answer is drawn meanwhile); a request the view has moved away from is cancelled.
	 */
	async fetchWindow() {
		if (!this.trace || !this.w)
			return;
		const rows = this.visibleRows().filter((r) => r.type === 'unit');
		if (!rows.length)
			return;
		const start = Math.floor(this.start);
		const end = Math.ceil(this.end);
		const px = Math.round(this.plotW);
		const ids = rows.map((r) => r.unit.id).join(',');
		const key = `${start}:${end}:${px}:${ids}`;
		if (key === this.lastKey)
			return;
		const f = this.inflight;
		if (f) {
			const ov = Math.min(f.end, end) - Math.max(f.start, start);
			const span = end - start;
			if (f.ids === ids && ov > 0.5 * span && (f.end - f.start) < 2 * span) {
				this.pending = true;
				return;
			}
			f.ac.abort();
		}
		const ac = new AbortController();
		const me = { ac, start, end, ids };
		this.inflight = me;
		this.showLoading(true);
		this.pending = false;
		const url = tracePath(this.traceId) + '/timeline' + qs({ start: toAbs(start), end: toAbs(end), px, units: ids });
		this.stats.timelineRequests++;
		this.stats.lastUrl = url;
		this.lastFetchAt = performance.now();
		const t0 = performance.now();
		try {
			const j = await getJSON(url, ac.signal);
			if (this.inflight !== me)
				return;
			this.stats.timelineAnswers++;
			sample(this.perf.fetchMs, performance.now() - t0);
			for (const uw of j.units || [])
				this.cache.set(uw.id, { start: j.start ?? start, end: j.end ?? end, px: j.px ?? px, ...uw });
			this.lastKey = key;
			this.ready = true;
			this.redraw();
			if (this.stats.firstDrawMs === null)
				this.stats.firstDrawMs = performance.now() - this.loadedAt;
		} catch (e) {
			if (e.name !== 'AbortError')
				document.getElementById('status-line').textContent = 'timeline: ' + e.message;
		} finally {
			if (this.inflight === me) {
				this.inflight = null;
				this.showLoading(false);
				if (this.pending)
					this.fetchWindow();
			}
		}
	}

	/*
	 * showLoading(on): "loading…" in the toolbar while a window's answer is awaited, after a
	 * short delay (fast answers do not flicker it): until then the rows show the previous
	 * answer, which may lack events of the new window.
	 */
	showLoading(on) {
		clearTimeout(this.loadingTimer);
		const box = this.$('#tl-loading');
		if (!on)
			box.hidden = true;
		else
			this.loadingTimer = setTimeout(() => { box.hidden = !this.inflight; }, 150);
	}

	/** findEvent(eid): the cached event with that id, with its unit, or null. */
	findEvent(eid, unitId) {
		const look = (uid, w) => {
			if (!w || w.mode !== 'events')
				return null;
			for (const e of w.events)
				if (e.id === eid)
					return { ...e, unit: uid };
			return null;
		};
		if (unitId !== undefined)
			return look(unitId, this.cache.get(unitId));
		for (const [uid, w] of this.cache) {
			const r = look(uid, w);
			if (r)
				return r;
		}
		return null;
	}

	/* ---------- drawing ---------- */

	redraw() {
		if (this.rafPending)
			return;
		this.rafPending = true;
		requestAnimationFrame(() => {
			this.rafPending = false;
			this.draw();
		});
	}

	draw() {
		if (!this.trace || !this.w)
			return;
		const t0 = performance.now();
		const ctx = this.canvas.getContext('2d');
		const dpr = this.dpr;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, this.w, this.h);
		ctx.font = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
		ctx.textBaseline = 'middle';
		this.bucketLabels = [];	/* the names labelBucketRuns() wrote this frame */
		const top = this.scroller.scrollTop;
		this.related = this.relatedSet();
		const rows = this.visibleRows();
		let alt = 0;
		for (const r of rows) {
			const y = r.y - top;
			if (r.type === 'group') {
				this.drawGroup(ctx, r, y);
				continue;
			}
			ctx.fillStyle = (alt++ & 1) ? '#f6f8fa' : '#ffffff';
			ctx.fillRect(0, y, this.w, r.h);
			ctx.save();
			ctx.beginPath();
			ctx.rect(LABEL_W, y, this.plotW, r.h);
			ctx.clip();
			const w = this.cache.get(r.unit.id);
			if (w) {
				if (r.unit.kind === 'counter')
					this.drawCounter(ctx, r, y, w);
				else if (w.mode === 'buckets')
					this.drawBuckets(ctx, r, y, w);
				else
					this.drawEvents(ctx, r, y, w);
			}
			ctx.restore();
			this.drawLabel(ctx, r, y);
			ctx.fillStyle = '#d0d7de';
			ctx.fillRect(0, y + r.h - 1, this.w, 1);
		}
		this.drawSelection(ctx, top);
		this.drawRange(ctx);
		this.drawAxis();
		this.drawOverlay(top);
		this.$('#tl-window').textContent = `${fmtDur(this.start - this.trace.start_ns)} … ${fmtDur(this.end - this.trace.start_ns)}  (${fmtDur(this.end - this.start)})`;
		this.stats.frames++;
		this.stats.lastFrameMs = performance.now() - t0;
		sample(this.perf.drawMs, this.stats.lastFrameMs);
	}

	drawGroup(ctx, r, y) {
		ctx.fillStyle = '#e8ecf0';
		ctx.fillRect(0, y, this.w, r.h);
		ctx.fillStyle = '#d0d7de';
		ctx.fillRect(0, y + r.h - 1, this.w, 1);
		ctx.fillStyle = '#24292f';
		ctx.font = 'bold 12px system-ui, sans-serif';
		const d = r.device;
		const open = !this.collapsed.has(d.id);
		const label = `${open ? '▾' : '▸'} ${devTitle(d)}`;
		ctx.fillText(label, 6, y + r.h / 2);
		ctx.font = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
		ctx.fillStyle = '#57606a';
		const lw = ctx.measureText(label).width;
		ctx.font = 'bold 12px system-ui, sans-serif';
		const lw2 = ctx.measureText(label).width;
		ctx.font = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
		ctx.fillText(`${d.kind || ''} · ${fmtCountOf(r.units.length, 'unit')}`, 14 + Math.max(lw, lw2), y + r.h / 2);
	}

	drawLabel(ctx, r, y) {
		ctx.fillStyle = 'rgba(255,255,255,0.94)';
		ctx.fillRect(0, y, LABEL_W, r.h - 1);
		ctx.fillStyle = '#d0d7de';
		ctx.fillRect(LABEL_W - 1, y, 1, r.h);
		const u = r.unit;
		const ty = y + Math.min(r.h / 2, SLICE_H / 2 + ROW_PAD);
		ctx.fillStyle = '#8c959f';
		ctx.font = '10px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
		const kw = ctx.measureText(u.kind || '').width;
		ctx.fillText(u.kind || '', LABEL_W - 8 - kw, ty);
		ctx.fillStyle = '#24292f';
		ctx.font = '12px system-ui, sans-serif';
		ctx.fillText(fitText(ctx, u.name || String(u.id), LABEL_W - 30 - kw), 16, ty);
		ctx.font = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
	}

	alphaFor(id) {
		if (!this.related)
			return 1;
		return this.related.has(id) ? 1 : 0.22;
	}

	drawEvents(ctx, r, y, w) {
		const sc = this.scale;
		const x0 = LABEL_W;
		const xr = this.w;
		let lastX = -1e9;
		let lastDepth = -1;
		for (const e of w.events) {
			const x = x0 + (e.ts - this.start) * sc;
			const yy = y + ROW_PAD + (e.depth || 0) * SLICE_H;
			if (e.kind === 'instant' || (e.kind !== 'counter' && !(e.dur > 0) && e.kind !== 'slice')) {
				if (x < x0 - 5 || x > xr + 5)
					continue;
				ctx.fillStyle = nameColour(e.name, this.alphaFor(e.id));
				ctx.beginPath();
				ctx.moveTo(x, yy + 2);
				ctx.lineTo(x + 4, yy + SLICE_H / 2);
				ctx.lineTo(x, yy + SLICE_H - 2);
				ctx.lineTo(x - 4, yy + SLICE_H / 2);
				ctx.fill();
				continue;
			}
			let wpx = (e.dur || 0) * sc;
			if (x + wpx < x0 || x > xr)
				continue;
			/* Sub-pixel neighbours on the same level merge into one pixel column. */
			if (wpx < 1) {
				if ((e.depth || 0) === lastDepth && x - lastX < 1)
					continue;
				wpx = 1;
				lastX = x;
				lastDepth = e.depth || 0;
			}
			ctx.fillStyle = nameColour(e.name, this.alphaFor(e.id));
			ctx.fillRect(x, yy + 1, wpx, SLICE_H - 2);
			if (wpx > 28) {
				const tx = Math.max(x, x0) + 3;
				const avail = Math.min(x + wpx, xr) - tx - 2;
				if (avail > 12) {
					ctx.fillStyle = nameTextColour(e.name, this.alphaFor(e.id) < 1 ? 0.5 : 1);
					ctx.fillText(fitText(ctx, e.name || '', avail), tx, yy + SLICE_H / 2);
				}
			}
		}
	}

	drawBuckets(ctx, r, y, w) {
		const sc = this.scale;
		const bw = Math.max((w.bucket_ns || 1) * sc, 1);
		const hgt = r.h - 2 * ROW_PAD;
		const dim = this.related ? 0.35 : 1;
		for (const b of w.buckets) {
			const x = LABEL_W + (b.ts - this.start) * sc;
			if (x + bw < LABEL_W || x > this.w)
				continue;
			const busy = Math.min(1, Math.max(0, (b.busy || 0) / (w.bucket_ns || 1)));
			if (b.count > 0 && busy === 0) {
				ctx.fillStyle = nameColour(b.name, 0.5 * dim);
				ctx.fillRect(x, y + ROW_PAD, Math.max(bw, 1), 3);
				continue;
			}
			/* The top lane shows depth 0 at full strength; the nested lanes below, faded. */
			ctx.fillStyle = nameColour(b.name, (0.15 + 0.85 * busy) * dim);
			ctx.fillRect(x, y + ROW_PAD, bw + 0.5, Math.min(hgt, SLICE_H - 1));
			if (hgt > SLICE_H) {
				ctx.fillStyle = nameColour(b.name, (0.06 + 0.3 * busy) * dim);
				ctx.fillRect(x, y + ROW_PAD + SLICE_H, bw + 0.5, hgt - SLICE_H);
			}
		}
		this.labelBucketRuns(ctx, y, w, dim);
	}

	/*
	 * labelBucketRuns: name the runs of adjacent, mostly busy buckets with one dominant name in
	 * the top lane (a ProfilerStep#3 seen from afar), where they are wide enough to read.
	 */
	labelBucketRuns(ctx, y, w, dim) {
		const step = w.bucket_ns || 1;
		let run = null;	/* { name, start, end } in ns */
		const flush = () => {
			if (!run)
				return;
			const tx = Math.max(this.X(run.start), LABEL_W) + 3;
			const avail = Math.min(this.X(run.end), this.w) - tx - 2;
			if (avail > 40) {
				ctx.fillStyle = nameTextColour(run.name, dim < 1 ? 0.5 : 1);
				ctx.fillText(fitText(ctx, run.name, avail), tx, y + ROW_PAD + SLICE_H / 2);
				this.bucketLabels.push(run.name);
			}
			run = null;
		};
		for (const b of w.buckets) {
			if (!b.name || (b.busy || 0) / step < 0.5) {
				flush();
			} else if (run && run.name === b.name && b.ts === run.end) {
				run.end += step;
			} else {
				flush();
				run = { name: b.name, start: b.ts, end: b.ts + step };
			}
		}
		flush();
	}

	drawCounter(ctx, r, y, w) {
		const sc = this.scale;
		const pts = [];
		let lo = Infinity;
		let hi = -Infinity;
		if (w.mode === 'buckets') {
			for (const b of w.buckets) {
				if (b.vmin === undefined || b.vmin === null)
					continue;
				lo = Math.min(lo, b.vmin);
				hi = Math.max(hi, b.vmax);
			}
		} else {
			for (const e of w.events) {
				if (typeof e.value !== 'number')
					continue;
				lo = Math.min(lo, e.value);
				hi = Math.max(hi, e.value);
				pts.push(e);
			}
		}
		if (!(hi >= lo))
			return;
		lo = Math.min(lo, 0);
		const span = hi - lo || 1;
		const base = y + r.h - ROW_PAD;
		const hh = r.h - 2 * ROW_PAD - 10;
		const Y = (v) => base - ((v - lo) / span) * hh;
		const col = nameColour(r.unit.name, 1);
		ctx.fillStyle = nameColour(r.unit.name, 0.35);
		ctx.strokeStyle = col;
		if (w.mode === 'buckets') {
			const bw = Math.max((w.bucket_ns || 1) * sc, 1);
			for (const b of w.buckets) {
				if (b.vmin === undefined || b.vmin === null)
					continue;
				const x = LABEL_W + (b.ts - this.start) * sc;
				ctx.fillRect(x, Y(b.vmax), bw + 0.5, Math.max(1, base - Y(b.vmax)));
			}
		} else if (pts.length) {
			ctx.beginPath();
			ctx.moveTo(LABEL_W + (pts[0].ts - this.start) * sc, base);
			for (let i = 0; i < pts.length; i++) {
				const x = LABEL_W + (pts[i].ts - this.start) * sc;
				const nx = i + 1 < pts.length ? LABEL_W + (pts[i + 1].ts - this.start) * sc : this.w;
				ctx.lineTo(x, Y(pts[i].value));
				ctx.lineTo(nx, Y(pts[i].value));
			}
			ctx.lineTo(this.w, base);
			ctx.closePath();
			ctx.fill();
			ctx.stroke();
		}
		ctx.fillStyle = '#57606a';
		ctx.fillText(`max ${fmtNum(hi)}`, LABEL_W + 4, y + ROW_PAD + 5);
	}

	/** rowY(unitId, depth): the css y (relative to the canvas) of the middle of a slice level. */
	rowY(unitId, depth, top) {
		const r = this.rowByUnit.get(unitId);
		if (!r)
			return null;
		if (r.h === 0)
			return r.group.y + GROUP_H / 2 - top;
		if (r.unit.kind === 'counter')
			return r.y + r.h / 2 - top;
		return r.y + ROW_PAD + (depth || 0) * SLICE_H + SLICE_H / 2 - top;
	}

	drawSelection(ctx, top) {
		const s = this.sel;
		if (!s || s.ts === undefined)
			return;
		const y = this.rowY(s.unit, s.depth, top);
		if (y === null)
			return;
		const x = this.X(s.ts);
		const wpx = Math.max(2, (s.dur || 0) * this.scale);
		ctx.save();
		ctx.beginPath();
		ctx.rect(LABEL_W, 0, this.plotW, this.h);
		ctx.clip();
		ctx.strokeStyle = '#0969da';
		ctx.lineWidth = 2;
		ctx.strokeRect(x - 1, y - SLICE_H / 2, wpx + 2, SLICE_H);
		ctx.restore();
	}

	drawRange(ctx) {
		const g = this.range || this.dragRange;
		if (!g)
			return;
		const a = Math.max(LABEL_W, this.X(Math.min(g.start, g.end)));
		const b = Math.min(this.w, this.X(Math.max(g.start, g.end)));
		if (b <= a)
			return;
		ctx.fillStyle = 'rgba(9,105,218,0.10)';
		ctx.fillRect(a, 0, b - a, this.h);
		ctx.fillStyle = 'rgba(9,105,218,0.7)';
		ctx.fillRect(a, 0, 1, this.h);
		ctx.fillRect(b - 1, 0, 1, this.h);
	}

	drawAxis() {
		const c = this.axis;
		const ctx = c.getContext('2d');
		const dpr = this.dpr;
		const w = c.width / dpr;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, w, AXIS_H);
		ctx.fillStyle = '#f6f8fa';
		ctx.fillRect(0, 0, w, AXIS_H);
		ctx.fillStyle = '#d0d7de';
		ctx.fillRect(0, AXIS_H - 1, w, 1);
		const origin = this.trace.start_ns;
		const step = niceStep(110 / this.scale);
		const first = Math.ceil((this.start - origin) / step) * step;
		/* Far from the trace start, ticks are labelled relative to a base shown on the left. */
		let base = 0;
		if (Math.abs(first) / step > 500)
			base = first - step;
		ctx.font = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
		ctx.textBaseline = 'middle';
		for (let t = first; origin + t <= this.end; t += step) {
			const x = this.X(origin + t);
			if (x < LABEL_W)
				continue;
			ctx.fillStyle = '#8c959f';
			ctx.fillRect(x, AXIS_H - 8, 1, 8);
			ctx.fillStyle = '#24292f';
			ctx.fillText((base ? '+' : '') + fmtTick(t - base, step), x + 3, AXIS_H / 2 - 2);
		}
		ctx.fillStyle = '#57606a';
		ctx.fillText(base ? fitText(ctx, fmtPrecise(base) + ' +', LABEL_W - 10) : 'span ' + fmtDur(this.end - this.start), 6, AXIS_H / 2 - 2);
		if (this.cursorX !== undefined && this.cursorX >= LABEL_W) {
			ctx.fillStyle = '#cf222e';
			ctx.fillRect(this.cursorX, 0, 1, AXIS_H);
		}
	}

	/** relatedSet(): ids to draw at full strength while something is selected, or null. */
	relatedSet() {
		if (!this.sel)
			return null;
		const s = new Set([this.sel.id]);
		const d = this.detail;
		if (d && d.edges) {
			for (const dir of ['in', 'out'])
				for (const k of KINDS)
					if (this.kindsOn[k])
						for (const e of d.edges[dir]?.[k] || [])
							s.add(e.id);
		}
		if (this.chain)
			for (const n of this.chain.nodes || [])
				s.add(n.id);
		if (this.critical)
			for (const h of this.critical.hops || [])
				s.add(h.id);
		return s;
	}

	/** endpoint(ev): where an edge touches an event: {x0, x1, y} in canvas css px. */
	endpoint(ev, top) {
		const c = ev.depth === undefined ? this.findEvent(ev.id, ev.unit) : null;
		const depth = ev.depth ?? c?.depth ?? 0;
		const y = this.rowY(ev.unit, depth, top);
		if (y === null)
			return null;
		return { x0: this.X(ev.ts), x1: this.X(ev.ts + (ev.dur || 0)), y };
	}

	drawOverlay(top) {
		const ctx = this.overlay.getContext('2d');
		ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
		ctx.clearRect(0, 0, this.w, this.h);
		this.arrows = [];
		if (!this.sel)
			return;
		const list = [];
		const selEv = this.sel;
		const d = this.detail;
		if (d && d.edges) {
			for (const k of KINDS) {
				if (!this.kindsOn[k])
					continue;
				for (const e of d.edges.in?.[k] || [])
					list.push({ src: e, dst: selEv, kind: k });
				for (const e of d.edges.out?.[k] || [])
					list.push({ src: selEv, dst: e, kind: k });
			}
		}
		if (this.chain) {
			const byId = new Map((this.chain.nodes || []).map((n) => [n.id, n]));
			for (const e of this.chain.edges || []) {
				if (!this.kindsOn[e.kind] || list.length > MAX_ARROWS)
					continue;
				const a = byId.get(e.src);
				const b = byId.get(e.dst);
				if (a && b)
					list.push({ src: a, dst: b, kind: e.kind, chain: true });
			}
		}
		if (this.critical) {
			const hops = this.critical.hops || [];
			for (let i = 1; i < hops.length; i++)
				list.push({ src: hops[i - 1], dst: hops[i], kind: 'critical' });
		}
		ctx.save();
		ctx.beginPath();
		ctx.rect(LABEL_W, 0, this.plotW, this.h);
		ctx.clip();
		const seen = new Set();
		for (const a of list) {
			const key = `${a.src.id}>${a.dst.id}:${a.kind}`;
			if (seen.has(key))
				continue;
			seen.add(key);
			const p = this.endpoint(a.src, top);
			const q = this.endpoint(a.dst, top);
			if (!p || !q)
				continue;
			/*
			 * An end outside the window is drawn at the window's edge on its own row, so an
			 * arrow from an event far to the left comes in from that row's left edge instead of
			 * running along the selection's row from a point thousands of pixels away.
			 */
			const lo = LABEL_W, hi = LABEL_W + this.plotW;
			if ((p.x1 < lo && q.x1 < lo) || (p.x0 > hi && q.x0 > hi))
				continue;	/* both events wholly on one side: nothing of it would show */
			const x0 = Math.min(Math.max(p.x1, lo), hi);
			const y0 = p.y;
			/* a slice returns after its last child: that hop's arrow ends at the slice's end */
			const toEnd = a.kind === 'critical' && a.dst.label === 'last child';
			const x1 = Math.min(Math.max(toEnd ? q.x1 : q.x0, lo), hi);
			const y1 = q.y;
			this.arrows.push({ src: a.src.id, dst: a.dst.id, kind: a.kind, x0, y0, x1, y1 });
			drawArrow(ctx, x0, y0, x1, y1, KIND_COLOUR[a.kind] || '#000', a.kind === 'critical' ? 3 : a.chain ? 1.2 : 1.8);
		}
		ctx.restore();
	}

	/* ---------- hit testing ---------- */

	/** hit(x, y): what is under a canvas css point: {row, event?, bucket?, group?}. */
	hit(x, y) {
		const yy = y + this.scroller.scrollTop;
		const r = this.rows.find((q) => yy >= q.y && yy < q.y + q.h);
		if (!r)
			return null;
		if (r.type === 'group')
			return { group: r };
		if (x < LABEL_W)
			return { row: r, label: true };
		const w = this.cache.get(r.unit.id);
		const t = this.T(x);
		const tol = 3 / this.scale;
		if (!w)
			return { row: r, t };
		if (w.mode === 'buckets') {
			const bn = w.bucket_ns || 1;
			const b = w.buckets.find((q) => t >= q.ts && t < q.ts + bn);
			return { row: r, t, bucket: b, bucketNs: bn };
		}
		if (r.unit.kind === 'counter') {
			let best = null;
			for (const e of w.events)
				if (e.ts <= t + tol)
					best = e;
			return { row: r, t, event: best };
		}
		const depth = Math.floor((yy - r.y - ROW_PAD) / SLICE_H);
		let best = null;
		for (const e of w.events) {
			if ((e.depth || 0) !== depth)
				continue;
			const end = e.ts + Math.max(e.dur || 0, 0);
			if (t >= e.ts - tol && t <= end + tol) {
				if (!best || Math.abs(t - (e.ts + end) / 2) < Math.abs(t - (best.ts + best.ts + best.dur) / 2))
					best = e;
			}
		}
		return { row: r, t, event: best };
	}

	/** locate(eid): the page coordinates of a drawn event (used by tests), or null. */
	locate(eid) {
		const e = this.findEvent(eid);
		if (!e)
			return null;
		const y = this.rowY(e.unit, e.depth, this.scroller.scrollTop);
		const rect = this.canvas.getBoundingClientRect();
		const x0 = Math.max(LABEL_W, this.X(e.ts));
		const x1 = Math.min(this.w, this.X(e.ts + (e.dur || 0)));
		return { x: rect.left + (x0 + Math.max(x0, x1)) / 2, y: rect.top + y, unit: e.unit, depth: e.depth };
	}

	/* ---------- input ---------- */

	installInput() {
		const cv = this.overlay;
		let drag = null;
		const pos = (ev) => {
			const r = cv.getBoundingClientRect();
			return [ev.clientX - r.left, ev.clientY - r.top];
		};
		this.scroller.addEventListener('scroll', () => {
			this.redraw();
			this.fetchSoon();
		});
		cv.addEventListener('wheel', (ev) => {
			if (ev.altKey || !this.trace)
				return;	/* native vertical scroll */
			ev.preventDefault();
			const [x] = pos(ev);
			if (ev.shiftKey) {
				const d = Math.abs(ev.deltaX) > Math.abs(ev.deltaY) ? ev.deltaX : ev.deltaY;
				this.pan(d);
			} else {
				const dy = ev.deltaMode === 1 ? ev.deltaY * 20 : ev.deltaY;
				this.zoom(Math.exp(Math.max(-300, Math.min(300, dy)) * 0.002), Math.max(x, LABEL_W));
			}
		}, { passive: false });
		cv.addEventListener('mousedown', (ev) => {
			if (ev.button !== 0 || !this.trace)
				return;
			const [x, y] = pos(ev);
			drag = { x, y, x0: x, moved: false, range: ev.shiftKey && x >= LABEL_W, start: this.start, end: this.end };
			if (drag.range)
				this.dragRange = { start: this.T(x), end: this.T(x) };
			ev.preventDefault();
		});
		window.addEventListener('mousemove', (ev) => {
			if (!this.trace || this.root.hidden)
				return;
			const [x, y] = pos(ev);
			if (drag) {
				if (Math.abs(x - drag.x0) > 3 || Math.abs(y - drag.y) > 3)
					drag.moved = true;
				if (drag.range) {
					this.dragRange.end = this.T(Math.max(LABEL_W, Math.min(this.w, x)));
					this.redraw();
				} else if (drag.moved) {
					const dt = (x - drag.x0) / this.scale;
					this.setWindow(drag.start - dt, drag.end - dt);
					this.scroller.scrollTop += drag.y - y;
					drag.y = y;
				}
				return;
			}
			this.hover(ev, x, y);
		});
		window.addEventListener('mouseup', (ev) => {
			if (!drag)
				return;
			const d = drag;
			drag = null;
			const [x, y] = pos(ev);
			if (d.range) {
				const g = this.dragRange;
				this.dragRange = null;
				if (d.moved && g)
					this.setRange(Math.min(g.start, g.end), Math.max(g.start, g.end));
				this.redraw();
				return;
			}
			if (!d.moved)
				this.click(x, y);
		});
		cv.addEventListener('dblclick', (ev) => {
			const [x, y] = pos(ev);
			const h = this.hit(x, y);
			if (h?.event)
				this.fitEvent(h.event);
		});
		cv.addEventListener('mouseleave', () => {
			this.tooltip.hidden = true;
			this.cursorX = undefined;
			this.$('#tl-cursor').textContent = '';
			if (this.trace)
				this.drawAxis();
		});
		window.addEventListener('keydown', (ev) => this.keydown(ev));
		window.addEventListener('keyup', (ev) => this.keys.delete(ev.key.toLowerCase()));
		window.addEventListener('blur', () => this.keys.clear());
		this.$('#tl-zoom-in').addEventListener('click', () => this.zoom(0.5));
		this.$('#tl-zoom-out').addEventListener('click', () => this.zoom(2));
		this.$('#tl-fit').addEventListener('click', () => this.fitAll());
		const si = this.$('#tl-search');
		si.addEventListener('keydown', (ev) => {
			if (ev.key === 'Enter') {
				ev.preventDefault();
				this.searchStep(ev.shiftKey ? -1 : 1);
			} else if (ev.key === 'Escape') {
				si.blur();
			}
			ev.stopPropagation();
		});
		this.$('#tl-search-next').addEventListener('click', () => this.searchStep(1));
		this.$('#tl-search-prev').addEventListener('click', () => this.searchStep(-1));
	}

	buildKindToggles() {
		const box = this.$('#tl-kinds');
		box.append(el('span', { class: 'muted' }, 'deps:'));
		for (const k of KINDS) {
			const cb = el('input', { type: 'checkbox', checked: true, 'data-kind': k });
			cb.addEventListener('change', () => {
				this.kindsOn[k] = cb.checked;
				this.redraw();
			});
			box.append(el('label', { class: 'kind', style: { '--kc': KIND_COLOUR[k] } }, cb, el('span', { class: 'swatch' }), k));
		}
		box.append(el('button', { id: 'tl-critical', title: 'Critical path of the selection, or of the window', onclick: () => this.criticalPath() }, 'Critical path'));
	}

	keydown(ev) {
		if (this.root.hidden || !this.trace)
			return;
		if (isTyping(ev.target))
			return;
		if (ev.ctrlKey || ev.metaKey || ev.altKey)
			return;
		const k = ev.key.toLowerCase();
		if ('wasd'.includes(k) && k.length === 1) {
			ev.preventDefault();
			if (!this.keys.has(k)) {
				this.keys.add(k);
				this.navStep(k, 1 / 60);	/* one immediate step, then smooth while held */
				if (this.keys.size === 1)
					this.navLoop();
			}
			return;
		}
		if (k === 'f') {
			if (this.sel && this.sel.ts !== undefined)
				this.fitEvent(this.sel);
		} else if (k === '0') {
			this.fitAll();
		} else if (k === '/') {
			ev.preventDefault();
			this.$('#tl-search').focus();
		} else if (k === 'escape') {
			this.clearSelection();
			this.clearRange();
		}
	}

	navStep(k, dtSec) {
		const zoomRate = 6;	/* e-folds per second: fast, still controllable */
		const panRate = 1.2;	/* windows per second */
		if (k === 'w')
			this.zoom(Math.exp(-zoomRate * dtSec * 0.5), this.cursorX >= LABEL_W ? this.cursorX : undefined);
		else if (k === 's')
			this.zoom(Math.exp(zoomRate * dtSec * 0.5), this.cursorX >= LABEL_W ? this.cursorX : undefined);
		else if (k === 'a')
			this.pan(-this.plotW * panRate * dtSec);
		else if (k === 'd')
			this.pan(this.plotW * panRate * dtSec);
	}

	navLoop() {
		let last = performance.now();
		const tick = (now) => {
			if (!this.keys.size)
				return;
			const dt = Math.min(0.05, (now - last) / 1000);
			last = now;
			for (const k of this.keys)
				this.navStep(k, dt);
			requestAnimationFrame(tick);
		};
		requestAnimationFrame(tick);
	}

	hover(ev, x, y) {
		const inside = x >= 0 && y >= 0 && x < this.w && y < this.h;
		if (!inside) {
			this.tooltip.hidden = true;
			return;
		}
		if (x >= LABEL_W) {
			this.cursorX = x;
			this.$('#tl-cursor').textContent = 'cursor ' + fmtDur(this.T(x) - this.trace.start_ns);
			this.drawAxis();
		}
		const h = this.hit(x, y);
		const tt = this.tooltip;
		clear(tt);
		if (h?.event) {
			const e = h.event;
			const u = h.row.unit;
			tt.append(el('div', { class: 'tt-name' }, e.name || '(unnamed)'),
				el('div', { class: 'mono' }, e.kind === 'counter' ? `value ${fmtNum(e.value)}` : `dur ${fmtDur(e.dur)}`),
				el('div', { class: 'muted' }, u.name || ''));
		} else if (h?.bucket && h.bucket.count) {
			const b = h.bucket;
			tt.append(el('div', { class: 'tt-name' }, b.name || '(mixed)'),
				el('div', { class: 'mono' }, `${fmtCount(b.count)} events · ${Math.round(100 * Math.min(1, (b.busy || 0) / h.bucketNs))}% busy in ${fmtDur(h.bucketNs)}`),
				b.vmax !== undefined && b.vmax !== null ? el('div', { class: 'mono' }, `value ${fmtNum(b.vmin)} … ${fmtNum(b.vmax)}`) : null,
				el('div', { class: 'muted' }, h.row.unit.name || ''));
		} else if (h?.label) {
			const u = h.row.unit;
			tt.append(el('div', { class: 'tt-name' }, u.name || ''),
				el('div', { class: 'mono' }, `${u.kind} · ${fmtCount(u.event_count)} events · depth ${u.max_depth}${u.overlaps ? ' · overlaps' : ''}`));
		} else {
			tt.hidden = true;
			return;
		}
		tt.hidden = false;
		const main = this.$('#tl-main').getBoundingClientRect();
		const left = Math.min(ev.clientX - main.left + 14, main.width - tt.offsetWidth - 4);
		tt.style.left = Math.max(0, left) + 'px';
		tt.style.top = (ev.clientY - main.top + 16) + 'px';
	}

	click(x, y) {
		const h = this.hit(x, y);
		if (h?.group) {
			const id = h.group.device.id;
			if (this.collapsed.has(id))
				this.collapsed.delete(id);
			else
				this.collapsed.add(id);
			this.layout();
			this.redraw();
			this.fetchSoon();
			return;
		}
		if (h?.event)
			this.select(h.event.id, { ...h.event, unit: h.row.unit.id });
		else if (h?.bucket && h.bucket.count)
			this.setWindow(h.bucket.ts, h.bucket.ts + h.bucketNs);	/* zoom into a bucket */
		else if (h && !h.label)
			this.clearSelection();
	}

	/* ---------- selection and details ---------- */

	clearSelection() {
		this.sel = null;
		this.detail = null;
		this.chain = null;
		this.critical = null;
		this.panel.details.hidden = true;
		this.panel.empty.hidden = !this.panel.summary.hidden;
		this.redraw();
		this.saveUrlSoon();
	}

	async select(eid, known) {
		this.sel = known ? { ...known, id: eid } : { id: eid };
		this.detail = null;
		this.chain = null;
		this.critical = null;
		this.redraw();
		this.saveUrlSoon();
		let d;
		try {
			d = await getJSON(tracePath(this.traceId) + '/events/' + encodeURIComponent(eid), undefined, ['args']);
		} catch (e) {
			if (this.sel?.id === eid)
				this.showMessage(`Event ${eid}: ${e.message}`);
			return;
		}
		if (this.sel?.id !== eid)
			return;
		this.detail = d;
		this.sel = { id: eid, unit: d.unit, ts: d.ts, dur: d.dur, depth: d.depth, name: d.name };
		/* Bring a selection from a link or a search into view (rows and time). */
		const r = this.rowByUnit.get(d.unit);
		if (r && r.h > 0) {
			const y = r.y + ROW_PAD + (d.depth || 0) * SLICE_H;
			const st = this.scroller.scrollTop;
			if (y < st || y > st + this.h - SLICE_H)
				this.scroller.scrollTop = Math.max(0, y - this.h / 3);
		}
		if (d.ts + (d.dur || 0) < this.start || d.ts > this.end)
			this.fitEvent(d);
		this.renderDetails();
		this.redraw();
	}

	renderDetails() {
		const d = this.detail;
		const box = clear(this.panel.details);
		this.panel.details.hidden = false;
		this.panel.empty.hidden = true;
		this.$('#tl-panel').scrollTop = 0;
		const origin = this.trace.start_ns;
		const unit = this.unitById.get(d.unit);
		box.append(el('h3', { class: 'ev-name' }, d.name || '(unnamed)'));
		box.append(el('table', { class: 'kv' },
			kv('kind', d.kind),
			kv('unit', d.unit_name || unit?.name || String(d.unit)),
			kv('device', this.deviceLabel(d.device, unit)),
			kv('start', fmtPrecise(d.ts - origin)),
			d.kind !== 'instant' ? kv('duration', fmtDur(d.dur)) : null,
			d.kind !== 'instant' ? kv('end', fmtPrecise(d.ts + (d.dur || 0) - origin)) : null,
			kv('timestamp', `${toAbs(d.ts)} ns`),
			kv('depth', String(d.depth ?? 0)),
			d.cat ? kv('category', d.cat) : null,
			d.value !== undefined && d.value !== null ? kv('value', fmtNum(d.value)) : null,
			kv('id', String(d.id))));
		box.append(el('div', { class: 'actions' },
			el('button', { onclick: () => this.fitEvent(d), title: 'Fit (F)' }, 'Focus'),
			el('label', null, 'follow chain ',
				el('input', { id: 'tl-chain-depth', type: 'number', min: 1, max: 50, value: 3, class: 'num-input' }), ' steps '),
			el('button', { id: 'tl-chain', onclick: () => this.followChain() }, 'Follow'),
			el('span', { id: 'tl-chain-info', class: 'muted small' })));
		box.append(this.edgesSection());
		const crit = el('div', { id: 'tl-critical-info' });
		box.append(crit);
		if (this.critical)
			this.renderCritical();
		const args = d.args && typeof d.args === 'object' ? Object.entries(d.args) : [];
		box.append(el('h4', null, `Arguments (${args.length})`));
		if (args.length)
			box.append(el('table', { class: 'kv args' }, args.map(([k, v]) => kv(k, typeof v === 'object' ? JSON.stringify(v) : String(v)))));
		const man = this.trace.manifest;
		if (man) {
			box.append(el('details', { class: 'manifest' }, el('summary', null, 'Run manifest'),
				el('pre', null, JSON.stringify(man, null, 2))));
		}
	}

	deviceLabel(dev, unit) {
		if (dev && typeof dev === 'object')
			return devTitle(dev);
		const id = dev ?? unit?.device_id;
		const d = this.devices.find((x) => x.id === id);
		return d ? devTitle(d) : String(id ?? '');
	}

	edgesSection() {
		const d = this.detail;
		const sec = el('div', { class: 'edges' });
		let total = 0;
		for (const [dir, title] of [['in', 'Waits on (in)'], ['out', 'Waited on by (out)']]) {
			const group = el('div', { class: 'edge-dir', 'data-dir': dir }, el('h4', null, title));
			let n = 0;
			for (const k of KINDS) {
				const list = d.edges?.[dir]?.[k] || [];
				if (!list.length)
					continue;
				n += list.length;
				const ul = el('ul', { class: 'edge-list', 'data-kind': k });
				for (const e of list) {
					ul.append(el('li', null, el('a', {
						href: '#', class: 'edge-link', 'data-eid': e.id,
						onclick: (ev) => {
							ev.preventDefault();
							this.select(e.id, e);
							this.fitEvent(e);
						},
					}, e.name || '(unnamed)'), el('span', { class: 'muted small mono' },
						` ${this.unitById.get(e.unit)?.name || e.unit} · ${fmtDur(e.dur)}${e.label ? ' · ' + e.label : ''}`)));
				}
				group.append(el('div', { class: 'kind-head', style: { '--kc': KIND_COLOUR[k] } },
					el('span', { class: 'swatch' }), `${k} (${list.length})`), ul);
			}
			if (!n)
				group.append(el('div', { class: 'muted small' }, 'none'));
			total += n;
			sec.append(group);
		}
		sec.prepend(el('h4', null, `Dependencies (${total})`));
		return sec;
	}

	enabledKinds() {
		return KINDS.filter((k) => this.kindsOn[k]).join(',');
	}

	async followChain() {
		if (!this.sel)
			return;
		const eid = this.sel.id;
		const n = Math.max(1, Math.min(50, Number(this.$('#tl-chain-depth')?.value) || 3));
		const info = this.$('#tl-chain-info');
		info.textContent = 'loading…';
		try {
			const j = await getJSON(tracePath(this.traceId) + '/deps/' + eid +
				qs({ kinds: this.enabledKinds(), depth: n, dir: 'both', budget: CHAIN_BUDGET }));
			if (this.sel?.id !== eid)
				return;
			this.chain = j;
			info.textContent = `${fmtCount((j.nodes || []).length)} events, ${fmtCount((j.edges || []).length)} edges${j.truncated ? ' (truncated)' : ''}`;
			this.redraw();
		} catch (e) {
			info.textContent = 'chain: ' + e.message;
		}
	}

	async criticalPath() {
		if (!this.trace)
			return;
		/* within the window: ending at the selection, or at what ends last in view */
		const p = { kinds: this.enabledKinds(), start: toAbs(Math.floor(this.start)) };
		if (this.sel)
			p.event = this.sel.id;
		else
			p.end = toAbs(Math.ceil(this.end));
		/* a zoomed-out view's whole path takes a moment on a big trace: say so */
		const btn = this.$('#tl-critical');
		if (btn) {
			btn.disabled = true;
			btn.textContent = 'Walking…';
		}
		try {
			const j = await getJSON(tracePath(this.traceId) + '/critical-path' + qs(p));
			this.critical = j;
			if (!this.sel && j.hops?.length) {
				const last = j.hops[j.hops.length - 1];
				await this.select(last.id, last);
				this.critical = j;
			}
			if (this.detail)
				this.renderCritical();
			this.redraw();
		} catch (e) {
			document.getElementById('status-line').textContent = 'critical path: ' + e.message;
		} finally {
			if (btn) {
				btn.disabled = false;
				btn.textContent = 'Critical path';
			}
		}
	}

	renderCritical() {
		const box = this.$('#tl-critical-info');
		if (!box || !this.critical)
			return;
		const c = this.critical;
		/* the figures keep their case: an upper-case "µs" reads as "MS" */
		clear(box).append(el('h4', null, 'Critical path: ',
			el('span', { class: 'figures' }, `${fmtDur(c.total_ns)} (work ${fmtDur(c.work_ns)}, wait ${fmtDur(c.wait_ns)})`),
			el('span', { class: 'muted' }, ` · ${fmtCount(c.hops_total ?? (c.hops || []).length)} hops`),
			(c.hops || []).length < (c.hops_total ?? 0) ? el('span', { class: 'muted', title: 'the table and the arrows show the latest hops (the API\'s max_hops); the totals cover every hop walked' },
				`, the last ${fmtCount(c.hops.length)} listed`) : '',
			c.truncated ? el('span', { class: 'muted', title: 'the walk stopped at its budget (the API\'s budget): zoom in or select an event for an earlier part' },
				' · truncated') : ''));
		/* where the path's time went, by unit: the bottleneck first */
		const span = c.total_ns || 1;
		const ub = el('tbody');
		for (const u of (c.units || []).slice(0, 8)) {
			const unit = this.unitById.get(u.unit);
			ub.append(el('tr', null,
				el('td', { title: unit?.name || '' }, unit?.name || String(u.unit)),
				el('td', { class: 'num' }, fmtCount(u.hops)),
				el('td', { class: 'num' }, fmtDur(u.work_ns)),
				el('td', { class: 'num' }, fmtDur(u.wait_ns)),
				el('td', { class: 'num' }, `${Math.round(100 * (u.work_ns + u.wait_ns) / span)}%`)));
		}
		if (c.units?.length)
			box.append(el('table', { class: 'grid small', id: 'tl-critical-units' },
				el('thead', null, el('tr', null, el('th', null, 'unit'), el('th', { class: 'num' }, 'hops'), el('th', { class: 'num' }, 'work'), el('th', { class: 'num' }, 'wait'), el('th', { class: 'num', title: 'share of the path' }, 'share'))), ub));
		/* what the path waited on, by the kind of edge into each hop */
		const kinds = Object.entries(c.kinds || {}).sort((a, b) => b[1].wait_ns - a[1].wait_ns || b[1].hops - a[1].hops);
		if (kinds.length)
			box.append(el('div', { id: 'tl-critical-kinds', class: 'small' }, 'waited via ',
				...kinds.flatMap(([k, v], i) => [i ? ' · ' : '',
					el('span', { class: 'kind-' + k, style: `color: ${KIND_COLOUR[k] || 'inherit'}` }, k),
					` ${fmtDur(v.wait_ns)} (${fmtCount(v.hops)} hops)`])));
		const tb = el('tbody');
		for (const h of c.hops || []) {
			tb.append(el('tr', null,
				el('td', { title: h.name || '' }, el('a', { href: '#', class: 'edge-link', onclick: (ev) => {
					ev.preventDefault();
					this.fitEvent(h);
				} }, h.name || '(unnamed)')),
				el('td', { class: 'muted', title: h.label || '' }, h.kind || ''),
				el('td', { class: 'num' }, fmtDur(h.work_ns)),
				el('td', { class: 'num' }, fmtDur(h.wait_ns))));
		}
		box.append(el('table', { class: 'grid small', id: 'tl-critical-hops' },
			el('thead', null, el('tr', null, el('th', null, 'event'), el('th', null, 'via'), el('th', { class: 'num' }, 'work'), el('th', { class: 'num' }, 'wait'))), tb));
	}

	/* ---------- search ---------- */

	async searchStep(dir) {
		const q = this.$('#tl-search').value;
		const s = this.search;
		const count = this.$('#tl-search-count');
		if (!q) {
			count.textContent = '';
			return;
		}
		if (q !== s.q) {
			s.q = q;
			s.idx = -1;
			try {
				const j = await getJSON(tracePath(this.traceId) + '/search' + qs({ q, limit: 1000 }));
				s.total = j.total ?? (j.matches || []).length;
				s.matches = j.matches || [];
			} catch (e) {
				count.textContent = e.message;
				return;
			}
		}
		if (!s.matches.length) {
			count.textContent = '0 matches';
			return;
		}
		s.idx = s.idx < 0 ? (dir > 0 ? 0 : s.matches.length - 1) : (s.idx + dir + s.matches.length) % s.matches.length;
		count.textContent = `${fmtCount(s.idx + 1)} / ${fmtCount(s.total)}`;
		const m = s.matches[s.idx];
		const span = this.end - this.start;
		if ((m.dur || 0) > span * 0.8)
			this.fitEvent(m);
		else
			this.setWindow(m.ts + (m.dur || 0) / 2 - span / 2, m.ts + (m.dur || 0) / 2 + span / 2);
		this.select(m.id, m);
	}

	/* ---------- range summary ---------- */

	clearRange() {
		this.range = null;
		this.summaryRows = null;
		this.panel.summary.hidden = true;
		this.panel.empty.hidden = !this.panel.details.hidden;
		this.redraw();
	}

	async setRange(s, e) {
		if (e - s < 1)
			return;
		this.range = { start: s, end: e };
		this.redraw();
		const box = clear(this.panel.summary);
		this.panel.summary.hidden = false;
		this.panel.empty.hidden = true;
		box.append(el('h3', null, `Range ${fmtDur(s - this.trace.start_ns)} … ${fmtDur(e - this.trace.start_ns)}`),
			el('div', { class: 'muted small' }, `${fmtDur(e - s)} · loading…`));
		const units = this.rows.filter((r) => r.type === 'unit').map((r) => r.unit.id);
		const p = { start: toAbs(Math.floor(s)), end: toAbs(Math.ceil(e)) };
		if (units.length < this.units.length)
			p.units = units.join(',');
		try {
			const j = await getJSON(tracePath(this.traceId) + '/summary' + qs(p));
			if (this.range?.start !== s)
				return;
			this.summaryRows = j.rows || [];
			this.summarySort = { key: 'total_ns', desc: true };
			this.renderSummary();
		} catch (err) {
			box.append(el('div', { class: 'error' }, 'summary: ' + err.message));
		}
	}

	renderSummary() {
		const { start: s, end: e } = this.range;
		const box = clear(this.panel.summary);
		const rows = this.summaryRows.slice();
		const { key, desc } = this.summarySort;
		rows.sort((a, b) => {
			const x = a[key];
			const y = b[key];
			const c = typeof x === 'string' ? String(x).localeCompare(String(y)) : (x || 0) - (y || 0);
			return desc ? -c : c;
		});
		box.append(el('div', { class: 'panel-head' },
			el('h3', null, `Range ${fmtDur(s - this.trace.start_ns)} … ${fmtDur(e - this.trace.start_ns)}`),
			el('button', { class: 'small', onclick: () => this.clearRange() }, '×')),
		el('div', { class: 'muted small' }, `${fmtDur(e - s)} · ${fmtCount(rows.length)} names`,
			' ', el('a', { href: '#', onclick: (ev) => {
				ev.preventDefault();
				this.setWindow(s, e);
			} }, 'zoom to range')));
		const cols = [['name', 'name', false], ['count', 'count', true], ['total_ns', 'total', true], ['mean_ns', 'mean', true], ['max_ns', 'max', true]];
		const head = el('tr', null, cols.map(([k, label, num]) => el('th', {
			class: (num ? 'num ' : '') + 'sortable' + (k === key ? (desc ? ' desc' : ' asc') : ''),
			'data-key': k,
			onclick: () => {
				this.summarySort = { key: k, desc: k === key ? !desc : k !== 'name' };
				this.renderSummary();
			},
		}, label)));
		const tb = el('tbody');
		for (const r of rows.slice(0, 2000)) {
			tb.append(el('tr', null,
				el('td', { class: 'name', title: r.name }, r.name),
				el('td', { class: 'num' }, fmtCount(r.count)),
				el('td', { class: 'num' }, fmtDur(r.total_ns)),
				el('td', { class: 'num' }, fmtDur(r.mean_ns)),
				el('td', { class: 'num' }, fmtDur(r.max_ns))));
		}
		box.append(el('table', { class: 'grid small summary' }, el('thead', null, head), tb));
	}

	/* ---------- test and debug hook (read-only) ---------- */

	debugState() {
		return {
			traceId: this.traceId,
			base: this.base,	/* start, end, range and event times are ns since it */
			ready: this.ready,
			start: this.start,
			end: this.end,
			units: this.rows.filter((r) => r.type === 'unit').map((r) => r.unit.id),
			collapsed: [...this.collapsed],
			sel: this.sel ? this.sel.id : null,
			detailLoaded: !!this.detail,
			arrows: this.arrows.map((a) => ({ ...a })),
			chain: this.chain ? { nodes: (this.chain.nodes || []).length, edges: (this.chain.edges || []).length } : null,
			critical: this.critical ? (this.critical.hops || []).length : null,
			range: this.range ? { ...this.range } : null,
			summaryRows: this.summaryRows ? this.summaryRows.length : null,
			bucketLabels: [...(this.bucketLabels || [])],
			search: { q: this.search.q, total: this.search.total, idx: this.search.idx },
			stats: { ...this.stats },
			cached: [...this.cache.keys()],
		};
	}
}

function sample(arr, v) {
	if (arr.length >= 4096)
		arr.shift();
	arr.push(v);
}

function kv(k, v) {
	return el('tr', null, el('th', null, k), el('td', null, v ?? ''));
}

function fmtNum(v) {
	if (typeof v !== 'number')
		return String(v ?? '');
	if (Number.isInteger(v))
		return fmtCount(v);
	return Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4);
}

function fitText(ctx, s, w) {
	if (ctx.measureText(s).width <= w)
		return s;
	const cw = ctx.measureText('m').width || 7;
	let n = Math.max(0, Math.floor(w / cw) - 1);
	while (n > 0 && ctx.measureText(s.slice(0, n) + '…').width > w)
		n--;
	return n > 0 ? s.slice(0, n) + '…' : '';
}

function drawArrow(ctx, x0, y0, x1, y1, colour, width) {
	ctx.strokeStyle = colour;
	ctx.fillStyle = colour;
	ctx.lineWidth = width;
	const dx = Math.max(20, Math.abs(x1 - x0) / 2);
	ctx.beginPath();
	ctx.moveTo(x0, y0);
	ctx.bezierCurveTo(x0 + dx, y0, x1 - dx, y1, x1, y1);
	ctx.stroke();
	ctx.beginPath();
	ctx.moveTo(x1, y1);
	ctx.lineTo(x1 - 7, y1 - 4);
	ctx.lineTo(x1 - 7, y1 + 4);
	ctx.closePath();
	ctx.fill();
	ctx.beginPath();
	ctx.arc(x0, y0, 2.5, 0, Math.PI * 2);
	ctx.fill();
}
