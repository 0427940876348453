#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/few-flows.sh - a trace whose explicit flows touch few of its
# events (6000 slices on three threads, 40 launch-style flows between
# them): the store keeps the ends of those events only while finishing,
# and each block's crit blob must still name, for every event with edges
# in, the source that ends last and how much later the event ends
# (decoded here from the stored bytes against the events table), and the
# critical path must follow the flows.  A second, tiny trace checks that the
# walk does not trust a crit entry whose source does not end as recorded.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

/usr/bin/python3 - "$T/few.json" <<'EOF'
import json, random, sys
r = random.Random(7)
ev = []
for tid in (1, 2, 3):
    ev.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
               "args": {"name": "t%d" % tid}})
    ts = 0
    for i in range(2000):
        ts += r.randint(1, 5)
        dur = r.randint(1, 9)
        ev.append({"ph": "X", "name": "s%d_%d" % (tid, i), "pid": 1, "tid": tid,
                   "ts": ts, "dur": dur})
        ts += dur
# flows from a slice on thread 1 (or 2) to a later one on thread 3 (or 2),
# bound to the enclosing slices (no event gets two: the second trace below has one)
slices = {t: [e for e in ev if e["ph"] == "X" and e["tid"] == t] for t in (1, 2, 3)}
for k in range(40):
    a, b = (1, 3) if k % 3 else (2, 3) if k % 2 else (1, 2)
    s = slices[a][r.randrange(0, 1500)]
    later = [e for e in slices[b] if e["ts"] > s["ts"] + s["dur"]]
    d = later[(k // 4) % 3 if k % 5 == 0 else r.randrange(0, min(50, len(later)))]
    ev.append({"ph": "s", "id": 100 + k, "pid": 1, "tid": a, "ts": s["ts"], "name": "f",
               "cat": "launch"})
    ev.append({"ph": "f", "id": 100 + k, "pid": 1, "tid": b, "ts": d["ts"], "name": "f",
               "cat": "launch", "bp": "e"})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
EOF
ok $? "trace written"
id=$(ingest_id "$T/few.json")
ok $? "it ingests"
is "$(jget "$T/ingest.json" "j['slices'], j['flows']['flow']")" "6000 40" "6000 slices, 40 flow edges"

# Event ids per edge block, as this build stores them.
BLOCK=$(sed -n 's/^#define ST_EDGE_BLOCK \([0-9][0-9]*\).*/\1/p' "$NX_SRCDIR/store/st-edges.h")
export BLOCK
[ -n "$BLOCK" ]; ok $? "the edge block size ($BLOCK) read from store/st-edges.h"

# Varints of the crit blobs (store/st-edges.h), for the checks below.
cat >"$T/varint.py" <<'EOF'
def uv(b, i):
    """The uvarint at b[i:], and the index after it."""
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
def put(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7f | 0x80); v >>= 7
    out.append(v)
    return bytes(out)
def unzig(v):
    return (v >> 1) ^ -(v & 1)
def zig(v):
    return v << 1 if v >= 0 else ((-v) << 1) - 1
EOF

# Decode every crit blob's first part and compare it with the edges and ends
# (events and edges are the store's virtual tables: read through `sql`).
db="$T/d/traces/$id.db"
"$NX" sql "$db" "SELECT id, ts + dur FROM events" >"$T/ends.txt" &&
	"$NX" sql "$db" "SELECT src, dst FROM edges" >"$T/edges.txt"
ok $? "ends and edges listed"
PYTHONPATH="$T" /usr/bin/python3 - "$db" "$T/ends.txt" "$T/edges.txt" >"$T/crit.txt" <<'EOF'
import os, sqlite3, sys
from varint import uv, unzig
db = sqlite3.connect(sys.argv[1])
rows = lambda f: [tuple(int(x) for x in l.split("|")) for l in open(f) if l.strip()]
end = dict(rows(sys.argv[2]))
best = {}
for src, dst in rows(sys.argv[3]):
    b = best.get(dst)
    if b is None or end[src] > end[b] or (end[src] == end[b] and src > b):
        best[dst] = src
got, blobs = {}, 0
for bid, crit in db.execute("SELECT id, crit FROM edge_crit"):
    blobs += 1
    n, i = uv(crit, 0)
    stop, ev = i + n, bid * int(os.environ['BLOCK'])
    while i < stop:
        v, i = uv(crit, i)
        if v:
            lag, i = uv(crit, i)
            got[ev] = (ev + unzig((v - 1) >> 3), unzig(lag))
        ev += 1
want = {d: (s, end[d] - end[s]) for d, s in best.items()}
print(blobs > 0, len(want), got == want)
EOF
is "$(cat "$T/crit.txt")" "True 40 True" \
	"crit names each flow's latest-ending source and its lag, from the stored bytes" ||
	cat "$T/crit.txt" >&2

# A crit blob that decodes but lies: D has flows in from A (ends at 10 us)
# and B (ends at 20 us); its entry is rewritten to name A, ending after B.
# The walk reads a recorded source before taking it; when it does not end
# as recorded, the hop reads every edge into the event and takes B.
cat >"$T/two.json" <<'EOF'
{"traceEvents": [
 {"ph": "X", "name": "A", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
 {"ph": "X", "name": "B", "pid": 1, "tid": 2, "ts": 5, "dur": 15},
 {"ph": "X", "name": "D", "pid": 1, "tid": 3, "ts": 30, "dur": 5},
 {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 1, "name": "f", "cat": "launch"},
 {"ph": "f", "id": 1, "pid": 1, "tid": 3, "ts": 30, "name": "f", "cat": "launch", "bp": "e"},
 {"ph": "s", "id": 2, "pid": 1, "tid": 2, "ts": 6, "name": "f", "cat": "launch"},
 {"ph": "f", "id": 2, "pid": 1, "tid": 3, "ts": 30, "name": "f", "cat": "launch", "bp": "e"}
]}
EOF
two=$(ingest_id "$T/two.json")
ok $? "two flows into one slice: it ingests"
a=$(eid "$two" A) && b=$(eid "$two" B) && d=$(eid "$two" D)
ok $? "A, B and D found"
PYTHONPATH="$T" /usr/bin/python3 - "$T/d/traces/$two.db" "$a" "$d" <<'EOF'
import os, sqlite3, sys
from varint import uv, put, zig
db = sqlite3.connect(sys.argv[1])
a, d = int(sys.argv[2]), int(sys.argv[3])
bid = d // int(os.environ['BLOCK'])
crit = db.execute("SELECT crit FROM edge_crit WHERE id = ?", (bid,)).fetchone()[0]
n, i = uv(crit, 0)
stop, ev, first, done = i + n, bid * int(os.environ['BLOCK']), b"", False
while i < stop:
    v, i = uv(crit, i)
    if v:
        lag, i = uv(crit, i)
        if ev == d:	# A, ending at 21 us: 14 us before D ends
            v, lag, done = 1 + (zig(a - d) << 3 | ((v - 1) & 7)), zig(14000), True
        first += put(v) + put(lag)
    else:
        first += put(0)
    ev += 1
db.execute("UPDATE edge_crit SET crit = ? WHERE id = ?", (put(len(first)) + first + crit[stop:], bid))
db.commit()
sys.exit(0 if done else 1)
EOF
ok $? "D's crit entry rewritten to name A, ending after B"
"$NX" critical-path --data "$T/d" "$two" --event "$d" --kinds flow --json >"$T/two.json.cp"
is "$(jget "$T/two.json.cp" "[h['id'] for h in j['hops']]")" "[$b, $d]" \
	"a recorded source that does not end as recorded: the hop reads the edges and takes B"

dst=$("$NX" sql "$db" "SELECT max(dst) FROM edges")
"$NX" critical-path --data "$T/d" "$id" --event "$dst" --kinds flow --json >"$T/cp.json"
is "$(jget "$T/cp.json" "len(j['hops']) >= 2 and j['hops'][-1]['id'] == $dst and j['hops'][-1]['kind'] == 'flow'")" \
	"True" "the critical path ending at a flow's destination follows it"
done_testing
