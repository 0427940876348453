#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/capture/upload.sh - `upload` and `capture --upload` against a real
# server on 127.0.0.1 port 0: read back through the API, `capture --wait`
# returning once the run is ready, the server's error shown verbatim,
# retries until the server comes up.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=/usr/bin/python3
command -v curl >/dev/null || skip_all "no curl"
"$PY" -c "import torch" 2>/dev/null || skip_all "no /usr/bin/python3 with torch"
unset PYTHONPATH

start_server() { # start_server LISTEN DATA: sets $U and $SRV
	"$NX" serve --listen "$1" --data "$2" >"$T/srv.out" 2>"$T/srv.err" &
	SRV=$!
	at_exit "kill $SRV"
	i=0
	while [ $i -lt 100 ] && ! grep -q http "$T/srv.out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
	U=$(grep -o 'http://[^ ]*' "$T/srv.out" | head -1)
	U=${U%/}
}
wait_ready() { # wait_ready ID: poll until ready/failed; prints the status
	i=0
	while [ $i -lt 100 ]; do
		curl -s "$U/api/traces/$1" >"$T/tr.json"
		st=$(jget "$T/tr.json" "j.get('status')")
		case "$st" in ready|failed) break ;; esac
		sleep 0.1; i=$((i + 1))
	done
	echo "$st"
}

start_server 127.0.0.1:0 "$T/srv"
[ -n "$U" ]
ok $? "server up at $U"

# capture --upload: the example run lands on the server.
"$NX" capture --set NX_CAPTURE_DIR="$T/c" --set NX_RUN_NAME=example --set NX_TAGS=ci,cpu \
	--upload "$U" -o "$T/run.ntff" -- "$PY" "$NX_SRCDIR/examples/train.py" --steps 4 \
	>/dev/null 2>"$T/cap.err"
is "$?" "0" "capture --upload exits 0"
id=$(sed -n 's/.*uploaded .* as \([0-9a-f]*\):.*/\1/p' "$T/cap.err")
[ -n "$id" ]
ok $? "capture printed the trace id ($id)"
grep -q "$U/api/traces/$id" "$T/cap.err"
ok $? "capture printed the trace URL"
grep -q "view it at $U/#trace=$id" "$T/cap.err"
ok $? "capture printed the web UI URL"
is "$(wait_ready "$id")" "ready" "the uploaded run.ntff was ingested"
is "$(jget "$T/tr.json" "j['name'], j['tags']")" "example ['ci', 'cpu']" "name and tags"
is "$(jget "$T/tr.json" "j['slices'] > 100")" "True" "framework events on the server"
curl -s "$U/api/traces/$id/raw" >"$T/raw"
cmp -s "$T/raw" "$T/run.ntff"
ok $? "raw bytes read back equal run.ntff"

# capture --upload --wait: capture returns once the server has ingested the run
"$NX" capture --set NX_CAPTURE_DIR="$T/cw" --set NX_RUN_NAME=waited --upload "$U" --wait \
	-o "$T/runw.ntff" -- "$PY" "$NX_SRCDIR/examples/train.py" --steps 4 >/dev/null 2>"$T/capw.err"
is "$?" "0" "capture --upload --wait exits 0"
idw=$(sed -n 's/.*uploaded .* as \([0-9a-f]*\):.*/\1/p' "$T/capw.err")
curl -s "$U/api/traces/$idw" >"$T/trw.json"
# the server's counts, "1 unit" in the singular
want=$(jget "$T/trw.json" "'ready: %d slice%s, %d unit%s, %d flow edge%s' % (j['slices'],
	'' if j['slices'] == 1 else 's', j['units'], '' if j['units'] == 1 else 's',
	j['flows']['flow'], '' if j['flows']['flow'] == 1 else 's')")
grep -qF "neuron-explorer: $want" "$T/capw.err"
ok $? "capture --wait says the run is ready, with its counts ($want)"
is "$(jget "$T/trw.json" "j['status'], j['name']")" "ready waited" "ready on the server when capture returns"

# upload alone.
out=$("$NX" upload "$T/c/framework/trace.json" "$U/" --name fw --tags x 2>"$T/up.err")
is "$?" "0" "upload exits 0"
is "$(wait_ready "$out")" "ready" "upload: trace ready"
is "$(jget "$T/tr.json" "j['name'], j['tags'], j['format']")" "fw ['x'] json" "upload: name, tags, format"

# A progress bar on a terminal only.
grep -q "upload \[" "$T/up.err"
ok $((! $?)) "no progress bar when stderr is not a terminal"
if command -v script >/dev/null; then
	script -qec "'$NX' upload '$T/c/framework/trace.json' '$U'" /dev/null >"$T/tty.out" 2>&1
	grep -q "upload \[#*\] 100%" "$T/tty.out"
	ok $? "progress bar on a terminal"
else
	skip "no script(1) for a pseudo-terminal"
fi

# The server's error, verbatim, and a non-zero status.
echo "this is not a trace" >"$T/junk.txt"
"$NX" upload "$T/junk.txt" "$U" >/dev/null 2>"$T/e.err"
is "$?" "1" "rejected upload exits 1"
grep -q '^{"error":"not_a_trace","detail":' "$T/e.err"
ok $? "server JSON error printed verbatim"
grep -q "HTTP 415" "$T/e.err"
ok $? "HTTP status named"
"$NX" upload "$T/missing.json" "$U" 2>"$T/e.err"
is "$?" "1" "missing file exits 1"
grep -q "missing.json: No such file" "$T/e.err"
ok $? "missing file named"

# Retries: nothing listens yet; the server comes up while the client backs off.
port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$NX" upload --retries 6 "$T/c/framework/trace.json" "http://127.0.0.1:$port" >"$T/r.out" 2>"$T/r.err" &
up=$!
sleep 0.6
kill $SRV 2>/dev/null
start_server "127.0.0.1:$port" "$T/srv2"
wait $up
is "$?" "0" "upload succeeded after retries"
grep -q "retrying in" "$T/r.err"
ok $? "retries reported"
"$NX" upload --retries 1 "$T/c/framework/trace.json" "http://127.0.0.1:1" >/dev/null 2>"$T/r2.err"
is "$?" "1" "no server: exit 1 after retries"
is "$(grep -c 'retrying in' "$T/r2.err")" "1" "one retry with --retries 1"
done_testing
