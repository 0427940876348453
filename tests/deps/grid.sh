#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/grid.sh - the interval maps as grids (deps/deps-intervals.c: a
# buffer accessed on multiples of a granule keeps one cell per granule) and
# as trees (NX_DEPS_GRID=0) store the same edges, labels and critical-path
# blobs: for the hand-built fixtures (partial overlaps, whole buffers, reads
# of bytes written by two events, ties), a synthetic engine trace with one
# and four threads, and that trace with its offsets moved off the tiles
# partway through (a grid halving its granule, then a whole-buffer access).
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

# blobs DIR ID: a digest of everything the edges are stored in
blobs() {
	for t in "ins) FROM edge_blocks" "outs) FROM edge_outs" "crit) FROM edge_crit" \
		"texts) FROM edge_labels"; do
		"$NX" sql "$1/traces/$2.db" "SELECT quote($t ORDER BY id"
	done | md5sum
}
esum() { "$NX" sql "$1/traces/$2.db" "SELECT src, dst, kind, label FROM edges" | md5sum; }
ecount() { "$NX" sql "$1/traces/$2.db" "SELECT count(*) FROM edges"; }

# both NAME FILE [VAR=VALUE...]: FILE ingested with grids and with trees, compared
both() {
	b_name=$1
	b_file=$2
	shift 2
	b_g=$(env "$@" "$NX" ingest --data "$T/$b_name-g" --json "$b_file" 2>"$T/$b_name-g.err" |
		jget /dev/stdin "j['id']")
	b_t=$(env "$@" NX_DEPS_GRID=0 "$NX" ingest --data "$T/$b_name-t" --json "$b_file" \
		2>"$T/$b_name-t.err" | jget /dev/stdin "j['id']")
	if [ -z "$b_g" ] || [ -z "$b_t" ]; then
		ok 1 "$b_name: ingested both ways"
		return
	fi
	is "$(esum "$T/$b_name-g" "$b_g")" "$(esum "$T/$b_name-t" "$b_t")" \
		"$b_name: the same edges and labels ($(ecount "$T/$b_name-g" "$b_g") edges)"
	is "$(blobs "$T/$b_name-g" "$b_g")" "$(blobs "$T/$b_name-t" "$b_t")" \
		"$b_name: the same stored blobs"
}

for f in "$DD"/*.json; do
	both "$(basename "$f" .json)" "$f"
done

gen_trace 40000 23
both gen "$T/trace.json"
is "$(awk -v a="$(ecount "$T/gen-g" "$b_g")" 'BEGIN { print (a > 100000) }')" "1" \
	"  (more than 100000 of them)"
both gen4 "$T/trace.json" NX_DEPS_THREADS=4

# Off the tiles from event 20000 on: offsets + 256 (grids halve their
# granule to 256), a write of the whole buffer sb3 at event 30000 (its map
# becomes a tree), offsets + 8 from event 35000 on (a granule of 8 needs more
# cells than a grid may have: trees).
"${PYTHON3:-python3}" - "$T/trace.json" "$T/off.json" <<'EOF'
import json, re, sys
j = json.load(open(sys.argv[1]))
n = 0
def shift(s, d):
    return re.sub(r"\[(0x[0-9a-f]+|\d+):(0x[0-9a-f]+|\d+)\]",
                  lambda m: "[%d:%d]" % (int(m.group(1), 0) + d, int(m.group(2), 0) + d), s)
for e in j["traceEvents"]:
    a = e.get("args")
    if e.get("ph") != "X" or not a:
        continue
    n += 1
    if n < 20000:
        continue
    for k in ("reads", "writes"):
        if k in a:
            a[k] = [shift(x, 256 if n < 35000 else 8) for x in a[k]]
    if n == 30000:
        a["writes"] = a.get("writes", []) + ["sb3"]
json.dump(j, open(sys.argv[2], "w"))
EOF
ok $? "the trace moved off its tiles from event 20000 on"
both off "$T/off.json"
both off4 "$T/off.json" NX_DEPS_THREADS=4
done_testing
