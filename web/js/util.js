// SPDX-License-Identifier: MIT
// web/js/util.js - formatting, colours and small DOM helpers shared by the pages.
// Every string that comes from a trace goes into the DOM through text nodes only.

/** el(tag, attrs, ...children): build an element; children strings become text nodes. */
export function el(tag, attrs, ...kids) {
	const e = document.createElement(tag);
	if (attrs) {
		for (const [k, v] of Object.entries(attrs)) {
			if (v === undefined || v === null || v === false)
				continue;
			if (k === 'class')
				e.className = v;
			else if (k === 'text')
				e.textContent = v;
			else if (k.startsWith('on') && typeof v === 'function')
				e.addEventListener(k.slice(2), v);
			else if (k === 'style' && typeof v === 'object')
				for (const [sk, sv] of Object.entries(v))
					e.style.setProperty(sk.startsWith('--') ? sk : sk.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()), sv);
			else
				e.setAttribute(k, v === true ? '' : String(v));
		}
	}
	for (const k of kids.flat()) {
		if (k === undefined || k === null || k === false)
			continue;
		e.append(k instanceof Node ? k : document.createTextNode(String(k)));
	}
	return e;
}

/** clear(node): remove all children. */
export function clear(node) {
	while (node.firstChild)
		node.removeChild(node.firstChild);
	return node;
}

const UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];

/** fmtDur(ns): a duration with a unit from ns to s, 3-4 significant digits. */
export function fmtDur(ns) {
	if (ns === null || ns === undefined || !isFinite(ns))
		return '–';
	const a = Math.abs(ns);
	if (a === 0)
		return '0 ns';
	for (const [div, u] of UNITS) {
		if (a >= div || div === 1) {
			const v = ns / div;
			const digits = Math.abs(v) >= 100 ? 1 : Math.abs(v) >= 10 ? 2 : 3;
			return (div === 1 ? String(Math.round(v)) : v.toFixed(digits)) + ' ' + u;
		}
	}
	return ns + ' ns';
}

/** fmtPrecise(ns): a time offset to the ns, in the largest unit that fits (for details). */
export function fmtPrecise(ns) {
	if (ns === null || ns === undefined || !isFinite(ns))
		return '–';
	const a = Math.abs(ns);
	if (a >= 1e9)
		return (ns / 1e9).toFixed(9) + ' s';
	if (a >= 1e6)
		return (ns / 1e6).toFixed(6) + ' ms';
	if (a >= 1e3)
		return (ns / 1e3).toFixed(3) + ' µs';
	return Math.round(ns) + ' ns';
}

/** fmtTick(ns, step): an axis label for a time offset, with precision from the tick step. */
export function fmtTick(ns, step) {
	for (const [div, u] of UNITS) {
		if (step >= div || div === 1) {
			const v = ns / div;
			const st = step / div;
			const dec = st >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(st) - 1e-9));
			return v.toFixed(dec) + ' ' + u;
		}
	}
	return String(ns);
}

/** niceStep(raw): the smallest 1/2/5 x 10^k not below raw. */
export function niceStep(raw) {
	if (!(raw > 0))
		return 1;
	const p = Math.pow(10, Math.floor(Math.log10(raw)));
	for (const m of [1, 2, 5, 10])
		if (m * p >= raw)
			return m * p;
	return 10 * p;
}

/** fmtBytes(n): 1.2 MiB style. */
export function fmtBytes(n) {
	if (n === null || n === undefined)
		return '–';
	const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
	let i = 0;
	let v = n;
	while (v >= 1024 && i < u.length - 1) {
		v /= 1024;
		i++;
	}
	return (i === 0 ? String(v) : v.toFixed(v >= 100 ? 0 : 1)) + ' ' + u[i];
}

/** fmtCount(n): thousands separated. */
export function fmtCount(n) {
	if (n === null || n === undefined)
		return '–';
	return Number(n).toLocaleString('en-US');
}

/** fmtCountOf(n, one, many): "1 unit", "2 units", "1,024 runs" (many defaults to one + 's'). */
export function fmtCountOf(n, one, many) {
	return `${fmtCount(n)} ${Number(n) === 1 ? one : (many || one + 's')}`;
}

/** fmtDate(ns): local date and time from epoch ns. */
export function fmtDate(ns) {
	if (!ns)
		return '–';
	const d = new Date(ns / 1e6);
	const p = (x) => String(x).padStart(2, '0');
	return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
		`${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function hash(s) {
	let h = 2166136261;
	for (let i = 0; i < s.length; i++) {
		h ^= s.charCodeAt(i);
		h = Math.imul(h, 16777619);
	}
	return h >>> 0;
}

const colourCache = new Map();

/** nameHue(name): a stable hue for an event name. */
export function nameHue(name) {
	let h = colourCache.get(name);
	if (h === undefined) {
		h = hash(name || '') % 360;
		if (colourCache.size > 20000)
			colourCache.clear();
		colourCache.set(name, h);
	}
	return h;
}

/** nameColour(name, alpha): the fill colour of an event name. */
export function nameColour(name, alpha = 1) {
	const h = nameHue(name);
	const l = 48 + (h % 3) * 6;
	return `hsla(${h}, 55%, ${l}%, ${alpha})`;
}

/* The relative luminance (WCAG) of hsl(h, s%, l%). */
function hslLuminance(h, s, l) {
	s /= 100;
	l /= 100;
	const a = s * Math.min(l, 1 - l);
	const f = (n) => {
		const k = (n + h / 30) % 12;
		const c = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
		return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
	};
	return 0.2126 * f(0) + 0.7152 * f(8) + 0.0722 * f(4);
}

/**
 * nameTextColour(name, alpha): the label colour on nameColour(name): white or near-black,
 * whichever contrasts more with the fill (yellows and greens take dark text).
 */
export function nameTextColour(name, alpha = 1) {
	const h = nameHue(name);
	const lum = hslLuminance(h, 55, 48 + (h % 3) * 6);
	/* white's contrast, 1.05 / (L + 0.05), beats #1f2328's, (L + 0.05) / 0.066, below L = 0.213 */
	return lum < 0.213 ? `rgba(255,255,255,${alpha})` : `rgba(31,35,40,${alpha})`;
}

/** Edge kinds in the order the API reports them, with their arrow colours. */
export const KINDS = ['flow', 'order', 'anti', 'output'];
export const KIND_COLOUR = {
	flow: '#1f6feb',
	order: '#d29922',
	anti: '#cf222e',
	output: '#8250df',
	critical: '#e3008c',
};

/** debounce(fn, ms): call fn once ms after the last call. */
export function debounce(fn, ms) {
	let t = 0;
	const d = (...a) => {
		clearTimeout(t);
		t = setTimeout(() => fn(...a), ms);
	};
	d.cancel = () => clearTimeout(t);
	return d;
}

/** isTyping(target): true when keys go to a text field and must not drive shortcuts. */
export function isTyping(t) {
	if (t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement)
		return true;
	return t instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit', 'file'].includes(t.type);
}
