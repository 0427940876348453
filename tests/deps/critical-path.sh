#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/critical-path.sh - the critical path of a small pipeline with
# known hops (tests/data/deps/pipeline.json: load -> compute1 -> compute2 ->
# store through buffers X, Y, W on three in-order GPU streams), the
# program-order edges derived at query time, a hop that overlaps its
# predecessor, and program order among nested slices on a host thread.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

id=$(ingest_id "$DD/pipeline.json")
ok $? "pipeline.json ingests"
"$NX" critical-path --data "$T/d" "$id" --json >"$T/cp.json"
ok $? "critical-path --json"
is "$(jget "$T/cp.json" "' '.join('%s/%s/%s/%d/%d' % (h['name'], h['kind'], h['label'], h['wait_ns'], h['work_ns']) for h in j['hops'])")" \
	"load/None/None/0/10000 compute1/flow/X[0:100]/2000/20000 compute2/flow/Y[0:100]/3000/10000 store/flow/W/5000/10000" \
	"hops, edge kinds, waiting and working time"
is "$(jget "$T/cp.json" "j['total_ns'], j['wait_ns'], j['work_ns'], j['truncated']")" \
	"60000 10000 50000 False" "totals"

# Ending at a chosen event, and within a window that cuts the first hop off.
c2=$(eid "$id" compute2)
"$NX" critical-path --data "$T/d" "$id" --event "$c2" --json >"$T/cp2.json"
is "$(jget "$T/cp2.json" "' '.join(h['name'] for h in j['hops'])")" "load compute1 compute2" \
	"--event ends the path at that event"
"$NX" critical-path --data "$T/d" "$id" --start 11000 --end 46000 --json >"$T/cp3.json"
is "$(jget "$T/cp3.json" "' '.join(h['name'] for h in j['hops'])")" "compute1 compute2" \
	"a window picks the last event ending in it and stops at its start"
"$NX" critical-path --data "$T/d" "$id" --kinds order --json >"$T/cp4.json"
is "$(jget "$T/cp4.json" "' '.join('%s/%s' % (h['name'], h['label']) for h in j['hops'])")" \
	"load/None store/program order" "order only: program order on the dma stream"
is "$(jget "$T/cp4.json" "sorted(j['kinds'])")" "['order']" "and only order in its kinds"

# Program order is derived at query time on in-order units.
st=$(eid "$id" store)
"$NX" deps --data "$T/d" "$id" "$st" --dir in --kinds order --json >"$T/po.json"
is "$(jget "$T/po.json" "[(e['kind'], e['label']) for e in j['edges']]")" \
	"[('order', 'program order')]" "store follows load on its stream"
"$NX" critical-path --data "$T/d" "$id" >"$T/cp.txt"
check "human output has the totals" grep -q "total 60000 ns: 10000 waiting, 50000 working over 4 hops" "$T/cp.txt"

# The path's time by unit: load and store on the dma stream, compute1 on pe,
# compute2 on act; the largest working share first (dma and pe both work
# 20 us: the one that waited longer first), waiting on the unit that waited.
is "$(jget "$T/cp.json" "' '.join('%d/%d/%d' % (u['hops'], u['work_ns'], u['wait_ns']) for u in j['units'])")" \
	"2/20000/5000 1/20000/2000 1/10000/3000" "units: the hops' work and wait by unit"
is "$(jget "$T/cp.json" "sorted((k, v['hops'], v['work_ns'], v['wait_ns']) for k, v in j['kinds'].items())")" \
	"[('flow', 3, 40000, 10000)]" "kinds: three flow hops, what they waited for"
"$NX" critical-path --data "$T/d" "$id" >"$T/cp.txt"
check "the text form has them" grep -qE "^flow +3 +40000 +10000$" "$T/cp.txt"
awk '/^ *unit +name/ { on = 1; next } /^via / { on = 0 } on && NF { print $2, $3, $4, $5 }' \
	"$T/cp.txt" >"$T/units.txt"
