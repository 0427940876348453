#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/summary.sh - GET /api/traces/ID/summary read straight from the
# store's chunks against the same answers through SQL only (NX_SUMMARY_SQL=1,
# the path a damaged store falls back to), byte for byte, on hand-written,
# generated and (when present) ../shared traces: whole span, windows that
# start inside slices, narrow windows, unit subsets and limits; the
# generated trace also against tests/server/check.py.  A damaged store:
# tests/server/damaged.sh.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
CHK="$PY $NX_SRCDIR/tests/server/check.py"
GEN="$T/gen.json"
$PY "$NX_SRCDIR/tests/server/gen-trace.py" 60000 "$GEN" 6

set -- "$NX_SRCDIR/tests/data/server/basic.json" "$NX_SRCDIR/tests/data/deps/pipeline.json" \
	"$NX_SRCDIR/tests/data/perfetto/small.pftrace" "$GEN"
if [ -n "$SHARED" ]; then
	set -- "$@" "$SHARED/hta_simple_add_a100.json.gz" "$SHARED/catapult_flow.json" \
		"$SHARED/perfetto_difftest_track_event_counters.pb" "$SHARED/mspt_chrome_gzipped.pftrace"
fi
srv_ingest_all "$T/d" "$@"

# queries ID: the summary queries asked of trace ID, a line each
queries() {
	curl -s "$URL/api/traces/$1" -o "$T/tr.json"
	curl -s "$URL/api/traces/$1/units" -o "$T/units.json"
	$PY - "$T/tr.json" "$T/units.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
u = json.load(open(sys.argv[2]))
units = [x["id"] for x in (u["units"] if isinstance(u, dict) else u)]
s, e = t["start_ns"], t["end_ns"]
span = max(e - s, 1)
q = ["", "limit=3", "start=%d&end=%d" % (s, s + span // 2)]
for k in (3, 7, 13):	# windows starting inside slices
    a = s + span * k // 17
    q.append("start=%d&end=%d" % (a, a + span // 5))
    q.append("start=%d&end=%d" % (a, a + max(span // 1000, 1)))
if units:
    q.append("units=%d" % units[0])
    q.append("units=%s&start=%d&end=%d" % (",".join(map(str, units[:2])), s + span // 3, e))
    q.append("units=%d&start=%d&end=%d" % (units[-1], s + span // 4, s + span // 2))
print("\n".join(q))
EOF
}

: >"$T/bad"
srv_start "$T/d"
ok $? "server starts (direct reads)"
srv_answers "$T/direct" summary
# the same summary again: from the answer cache, the same bytes
GID=$(sed -n 's/ gen.json$//p' "$T/ids")
hits() { curl -s "$URL/metrics" | sed -n 's/^nx_answer_cache_hits_total //p'; }
h0=$(hits)
is "$(req GET "/api/traces/$GID/summary")" 200 "the whole-span summary again"
check "... the same bytes" cmp "$T/body" "$T/direct/$GID.1"
check "... from the answer cache" test "$(hits)" -gt "$h0"
srv_stop
NX_SUMMARY_SQL=1 srv_start "$T/d"
ok $? "server starts (SQL only)"
srv_answers "$T/sql" summary
is "$(cat "$T/bad")" "" "every summary answers 200"
srv_same "$T/direct" "$T/sql" "summaries from the chunks"
srv_stop

# the generated trace against the trace itself (whole span and a window)
check "generated trace: whole-span summary = the file's slices" \
	$CHK summary "$GEN" "$T/direct/$GID.1" 0 999999999999
q3=$(sed -n 3p "$T/q.$GID")
s=$(echo "$q3" | sed 's/start=\([0-9]*\)&end=\([0-9]*\)/\1/')
e=$(echo "$q3" | sed 's/start=\([0-9]*\)&end=\([0-9]*\)/\2/')
check "generated trace: half-span summary = the file's slices" $CHK summary "$GEN" "$T/direct/$GID.3" "$s" "$e"

done_testing
