#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/bad-input.sh - every kind of bad input gets a clear JSON error
# with the right status, the server stays up, and a stored trace stays
# intact: garbage, truncated and half-gzip'd uploads, wrong content types, a
# missing `trace` field, --max-upload (413, also mid-stream), unknown ids,
# malformed parameters, huge px/windows, token auth, non-loopback refusal.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
CHK="$PY $NX_SRCDIR/tests/server/check.py"
TR="$NX_SRCDIR/tests/data/server/basic.json"
errcode() { jget "$T/body" 'j["error"]'; }

srv_start "$T/data" --max-upload 64k
ok $? "server starts"
curl -s -F "trace=@$TR" "$URL/upload?wait=1" -o "$T/good.json"
ID=$(jget "$T/good.json" 'j["id"]')
is "$(jget "$T/good.json" 'j["status"]')" ready "a good trace first"

# seeded, so every run sends the same bytes (ing_detect()'s unit test draws
# 20000 such inputs)
rand_bytes() { $PY -c 'import random, sys; random.seed(int(sys.argv[1])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[2])))' "$@"; }
rand_bytes 1 3000 >"$T/garbage"
is "$(req POST /upload --data-binary "@$T/garbage")" 415 "garbage raw body: 415"
is "$(errcode)" not_a_trace "garbage: error code"
is "$(req POST /upload -F "trace=@$T/garbage")" 415 "garbage multipart: 415"
printf 'hello, world\n' >"$T/text.txt"
is "$(req POST /upload -F "trace=@$T/text.txt")" 415 "plain text: 415"
printf '[1, 2, 3]' | gzip -c >"$T/numbers.json.gz"
is "$(req POST /upload --data-binary "@$T/numbers.json.gz")" 415 "gzip'd JSON array of numbers: 415"
is "$(jget "$T/body" 'j["detail"]')" "the upload is not a trace this server reads (Chrome/Kineto JSON, Perfetto protobuf or .ntff, optionally gzip'd): it opens like JSON, but byte 0x31 at offset 1 cannot start a trace array (an event object or ])" \
	"415: the detail says where the bytes stop fitting"

# an event named with bytes that are not UTF-8: its neighbours still list it
printf '{"traceEvents":[{"ph":"X","name":"a\377b","pid":1,"tid":1,"ts":1,"dur":2,"args":{"writes":["B"]}},{"ph":"X","name":"c","pid":1,"tid":1,"ts":5,"dur":2,"args":{"reads":["B"]}}]}' >"$T/bad-utf8.json"
U8=$(upload_wait "$T/bad-utf8.json" "")
is "$(req GET "/api/traces/$U8/events/2")" 200 "a name that is not UTF-8: the next event's detail"
is "$(jget "$T/body" "ascii([(k, e['name']) for k in ('flow', 'order') for e in j['edges']['in'][k]])")" \
	"[('flow', 'a\ufffdb'), ('order', 'a\ufffdb')]" "lists it among its edges, the bad byte as U+FFFD"
is "$(req DELETE "/api/traces/$U8")" 200 "(that trace deleted again)"

# truncated JSON: accepted (it is JSON), the ingest fails with the reason
head -c 700 "$TR" >"$T/trunc.json"
is "$(req POST '/upload?wait=1' -F "trace=@$T/trunc.json")" 422 "truncated JSON: 422 with ?wait=1"
is "$(errcode)" ingest_failed "truncated JSON: ingest_failed"
check "truncated JSON: the detail says why" test -n "$(jget "$T/body" 'j["detail"]')"
BAD=$(jget "$T/body" 'j["id"]')
is "$(req GET "/api/traces/$BAD")" 200 "failed trace is listed"
is "$(jget "$T/body" 'j["status"], j["error"] is not None')" "failed True" "status failed + error"
is "$(req GET "/api/traces/$BAD/timeline")" 409 "timeline of a failed trace: 409"
is "$(errcode)" not_ready "409 code not_ready"

