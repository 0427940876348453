// SPDX-License-Identifier: MIT
// web/js/library.js - the library page: list, search, sort, delete and upload of runs.
import { el, clear, fmtBytes, fmtCount, fmtCountOf, fmtDate, debounce } from './util.js';
import { getJSON, del, post, qs, upload, tracePath } from './api.js';

const SORTS = {
	created_desc: (a, b) => (b.created_ns || 0) - (a.created_ns || 0),
	created_asc: (a, b) => (a.created_ns || 0) - (b.created_ns || 0),
	name_asc: (a, b) => String(a.name).localeCompare(String(b.name)),
	size_desc: (a, b) => (b.size || 0) - (a.size || 0),
	events_desc: (a, b) => eventCount(b) - eventCount(a),
	status_asc: (a, b) => String(a.status).localeCompare(String(b.status)),
};
const HEADER_SORT = {
	name: ['name_asc', 'name_asc'], created: ['created_desc', 'created_asc'],
	size: ['size_desc', 'size_desc'], events: ['events_desc', 'events_desc'],
	status: ['status_asc', 'status_asc'],
};

function eventCount(t) {
	return (t.slices || 0) + (t.instants || 0) + (t.counters || 0);
}

/* whether run @t is still waiting for or in its ingest */
function ingestPending(t) {
	return t.status === 'queued' || t.status === 'ingesting';
}

export class Library {
	constructor(root) {
		this.root = root;
		this.traces = [];
		this.total = 0;
		this.devices = new Map();	/* id -> [DEVICE] for ready traces */
		this.timer = 0;
		this.visible = false;
		this.search = root.querySelector('#lib-search');
		this.sort = root.querySelector('#lib-sort');
		this.tbody = root.querySelector('#lib-table tbody');
		this.errorBox = root.querySelector('#lib-error');
		this.uploads = root.querySelector('#upload-list');
		this.search.addEventListener('input', debounce(() => this.refresh(), 200));
		this.sort.addEventListener('change', () => this.render());
		for (const th of root.querySelectorAll('th[data-sort]')) {
			th.addEventListener('click', () => {
				const [a, b] = HEADER_SORT[th.dataset.sort];
				this.sort.value = this.sort.value === a ? b : a;
				this.render();
			});
		}
		const input = root.querySelector('#upload-input');
		input.addEventListener('change', () => {
			for (const f of input.files)
				this.upload(f);
			input.value = '';
		});
		this.installDrop();
	}

	installDrop() {
		const ov = this.root.querySelector('#drop-overlay');
		let depth = 0;
		const active = () => this.visible;
		document.addEventListener('dragenter', (e) => {
			if (!active())
				return;
			e.preventDefault();
			depth++;
			ov.hidden = false;
		});
		document.addEventListener('dragover', (e) => {
			if (active())
				e.preventDefault();
		});
		document.addEventListener('dragleave', () => {
			if (active() && --depth <= 0) {
				depth = 0;
				ov.hidden = true;
			}
		});
		document.addEventListener('drop', (e) => {
			if (!active())
				return;
			e.preventDefault();
			depth = 0;
			ov.hidden = true;
			for (const f of e.dataTransfer.files)
				this.upload(f);
		});
	}

	show() {
		this.visible = true;
		document.title = 'neuron-explorer: library';
		this.refresh();
	}

	hide() {
		this.visible = false;
		clearTimeout(this.timer);
	}

	async refresh() {
		clearTimeout(this.timer);
		if (!this.visible)
			return;
		try {
			const q = this.search.value.trim();
			const j = await getJSON('/api/traces' + qs({ q, limit: 500 }));
			this.traces = j.traces || [];
			this.total = j.total ?? this.traces.length;
			this.errorBox.hidden = true;
			this.render();
			this.fetchDevices();
		} catch (e) {
			this.showError('Cannot list runs: ' + e.message);
		}
		const busy = this.traces.some(ingestPending);
		this.timer = setTimeout(() => this.refresh(), busy ? 700 : 5000);
	}

	showError(msg) {
		this.errorBox.textContent = msg;
		this.errorBox.hidden = false;
	}

	async fetchDevices() {
		for (const t of this.traces.slice(0, 100)) {
			if (t.status !== 'ready' || this.devices.has(t.id))
				continue;
			this.devices.set(t.id, null);
			try {
				const d = await getJSON(tracePath(t.id));
				this.devices.set(t.id, d.devices || []);
				this.render();
			} catch (e) {
				this.devices.delete(t.id);
			}
		}
	}

	render() {
		const rows = this.traces.slice().sort(SORTS[this.sort.value] || SORTS.created_desc);
		clear(this.tbody);
		this.root.querySelector('#lib-empty').hidden = rows.length > 0;
		for (const t of rows)
			this.tbody.append(this.row(t));
		const n = this.traces.length;
		document.getElementById('status-line').textContent =
			this.total > n ? `${fmtCount(n)} of ${fmtCountOf(this.total, 'run')}` : fmtCountOf(n, 'run');
	}

