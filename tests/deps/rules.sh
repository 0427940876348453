#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/rules.sh - the access-set and semaphore rules through the real
# binary: ingest hand-built Chrome JSON traces with known answers and check
# the stored edges (tests/data/deps/*.json, answers in docs/dependencies.md).
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

id=$(ingest_id "$DD/rules.json")
ok $? "rules.json ingests"
is "$(edges "$id")" \
"r3>w4:anti:A[0:128];t_short>t_long:output:C;tf_first>tf_second:output:D;\
w1>r3:flow:A[0:32];w1>w2:output:A[32:64];w1>w4:output:A[0:32];w2>r3:flow:A[32:96];\
w2>w4:output:A[32:96];wb>rb:flow:B[16:32],B[256:264];wb>wb2:output:B[64:80]" \
	"partial overlaps, whole buffers, two writers, ties by end then file order"
is "$(jget "$T/ingest.json" "j['flows']['flow'], j['flows']['output'], j['flows']['anti'], j['bad_access']")" \
	"3 6 1 0" "ingest --json counts the derived edges by kind"
"$NX" info --data "$T/d" "$id" >"$T/info.txt"
check "info says the edges by kind" grep -q \
	"^  dependency edges: 3 flow, 0 order, 1 anti, 6 output (program order is derived when queried)$" \
	"$T/info.txt"
"$NX" ingest --data "$T/d2" "$DD/rules.json" >"$T/ingest.txt"
ok $? "rules.json ingests with the text summary"
check "the text summary says the edges by kind" grep -qx \
	"  dependency edges: 3 flow, 0 order, 1 anti, 6 output" "$T/ingest.txt"
"$NX" ingest --data "$T/d2" "$NX_SRCDIR/tests/data/json/small-array.json" >"$T/plain.txt"
ok $? "a trace without access sets ingests"
check "no such line without derived edges" sh -c "! grep -q 'dependency edges' '$T/plain.txt'"

# Semaphores: counts in completion order (s1 ends at 10, s3 at 20, s2 at 30),
# the third signal satisfies S>=3, unsatisfiable waits give no edge, chains.
id=$(ingest_id "$DD/sems.json")
ok $? "sems.json ingests"
is "$(edges "$id")" \
	"c1>c2:order:P>=1;c2>c3:order:Q>=1;c3>c4:order:R[0]>=1;s2>wait3:order:S>=3;s3>wait2:order:S>=2" \
	"semaphore waits resolved in completion order"
c4=$(eid "$id" c4)
"$NX" deps --data "$T/d" "$id" "$c4" --dir in --depth 5 --json >"$T/chain.json"
ok $? "deps --json on a chain of waits"
# The semaphore edges of the chain, hop by hop; host threads are in-order
# units, so program order joins in (c4 follows c1 on thread 1, and so on).
is "$(jget "$T/chain.json" "' '.join('%s>%s' % (n[e['src']], n[e['dst']]) for n in [{x['id']: x['name'] for x in j['nodes']}] for e in j['edges'] if e['label'] != 'program order')")" \
	"c3>c4 c2>c3 s3>wait2 s2>wait3 c1>c2" "the chain of waits, hop by hop"
is "$(jget "$T/chain.json" "' '.join('%s:%d' % (n['name'], n['hop']) for n in j['nodes'] if n['name'].startswith('c'))")" \
	"c4:0 c1:-1 c3:-1 c2:-2" "each event at its distance"
is "$(jget "$T/chain.json" "' '.join(sorted('%s>%s' % (n[e['src']], n[e['dst']]) for n in [{x['id']: x['name'] for x in j['nodes']}] for e in j['edges'] if e['label'] == 'program order'))")" \
	"c1>c4 never>c2 s1>wait2 s2>never s3>wait3 wait2>c1 wait3>c3" "program order on each thread"
is "$(jget "$T/chain.json" "j['truncated'], len(j['edges'])")" "False 12" "twelve edges, not truncated"
"$NX" deps --data "$T/d" "$id" "$c4" --dir in --depth 5 --budget 2 --json >"$T/chain2.json"
is "$(jget "$T/chain2.json" "j['truncated'], len(j['edges'])")" "True 2" "the edge budget truncates"
"$NX" deps --data "$T/d" "$id" "$c4" --dir in --depth 1 --json >"$T/chain3.json"
is "$(jget "$T/chain3.json" "' '.join(sorted(n['name'] for n in j['nodes']))")" "c1 c3 c4" \
	"--depth 1 stops after one hop"
"$NX" deps --data "$T/d" "$id" "$c4" --kinds flow --json >"$T/chain4.json"
is "$(jget "$T/chain4.json" "len(j['edges'])")" "0" "--kinds flow skips order edges"
"$NX" deps --data "$T/d" "$id" "$c4" >"$T/human.txt"
check "human output names the semaphore" grep -q "c3 .*order *R\[0\]>=1" "$T/human.txt"

# Bad arguments: a one-line error that names what was wrong, exit 2 for a
# usage error and 1 for a trace that is not there; the trace is unchanged.
n0=$("$NX" sql --data "$T/d" "$id" "SELECT count(*) FROM edges")
bad_args() {	# EXIT STATUS, PATTERN, ARGS...: the error and how it exits
	want=$1 pat=$2
	shift 2
	"$NX" "$@" >"$T/bad.out" 2>"$T/bad.err"
	is "$?" "$want" "$*: exits $want"
	is "$(wc -l <"$T/bad.err" | tr -d ' ')" 1 "$*: one line"
	check "$*: says $pat" grep -q -- "$pat" "$T/bad.err"
}
bad_args 2 'bad --kinds "flow,sideways" (kinds joined with commas: flow, order, anti, output)' \
	deps --data "$T/d" "$id" "$c4" --kinds flow,sideways
