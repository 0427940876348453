# SPDX-License-Identifier: MIT
# tests/server/srv-lib.sh - start/stop a real server for the shell tests.
# Source after tests/lib.sh.  srv_start DATA [ARGS...] sets $URL and $SRV_PID;
# srv_stop sends SIGTERM and waits; srv_kill9 kills it hard.
command -v curl >/dev/null 2>&1 || skip_all "curl not installed"
PY=${PYTHON3:-/usr/bin/python3}
SRV_PID=""
URL=""
srv_start() { # DATA [ARGS...]; $SRV_ENV: env(1) words for the server
	_d=$1; shift
	: >"$T/srv.out"
	# shellcheck disable=SC2086 # SRV_ENV: words for env(1), VAR=VALUE or -u VAR
	env ${SRV_ENV:-} "$NX" serve --listen 127.0.0.1:0 --data "$_d" "$@" >"$T/srv.out" 2>>"$T/srv.err" &
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
# srv_answers DIR WHAT: for each "ID NAME" line of $T/ids, ask GET
# /api/traces/ID/WHAT?Q for every line Q that the test's `queries ID` prints
# (kept in $T/q.ID); the bodies go to DIR/ID.N (N: the query's line), and
# any status but 200 to $T/bad
srv_answers() {
	mkdir -p "$1"
	while read -r _sa_id _sa_name; do
		queries "$_sa_id" >"$T/q.$_sa_id"
		_sa_i=0
		while IFS= read -r _sa_q; do
			_sa_i=$((_sa_i + 1))
			_sa_code=$(curl -s -o "$1/$_sa_id.$_sa_i" -w '%{http_code}' "$URL/api/traces/$_sa_id/$2?$_sa_q")
			[ "$_sa_code" = 200 ] || echo "$_sa_name: $2?$_sa_q answered $_sa_code" >>"$T/bad"
		done <"$T/q.$_sa_id"
	done <"$T/ids"
}
# srv_same DIR1 DIR2 WHAT: per trace of $T/ids, every query has an answer in
# DIR1 and it is the same bytes as in DIR2 (two tests each; the differing
# queries are named)
srv_same() {
	while read -r _sa_id _sa_name; do
		_sa_differ="" _sa_n=0
		for _sa_f in "$1/$_sa_id".*; do
			_sa_n=$((_sa_n + 1))
			cmp -s "$_sa_f" "$2/${_sa_f##*/}" || _sa_differ="$_sa_differ $(sed -n "${_sa_f##*.}p" "$T/q.$_sa_id")"
		done
		is "$_sa_n" "$(wc -l <"$T/q.$_sa_id" | tr -d ' ')" "$_sa_name: every query answered ($3)"
		is "$_sa_differ" "" "$_sa_name: $3 = through SQL ($_sa_n queries)"
	done <"$T/ids"
}
# srv_ingest_all DATA FILE...: ingest each FILE into DATA with the CLI, an
# "ID NAME" line each in $T/ids, then test that every one ingested
srv_ingest_all() {
	_sa_d=$1; shift
	: >"$T/ids"
	for _sa_f in "$@"; do
		"$NX" ingest --data "$_sa_d" --json "$_sa_f" >"$T/ing.json" 2>"$T/ing.err" ||
			{ sed 's/^/#   /' "$T/ing.err"; continue; }
		echo "$(jget "$T/ing.json" 'j["id"]') $(basename "$_sa_f")" >>"$T/ids"
	done
	is "$(wc -l <"$T/ids" | tr -d ' ')" "$#" "every trace ingests"
}