# half a gzip stream, and a "gzip" body that is not gzip
gzip -c "$TR" >"$T/full.gz"
head -c $(($(wc -c <"$T/full.gz") / 2)) "$T/full.gz" >"$T/half.gz"
is "$(req POST /upload --data-binary "@$T/half.gz")" 400 "half-gzip'd raw body: 400"
is "$(errcode)" bad_gzip "half gzip: bad_gzip"
is "$(req POST /upload -F "trace=@$T/half.gz")" 400 "half-gzip'd multipart: 400"
is "$(req POST /upload -H 'Content-Encoding: gzip' --data-binary "@$TR")" 400 \
	"Content-Encoding: gzip on plain data: 400"
rand_bytes 2 20000 >"$T/rnd"
printf '\037\213\010\000\000\000\000\000\000\003' | cat - "$T/rnd" >"$T/corrupt.gz"
is "$(req POST /upload --data-binary "@$T/corrupt.gz")" 400 "corrupt gzip: 400"

# content types, encodings, fields
is "$(req POST /upload -H 'Content-Type: image/png' --data-binary "@$TR")" 415 "wrong content type: 415"
is "$(req POST /upload -H 'Content-Encoding: br' --data-binary "@$TR")" 415 "unknown encoding: 415"
is "$(req POST /upload -F name=x -F tags=y)" 400 "multipart without trace: 400"
is "$(errcode)" missing_field "missing_field"
is "$(req POST /upload --data-binary '')" 400 "empty upload: 400"
is "$(req GET /upload)" 405 "GET /upload: 405"

# --max-upload 64k: refused from Content-Length, and mid-stream when chunked
head -c 200000 /dev/zero | tr '\0' ' ' >"$T/big.json"
is "$(req POST /upload --data-binary "@$T/big.json")" 413 "over --max-upload: 413"
is "$(errcode)" too_large "413 code too_large"
is "$(req POST /upload -H 'Transfer-Encoding: chunked' --data-binary "@$T/big.json")" 413 \
	"over --max-upload, chunked (no length): 413 mid-stream"
is "$(req POST /upload -F "trace=@$T/big.json")" 413 "over --max-upload, multipart: 413"
sleep 0.2
is "$(ls "$T/data/tmp" | wc -l | tr -d ' ')" 0 "no partial files left in DATA/tmp"

# unknown ids and endpoints
is "$(req GET /api/traces/0123456789abcdef)" 404 "unknown id: 404"
is "$(errcode)" not_found "404 code not_found"
is "$(req GET /api/traces/../../etc/passwd --path-as-is)" 404 "path in id: 404"
is "$(req GET /api/traces/ZZZZ/units)" 404 "malformed id: 404"
is "$(req GET "/api/traces/$ID/events/999999")" 404 "unknown event: 404"
is "$(req GET "/api/traces/$ID/events/abc")" 400 "non-numeric event id: 400"
is "$(req GET "/api/traces/$ID/deps/999999")" 404 "deps of unknown event: 404"
is "$(req GET "/api/traces/$ID/nope")" 404 "unknown endpoint: 404"
is "$(req GET /api/nope)" 404 "unknown api: 404"
is "$(req PUT /api/traces)" 405 "PUT /api/traces: 405"
is "$(req DELETE /api/traces/0123456789abcdef)" 404 "DELETE unknown: 404"

# malformed parameters
for q in "timeline?start=abc" "timeline?px=0" "timeline?px=-5" "timeline?px=1e3" \
	"timeline?start=10&end=5" "timeline?units=1,x" "timeline?units=1,,2" \
	"timeline?start=99999999999999999999" "summary?end=-" "search" "search?q=" \
	"search?q=a&limit=-1" "search?q=a&limit=100000" "deps/1?kinds=bogus" "deps/1?dir=up" \
	"deps/1?depth=0" "critical-path?kinds=x" "timeline?start=-4000000000000000000" \
	"critical-path?max_hops=0" "critical-path?max_hops=100001" "critical-path?max_hops=x" \
	"critical-path?budget=0" "critical-path?budget=1000001"; do
	is "$(req GET "/api/traces/$ID/$q")" 400 "malformed $q: 400"
