#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/perfetto/convert.sh - `convert` to .pftrace and Chrome JSON: the
# output ingests back with our own readers and gives the same counts
# (slices, instants, counters, flow edges).  Perfetto's trace_processor is
# not packaged for Debian, so the check against upstream is the golden test
# of the reader (tests/perfetto/golden.sh) plus this round trip.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
SMALL="$NX_SRCDIR/tests/data/perfetto/small.pftrace"

"$NX" convert --help >/dev/null; ok $? "convert --help exits 0"
"$NX" convert "$SMALL" "$T/x.weird" 2>"$T/e.txt"; is $? 2 "unknown output extension exits 2"
grep -q -- "--to" "$T/e.txt"; ok $? "and says to use --to"
"$NX" convert "$NX_SRCDIR/tests/lib.sh" "$T/x.pftrace" 2>"$T/e.txt"; is $? 1 "not a trace exits 1"
grep -q "not a trace" "$T/e.txt"; ok $? "and says so"

counts() { jget "$1" "j['slices'], j['instants'], j['counters'], j['flows']['flow']"; }

# roundtrip NAME IN: IN -> .pftrace and .json, both ingest to IN's counts
roundtrip() {
	"$NX" ingest --data "$T/d" --json "$2" >"$T/orig.json"
	ok $? "$1: original ingests"
	want=$(counts "$T/orig.json")
	for to in pftrace json; do
		"$NX" convert "$2" "$T/out.$to" 2>"$T/e.txt"
		ok $? "$1: convert to .$to"
		sed 's/^/#   /' "$T/e.txt"
		"$NX" ingest --data "$T/d" --json "$T/out.$to" >"$T/back.json" 2>"$T/e.txt"
		ok $? "$1: .$to ingests back"
		if [ $to = pftrace ]; then
			is "$(counts "$T/back.json")" "$want" "$1: .$to round trip keeps slices/instants/counters/flows"
		else	# Chrome JSON flows bind to slices only: edges to instants are lost
			is "$(jget "$T/back.json" "j['slices'], j['instants'], j['counters']")" \
			   "$(jget "$T/orig.json" "j['slices'], j['instants'], j['counters']")" \
			   "$1: .json round trip keeps slices/instants/counters"
			jget "$T/back.json" "exit(0 if j['flows']['flow'] <= $(jget "$T/orig.json" "j['flows']['flow']") else 1)"
			ok $? "$1: .json keeps flows between slices ($(jget "$T/back.json" "j['flows']['flow']"))"
		fi
		is "$(jget "$T/back.json" "j['start_ns'], j['end_ns']")" \
		   "$(jget "$T/orig.json" "j['start_ns'], j['end_ns']")" "$1: .$to keeps the time span"
	done
	"$NX" convert --to pftrace "$2" - >"$T/stdout.pftrace"; ok $? "$1: --to pftrace to stdout"
	cmp -s "$T/stdout.pftrace" "$T/out.pftrace"; ok $? "$1: same bytes as the file output"
}

roundtrip small "$SMALL"
"$NX" convert "$SMALL" "$T/s.ntff" && roundtrip small.ntff "$T/s.ntff"
db="$T/d/traces/$(jget "$T/back.json" "j['id']").db"
is "$("$NX" sql "$db" "SELECT json_extract(args, '$.size') FROM events WHERE args LIKE '%size%' LIMIT 1")" 5 \
   "args survive the round trip"

# Our own additions come back: every edge of every kind with its label
# (nx.deps), the units' kinds (the track description), the args without
# nx.* keys, and no second copy of what the analysis would derive again.
edges_of() {	# edges_of DATA ID: kind, label, both ends by name and time, sorted
	"$NX" sql --data "$1" "$2" "SELECT e.kind || ' ' || coalesce(e.label, '-') || ' ' ||
	  sa.s || '@' || a.ts || '>' || sb.s || '@' || b.ts FROM edges e
	  JOIN events a ON a.id = e.src JOIN strings sa ON sa.id = a.name
	  JOIN events b ON b.id = e.dst JOIN strings sb ON sb.id = b.name ORDER BY 1"
}
units_of() { "$NX" sql --data "$1" "$2" "SELECT name || ':' || kind FROM units ORDER BY 1" | paste -sd ' ' -; }
for f in rules.json cuda-sync.json nested.json; do
	rm -rf "$T/d1" "$T/d2"
	a=$("$NX" ingest --data "$T/d1" --json "$NX_SRCDIR/tests/data/deps/$f" | jget /dev/stdin "j['id']")
	"$NX" convert "$NX_SRCDIR/tests/data/deps/$f" "$T/deps.pftrace"
	b=$("$NX" ingest --data "$T/d2" --json "$T/deps.pftrace" | jget /dev/stdin "j['id']")
	ok $? "$f: converted and ingested back"
	edges_of "$T/d1" "$a" >"$T/e1"
	edges_of "$T/d2" "$b" >"$T/e2"
	cmp -s "$T/e1" "$T/e2"; ok $? "$f: the same $(wc -l <"$T/e1") edges, kinds and labels"
	diff "$T/e1" "$T/e2" | head -5 | sed 's/^/#   /'
	is "$(units_of "$T/d2" "$b")" "$(units_of "$T/d1" "$a")" "$f: the same units and unit kinds"
