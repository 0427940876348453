# SPDX-License-Identifier: MIT
# tests/lib.sh - shared helpers for the shell tests (TAP output).
# Source it: . "$NX_SRCDIR/tests/lib.sh".  Gives $NX (the binary), $T (a
# private temp dir removed at exit), $SHARED (../shared/traces or empty).
set -u
NX=${NX_BIN:-$(pwd)/neuron-explorer}
NX_SRCDIR=${NX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/nxtest.XXXXXX")
SHARED=""
if [ -d "${NX_SHARED:-$NX_SRCDIR/../shared}/traces" ]; then
	SHARED=$(cd "${NX_SHARED:-$NX_SRCDIR/../shared}/traces" && pwd)
fi
_n=0
_failed=0
_cleanup_hooks=""
at_exit() { _cleanup_hooks="$_cleanup_hooks;$1"; }
_finish() {
	eval "${_cleanup_hooks#;}" 2>/dev/null || true
	rm -rf "$T"
}
trap _finish EXIT
ok() { # ok COND-EXIT-STATUS NAME
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; _failed=$((_failed + 1)); fi
}
check() { # check NAME CMD...: ok if CMD succeeds
	_name=$1; shift
	if "$@" >"$T/.check.out" 2>&1; then ok 0 "$_name"; else ok 1 "$_name"; sed 's/^/#   /' "$T/.check.out" | head -20; fi
}
is() { # is GOT WANT NAME
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got '$1', want '$2'"; fi
}
skip() { _n=$((_n + 1)); echo "ok $_n # SKIP $1"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }  # the TAP driver reads the plan, not 77
need_shared() { [ -n "$SHARED" ] || skip_all "no ../shared/traces (fresh clone)"; }
done_testing() { echo "1..$_n"; [ "$_failed" -eq 0 ]; exit $?; }
# jget FILE EXPR: run a python3 expression on the JSON in FILE (bound to j).
jget() { "${PYTHON3:-python3}" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
# store_digest DATA ID: what trace ID of DATA holds, to compare two stores:
# per unit (name, kind) and event kind the count, times, durations, depths
# and values, then every edge's kind, label and both ends' times.
store_digest() {
	"$NX" sql --data "$1" "$2" "SELECT u.name, u.kind, v.kind, count(*), sum(v.ts % 1000000007),
	  sum(v.dur % 1000000007), sum(v.depth), sum(coalesce(v.value, 0)) FROM events v
	  JOIN units u ON u.id = v.unit GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
	"$NX" sql --data "$1" "$2" "SELECT e.kind, e.label, a.ts % 1000000007, b.ts % 1000000007
	  FROM edges e JOIN events a ON a.id = e.src JOIN events b ON b.id = e.dst ORDER BY 1, 2, 3, 4"
}
