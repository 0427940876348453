#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/perfetto/roundtrip.sh - every real trace of ../shared/traces and the
# project's own test traces, converted to .pftrace and ingested back, give
# the same store: per unit (name and kind) and event kind the same count,
# times, durations, depths and counter values, and the same edges with their
# kinds and labels (our additions in the export: docs/perfetto-ingest.md).
# Through Chrome JSON, which carries none of our additions, the events
# still come back: per event kind the same count, times, durations, depths.
. "$NX_SRCDIR/tests/lib.sh"

# events DATA: per event kind, count, times, durations and depths
events() {
	id=$("$NX" info --data "$1" | awk 'NR == 1 { print $1 }')
	"$NX" sql --data "$1" "$id" "SELECT kind, count(*), sum(ts % 1000000007),
	  sum(dur % 1000000007), sum(depth) FROM events GROUP BY kind ORDER BY kind"
}

# digest DATA: store_digest (tests/lib.sh) of the one trace in DATA
digest() {
	store_digest "$1" "$("$NX" info --data "$1" | awk 'NR == 1 { print $1 }')" | md5sum
}

for f in "$NX_SRCDIR"/tests/data/deps/*.json "$NX_SRCDIR"/tests/data/json/small-*.json \
	 "$NX_SRCDIR"/tests/data/json/edge-kinds.json "$NX_SRCDIR"/tests/data/perfetto/small.pftrace \
	 ${SHARED:+"$SHARED"/*.json "$SHARED"/*.gz "$SHARED"/*.pftrace "$SHARED"/*.pb \
	 "$SHARED"/*.perfetto-trace}; do
	[ -f "$f" ] || continue
	n=$(basename "$f")
	rm -rf "$T/a" "$T/b"
	"$NX" ingest --data "$T/a" "$f" >/dev/null 2>&1 || continue	# bad.json & co
	"$NX" convert "$f" "$T/x.pftrace" && "$NX" ingest --data "$T/b" "$T/x.pftrace" >/dev/null
	ok $? "$n: converted and ingested back"
	is "$(digest "$T/b")" "$(digest "$T/a")" "$n: the same units, events and edges"
	rm -rf "$T/b"
	"$NX" convert "$f" "$T/x.json" && "$NX" ingest --data "$T/b" "$T/x.json" >/dev/null
	ok $? "$n: converted to .json and ingested back"
	is "$(events "$T/b")" "$(events "$T/a")" "$n: through .json, the same events"
done
[ -n "$SHARED" ] || skip "no ../shared/traces: the real traces"
done_testing
