// SPDX-License-Identifier: MIT
// web/js/api.js - the JSON API client (see docs/api.md): fetch with errors as
// exceptions carrying the server's {"error","detail"}.

export class ApiError extends Error {
	constructor(status, code, detail) {
		super(detail || code || `HTTP ${status}`);
		this.status = status;
		this.code = code;
		this.detail = detail;
	}
}

/** errorFromBody(status, text): an ApiError from a response body (JSON or not). */
export function errorFromBody(status, text) {
	try {
		const j = JSON.parse(text);
		if (j && (j.error || j.detail))
			return new ApiError(status, j.error, j.detail || j.error);
	} catch (e) {
		/* not JSON */
	}
	return new ApiError(status, 'http_' + status, text ? text.slice(0, 200) : `HTTP ${status}`);
}

/*
 * Times. The API speaks absolute nanoseconds, and traces on the epoch clock (Kineto, Chrome)
 * have them near 1.7e18, where a JavaScript number keeps only every 256th nanosecond: at deep
 * zoom events sat up to 128 ns off and the panel's start and end were wrong. So while a trace
 * is open its start is the time base: every time the API sends (keys ts, start, end, start_ns,
 * end_ns) is rewritten in the JSON text, before parsing, as nanoseconds since the base, exact
 * in a number; toAbs() turns them back into exact decimal strings for requests and URLs. Only
 * values of 16 digits or more are rewritten, and only when the base has as many: traces on a
 * small clock keep absolute times, and so do small values of those keys inside event args.
 */
let timeBase = 0n;
const TIME_VALUE = /"(ts|start_ns|end_ns|start|end)":(\d{16,})(?=[,}\]])/g;

/** setTimeBase(abs): the open trace's start (a decimal string or number), null when none. */
export function setTimeBase(abs) {
	let b = 0n;

	try {
		b = abs === null || abs === undefined ? 0n : BigInt(String(abs));
	} catch (e) {
		b = 0n;
	}
	timeBase = b >= 1000000000000000n ? b : 0n;
}

/** timeBaseText(): the time base as a decimal string ("0": none). */
export const timeBaseText = () => timeBase.toString();

/** toAbs(rel): the absolute time of rel (ns since the base) as a decimal string. */
export function toAbs(rel) {
	return (timeBase + BigInt(Math.round(rel))).toString();
}

/** fromAbs(text): ns since the base of an absolute decimal time; null if it is not one. */
export function fromAbs(text) {
	try {
		return Number(BigInt(String(text).trim()) - timeBase);
	} catch (e) {
		return null;
	}
}

/** rebase(text): a JSON text with its absolute times made relative to the base. */
export function rebase(text) {
	if (timeBase === 0n)
		return text;
	return text.replace(TIME_VALUE, (m, k, v) => `"${k}":${BigInt(v) - timeBase}`);
}

/*
 * Integers of 16 digits or more that are not times (an event's args: 64-bit ids, addresses;
 * a run manifest's wall clock) are shown as their exact digits, as strings, where the browser
 * gives a reviver the number's source text (JSON.parse source text access); elsewhere they stay
 * rounded numbers.
 */
const exactBig = (k, v, ctx) =>
	typeof v === 'number' && ctx && typeof ctx.source === 'string' && /^-?\d{16,}$/.test(ctx.source)
		? ctx.source : v;

/* parse(text, keep): the JSON of text with times rebased; top-level keys in keep as sent. */
function parse(text, keep) {
	const j = JSON.parse(rebase(text));
	if (keep && keep.length && j && typeof j === 'object') {
		const raw = JSON.parse(text, exactBig);
		for (const k of keep)
			if (k in raw)
				j[k] = raw[k];
	}
	return j;
}

/**
 * getJSON(path, signal, keep): GET path and parse JSON, times rebased but the top-level keys
 * in keep (say ['args']) left as sent; throws ApiError or AbortError.
 */
export async function getJSON(path, signal, keep) {
	const r = await fetch(path, { signal, headers: { Accept: 'application/json' } });
	const text = await r.text();
	if (!r.ok)
		throw errorFromBody(r.status, text);
	return parse(text, keep);
}

/** getTrace(path): GET a trace object (its manifest as sent); its start_ns becomes the time base. */
export async function getTrace(path) {
	const r = await fetch(path, { headers: { Accept: 'application/json' } });
	const text = await r.text();
	if (!r.ok)
		throw errorFromBody(r.status, text);
	const m = /"start_ns":(-?\d+)/.exec(text);
	setTimeBase(m ? m[1] : null);
	return parse(text, ['manifest']);
}

/* send(method, path): a request without a body; the JSON reply ({} when empty). */
async function send(method, path) {
	const r = await fetch(path, { method });
	const text = await r.text();
	if (!r.ok)
		throw errorFromBody(r.status, text);
	return text ? JSON.parse(text) : {};
}

/** del(path): DELETE path. */
export const del = (path) => send('DELETE', path);

/** post(path): POST path without a body. */
export const post = (path) => send('POST', path);

/** qs(obj): a query string from the defined values of obj. */
export function qs(obj) {
	const p = new URLSearchParams();
	for (const [k, v] of Object.entries(obj))
		if (v !== undefined && v !== null && v !== '')
			p.set(k, String(v));
	const s = p.toString();
	return s ? '?' + s : '';
}

export const tracePath = (id) => `/api/traces/${encodeURIComponent(id)}`;

/**
 * upload(file, fields, onProgress): POST /upload as multipart with XMLHttpRequest so that
 * the upload progress is visible. Resolves with the JSON reply, rejects with an ApiError.
 */
export function upload(file, fields, onProgress) {
	return new Promise((resolve, reject) => {
		const fd = new FormData();
		for (const [k, v] of Object.entries(fields || {}))
			if (v)
				fd.append(k, v);
		fd.append('trace', file, file.name);
		const x = new XMLHttpRequest();
		x.open('POST', '/upload');
		x.upload.onprogress = (ev) => {
			if (ev.lengthComputable && onProgress)
				onProgress(ev.loaded / ev.total);
		};
		x.onload = () => {
			if (x.status >= 200 && x.status < 300) {
				try {
					resolve(JSON.parse(x.responseText));
				} catch (e) {
					resolve({});
				}
			} else {
				reject(errorFromBody(x.status, x.responseText));
			}
		};
		x.onerror = () => reject(new ApiError(0, 'network', 'network error while uploading'));
		x.send(fd);
	});
}