done
is "$(errcode)" bad_param "400 code bad_param"
for q in "limit=x" "offset=-1" "sort=bogus"; do
	is "$(req GET "/api/traces?$q")" 400 "malformed list $q: 400"
done

# huge px and windows: clamped / bounded, not refused
is "$(req GET "/api/traces/$ID/timeline?px=100000000")" 200 "huge px: 200"
is "$(jget "$T/body" 'j["px"]')" 8192 "huge px is clamped to 8192"
is "$(req GET "/api/traces/$ID/timeline?start=-2000000000000000000&end=2000000000000000000&px=4")" \
	200 "huge window: 200"
check "huge window: bounded answer" test "$(jget "$T/body" \
	'max(len(u.get("buckets", u.get("events", []))) for u in j["units"])')" -le 6
is "$(req GET "/api/traces/$ID/timeline?units=999")" 200 "unknown unit ids are skipped"
is "$(jget "$T/body" 'j["units"]')" "[]" "no unit answered"

# still up, and the stored trace is intact
is "$(req GET /healthz)" 200 "server still up"
is "$(req GET "/api/traces/$ID/timeline")" 200 "stored trace still readable"
check "stored trace intact" $CHK timeline "$TR" "$T/body"
is "$(req GET '/api/traces')" 200 "list"
is "$(jget "$T/body" 'j["total"]')" 2 "only the good and the failed trace were stored"
srv_stop
ok $? "clean stop"

# token auth
printf 'tok-0123456789abcdef\n' >"$T/token"
chmod 600 "$T/token"
srv_start "$T/data" --token-file "$T/token"
is "$(req POST /upload -F "trace=@$TR")" 401 "upload without token: 401"
is "$(errcode)" unauthorized "401 code"
is "$(req POST /upload -H 'Authorization: Bearer wrong-0123456789abcd' -F "trace=@$TR")" 401 \
	"wrong token: 401"
is "$(req POST /upload -H 'Authorization: Bearer tok' -F "trace=@$TR")" 401 \
	"a prefix of the token: 401"
is "$(req POST /upload -H 'Authorization: Bearer tok-0123456789abcdefX' -F "trace=@$TR")" 401 \
	"the token and more: 401"
is "$(req POST /upload -H 'Authorization: Bearer ' -F "trace=@$TR")" 401 "an empty token: 401"
is "$(req POST /upload -H 'Authorization: Bearer tok-0123456789abcdef' -F "trace=@$TR")" 202 \
	"right token: 202"
is "$(req DELETE "/api/traces/$ID")" 401 "delete without token: 401"
is "$(req POST "/api/traces/$ID/retry")" 401 "retry without token: 401"
is "$(req GET "/api/traces/$ID")" 200 "reads are open"
is "$(req DELETE "/api/traces/$ID" -H 'Authorization: Bearer tok-0123456789abcdef')" 200 \
	"delete with token: 200"
srv_stop

# refuse a non-loopback address without a token
"$NX" serve --listen 0.0.0.0:0 --data "$T/data" >"$T/nl.out" 2>"$T/nl.err"
rc=$?
check "non-loopback without token: refused" test $rc -ne 0
check "non-loopback: says why" grep -q "non-loopback" "$T/nl.err"
"$NX" serve --listen 127.0.0.1:0 --data "$T/data" --workers x >/dev/null 2>"$T/w.err"
check "bad --workers: refused" test $? -ne 0
"$NX" serve --listen 127.0.0.1:0 --data "$T/data" --cache-mb -1 >/dev/null 2>"$T/c.err"
is "$?|$(cat "$T/c.err")" "1|neuron-explorer: serve: --cache-mb: '-1' is not a number in 0..100000" \
	"--cache-mb -1: refused with its range (0 turns the cache off)"
"$NX" serve --listen 127.0.0.1:0 --data "$T/data" --max-uploads 0 >/dev/null 2>"$T/c.err"
is "$?|$(cat "$T/c.err")" "1|neuron-explorer: serve: --max-uploads: '0' is not a number in 1..100000" \
	"--max-uploads 0: refused with its range"
done_testing
