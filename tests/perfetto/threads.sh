#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/perfetto/threads.sh - a Perfetto trace larger than one read is
# framed on one thread and decoded by several (the framer, NX_PF_THREADS - 1
# decoders and the reader itself): whatever the count, plain or gzip'd, the
# store holds the same events, names, args and flows as the one-thread
# read, and a trace cut in a packet far into the file fails the same way.
. "$NX_SRCDIR/tests/lib.sh"
PY=${PYTHON3:-python3}

# A JSON trace of 40000 slices with args on 6 threads, counters and flow
# pairs, converted to .pftrace: several MiB, so the reader goes threaded.
"$PY" - "$T/gen.json" <<'PYEOF'
import json, random, sys
r = random.Random(7)
ev = []
for i in range(40000):
    tid = 1 + i % 6
    ts = i * 10
    ev.append({"ph": "X", "name": "op%d" % (i % 97), "cat": "c%d" % (i % 5), "pid": 1,
               "tid": tid, "ts": ts, "dur": 8,
               "args": {"i": i, "shape": [r.randrange(1, 512), 64], "tag": "t%d" % r.randrange(1000)}})
    if i % 4 == 0:
        ev.append({"ph": "C", "name": "mem", "pid": 1, "ts": ts, "args": {"bytes": r.randrange(1 << 30)}})
    if i % 10 == 0 and i + 7 < 40000:
        ev.append({"ph": "s", "id": i, "name": "f", "cat": "flow", "pid": 1, "tid": tid, "ts": ts + 1})
        ev.append({"ph": "f", "bp": "e", "id": i, "name": "f", "cat": "flow", "pid": 1,
                   "tid": 1 + (i + 7) % 6, "ts": (i + 7) * 10 + 1})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PYEOF
"$NX" convert "$T/gen.json" "$T/big.pftrace" >/dev/null
ok $? "the generated trace converts to .pftrace"
size=$(stat -c %s "$T/big.pftrace")
[ "$size" -gt $((3 << 20)) ]
ok $? "... of $size bytes: more than 3 MiB, three reads of the reader's 1 MiB"
gzip -c "$T/big.pftrace" >"$T/big.pftrace.gz"

# full DATA: the digest of tests/lib.sh, plus every name's count, times and
# args, so that packets decoded out of order or mixed up would show
id_of() { "$NX" info --data "$1" | awk 'NR == 1 { print $1 }'; }
full() {
	id=$(id_of "$1")
	{
		store_digest "$1" "$id"
		"$NX" sql --data "$1" "$id" "SELECT s.s, count(*), sum(v.ts % 1000000007),
		  sum(length(v.args)), sum(unicode(substr(v.args, 30, 1))) FROM events v
		  JOIN strings s ON s.id = v.name GROUP BY 1 ORDER BY 1"
	} >"$T/full.txt" 2>&1
	md5sum <"$T/full.txt"
}

NX_PF_THREADS=1 "$NX" ingest --data "$T/one" "$T/big.pftrace" >/dev/null
ok $? "ingested with one thread ahead (the framer, which decodes too)"
want=$(full "$T/one")
is "$(grep -c '^op[0-9]*|' "$T/full.txt")" 97 "... with its 97 slice names (the digest reads them)"
"$NX" ingest --data "$T/j" "$T/gen.json" >/dev/null
# (args differ in form through .pftrace: debug annotations, written anew)
is "$(store_digest "$T/j" "$(id_of "$T/j")")" "$(store_digest "$T/one" "$(id_of "$T/one")")" \
	"the same units, events and flows as the JSON it was converted from"
for n in 2 4; do
	for f in big.pftrace big.pftrace.gz; do
		rm -rf "$T/d"
		NX_PF_THREADS=$n "$NX" ingest --data "$T/d" "$T/$f" >/dev/null
		ok $? "$f: ingested with NX_PF_THREADS=$n"
		is "$(full "$T/d")" "$want" "$f, NX_PF_THREADS=$n: the same events, args and flows"
	done
done
# out of range: the default, not an error (as the other thread counts)
rm -rf "$T/d"
NX_PF_THREADS=99 "$NX" ingest --data "$T/d" "$T/big.pftrace" >/dev/null
ok $? "NX_PF_THREADS=99 (out of range) is ignored"
is "$(full "$T/d")" "$want" "... with the same store"

# Cut 100 bytes before the end: a packet announced longer than what is left.
# The error names the packet's offset, the same with any thread count, and
# nothing is kept.
head -c $((size - 100)) "$T/big.pftrace" >"$T/cut.pftrace"
for n in 1 4; do
	rm -rf "$T/c"
	NX_PF_THREADS=$n "$NX" ingest --data "$T/c" "$T/cut.pftrace" >/dev/null 2>"$T/err.$n"
	is "$?" 1 "a trace cut in a packet fails (NX_PF_THREADS=$n)"
done
grep -q 'truncated packet at byte [0-9]*: [0-9]* bytes announced' "$T/err.1"
ok $? "... saying where: $(head -c 160 "$T/err.1")"
is "$(cat "$T/err.4")" "$(cat "$T/err.1")" "... and the same with four threads"
done_testing
