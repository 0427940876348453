#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/shared.sh - upload the real traces of ../shared/traces (and a
# torch 1.13 profiler trace written now, when torch imports) and read them
# back: status, counts against what Python's json module finds in the file,
# search totals, and a timeline of every unit.  Readers that are not in this
# build ("not supported") are skipped, not failed.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
CHK="$PY $NX_SRCDIR/tests/server/check.py"
srv_start "$T/data" --workers 2
ok $? "server starts"

try() { # FILE: upload with ?wait=1; sets TID, returns 0 ready / 1 failed / 2 unsupported
	code=$(curl -s -o "$T/t.json" -w '%{http_code}' -F "trace=@$1" "$URL/upload?wait=1")
	TID=$(jget "$T/t.json" 'j.get("id","")')
	[ "$code" = 201 ] && return 0
	if grep -qi 'not supported' "$T/t.json"; then return 2; fi
	echo "# $code $(head -c 300 "$T/t.json")"
	return 1
}

if [ -n "$SHARED" ]; then
	for f in catapult_flow.json hta_simple_add_a100.json.gz hta_amd_mi250_rocm62.json.gz \
		hta_mtia_inference.json.gz; do
		try "$SHARED/$f"
		ok $? "$f: uploaded and ready"
		is "$(req GET "/api/traces/$TID/units")" 200 "$f: units"
		n=$(jget "$T/body" 'sum(u["event_count"] for u in j["units"])')
		is "$n" "$(jget "$T/t.json" 'j["slices"] + j["instants"] + j["counters"]')" \
			"$f: unit event counts add up to the trace's"
		is "$(req GET "/api/traces/$TID/timeline?px=800")" 200 "$f: full-span timeline"
		check "$f: every unit within ~px" "$PY" -c "
import json,sys
j=json.load(open('$T/body'))
assert all(len(u.get('events', u.get('buckets', []))) <= 802 for u in j['units']), 'too many'
"
	done
	# X slices by name, counted by Python, found by search
	try "$SHARED/hta_simple_add_a100.json.gz"
	want=$("$PY" -c "
import gzip,json
ev=json.load(gzip.open('$SHARED/hta_simple_add_a100.json.gz','rt'))['traceEvents']
print(sum(1 for e in ev if e.get('ph')=='X' and 'cudaLaunchKernel' in e.get('name','')))")
	is "$(req GET "/api/traces/$TID/search?q=cudaLaunchKernel&limit=5")" 200 "search on a Kineto trace"
	is "$(jget "$T/body" 'j["total"]')" "$want" "search total = the file's cudaLaunchKernel slices"
	for f in perfetto_difftest_track_event_counters.pb mspt_chrome_gzipped.pftrace; do
		try "$SHARED/$f"
		case $? in
		0) ok 0 "$f: Perfetto trace ready"
		   is "$(req GET "/api/traces/$TID/timeline?px=500")" 200 "$f: timeline" ;;
		2) skip "$f: Perfetto reader not in this build" ;;
		*) ok 1 "$f: Perfetto upload" ;;
		esac
	done
else
	skip "no ../shared/traces (fresh clone)"
fi

# an .ntff run container made from the hand-written trace
TR="$NX_SRCDIR/tests/data/server/basic.json"
if "$NX" convert --to ntff "$TR" "$T/basic.ntff" >/dev/null 2>&1; then
	try "$T/basic.ntff"
	case $? in
	0) ok 0 ".ntff upload ready"
	   check ".ntff: counts match the JSON inside" $CHK counts "$TR" "$T/t.json"
	   is "$(req GET "/api/traces/$TID")" 200 ".ntff: trace detail"
	   is "$(jget "$T/body" 'j["format"], j["manifest"] is not None')" "ntff True" \
		".ntff: format and manifest" ;;
	2) skip ".ntff reader not in this build" ;;
	*) ok 1 ".ntff upload" ;;
	esac
else
	skip "convert --to ntff not in this build"
fi

# a trace written by Debian's torch 1.13 profiler, now
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	/usr/bin/python3 - "$T/torch.json" <<'PY' 2>/dev/null
import sys, torch
from torch.profiler import profile, ProfilerActivity
a = torch.randn(64, 64)
with profile(activities=[ProfilerActivity.CPU]) as p:
    for _ in range(5):
        b = torch.mm(a, a).relu()
p.export_chrome_trace(sys.argv[1])
PY
	try "$T/torch.json"
	ok $? "torch 1.13 trace: ready"
	check "torch trace: counts match the file" $CHK counts "$T/torch.json" "$T/t.json"
	is "$(req GET "/api/traces/$TID/search?q=aten::mm")" 200 "torch: search aten::mm"
	check "torch: search matches the file" $CHK search "$T/torch.json" "$T/body" "aten::mm"
	is "$(req GET "/api/traces/$TID/timeline?px=100000")" 200 "torch: timeline"
	check "torch: timeline = the file's slices" $CHK timeline "$T/torch.json" "$T/body"
else
	skip "torch not importable by /usr/bin/python3"
fi
srv_stop
done_testing
