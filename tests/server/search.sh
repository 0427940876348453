#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/search.sh - GET /api/traces/ID/search as the server answers
# it (totals from per-name counts read once per trace, pages merged from the
# name index or read unit by unit straight from the store) against the same
# answers through SQL only (NX_SEARCH_SQL=1: every match counted, read and
# sorted), byte for byte, on hand-written, generated and (when present)
# ../shared traces: one-letter strings most names contain, whole names,
# strings nothing contains, offsets at and past the end, limits 0 to 1000.
# Two generated traces have more units x matching names than the merge takes
# (256), so their pages come from the unit reads; the answers also match the
# trace files (tests/server/check.py) and hold with the answer cache off.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
CHK="$PY $NX_SRCDIR/tests/server/check.py"
GEN="$T/gen.json"
DGEN="$T/deps.json"
$PY "$NX_SRCDIR/tests/server/gen-trace.py" 40000 "$GEN" 48	# 48 threads x 10 names
"${NX_BUILDDIR:-.}/tests/deps-gen" -n 20000 >"$DGEN"		# 6 units x 64 names

set -- "$NX_SRCDIR/tests/data/server/basic.json" "$NX_SRCDIR/tests/data/perfetto/small.pftrace" \
	"$GEN" "$DGEN"
if [ -n "$SHARED" ]; then
	set -- "$@" "$SHARED/hta_simple_add_a100.json.gz" "$SHARED/mspt_chrome_gzipped.pftrace"
fi
srv_ingest_all "$T/d" "$@"

# queries ID: the searches asked of trace ID, a query string a line
queries() {
	"$NX" sql "$T/d/traces/$1.db" "SELECT s.s FROM strings s WHERE s.id IN
		(SELECT name FROM events GROUP BY name ORDER BY COUNT(*) DESC LIMIT 3)" >"$T/names"
	$PY - "$T/names" <<'EOF'
import sys, urllib.parse
names = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
qs = ["a", "e", "o", "_", "op", "zzz-nothing"] + names + [n[1:4] for n in names if len(n) > 4]
pages = ["", "&limit=1000", "&limit=0", "&limit=1", "&offset=7&limit=5", "&offset=1000&limit=1000",
         "&offset=25000&limit=3", "&offset=99999999&limit=10"]
for q in qs:
    for p in pages:
        print("q=" + urllib.parse.quote(q, safe="") + p)
EOF
}

: >"$T/bad"
srv_start "$T/d"
ok $? "server starts"
hits() { curl -s "$URL/metrics" | sed -n 's/^nx_answer_cache_hits_total //p'; }
GID=$(sed -n 's/ gen.json$//p' "$T/ids")
req GET "/api/traces/$GID/search?q=relu" >/dev/null
h0=$(hits)
is "$(req GET "/api/traces/$GID/search?q=softmax&limit=1000")" 200 "a new search string"
check "... totals it from the per-name counts in the answer cache" test "$(hits)" -gt "$h0"
check "generated trace, q=softmax: total and order = the file's" $CHK search "$GEN" "$T/body" softmax
is "$(req GET "/api/traces/$GID/search?q=a&limit=1000")" 200 "a string most names contain"
check "generated trace, q=a: total and order = the file's" \
	$CHK search "$GEN" "$T/body" a
srv_answers "$T/direct" search
srv_stop
srv_start "$T/d" --cache-mb 0
ok $? "server starts (answer cache off)"
srv_answers "$T/nocache" search
srv_stop
NX_SEARCH_SQL=1 srv_start "$T/d"
ok $? "server starts (SQL only)"
srv_answers "$T/sql" search
srv_stop
is "$(cat "$T/bad")" "" "every search answers 200"
srv_same "$T/direct" "$T/sql" "searches"
srv_same "$T/nocache" "$T/sql" "searches without the answer cache"
done_testing
