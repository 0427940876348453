#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/damaged.sh - a trace store with one damaged chunk (its cols
# blob cut short, as a bad disk or an interrupted copy might leave it): every
# read that needs the chunk answers 500 `internal` with the store's message
# naming it, with the server's direct reads and through SQL only
# (NX_SUMMARY_SQL=1, NX_DEPS_SQL=1, NX_SEARCH_SQL=1), never an answer or an export without
# its events;
# reads that do not need it still answer, and the library still lists it.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
GEN="$T/gen.json"
$PY "$NX_SRCDIR/tests/server/gen-trace.py" 20000 "$GEN" 4
"$NX" ingest --data "$T/d" --json "$GEN" >"$T/ing.json" 2>"$T/ing.err"
ok $? "the generated trace ingests"
ID=$(jget "$T/ing.json" 'j["id"]')
# the middle chunk of the first unit with several: cut its cols blob short
$PY - "$T/d/traces/$ID.db" >"$T/chunk" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT id, unit, count, ts_first, ts_last FROM event_chunks "
                  "ORDER BY unit, id").fetchall()
units = sorted({r[1] for r in rows})
mine = [r for r in rows if r[1] == units[0]]
c = mine[len(mine) // 2]
other = [r for r in rows if r[1] != c[1]][0]
db.execute("UPDATE event_data SET cols = substr(cols, 1, 5) WHERE id = ?", (c[0],))
db.commit()
# first id, unit, ts_first, ts_last, another unit, an id in another chunk,
# an id of the same unit past the chunk
print(c[0], c[1], c[3], c[4], other[1], other[0] + 1, c[0] + c[2] + 7)
PY
read -r FIRST UNIT TS0 TS1 OUNIT OID AFTER <"$T/chunk"
A="/api/traces/$ID"
bad() { # NAME PATH [CODE]: 500 CODE (internal) naming the damaged chunk
	is "$(req GET "$2")" 500 "$mode: $1 answers 500"
	check "$mode: $1: the error names the chunk" \
		grep -q "\"error\":\"${3:-internal}\".*chunk $FIRST: corrupt" "$T/body"
}
for mode in direct sql; do
	if [ $mode = sql ]; then
		NX_SUMMARY_SQL=1 NX_DEPS_SQL=1 NX_SEARCH_SQL=1 srv_start "$T/d"
	else
		srv_start "$T/d"
	fi
	bad "whole-span summary" "$A/summary"
	bad "summary of the chunk's window" "$A/summary?start=$TS0&end=$((TS1 + 1))&units=$UNIT"
	bad "timeline events over the chunk" "$A/timeline?start=$TS0&end=$((TS1 + 1))&units=$UNIT&px=100000"
	bad "an event in the chunk" "$A/events/$((FIRST + 1))"
	bad "search" "$A/search?q=matmul"
	bad "search, a page" "$A/search?q=relu&offset=3000&limit=5"
	bad "export as Perfetto" "$A/export"
	bad "dependencies of an event in the chunk" "$A/deps/$((FIRST + 1))"
	bad "critical path over the chunk" "$A/critical-path?start=$TS0&end=$((TS1 + 1))" deps_failed
	bad "critical path from an event after the chunk" "$A/critical-path?event=$AFTER" deps_failed
	bad "critical path from an event in the chunk" "$A/critical-path?event=$((FIRST + 2))"
	is "$(req GET "$A/deps/$AFTER?dir=out")" 200 "$mode: a chain that does not reach the chunk answers"
	bad "export as Chrome JSON" "$A/export?format=json"
	is "$(req GET "$A/summary?start=$TS0&end=$((TS1 + 1))&units=$OUNIT")" 200 \
		"$mode: summary of another unit answers"
	is "$(req GET "$A/timeline?start=$TS0&end=$((TS1 + 1))&units=$OUNIT&px=100000")" 200 \
		"$mode: timeline of another unit answers"
	is "$(req GET "$A/events/$OID")" 200 "$mode: an event in another chunk answers"
	is "$(req GET "/api/traces")" 200 "$mode: the library lists the trace"
	is "$(jget "$T/body" '[t["id"] for t in j["traces"]]')" "['$ID']" "$mode: the trace is listed"
	srv_stop
done

# a damaged catalog: the library list is an error, not an empty library
for i in $(seq 1 40); do
	printf '[{"ph":"X","name":"n%d","ts":%d,"dur":5,"pid":1,"tid":1}]' "$i" "$i" >"$T/t.json"
	"$NX" ingest --data "$T/c" --name "run-$i-named-at-some-length-to-fill-catalog-pages" \
		"$T/t.json" >/dev/null 2>&1 || echo "ingest $i failed" >>"$T/cbad"
done
is "$(cat "$T/cbad" 2>/dev/null)" "" "40 small traces ingest"
$PY - "$T/c/catalog.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
ps = db.execute("PRAGMA page_size").fetchone()[0]
leaves = [r[0] for r in db.execute("SELECT pageno FROM dbstat WHERE name = 'traces' "
                                   "AND pagetype = 'leaf' ORDER BY pageno")]
db.close()
assert len(leaves) > 2, leaves
with open(sys.argv[1], "r+b") as f:	# page numbers count from 1
    f.seek((leaves[len(leaves) // 2] - 1) * ps)
    f.write(b"\xff" * 16)
PY
"$NX" info --data "$T/c" >"$T/info.out" 2>"$T/info.err"
is "$?" 1 "damaged catalog: info exits 1"
check "damaged catalog: info says why" grep -q '^neuron-explorer info: catalog: .*malformed' "$T/info.err"
srv_start "$T/c"
ok $? "server starts on the damaged catalog"
check "... and says it could not check every trace" \
	grep -q "catalog: cannot check every ready trace's store" "$T/srv.err"
is "$(req GET "/api/traces?limit=500")" 500 "damaged catalog: the library list answers 500"
check "damaged catalog: the error says so" grep -q '"error":"internal".*catalog: .*malformed' "$T/body"
srv_stop
done_testing
