# SPDX-License-Identifier: MIT
# tests/server/srv-lib.sh - start/stop a real server for the shell tests.
# Source after tests/lib.sh.  srv_start DATA [ARGS...] sets $URL and $SRV_PID;
# srv_stop sends SIGTERM and waits; srv_kill9 kills it hard.
command -v curl >/dev/null 2>&1 || skip_all "curl not installed"
PY=${PYTHON3:-/usr/bin/python3}
SRV_PID=""
URL=""
srv_start() { # DATA [ARGS...]
	_d=$1; shift
	: >"$T/srv.out"
	"$NX" serve --listen 127.0.0.1:0 --data "$_d" "$@" >"$T/srv.out" 2>>"$T/srv.err" &
	SRV_PID=$!
	_i=0
	while [ $_i -lt 100 ]; do
		if [ -s "$T/srv.out" ]; then
			URL=$(head -1 "$T/srv.out" | sed -n 's/^neuron-explorer: serving \(http:[^ ]*\)$/\1/p')
			URL=${URL%/}
			[ -n "$URL" ] && return 0
		fi
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "# server did not start:"; sed 's/^/#   /' "$T/srv.err" | tail -5
	return 1
}
srv_stop() {
	[ -n "$SRV_PID" ] || return 0
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID"; _rc=$?
	SRV_PID=""
	return $_rc
}
srv_kill9() {
	[ -n "$SRV_PID" ] || return 0
	kill -KILL "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	SRV_PID=""
}
at_exit 'srv_kill9'
# req METHOD PATH [CURL ARGS...]: body in $T/body, status echoed
req() {
	_m=$1; _p=$2; shift 2
	curl -s -o "$T/body" -w '%{http_code}' -X "$_m" "$@" "$URL$_p"
}
# upload FILE [QUERY]: multipart upload, ?wait=1; prints the id
upload_wait() {
	curl -s -F "trace=@$1" "$URL/upload?wait=1$2" -o "$T/up.json" -w '%{http_code}' >"$T/up.code"
	jget "$T/up.json" 'j.get("id","")'
}
# reference FILE NAME: upload FILE with ?wait=1 as the trace the test checks
# stays intact: its id in $A, "ready" checked as test NAME, its full-span
# timeline kept in $T/a-timeline.json for same_timeline
reference() {
	curl -s -F "trace=@$1" "$URL/upload?wait=1" -o "$T/a.json"
	A=$(jget "$T/a.json" 'j["id"]')
	is "$(jget "$T/a.json" 'j["status"]')" ready "$2"
	req GET "/api/traces/$A/timeline?px=1000" >/dev/null
	cp "$T/body" "$T/a-timeline.json"
}
# wait_status ID WANT: poll until the trace has status WANT (20 s)
wait_status() {
	_i=0
	while [ $_i -lt 200 ]; do
		curl -s "$URL/api/traces/$1" -o "$T/ws.json"
		_s=$(jget "$T/ws.json" 'j.get("status")' 2>/dev/null)
		[ "$_s" = "$2" ] && return 0
		[ "$_s" = failed ] && [ "$2" != failed ] && { echo "# failed: $(cat "$T/ws.json")"; return 1; }
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "# status $_s, want $2"
	return 1
}
