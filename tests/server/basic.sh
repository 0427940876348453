#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/basic.sh - upload a hand-written trace (multipart, raw, gzip'd
# raw), read back trace/units/timeline/events/search/summary/raw and check
# them against the trace (tests/server/check.py), dedup of the same file,
# delete, healthz, metrics, static files and SIGTERM; the new store read
# back into the page cache.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
CHK="$PY $NX_SRCDIR/tests/server/check.py"
TR="$NX_SRCDIR/tests/data/server/basic.json"
mkdir -p "$T/web/sub"
echo '<!doctype html><title>nx</title>' >"$T/web/index.html"
echo 'console.log(1)' >"$T/web/sub/app.js"
echo secret >"$T/secret.txt"

srv_start "$T/data" --web "$T/web"
ok $? "server starts on port 0 and prints its URL"
is "$(req GET /healthz)" 200 "GET /healthz"
is "$(jget "$T/body" 'j["ok"]')" True "healthz body"

# multipart with name and tags, ?wait=1 -> 201 + the trace
code=$(curl -s -o "$T/t1.json" -w '%{http_code}' -F "trace=@$TR" -F name=run-a \
	-F 'tags=gpu, nightly' "$URL/upload?wait=1")
is "$code" 201 "multipart upload ?wait=1 answers 201"
ID=$(jget "$T/t1.json" 'j["id"]')
is "$(jget "$T/t1.json" 'j["status"], j["name"], j["tags"], j["format"]')" \
	"ready run-a ['gpu', 'nightly'] json" "trace object: status, name, tags, format"
check "trace counts match the file" $CHK counts "$TR" "$T/t1.json"
is "$(jget "$T/t1.json" 'j["size"]')" "$(wc -c <"$TR" | tr -d ' ')" "size is the raw size"
is "$(jget "$T/t1.json" 'j["sha256"]')" "$(sha256sum "$TR" | cut -d' ' -f1)" "sha256 of the upload"
# the store was written around the page cache (O_DIRECT); the server reads it back in
if command -v fincore >/dev/null 2>&1; then
	for _ in $(seq 50); do
		set -- $(fincore -b -n -o RES,SIZE "$T/data/traces/$ID.db" 2>/dev/null)
		[ "${1:-0}" -ge "${2:-1}" ] && break
		sleep 0.1
	done
	is "${1:-0} bytes" "${2:-?} bytes" "the new store is in the page cache after the ingest"
fi

# ?name= and ?tags= with a multipart body: the form's fields win, not joined to them
curl -s -o "$T/t1q.json" -F "trace=@$TR" -F name=form-name -F tags=form-tag \
	"$URL/upload?wait=1&name=query-name&tags=query-tag"
is "$(jget "$T/t1q.json" 'j["name"], j["tags"]')" "form-name ['form-tag']" \
	"multipart name and tags replace the query's"
curl -s -o "$T/t1r.json" -F "trace=@$TR" "$URL/upload?wait=1&name=query-name&tags=query-tag"
is "$(jget "$T/t1r.json" 'j["name"], j["tags"]')" "query-name ['query-tag']" \
	"multipart without them: the query's name and tags"
for f in t1q t1r; do
	curl -s -o /dev/null -X DELETE "$URL/api/traces/$(jget "$T/$f.json" 'j["id"]')"
done

# raw body -> 202, then poll
code=$(curl -s -o "$T/t2.json" -w '%{http_code}' --data-binary "@$TR" "$URL/upload?name=raw")
is "$code" 202 "raw upload answers 202"
is "$(jget "$T/t2.json" 'j["status"]')" queued "202 body says queued"
ID2=$(jget "$T/t2.json" 'j["id"]')
is "$(jget "$T/t2.json" 'j["url"]')" "/api/traces/$ID2" "202 body gives the url"
check "raw upload becomes ready" wait_status "$ID2" ready
check "same file twice: two traces" test "$ID" != "$ID2"
is "$(ls "$T/data/raw" | wc -l | tr -d ' ')" 1 "same file twice: one raw file (dedup)"

# gzip'd raw body with Content-Encoding: gzip (kept as gzip)
gzip -c "$TR" >"$T/basic.json.gz"
code=$(curl -s -o "$T/t3.json" -w '%{http_code}' -H 'Content-Encoding: gzip' \
	-H 'Content-Type: application/json' --data-binary "@$T/basic.json.gz" "$URL/upload?wait=1")
is "$code" 201 "gzip-encoded raw upload ingests"
ID3=$(jget "$T/t3.json" 'j["id"]')
check "gzip'd upload has the same counts" $CHK counts "$TR" "$T/t3.json"
is "$(req GET "/api/traces/$ID3/raw")" 200 "GET raw"
check "raw returns the original (gzip) bytes" cmp "$T/body" "$T/basic.json.gz"

