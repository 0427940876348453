// SPDX-License-Identifier: MIT
// web/js/app.js - entry point: routes the location hash to the library or the timeline page.
//   #                       library
//   #trace=ID&start=NS&end=NS&sel=EID   timeline of trace ID, window and selection
import { Library } from './library.js';
import { Timeline } from './timeline.js';
import { isTyping } from './util.js';

const pages = {
	library: document.getElementById('library'),
	timeline: document.getElementById('timeline'),
};
const library = new Library(pages.library);
const timeline = new Timeline(pages.timeline);
let current = null;

/** parseHash(): the hash as a URLSearchParams. */
export function parseHash() {
	return new URLSearchParams(location.hash.replace(/^#\/?/, ''));
}

function route() {
	const p = parseHash();
	const id = p.get('trace');
	const want = id ? 'timeline' : 'library';
	if (want !== current) {
		for (const [k, v] of Object.entries(pages))
			v.hidden = k !== want;
		if (current === 'library')
			library.hide();
		if (current === 'timeline')
			timeline.hide();
		current = want;
	}
	if (want === 'library') {
		document.getElementById('crumb').textContent = '';
		library.show();
	} else {
		timeline.show(id, p);
	}
}

window.addEventListener('hashchange', route);
document.getElementById('help-btn').addEventListener('click', () => toggleHelp());

export function toggleHelp(force) {
	const h = document.getElementById('help');
	h.hidden = force === undefined ? !h.hidden : !force;
}
window.addEventListener('keydown', (ev) => {
	if (ev.key === 'Escape')
		toggleHelp(false);
	if (ev.key === '?' && !isTyping(ev.target)) {
		toggleHelp();
		ev.preventDefault();
	}
});
document.getElementById('help').addEventListener('click', (ev) => {
	if (ev.target.id === 'help')
		toggleHelp(false);
});

/* Read-only hook for the browser tests and for debugging from the console. */
window.__nx = { library, timeline, get state() { return timeline.debugState(); } };
route();