is "$(tr '\n' ' ' <"$T/units.txt")" "dma 2 20000 5000 pe 1 20000 2000 act 1 10000 3000 " \
	"the text form ends with the time by unit, named"

# --max-hops lists the latest hops; the totals still cover the whole path.
# --budget stops the walk there (truncated), the totals then the hops walked.
"$NX" critical-path --data "$T/d" "$id" --max-hops 2 --json >"$T/cp-max.json"
is "$(jget "$T/cp-max.json" "' '.join('%s/%s' % (h['name'], h['kind']) for h in j['hops']), j['hops_total'], j['truncated'], j['total_ns'], sum(u['hops'] for u in j['units'])")" \
	"compute2/flow store/flow 4 False 60000 4" \
	"--max-hops 2: the last two hops listed (the first with the edge into it), the totals whole"
"$NX" critical-path --data "$T/d" "$id" --budget 2 --json >"$T/cp-budget.json"
is "$(jget "$T/cp-budget.json" "' '.join(h['name'] for h in j['hops']), j['hops_total'], j['truncated'], j['total_ns'], sum(u['hops'] for u in j['units'])")" \
	"compute2 store 2 True 25000 2" "--budget 2: the walk stops after two hops, truncated"
"$NX" critical-path --data "$T/d" "$id" --max-hops 2 >"$T/cp-max.txt"
check "the text form says how many are listed" \
	grep -q "over 4 hops, the last 2 listed" "$T/cp-max.txt"
for bad in "--max-hops 0" "--max-hops -1" "--max-hops 100001" "--max-hops x" "--budget 0" \
	"--budget 1000001"; do
	"$NX" critical-path --data "$T/d" "$id" $bad >/dev/null 2>"$T/err"
	is "$?" 2 "$bad: usage error"
done
check "it says the range" grep -q "bad --budget \"1000001\" (1 to 1000000)" "$T/err"

# A kernel that starts before its launch call returns (overlap.json: launch
# 0-54 us, kernel 44-117 us, then copy 120-125 us on the kernel's stream):
# the kernel works only for what it adds past the launch's end, so waiting
# and working add up to the path's span instead of counting the overlap twice.
rm -rf "$T/d"
id=$(ingest_id "$DD/overlap.json")
ok $? "overlap.json ingests"
"$NX" critical-path --data "$T/d" "$id" --json >"$T/cp5.json"
is "$(jget "$T/cp5.json" "' '.join('%s/%s/%d/%d' % (h['name'], h['kind'], h['wait_ns'], h['work_ns']) for h in j['hops'])")" \
	"launch/None/0/54000 kernel/flow/0/63000 copy/order/3000/5000" \
	"an overlapping hop works only past its predecessor's end"
is "$(jget "$T/cp5.json" "j['total_ns'], j['wait_ns'] + j['work_ns'], j['hops'][1]['dur']")" \
	"125000 125000 73000" "waiting and working add up to the span; the duration is still reported"

# Nested slices on a host thread (nested.json: steps > ops > launches on
# thread "python", each launch flowing to its kernel on stream 7).  Program
# order joins siblings: the previous slice at the same depth in the same
# parent; a first child has none of its own, and the critical path takes
# its nearest ancestor's ("via" that ancestor).
rm -rf "$T/d"
id=$(ingest_id "$DD/nested.json")
ok $? "nested.json ingests"
po() {	# po EVENT DIR: the program-order neighbours of EVENT, by name
	"$NX" deps --data "$T/d" "$id" "$(eid "$id" "$1")" --dir "$2" --kinds order --depth 1 \
		--json >"$T/po.json" &&
	jget "$T/po.json" "' '.join(sorted(n['name'] for n in j['nodes'] if n['hop']))"
}
is "$(po launchB in) / $(po launchB out)" "prepB / " "a second child follows the first; the last has no successor"
is "$(po prepB in) / $(po opB in) / $(po opA in)" " / opA / " \
	"a first child has no sibling before it; its parent follows the parent's sibling"