# list and search the library
is "$(req GET '/api/traces?limit=2')" 200 "list"
is "$(jget "$T/body" 'j["total"], len(j["traces"])')" "3 2" "list total and limit"
is "$(req GET '/api/traces?q=RUN-A')" 200 "list q="
is "$(jget "$T/body" '[t["id"] for t in j["traces"]]')" "['$ID']" "library search by name"
is "$(req GET '/api/traces?q=nightly')" 200 "list q=tag"
is "$(jget "$T/body" 'j["total"]')" 1 "library search by tag"
is "$(req GET '/api/traces?sort=name&limit=1')" 200 "sort=name"

# one trace: devices, meta
is "$(req GET "/api/traces/$ID")" 200 "GET trace"
is "$(jget "$T/body" 'j["devices"][0]["kind"], len(j["devices"]), "format" in j["meta"]')" \
	"process 1 True" "trace has devices and meta"

# units in display order
is "$(req GET "/api/traces/$ID/units")" 200 "units"
cp "$T/body" "$T/units.json"
is "$(jget "$T/units.json" '[u["kind"] for u in j["units"]]')" \
	"['thread', 'thread', 'counter']" "units: threads before counters"
is "$(jget "$T/units.json" 'sum(u["event_count"] for u in j["units"])')" 15 "units: event counts"
U1=$(jget "$T/units.json" '[u["id"] for u in j["units"] if u["name"]=="main"][0]')

# timeline: full span, all units, events mode, against the file
is "$(req GET "/api/traces/$ID/timeline?px=1000")" 200 "timeline full span"
check "full-span timeline = the file's slices" $CHK timeline "$TR" "$T/body"
# gzip when the client takes it and the answer is big enough: the same JSON
cp "$T/body" "$T/tl-plain.json"
is "$(curl -s -D "$T/gz.h" -o "$T/tl.gz" -w '%{http_code}' -H 'Accept-Encoding: gzip, deflate' \
	"$URL/api/traces/$ID/timeline?px=1000")" 200 "timeline, Accept-Encoding: gzip"
check "answered gzip'd, Vary: Accept-Encoding" sh -c \
	"grep -qi '^content-encoding: gzip' '$T/gz.h' && grep -qi '^vary: accept-encoding' '$T/gz.h'"
check "it inflates to the same JSON" sh -c "gzip -dc '$T/tl.gz' | cmp -s - '$T/tl-plain.json'"
ok "$([ "$(wc -c <"$T/tl.gz")" -lt "$(wc -c <"$T/tl-plain.json")" ] && echo 0 || echo 1)" \
	"and is smaller ($(wc -c <"$T/tl.gz") of $(wc -c <"$T/tl-plain.json") bytes)"
for ae in "" "gzip;q=0" "identity" "br"; do
	curl -s -D "$T/gz.h" -o /dev/null ${ae:+-H "Accept-Encoding: $ae"} \
		"$URL/api/traces/$ID/timeline?px=1000"
	check "Accept-Encoding '$ae': not gzip'd" sh -c "! grep -qi '^content-encoding' '$T/gz.h'"
done
curl -s -D "$T/gz.h" -o /dev/null -H 'Accept-Encoding: gzip' "$URL/healthz"
check "a small answer goes as it is" sh -c "! grep -qi '^content-encoding' '$T/gz.h'"
is "$(req GET "/api/traces/$ID/timeline?start=300000&end=700000&px=500")" 200 "timeline window"
check "window timeline = slices overlapping [300us,700us)" $CHK timeline "$TR" "$T/body"
is "$(jget "$T/body" '[e["name"] for u in j["units"] for e in u["events"] if e["kind"]=="counter"]')" \
	"['memory.bytes', 'memory.bytes']" "counter: sample in force at start + one inside"
# px smaller than the events: buckets, bounded by px
is "$(req GET "/api/traces/$ID/timeline?px=2&units=$U1")" 200 "timeline px=2"
is "$(jget "$T/body" 'j["units"][0]["mode"]')" buckets "dense unit answers buckets"
check "at most ~px buckets" test "$(jget "$T/body" 'len(j["units"][0]["buckets"])')" -le 3
is "$(jget "$T/body" 'sum(b["count"] for b in j["units"][0]["buckets"])')" 9 \
	"bucket counts add up to the unit's events"
is "$(jget "$T/body" '[u["id"] for u in j["units"]]')" "[$U1]" "units= selects"

# one event with args and edges
is "$(req GET "/api/traces/$ID/search?q=aten::mm")" 200 "search"
check "search total and order match the file" $CHK search "$TR" "$T/body" "aten::mm"
EID=$(jget "$T/body" 'j["matches"][0]["id"]')
is "$(req GET "/api/traces/$ID/events/$EID")" 200 "event detail"
is "$(jget "$T/body" 'j["name"], j["cat"], j["args"]["shape"], j["unit_name"], j["ts"], j["dur"]')" \
	"aten::mm op [64,64] main 120000 100000" "event fields and args"
is "$(jget "$T/body" 'sorted(j["edges"]["in"].keys())')" "['anti', 'flow', 'order', 'output']" \
	"event edges by kind"