bad_args 2 'bad --dir "up" (in, out, both)' deps --data "$T/d" "$id" "$c4" --dir up
bad_args 2 'bad --depth "1001" (0 to 1000)' deps --data "$T/d" "$id" "$c4" --depth 1001
bad_args 2 'bad --depth "-1" (0 to 1000)' deps --data "$T/d" "$id" "$c4" --depth -1
bad_args 2 'bad --budget "0" (1 to 10000000)' deps --data "$T/d" "$id" "$c4" --budget 0
bad_args 2 'bad event id "0" (events are numbered from 1)' deps --data "$T/d" "$id" 0
bad_args 2 'bad event id "c4"' deps --data "$T/d" "$id" c4
bad_args 1 'no event 999999 in this trace' deps --data "$T/d" "$id" 999999
bad_args 1 "no trace 0123456789abcdef in $T/d (neuron-explorer info lists the traces)" \
	deps --data "$T/d" 0123456789abcdef 1
bad_args 1 '"../x" is not a trace id' deps --data "$T/d" ../x 1
bad_args 2 'bad --kinds "" (kinds joined' critical-path --data "$T/d" "$id" --kinds ""
bad_args 2 'bad --start "soon" (a whole number)' critical-path --data "$T/d" "$id" --start soon
bad_args 2 'bad --event "0" (1 or more)' critical-path --data "$T/d" "$id" --event 0
bad_args 1 "no trace 0123456789abcdef in $T/d" critical-path --data "$T/d" 0123456789abcdef
is "$("$NX" sql --data "$T/d" "$id" "SELECT count(*) FROM edges")" "$n0" "the trace is unchanged"

# Equal start times on one unit: ids run longest first, processing goes by
# end time, then file order; another unit's event falls in between.
id=$(ingest_id "$DD/ties.json")
ok $? "ties.json ingests"
is "$(edges "$id")" \
	"inner2>other:output:E;inner>inner2:output:E;other>outer:output:E;outer>later:flow:E" \
	"nested slices with one start time on one unit, in order of their ends"

# More units with access sets than the per-unit merge takes (256): SQLite
# sorts them instead, with the same rules.  Unit i writes M[i:i+1] and
# reads M[i-1:i] after unit i - 1 wrote it.
"${PYTHON3:-python3}" - "$T/many.json" <<'PY'
import json, sys
ev = []
for i in range(300):
    a = {"writes": ["M[%d:%d]" % (i, i + 1)]}
    if i:
        a["reads"] = ["M[%d:%d]" % (i - 1, i)]
    ev.append({"name": "e%d" % i, "ph": "X", "ts": 10 * i, "dur": 5, "pid": 1, "tid": i + 1,
               "args": a})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
id=$(ingest_id "$T/many.json")
ok $? "300 units with access sets ingest"
is "$(edges "$id")" "$("${PYTHON3:-python3}" -c "
print(';'.join(sorted('e%d>e%d:flow:M[%d:%d]' % (i - 1, i, i - 1, i) for i in range(1, 300))))")" \
	"each unit's read depends on the previous unit's write"

# Malformed strings: counted, first example reported, the trace still ingests.
id=$(ingest_id "$DD/bad.json")
ok $? "bad.json still ingests"
is "$(jget "$T/ingest.json" "j['bad_access']")" "5" "five malformed strings counted"
"$NX" info --data "$T/d" "$id" >"$T/info.txt"
check "info says so too" grep -q "^  5 malformed access strings or waits" "$T/info.txt"
is "$(jget "$T/ingest.json" "j['first_bad_access']")" 'event 2: bad access string "A[16:8]"' \
	"the first example is reported"
is "$(edges "$id")" "good_w>bad_r:flow:A[0:4]" "the well-formed strings of a bad event still count"
is "$(jget "$T/ingest.json" "j['slices']")" "5" "every event is kept"
# a semaphore name with any white space (here a CR) is bad in a signal as in a wait,
# not a signal that nothing can wait on
printf '{"traceEvents":[
{"name":"sig","ph":"X","ts":0,"dur":5,"pid":1,"tid":1,"args":{"signals":["T\\r","U"]}},
{"name":"wt","ph":"X","ts":10,"dur":5,"pid":1,"tid":2,"args":{"waits":["T\\r>=1","U>=1"]}}]}' \
	>"$T/ws.json"
id=$(ingest_id "$T/ws.json")
is "$(jget "$T/ingest.json" "j['bad_access'], ascii(j['first_bad_access'])")" \
	"2 'event 1: bad signal \"T\r\"'" "a CR in a signal's name: bad, like in a wait's"
is "$(edges "$id")" "sig>wt:order:U>=1" "the good semaphore still orders"

"$NX" deps --help | grep -q "usage: neuron-explorer deps"
ok $? "deps --help"
"$NX" critical-path --help | grep -q "usage: neuron-explorer critical-path"
ok $? "critical-path --help"
done_testing
