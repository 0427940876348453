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

/** getJSON(path, signal): GET path and parse JSON; throws ApiError or AbortError. */
export async function getJSON(path, signal) {
	const r = await fetch(path, { signal, headers: { Accept: 'application/json' } });
	const text = await r.text();
	if (!r.ok)
		throw errorFromBody(r.status, text);
	return JSON.parse(text);
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