is "$(po step2 in) / $(po step1 out) / $(po opB out)" "step1 / step2 / " \
	"top-level slices follow each other; the last op of step1 has no successor in it"
is "$(po kB in)" "kA" "kernels follow each other on their stream"
is "$("$NX" sql --data "$T/d" "$id" "SELECT kind FROM units WHERE name = 'PyTorch Profiler'")" "6" \
	"a lane named on both levels (Kineto's profiler span) is a track, not a thread"
# The whole trace: the path ends at what ends last on an engine, queue,
# stream or thread (kC), not at the profiler's span around everything.
"$NX" critical-path --data "$T/d" "$id" --json >"$T/cp6.json"
is "$(jget "$T/cp6.json" "' '.join('%s/%s/%s/%d/%d' % (h['name'], h['kind'], h['label'], h['wait_ns'], h['work_ns']) for h in j['hops'])")" \
	"launchA/None/None/0/20000 opA/order/last child/0/10000 prepB/order/program order via opB/0/20000 launchB/order/program order/0/20000 opB/order/last child/0/20000 step1/order/last child/0/10000 launchC/order/program order via step2/25000/5000 kC/flow/launch:3/2000/168000" \
	"the last kernel waits for its launch, which the thread reached after step1, which returned after its ops"
is "$(jget "$T/cp6.json" "j['total_ns'], j['wait_ns'], j['work_ns']")" "300000 27000 273000" \
	"the gaps between a slice's children are its work: waiting is only before launchC and kC"
# A window from 50 us: the walk stops before opA; the path starts at prepB
# (45 us), not at step1's start, whose earlier children were not walked.
"$NX" critical-path --data "$T/d" "$id" --start 50000 --json >"$T/cp6w.json"
is "$(jget "$T/cp6w.json" "' '.join('%s/%d/%d' % (h['name'], h['wait_ns'], h['work_ns']) for h in j['hops']), j['total_ns']")" \
	"prepB/0/5000 launchB/0/20000 opB/0/20000 step1/0/10000 launchC/25000/5000 kC/2000/168000 255000" \
	"a window that cuts the walk inside step1: the path starts at its first hop"
"$NX" critical-path --data "$T/d" "$id" --event "$(eid "$id" kB)" --json >"$T/cp7.json"
is "$(jget "$T/cp7.json" "' '.join('%s/%s' % (h['name'], h['label']) for h in j['hops'])")" \
	"launchA/None opA/last child prepB/program order via opB launchB/program order kB/launch:2" \
	"from a kernel back along its launch, its sibling, the enclosing op's sibling and its last child"
# The sibling after, as chains see it (siblings.json: P1 > a b c(c1) d e,
# then P2 > f; e starts in P1 and ends after it): most often the next id,
# else the next slice at that depth that starts in the parent, none when
# that one ends after the parent.
sid=$id
id=$(ingest_id "$DD/siblings.json")
ok $? "siblings.json ingests"
is "$(po a out) / $(po b out) / $(po c out) / $(po P1 out)" "b / c / d / P2" \
	"the next sibling: the next id, or past a child (c1) or the children (P1)"
is "$(po d out) / $(po e in) / $(po f in) / $(po P2 in)" " /  /  / P1" \
	"none when it ends after the parent (e, which has none either); first children have none before"
id=$sid

# The same trace as Perfetto (thread and stream tracks): the same answers.
"$NX" convert "$DD/nested.json" "$T/nested.pftrace"
ok $? "nested.json converts to Perfetto"
rm -rf "$T/d"
id=$(ingest_id "$T/nested.pftrace")
ok $? "and ingests back"
"$NX" critical-path --data "$T/d" "$id" --event "$(eid "$id" kB)" --json >"$T/cp8.json"
is "$(jget "$T/cp8.json" "' '.join('%s/%s' % (h['name'], h['label']) for h in j['hops'])")" \
	"launchA/None opA/last child prepB/program order via opB launchB/program order kB/launch:2" \
	"the same path from the Perfetto trace"
