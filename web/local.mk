# SPDX-License-Identifier: MIT
# web/: the browser UI (plain HTML, CSS and ES modules; no build step), installed into
# $(pkgdatadir)/web and served by `neuron-explorer serve`.
nobase_dist_pkgdata_DATA += \
	web/index.html \
	web/css/nx.css \
	web/js/api.js \
	web/js/app.js \
	web/js/library.js \
	web/js/timeline.js \
	web/js/util.js

# Real-browser tests: Debian's chromium driven by playwright-core (npm ci in tests/browser).
TESTS += tests/browser/run.sh
EXTRA_DIST += \
	tests/browser/run.sh \
	tests/browser/ui.mjs \
	tests/browser/package.json \
	tests/browser/package-lock.json \
	tests/browser/data/two-gpus.json \
	tests/browser/data/xss-names.json \
	tests/browser/data/not-a-trace.txt \
	tests/browser/data/truncated.json \
	tests/browser/data/kinds.json \
	tests/browser/data/epoch.json

# The web benchmark (`make bench` runs bench/*-bench.sh; results in docs/benchmarks-web.md).
EXTRA_DIST += bench/web-bench.sh bench/web-bench.mjs bench/web-trace.py