done
is "$("$NX" sql --data "$T/d2" "$b" "SELECT count(*) FROM events WHERE args LIKE '%nx.%'")" 0 \
   "no nx.* annotation is kept as an arg"
is "$("$NX" sql --data "$T/d2" "$b" "SELECT count(*) FROM events WHERE args IS NOT NULL")" 0 \
   "events whose only annotations were ours have no args"
grep -q "neuron-explorer unit: stream" "$T/deps.pftrace"; ok $? "a stream's track says so in its description"

# Epoch-clock times (1.6e18 ns, past a double's integers) keep every
# nanosecond through both exports: the JSON one writes the microseconds as
# exact decimals ("1623142623531272.128"), not through a double (.2 before).
times_of() { "$NX" sql --data "$1" "$2" "SELECT group_concat(ts || '+' || dur, ' ') FROM events"; }
EPOCH="$NX_SRCDIR/tests/browser/data/epoch.json"
rm -rf "$T/d1"
a=$("$NX" ingest --data "$T/d1" --json "$EPOCH" | jget /dev/stdin "j['id']")
for to in json pftrace; do
	rm -rf "$T/d2"
	"$NX" convert "$EPOCH" "$T/epoch.$to"
	b=$("$NX" ingest --data "$T/d2" --json "$T/epoch.$to" | jget /dev/stdin "j['id']")
	is "$(times_of "$T/d2" "$b")" "$(times_of "$T/d1" "$a")" "epoch.json via .$to: every ns of every start and duration"
done
grep -q '"ts":1623142623531272.128,"dur":0.256' "$T/epoch.json"; ok $? "written as decimals"

