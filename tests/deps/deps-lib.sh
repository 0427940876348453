# SPDX-License-Identifier: MIT
# tests/deps/deps-lib.sh - helpers for the dependency tests (sourced after
# tests/lib.sh): ingest a fixture and list its edges by event name; make a
# synthetic engine trace and ingest it with the store's phase times.
DD="$NX_SRCDIR/tests/data/deps"

# ingest_id FILE: ingest into $T/d, print the trace id (empty on failure).
ingest_id() {
	"$NX" ingest --data "$T/d" --json "$1" >"$T/ingest.json" 2>"$T/ingest.err" || return 1
	jget "$T/ingest.json" "j['id']"
}

# edges ID: every stored edge as "src>dst:kind:label", by event name, sorted
# (label "None" when NULL).
edges() {
	"$NX" sql "$T/d/traces/$1.db" "SELECT x FROM (SELECT sa.s || '>' || sb.s || ':' ||
	  CASE e.kind WHEN 0 THEN 'flow' WHEN 1 THEN 'order' WHEN 2 THEN 'anti' ELSE 'output' END
	  || ':' || coalesce(e.label, 'None') AS x FROM edges e
	  JOIN events a ON a.id = e.src JOIN strings sa ON sa.id = a.name
	  JOIN events b ON b.id = e.dst JOIN strings sb ON sb.id = b.name) ORDER BY x" |
		paste -sd ';' -
}

# eid ID NAME: the event id of the (first) event called NAME.
eid() {
	"$NX" sql "$T/d/traces/$1.db" "SELECT e.id FROM events e JOIN strings s ON s.id = e.name
	  WHERE s.s = '$(printf '%s' "$2" | sed "s/'/''/g")' ORDER BY e.id LIMIT 1"
}

# gen_trace N SEED: tests/deps-gen's synthetic engine trace of N events into
# $T/trace.json (the whole test is skipped without the generator).
gen_trace() {
	gen=${NX_BUILDDIR:-$(pwd)}/tests/deps-gen
	[ -x "$gen" ] || skip_all "no tests/deps-gen in the build directory"
	"$gen" -n "$1" -s "$2" >"$T/trace.json"
	ok $? "deps-gen writes a $1-event trace"
}

# ingest_timed DIR PATTERN [VAR=VALUE...]: ingest $T/trace.json into DIR with
# the variables and phase times on; the id, and the lines of the times that
# match PATTERN in DIR.lines
ingest_timed() {
	dir=$1
	pat=$2
	shift 2
	env "$@" NX_STORE_TIMING=1 "$NX" ingest --data "$dir" --json "$T/trace.json" \
		>"$dir.json" 2>"$dir.err" || return 1
	grep "$pat" "$dir.err" >"$dir.lines"
	jget "$dir.json" "j['id']"
}
