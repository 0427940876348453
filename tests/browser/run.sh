#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/browser/run.sh - real-browser tests of the web UI: starts `neuron-explorer serve` on
# 127.0.0.1 port 0 with a fresh data dir and drives Debian's chromium through playwright-core
# (tests/browser/ui.mjs). Prints TAP. Without chromium, node or node_modules it prints a skipped
# plan ("1..0 # SKIP why") and exits 0: automake's TAP driver reports that as SKIP, while it
# would report exit 77 as an ERROR (it reads exit codes, not the 77 convention).
# Screenshots go to $NX_BUILDDIR/test-artifacts/screenshots/.
. "${NX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
BROWSER_DIR="$NX_SRCDIR/tests/browser"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip_all "no chromium at $CHROMIUM (apt-get install chromium)"
command -v node >/dev/null 2>&1 || skip_all "no node (apt-get install nodejs)"
[ -f "$BROWSER_DIR/node_modules/playwright-core/package.json" ] ||
	skip_all "no tests/browser/node_modules (run: cd tests/browser && npm ci)"
[ -x "$NX" ] || skip_all "no binary at $NX"
if "$NX" serve --help 2>&1 | grep -q 'not available in this build'; then
	skip_all "this build has no server"
fi

mkdir -p "$T/data"
"$NX" serve --listen 127.0.0.1:0 --data "$T/data" --web "$NX_SRCDIR/web" \
	>"$T/serve.out" 2>"$T/serve.err" &
srv_pid=$!
at_exit "kill $srv_pid; wait $srv_pid"
url=""
i=0
while [ $i -lt 100 ]; do
	url=$(head -n 1 "$T/serve.out" 2>/dev/null | grep -o 'http://[^ ]*' | head -n 1)
	[ -n "$url" ] && break
	kill -0 $srv_pid 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
if [ -z "$url" ]; then
	echo "not ok 1 - server started"
	sed 's/^/#   /' "$T/serve.err" | head -20
	echo "1..1"
	exit 1
fi
url=${url%/}

SHOTS="${NX_BUILDDIR:-$(pwd)}/test-artifacts/screenshots"
mkdir -p "$SHOTS"
NX_URL="$url" NX_SHOTS="$SHOTS" NX_TRACES="$SHARED" NX_TMP="$T" CHROMIUM="$CHROMIUM" \
	NX_DEPS_GEN="${NX_BUILDDIR:-$(pwd)}/tests/deps-gen" \
	timeout 240 node "$BROWSER_DIR/ui.mjs"
rc=$?
if [ $rc -ne 0 ]; then
	echo "# server stderr (last lines):"
	tail -n 15 "$T/serve.err" | sed 's/^/#   /'
fi
exit $rc