# Lanes named by strings (Kineto's "Traces" / "PyTorch Profiler", 2021's
# "stream 7") stay apart in the JSON export: their keys cast to pid/tid 0
# and merged before.
cat >"$T/named.json" <<'JSON'
{"traceEvents": [
 {"name": "span", "ph": "X", "ts": 0, "dur": 100, "pid": "Traces", "tid": "PyTorch Profiler"},
 {"name": "k1", "ph": "X", "ts": 10, "dur": 5, "pid": 0, "tid": "stream 7", "cat": "Kernel"},
 {"name": "k2", "ph": "X", "ts": 20, "dur": 5, "pid": 0, "tid": "stream 7", "cat": "Kernel"},
 {"name": "op", "ph": "X", "ts": 5, "dur": 30, "pid": "Spans", "tid": "lane"}
]}
JSON
rm -rf "$T/d1" "$T/d2"
a=$("$NX" ingest --data "$T/d1" --json "$T/named.json" | jget /dev/stdin "j['id']")
"$NX" convert "$T/named.json" "$T/named.out.json"
b=$("$NX" ingest --data "$T/d2" --json "$T/named.out.json" | jget /dev/stdin "j['id']")
per_unit() { "$NX" sql --data "$1" "$2" "SELECT u.name || ':' || count(*) || ':' || max(v.depth) FROM events v
  JOIN units u ON u.id = v.unit GROUP BY u.id ORDER BY 1" | paste -sd ' ' -; }
is "$(per_unit "$T/d2" "$b")" "$(per_unit "$T/d1" "$a")" "named lanes keep their own units through .json"

# A failed write exits 1 with the reason and removes only a half-written
# regular file: an OUT that is a device (here a link to /dev/full, so that
# a regression removes the link, not the device) is left alone.
if [ -c /dev/full ]; then
	for to in json pftrace ntff; do
		ln -sf /dev/full "$T/full.$to"
		"$NX" convert --to $to "$NX_SRCDIR/tests/data/deps/nested.json" "$T/full.$to" 2>"$T/e.txt"
		is $? 1 "--to $to onto a full device exits 1"
		grep -q "No space left on device" "$T/e.txt"; ok $? "saying why"
		test -L "$T/full.$to"; ok $? "and leaves the device's link alone"
	done
else
	for n in 1 2 3 4 5 6 7 8 9; do skip "no /dev/full"; done
fi

# Async slices that overlap without nesting, four deep: a Perfetto track's
# slices must nest, so the export spreads them over "(overlaps)" tracks, as
# many as needed (a third level was dropped before), and our reader puts
# them back on their one unit.
{
	printf '{"traceEvents": [\n'
	for i in 0 1 2 3 4 5; do
		printf '{"name":"req","cat":"net","ph":"b","id":%d,"pid":1,"tid":1,"ts":%d},\n' $i $((i * 10))
		printf '{"name":"req","cat":"net","ph":"e","id":%d,"pid":1,"tid":1,"ts":%d},\n' $i $((i * 10 + 35))
	done
	printf '{"name":"tick","ph":"X","pid":1,"tid":1,"ts":0,"dur":1}\n]}\n'
} >"$T/overlaps.json"
rm -rf "$T/d1" "$T/d2"
a=$("$NX" ingest --data "$T/d1" --json "$T/overlaps.json" | jget /dev/stdin "j['id']")
"$NX" convert "$T/overlaps.json" "$T/overlaps.pftrace"
b=$("$NX" ingest --data "$T/d2" --json "$T/overlaps.pftrace" | jget /dev/stdin "j['id']")
ok $? "overlapping async slices: converted and ingested back"
slices_of() { "$NX" sql --data "$1" "$2" "SELECT u.name || ':' || v.ts || '+' || v.dur FROM events v
  JOIN units u ON u.id = v.unit WHERE v.kind = 0 ORDER BY 1" | paste -sd ' ' -; }
is "$(slices_of "$T/d2" "$b")" "$(slices_of "$T/d1" "$a")" "every slice back on its unit, none dropped"
is "$(units_of "$T/d2" "$b")" "$(units_of "$T/d1" "$a")" "and no unit more"

# Names are bytes: one that is not UTF-8 (a thread's and an event's here)
# converts to JSON and to Perfetto with U+FFFD for the bad byte, and info
# lists the unit (the JSON export failed on it, "write error").
printf '{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"w\377"}},{"ph":"X","name":"a\377b","pid":1,"tid":1,"ts":1,"dur":2}]}' >"$T/bad-utf8.json"
"$NX" convert "$T/bad-utf8.json" "$T/bad-utf8-out.json" 2>"$T/bu.err"
ok $? "a name that is not UTF-8: converts to JSON"
is "$(jget "$T/bad-utf8-out.json" "ascii(sorted(e['name'] if e['ph'] == 'X' else e['args']['name'] for e in j['traceEvents'] if e['ph'] == 'X' or e['name'] == 'thread_name'))")" \
	"['a\ufffdb', 'w\ufffd']" "the bad byte as U+FFFD, in the event's and the thread's name"
"$NX" convert "$T/bad-utf8.json" "$T/bad-utf8-out.pftrace" 2>"$T/bu.err"
ok $? "and to Perfetto"
rm -rf "$T/d3"
c=$("$NX" ingest --data "$T/d3" --json "$T/bad-utf8.json" | jget /dev/stdin "j['id']")
"$NX" info --data "$T/d3" "$c" --json >"$T/bu-info.json"
is "$(jget "$T/bu-info.json" "ascii([u['name'] for u in j['units_list']])")" \
	"['w\ufffd']" "info lists the unit"

# A file whose name is not UTF-8: convert to .ntff wrote a manifest Jansson
# refused (and crashed); ingest --json left "file" out.
bn="$T/in$(printf '\376').json"
cp "$T/bad-utf8.json" "$bn"
"$NX" convert "$bn" "$T/bn.ntff" 2>"$T/bn.err"
ok $? "a file name that is not UTF-8: converts to .ntff"
"$NX" ntff cat "$T/bn.ntff" >"$T/bn-manifest.json" 2>&1
is "$(jget "$T/bn-manifest.json" "ascii(j['config']['source'].split('/')[-1])")" "'in\ufffd.json'" \
	"its manifest names the source, the bad byte as U+FFFD"
is "$("$NX" ingest --data "$T/d3" --json "$bn" | jget /dev/stdin "ascii(j['file'].split('/')[-1])")" \
	"'in\ufffd.json'" "ingest --json names the file"

if [ -n "$SHARED" ]; then
	roundtrip chrome "$SHARED/mspt_chrome_gzipped.pftrace"
	roundtrip difftest-flows "$SHARED/perfetto_difftest_flow_events_track_event.pb"
else
	skip "no ../shared/traces: Chrome round trip"
fi
done_testing
