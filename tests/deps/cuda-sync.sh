#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/cuda-sync.sh - Kineto's cuda_sync events as order edges
# (ingest/ing-json-sync.c).  tests/data/deps/cuda-sync.json, by hand: k1 on
# stream 7; stream 20 waits on stream 7 (correlation 3) before k2; k3 is
# launched on stream 7 after the wait call (correlation 5) and ends before k2
# starts, so only the correlation tells it apart; cudaStreamSynchronize on
# stream 20 and cudaDeviceSynchronize block on k2; k4 comes after both.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

id=$(ingest_id "$DD/cuda-sync.json")
ok $? "cuda-sync.json ingests"
order() {	# the order edges of trace $1 as "src>dst:label", sorted
	"$NX" sql "$T/d/traces/$1.db" "SELECT sa.s || '>' || sb.s || ':' || e.label FROM edges e
	  JOIN events a ON a.id = e.src JOIN strings sa ON sa.id = a.name
	  JOIN events b ON b.id = e.dst JOIN strings sb ON sb.id = b.name
	  WHERE e.kind = 1 ORDER BY 1" | paste -sd ';' -
}
is "$(order "$id")" \
	"k1>k2:Stream Wait Event (stream 7);k2>cudaDeviceSynchronize:Context Sync;k2>cudaStreamSynchronize:Stream Sync" \
	"the wait goes to the kernel that waited, the host syncs to the call that blocked"
is "$("$NX" sql "$T/d/traces/$id.db" "SELECT group_concat(name, ',') FROM (SELECT name FROM units ORDER BY name)")" \
	"python,stream 20,stream 20 sync,stream 7,stream 7 sync" \
	"the sync markers get a lane beside their stream's"
is "$("$NX" sql "$T/d/traces/$id.db" "SELECT max(depth) FROM events WHERE unit IN (SELECT id FROM units WHERE name LIKE 'stream _' OR name LIKE 'stream __')")" \
	"0" "so the stream's kernels do not nest under them"
is "$("$NX" sql "$T/d/traces/$id.db" "SELECT count(*) FROM edges e JOIN events b ON b.id = e.dst
  JOIN units u ON u.id = b.unit WHERE e.kind = 0 AND u.name LIKE '% sync'")" "3" \
	"the launch flows of the syncs end on the markers"
sync=$(eid "$id" cudaStreamSynchronize)
"$NX" critical-path --data "$T/d" "$id" --event "$sync" --json >"$T/cp.json"
is "$(jget "$T/cp.json" "' '.join('%s/%s' % (h['name'], h['label']) for h in j['hops'])")" \
	"cudaLaunchKernel/None k1/ac2g:1 k2/Stream Wait Event (stream 7) cudaStreamSynchronize/Stream Sync" \
	"the critical path of the sync runs through the kernels it waited for"

# Without the launch flows nothing carries correlations: the waited-for
# operation is the last one that ended in time, and a host sync's edge ends
# on its marker (no flow names the call).
rm -rf "$T/d"
grep -v '"ph": "[sf]"' "$DD/cuda-sync.json" >"$T/noflow.json"
id=$(ingest_id "$T/noflow.json")
ok $? "the same without flows ingests"
is "$(order "$id")" \
	"k2>Context Sync:Context Sync;k2>Stream Sync:Stream Sync;k3>k2:Stream Wait Event (stream 7)" \
	"by time alone"

# A real trace (HTA's simple add on an A100): waits across streams 7 and 20,
# stream and device syncs.
if [ -n "$SHARED" ]; then
	rm -rf "$T/d"
	id=$(ingest_id "$SHARED/hta_simple_add_a100.json.gz")
	ok $? "hta_simple_add_a100 ingests"
	is "$("$NX" sql "$T/d/traces/$id.db" "SELECT label || '=' || count(*) FROM edges WHERE kind = 1 GROUP BY label ORDER BY label" | paste -sd ' ' -)" \
		"Context Sync=5 Stream Sync=16 Stream Wait Event (stream 20)=2 Stream Wait Event (stream 7)=2" \
		"its synchronisations as order edges"
	is "$("$NX" sql "$T/d/traces/$id.db" "SELECT substr(sa.s, 1, 21) || '>' || substr(sb.s, 1, 40) FROM edges e
	  JOIN events a ON a.id = e.src JOIN strings sa ON sa.id = a.name
	  JOIN events b ON b.id = e.dst JOIN strings sb ON sb.id = b.name
	  WHERE e.label = 'Stream Wait Event (stream 20)' ORDER BY b.ts LIMIT 1")" \
		"void fft2d_c2r_32x32<>void at::native::elementwise_kernel<128," \
		"stream 7 waits for stream 20's inverse FFT before its next kernel"
else
	for n in 1 2 3; do skip "no ../shared/traces (fresh clone)"; done
fi
done_testing
