#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/json/golden.sh - ingest every Chrome/Kineto JSON trace in
# ../shared/traces through the real binary and compare what `ingest --json`
# reports and what the SQLite trace file holds with an independent count
# made by Python's json module (tests/json/oracle.py) and with the counts
# SOURCES.md gives for each file.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
need_shared
PY=${PYTHON3:-/usr/bin/python3}
ORACLE="$NX_SRCDIR/tests/json/oracle.py"

# field FILE KEY: a number from a JSON object (flows.flow for the edge count)
field() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); k=sys.argv[2]
v=j.get(k); v=v['flow'] if isinstance(v, dict) else v; print(v)" "$1" "$2"; }

for f in "$SHARED"/*.json "$SHARED"/*.json.gz; do
	[ -f "$f" ] || continue
	b=$(basename "$f")
	"$NX" ingest --data "$T/d" --json "$f" >"$T/got.json" 2>"$T/err.txt"
	ok $? "$b: ingest exits 0"
	"$PY" "$ORACLE" "$f" >"$T/want.json"
	for k in slices instants counters flows bad_events unmatched; do
		is "$(field "$T/got.json" $k)" "$(field "$T/want.json" $k)" "$b: $k matches the oracle"
	done
	id=$(field "$T/got.json" id)
	db="$T/d/traces/$id.db"
	is "$("$NX" sql "$db" 'SELECT count(*) FROM events WHERE kind = 0')" \
	   "$(field "$T/want.json" slices)" "$b: slices stored in the SQLite file"
	is "$("$NX" sql "$db" 'SELECT count(*) FROM events WHERE kind = 1')" \
	   "$(field "$T/want.json" instants)" "$b: instants stored"
	is "$("$NX" sql "$db" 'SELECT count(*) FROM edges WHERE kind = 0')" \
	   "$(field "$T/want.json" flows)" "$b: flow edges stored"
	echo "$b $(cat "$T/got.json")" >>"$T/all.txt"
done

# The numbers SOURCES.md gives (counted there by other means).
got() { grep "^$1 " "$T/all.txt" | cut -d' ' -f2- >"$T/one.json"; field "$T/one.json" "$2"; }
is "$(got kineto_tbplugin_resnet50_v100_2021.pt.trace.json.gz slices)" 44666 \
   "resnet50: 44,666 X slices"
is "$(got kineto_tbplugin_resnet50_v100_2021.pt.trace.json.gz instants)" 12840 \
   "resnet50: 12,840 [memory] instants"
is "$(got kineto_tbplugin_resnet50_v100_2021.pt.trace.json.gz flows)" 9096 \
   "resnet50: 9,096 s + 9,096 f launch flows -> 9,096 edges"
is "$(got hta_simple_add_a100.json.gz flows)" 139 \
   "simple_add: 315 ac2g f of which 176 f-only -> 139 edges"
is "$(got hta_ns_resolution_v100.pt.trace.json.gz slices)" 45420 "ns_resolution: 45,420 X"
is "$(got catapult_flow.json slices)" 1625 "catapult_flow: 1,625 B (3 closed at trace end)"
is "$(got hta_amd_mi250_rocm62.json.gz bad_events)" 0 "mi250: no bad events"

# Kineto ts with 3 decimals keep their nanoseconds.
ns=$(grep '^hta_ns_resolution' "$T/all.txt" | cut -d' ' -f2- >"$T/one.json"; field "$T/one.json" id)
want=$("$PY" -c "
import gzip, json, sys, decimal
j = json.load(gzip.open(sys.argv[1]), parse_float=decimal.Decimal)
print(min(int(e['ts'] * 1000) for e in j['traceEvents'] if e.get('ph') == 'X'))" \
	"$SHARED/hta_ns_resolution_v100.pt.trace.json.gz")
is "$("$NX" sql "$T/d/traces/$ns.db" 'SELECT min(ts) FROM events WHERE kind = 0')" "$want" \
   "ns_resolution: first X ts exact to the ns"

# Kineto GPU rows are GPU devices with stream units; MTIA is an accelerator.
id=$(got hta_simple_add_a100.json.gz id)
is "$(sqlite3 "$T/d/traces/$id.db" "SELECT kind || ' ' || name FROM devices WHERE key = 'pid:0'")" \
   "1 GPU 0" "simple_add: pid 0 is device GPU 0"
is "$(sqlite3 "$T/d/traces/$id.db" "SELECT u.kind || ' ' || u.name FROM units u JOIN devices d
   ON d.id = u.device_id WHERE d.key = 'pid:0' AND u.key = 'tid:7'")" "2 stream 7" \
   "simple_add: tid 7 on GPU 0 is stream 7"
is "$(sqlite3 "$T/d/traces/$id.db" "SELECT value FROM meta WHERE key = 'json.traceName'" | wc -c | tr -d ' ')" \
   "$("$PY" -c "import gzip,json,sys; print(len(json.load(gzip.open(sys.argv[1]))['traceName'])+1)" "$SHARED/hta_simple_add_a100.json.gz")" \
   "simple_add: traceName after traceEvents kept in meta"
id=$(got kineto_tbplugin_resnet50_v100_2021.pt.trace.json.gz id)
is "$(sqlite3 "$T/d/traces/$id.db" "SELECT count(*) FROM units u JOIN devices d ON d.id = u.device_id
   WHERE d.kind = 1 AND u.kind = 2 AND u.name = 'stream 7'")" 1 \
   "resnet50: the 2021 \"stream 7\" tid is a stream of a GPU"
id=$(got hta_mtia_inference.json.gz id)
is "$(sqlite3 "$T/d/traces/$id.db" "SELECT kind || ' ' || name FROM devices WHERE key = 'pid:17'")" \
   "3 MTIA 17" "mtia: pid 17 is accelerator MTIA 17"
done_testing