is "$(req GET "/api/traces/$ID/search?q=script")" 200 "search for markup"
is "$(jget "$T/body" 'j["matches"][0]["name"]')" "<script>alert(1)</script>" \
	"names are data (JSON-escaped, not markup)"
curl -s -D "$T/hdr" -o /dev/null "$URL/api/traces/$ID/search?q=script"
check "JSON answers are application/json + nosniff" sh -c \
	"grep -qi '^content-type: application/json' '$T/hdr' && grep -qi '^x-content-type-options: nosniff' '$T/hdr'"
is "$(req GET "/api/traces/$ID/search?q=DATALOAD%20%C3%A9")" 200 "search unicode"
is "$(jget "$T/body" 'j["total"]')" 2 "search: case-insensitive ASCII, UTF-8 names"

# summary
is "$(req GET "/api/traces/$ID/summary")" 200 "summary full span"
check "summary = per-name count/total/max from the file" $CHK summary "$TR" "$T/body" 0 2000000
is "$(req GET "/api/traces/$ID/summary?start=500000&end=800000")" 200 "summary window"
check "window summary matches" $CHK summary "$TR" "$T/body" 500000 800000

# deps endpoints answer in the contract shape
is "$(req GET "/api/traces/$ID/deps/$EID?kinds=flow,order&depth=3&dir=both&budget=100")" 200 "deps"
is "$(jget "$T/body" 'sorted(j.keys())')" "['edges', 'nodes', 'truncated']" "deps shape"
is "$(req GET "/api/traces/$ID/critical-path")" 200 "critical-path"
is "$(jget "$T/body" '"hops" in j and "total_ns" in j')" True "critical-path shape"
is "$(jget "$T/body" 'sum(u["hops"] for u in j["units"]) == len(j["hops"]) and sum(u["work_ns"] + u["wait_ns"] for u in j["units"]) == j["total_ns"]')" \
	True "critical-path units share out its hops and time"
n=$(jget "$T/body" 'j["hops_total"]')
is "$(req GET "/api/traces/$ID/critical-path?max_hops=1")" 200 "critical-path?max_hops=1"
is "$(jget "$T/body" 'len(j["hops"]), j["hops_total"], j["truncated"]')" "1 $n False" \
	"max_hops lists the latest hop; the walk goes on"
is "$(req GET "/api/traces/$ID/critical-path?budget=1")" 200 "critical-path?budget=1"
is "$(jget "$T/body" 'len(j["hops"]), j["hops_total"], j["truncated"] == ('"$n"' > 1)')" "1 1 True" \
	"budget stops the walk (truncated when there was more)"

# static files
is "$(req GET /)" 200 "GET / serves index.html"
is "$(curl -s -o /dev/null -w '%{content_type}' "$URL/sub/app.js")" \
	"text/javascript; charset=utf-8" "static content type"
is "$(req GET /../secret.txt --path-as-is)" 404 "no .. in static paths"
is "$(req GET /sub/%2e%2e/%2e%2e/secret.txt --path-as-is)" 404 "no encoded .. either"
is "$(req GET /.hidden)" 404 "no dot files"

# answers of a ready trace are cached: same bytes twice, dropped on delete
is "$(req GET "/api/traces/$ID2/timeline?px=900")" 200 "timeline of the second trace"
cp "$T/body" "$T/tl1.json"
is "$(req GET "/api/traces/$ID2/timeline?px=900")" 200 "same timeline again"
check "cached answer is identical" cmp "$T/body" "$T/tl1.json"
check "the second one was a cache hit" sh -c "curl -s '$URL/metrics' | grep -q '^nx_answer_cache_hits_total [1-9]'"

# delete: the other trace keeps the shared raw file
is "$(req DELETE "/api/traces/$ID2")" 200 "DELETE"
is "$(jget "$T/body" 'j["deleted"]')" "$ID2" "DELETE body"
is "$(req GET "/api/traces/$ID2")" 404 "deleted trace is gone"
is "$(req GET "/api/traces/$ID2/timeline?px=900")" 404 "deleted trace: cached timeline gone too"
is "$(req DELETE "/api/traces/$ID2")" 404 "DELETE twice is 404"
is "$(req GET "/api/traces/$ID/raw")" 200 "the other trace still has its raw file"
check "raw is the original" cmp "$T/body" "$TR"

# metrics
is "$(req GET /metrics)" 200 "metrics"
check "metrics has requests, latencies, uploads, ingests" sh -c \
	"grep -q '^nx_http_requests_total{route=\"timeline\",code=\"2xx\"}' '$T/body' &&
	 grep -q '^nx_http_request_seconds_bucket{route=\"timeline\",le=\"+Inf\"}' '$T/body' &&
	 grep -q '^nx_uploads_total 5' '$T/body' && grep -q '^nx_ingests_total 5' '$T/body'"

srv_stop
ok $? "SIGTERM: clean exit 0"
# restart on the same data: everything still there
srv_start "$T/data"
is "$(req GET "/api/traces/$ID/timeline?px=1000")" 200 "after restart: timeline"
check "after restart: same answer" $CHK timeline "$TR" "$T/body"
srv_stop
done_testing