is "$(po launchB in) / $(po opB in)" "prepB / opA" "and the same siblings"

# An event whose name is not UTF-8 is still a node and a hop (its bad byte
# shown as U+FFFD), not dropped from the answer.
printf '{"traceEvents":[{"ph":"X","name":"a\377b","pid":1,"tid":1,"ts":1,"dur":2,"args":{"writes":["B"]}},{"ph":"X","name":"c","pid":1,"tid":1,"ts":5,"dur":2,"args":{"reads":["B"]}}]}' >"$T/bad-utf8.json"
bid=$(ingest_id "$T/bad-utf8.json")
ok $? "a trace with a name that is not UTF-8 ingests"
"$NX" deps --data "$T/d" "$bid" 2 --json >"$T/bu.json"
is "$(jget "$T/bu.json" "ascii([n['name'] for n in j['nodes']])")" "['c', 'a\ufffdb']" \
	"a chain lists it, the bad byte as U+FFFD"
"$NX" critical-path --data "$T/d" "$bid" --json >"$T/bu2.json"
is "$(jget "$T/bu2.json" "ascii([h['name'] for h in j['hops']])")" "['a\ufffdb', 'c']" \
	"and so does the critical path"

# The store's direct reads and SQL (NX_DEPS_SQL=1, what a damaged store falls
# back to) give the same answers: every fixture, whole paths, paths ending at
# each event, a window, chains both ways.
agree() { # agree ARGS...: the same JSON answer both ways
	"$NX" "$@" >"$T/a1.json" 2>&1
	NX_DEPS_SQL=1 "$NX" "$@" >"$T/a2.json" 2>&1
	if grep -q '"hops"\|"nodes"' "$T/a1.json" && cmp -s "$T/a1.json" "$T/a2.json"; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		echo "# differ: $*"
	fi
}
rm -rf "$T/d"
same=0 differ=0
for f in "$DD"/*.json "$T/nested.pftrace"; do
	fid=$(ingest_id "$f") || continue
	agree critical-path --data "$T/d" "$fid" --json
	agree critical-path --data "$T/d" "$fid" --kinds flow,order --json
	agree critical-path --data "$T/d" "$fid" --start 1000 --end 60000 --json
	for e in $("$NX" sql "$T/d/traces/$fid.db" "SELECT id FROM events ORDER BY id LIMIT 40"); do
		agree critical-path --data "$T/d" "$fid" --event "$e" --json
		agree deps --data "$T/d" "$fid" "$e" --depth 4 --json
	done
done
# and a synthetic engine trace: thousands of hops over stored edges of every kind
GEN=${NX_BUILDDIR:-$(pwd)}/tests/deps-gen
if [ -x "$GEN" ] && "$GEN" -n 20000 -s 3 >"$T/gen.json" && fid=$(ingest_id "$T/gen.json"); then
	agree critical-path --data "$T/d" "$fid" --json
	hops=$(jget "$T/a1.json" "j['hops_total']")
	check "the synthetic trace's path walks thousands of hops ($hops)" test "${hops:-0}" -gt 2000
	agree critical-path --data "$T/d" "$fid" --kinds flow,anti --json
	agree critical-path --data "$T/d" "$fid" --max-hops 50 --budget 3000 --json
	for e in 5000 9999 12345 19000; do
		agree critical-path --data "$T/d" "$fid" --event "$e" --json
		agree deps --data "$T/d" "$fid" "$e" --depth 3 --json
		agree deps --data "$T/d" "$fid" "$e" --dir out --kinds flow,anti,output --depth 5 \
			--budget 3000 --json
	done
	# the API's default chain: cut by its budget, events and labels over the whole trace
	agree deps --data "$T/d" "$fid" 10000 --depth 8 --budget 10000 --json
	check "the default chain is cut by its budget" grep -q '"truncated": true' "$T/a1.json"
fi
is "$differ" 0 "direct reads and SQL give the same answers"
check "at least 200 answers compared ($same)" test "$same" -ge 200
done_testing