	row(t) {
		const ready = t.status === 'ready';
		const name = ready ? el('a', { href: '#trace=' + encodeURIComponent(t.id), class: 'trace-link' }, t.name || t.id)
			: el('span', null, t.name || t.id);
		const devs = this.devices.get(t.id);
		const devText = devs ? devs.map((d) => d.name || d.label || d.id).join(', ') : (ready ? '…' : '');
		let status;
		if (t.status === 'ingesting' || t.status === 'queued') {
			const pct = Math.round((t.progress || 0) * 100);
			/* the server names the ingest's phase: "sorting", "dependencies", ... */
			const phase = t.status === 'ingesting' && t.phase ? ` · ${t.phase}` : '';
			status = el('span', { class: 'status busy' }, t.status + ' ',
				el('progress', { max: 100, value: pct }), ` ${pct}%${phase}`);
		} else if (t.status === 'failed') {
			status = el('span', { class: 'status failed', title: t.error || '' }, 'failed: ' + (t.error || 'unknown error'));
		} else {
			status = el('span', { class: 'status ' + t.status }, t.status);
		}
		const tags = el('span', { class: 'tags' }, (t.tags || []).map((g) => el('span', { class: 'tag' }, g)));
		/* a run still queued or ingesting: the server stops its ingest, then deletes it */
		const busy = ingestPending(t);
		const delBtn = el('button', {
			class: 'danger small' + (busy ? ' cancel' : ''),
			title: busy ? 'Stop its ingest and delete the upload' : 'Delete this run',
			onclick: () => this.remove(t),
		}, busy ? 'Cancel' : 'Delete');
		const retryBtn = t.status === 'failed'
			? el('button', { class: 'retry small', title: 'Ingest it again from the kept upload', onclick: () => this.retry(t) }, 'Retry')
			: null;
		/* the stored run as a plain Perfetto trace, for ui.perfetto.dev (an .ntff run has no other form it reads) */
		const exportLink = ready
			? el('a', { class: 'button small export', href: tracePath(t.id) + '/export?format=pftrace', download: '',
				title: 'Download as a Perfetto trace (.pftrace), to open in ui.perfetto.dev' }, '.pftrace')
			: null;
		return el('tr', { 'data-id': t.id, 'data-status': t.status },
			el('td', { class: 'name' }, name, el('div', { class: 'muted small mono' }, t.format || '', ' ', t.id)),
			el('td', { class: 'mono' }, fmtDate(t.created_ns)),
			el('td', { class: 'num' }, fmtBytes(t.size)),
			el('td', { class: 'num' }, ready ? fmtCount(eventCount(t)) : ''),
			el('td', { class: 'devices' }, devText),
			el('td', null, status),
			el('td', null, tags),
			el('td', { class: 'row-actions' }, retryBtn, exportLink, delBtn));
	}

	/** retry(t): ingest a failed run again from its kept upload (after freeing disk space, say). */
	async retry(t) {
		try {
			await post(tracePath(t.id) + '/retry');
		} catch (e) {
			this.showError(`Cannot retry ${t.name || t.id}: ${e.message}`);
		}
		this.refresh();
	}

	async remove(t) {
		const busy = ingestPending(t);
		const ask = busy ? `Stop ingesting run "${t.name || t.id}" and delete it? This cannot be undone.`
			: `Delete run "${t.name || t.id}"? This cannot be undone.`;
		if (!window.confirm(ask))
			return;
		try {
			await del(tracePath(t.id));
			this.devices.delete(t.id);
			this.refresh();
		} catch (e) {
			this.showError(`Cannot delete ${t.name || t.id}: ${e.message}`);
		}
	}

	/** upload(file): send one file with a progress bar; the server's rejection is shown as is. */
	async upload(file) {
		const bar = el('progress', { max: 100, value: 0 });
		const msg = el('span', { class: 'msg' }, 'uploading…');
		const item = el('div', { class: 'upload-item' }, el('span', { class: 'mono' }, file.name), bar, msg);
		this.uploads.prepend(item);
		const tags = this.root.querySelector('#upload-tags').value.trim();
		try {
			const j = await upload(file, { name: file.name, tags }, (f) => {
				bar.value = Math.round(f * 100);
				msg.textContent = `${Math.round(f * 100)}% of ${fmtBytes(file.size)}`;
			});
			bar.value = 100;
			msg.textContent = `accepted as ${j.id || '?'}, ${j.status || 'queued'}`;
			item.classList.add('ok');
			setTimeout(() => item.remove(), 8000);
		} catch (e) {
			item.classList.add('failed');
			msg.textContent = `rejected (${e.status || 'network'}${e.code ? ' ' + e.code : ''}): ${e.detail || e.message}`;
		}
		this.refresh();
	}
}
