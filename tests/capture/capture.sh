#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/capture/capture.sh - `neuron-explorer capture` end to end with
# Debian's torch on examples/train.py: the manifest, the framework trace,
# ingest; a crashing workload, killed workloads, exit statuses, the chained
# sitecustomize.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=/usr/bin/python3
TRAIN="$NX_SRCDIR/examples/train.py"
[ -x "$PY" ] && "$PY" -c "import torch" 2>/dev/null || skip_all "no /usr/bin/python3 with torch"
unset PYTHONPATH

have_ntff=0
"$NX" ntff ls /dev/null >/dev/null 2>&1
[ $? -ne 2 ] && ! "$NX" ntff ls /dev/null 2>&1 | grep -q "not available" && have_ntff=1

man() { jget "$1/manifest.json" "$2"; }

# 1. A normal run.
"$NX" capture --set NX_CAPTURE_DIR="$T/c1" -o "$T/run.ntff" -- "$PY" "$TRAIN" --steps 6 \
	>"$T/out1" 2>"$T/err1"
is "$?" "0" "capture of train.py exits 0"
grep -q "step 5 loss" "$T/out1"
ok $? "workload output passes through"
[ -s "$T/run.ntff" ]
ok $? "run.ntff written"
is "$(man "$T/c1" "j['exit']['status']")" "0" "manifest: exit status"
is "$(man "$T/c1" "j['format_version'], j['tool_version'] != '', j['host'] != ''")" "1 True True" \
	"manifest: versions and host"
is "$(man "$T/c1" "j['command'][-3:]")" "['$TRAIN', '--steps', '6']" "manifest: command line"
is "$(man "$T/c1" "j['layers']['framework']['runs'], j['layers']['framework']['hook']['status']")" \
	"True exit" "manifest: framework layer ran"
is "$(man "$T/c1" "j['layers']['framework']['hook']['steps']")" "6" "hook counted 6 optimizer steps"
is "$(man "$T/c1" "[s['name'] for s in j['sections']]")" "['framework/trace.json']" \
	"manifest: sections"
is "$(man "$T/c1" "j['clock']['start']['monotonic_ns'] < j['clock']['end']['monotonic_ns'] and j['start_ns'] < j['end_ns']")" \
	"True" "manifest: clock pairs at start and end"
is "$(man "$T/c1" "all(k in j['clock']['framework'] for k in ('hook_start','profiler_start','export'))")" \
	"True" "manifest: framework clock sync points"
is "$(man "$T/c1" "j['config']['NX_OUTPUT']['value'], j['config']['NX_OUTPUT']['source']")" \
	"$T/run.ntff --set" "manifest: resolved config with sources"
is "$(jget "$T/c1/framework/trace.json" "sorted({e['name'] for e in (j if isinstance(j, list) else j['traceEvents']) if e['name'].startswith('ProfilerStep')})")" \
	"['ProfilerStep#0', 'ProfilerStep#1', 'ProfilerStep#2']" "3 active steps recorded"
is "$(jget "$T/c1/framework/trace.json" "any(e['name'].startswith('aten::conv') for e in (j if isinstance(j, list) else j['traceEvents']))")" \
	"True" "framework trace has aten ops"
if [ "$have_ntff" = 1 ]; then
	"$NX" ntff ls "$T/run.ntff" >"$T/ls" 2>&1
	ok $? "ntff ls"
	grep -q manifest.json "$T/ls" && grep -q framework/trace.json "$T/ls"
	ok $? "ntff ls lists the manifest and the framework trace"
	"$NX" ntff cat "$T/run.ntff" manifest.json >"$T/m.json" 2>&1
	is "$(jget "$T/m.json" "j['exit']['status']")" "0" "ntff cat manifest.json"
	"$NX" ingest --data "$T/data" --json "$T/run.ntff" >"$T/ing" 2>&1
	ok $? "ingest run.ntff"
	sed 's/^/# /' "$T/ing" | head -5
else
	skip "ntff ls/cat not in this build"
	skip "ntff ls sections"
	skip "ntff cat"
	skip "ingest of .ntff"
fi
"$NX" ingest --data "$T/data" "$T/c1/framework/trace.json" >"$T/ing2" 2>&1
ok $? "the framework trace ingests"

# The upload's token and token file, set in capture's environment, do not reach the workload.
printf 'abcdefghijklmnopqrstuvwxyz\n' >"$T/tok"
chmod 600 "$T/tok"
NX_TOKEN=s3cret-s3cret-s3cret NX_TOKEN_FILE="$T/tok" "$NX" capture -q \
	--set NX_CAPTURE_DIR="$T/c6" -o "$T/tok.ntff" -- \
	/bin/sh -c 'echo "${NX_TOKEN-unset} ${NX_TOKEN_FILE-unset}"' >"$T/out6" 2>"$T/err6"
is "$?|$(cat "$T/out6")" "0|unset unset" "NX_TOKEN and NX_TOKEN_FILE not given to the workload"

# Temporary capture folder is removed.
TMPDIR="$T/tmp" && mkdir -p "$TMPDIR" && export TMPDIR
"$NX" capture -q -o "$T/run2.ntff" -- "$PY" "$TRAIN" --steps 2 >/dev/null 2>&1
is "$?|$(ls "$T/tmp" | wc -l)" "0|0" "temporary capture folder removed"

# 2. A workload that crashes after 2 steps: its status, the partial trace.
"$NX" capture --set NX_CAPTURE_DIR="$T/c2" -o "$T/crash.ntff" -- "$PY" "$TRAIN" --crash-after 2 \
	>/dev/null 2>"$T/err2"
is "$?" "1" "crash: python's exit status 1 returned"
grep -q "RuntimeError: crash requested" "$T/err2"
ok $? "crash: the traceback is shown"
[ -s "$T/crash.ntff" ]
ok $? "crash: run.ntff written"
is "$(man "$T/c2" "j['exit']['status'], j['layers']['framework']['hook']['status']")" \
	"1 exception" "crash: manifest has exit status and the hook saw the exception"
is "$(man "$T/c2" "j['layers']['framework']['hook']['exception']")" \
	"RuntimeError: crash requested after 2 steps" "crash: exception recorded"
is "$(jget "$T/c2/framework/trace.json" "any(e['name'].startswith('ProfilerStep') for e in (j if isinstance(j, list) else j['traceEvents']))")" \
	"True" "crash: partial trace exported"

# 3. SIGTERM to capture is forwarded; the hook exports before dying.
"$NX" capture --set NX_CAPTURE_DIR="$T/c3" -o "$T/term.ntff" -- "$PY" "$TRAIN" --steps 100000 \
	--sleep 0.02 >/dev/null 2>"$T/err3" &
cap=$!
i=0
while [ $i -lt 200 ] && ! jget "$T/c3/framework/hook.json" "j['steps'] >= 5" 2>/dev/null | grep -q True; do
	sleep 0.1; i=$((i + 1))
done
kill -TERM $cap
wait $cap
is "$?" "143" "SIGTERM: 128+15 returned"
is "$(man "$T/c3" "j['exit']['status'], j['exit']['signo'], j['forwarded_signal']")" "143 15 15" \
	"SIGTERM: forwarded and recorded"
is "$(man "$T/c3" "j['layers']['framework']['hook']['status']")" "signal" "SIGTERM: hook exported"
[ -s "$T/c3/framework/trace.json" ] && [ -s "$T/term.ntff" ]
ok $? "SIGTERM: trace and run.ntff written"

# 4. The workload killed outright (SIGKILL): still a run.ntff with the manifest.
"$NX" capture --set NX_CAPTURE_DIR="$T/c4" -o "$T/kill.ntff" -- "$PY" "$TRAIN" --steps 100000 \
	--sleep 0.02 >/dev/null 2>&1 &
cap=$!
i=0
while [ $i -lt 200 ] && ! jget "$T/c4/framework/hook.json" "j['steps'] >= 2" 2>/dev/null | grep -q True; do
	sleep 0.1; i=$((i + 1))
done
kill -KILL "$(jget "$T/c4/framework/hook.json" "j['pid']")"
wait $cap
is "$?" "137" "SIGKILL: 128+9 returned"
is "$(man "$T/c4" "j['exit']['signo']")" "9" "SIGKILL: manifest records the signal"
[ -s "$T/kill.ntff" ]
ok $? "SIGKILL: run.ntff written"

# 5. Not Python; exit status; missing command.
"$NX" capture -q --set NX_CAPTURE_DIR="$T/c5" -o "$T/sh.ntff" -- /bin/sh -c 'exit 3' 2>"$T/err5"
is "$?" "3" "exit status 3 passed through"
grep -q "hook left no report" "$T/err5"
ok $? "missing framework output is a warning"
# an argument that is not UTF-8 stays in the manifest's command (U+FFFD)
"$NX" capture -q -o "$T/u8.ntff" -- /bin/sh -c 'exit 0' "x$(printf '\376')y" 2>/dev/null
"$NX" ntff cat "$T/u8.ntff" >"$T/u8.json"
is "$(jget "$T/u8.json" "ascii(j['command'][-1])")" "'x\ufffdy'" \
	"an argument that is not UTF-8: kept in the manifest"
# a capture folder whose name is not UTF-8: the workload gets its bytes as
# they are, the manifest and env --json show U+FFFD (this crashed before)
cdir="$T/cd$(printf '\376')"
"$NX" capture -q --set NX_CAPTURE_DIR="$cdir" -o "$T/u9.ntff" -- \
	/bin/sh -c 'printf %s "$NX_CAPTURE_DIR" >"$0"' "$T/seen" 2>/dev/null
is "$?" "0" "a capture folder that is not UTF-8: the capture runs"
is "$(od -An -c "$T/seen" | tr -d ' \n' | tail -c 5)" "cd376" "the workload gets its bytes as they are"
"$NX" ntff cat "$T/u9.ntff" >"$T/u9.json"
is "$(jget "$T/u9.json" "ascii([v['value'][-3:] for v in j['variables'] if v['name'] == 'NX_CAPTURE_DIR'])")" \
	"['cd\ufffd']" "the manifest shows it with U+FFFD"
"$NX" env --json --set NX_CAPTURE_DIR="$cdir" >"$T/u9env.json"
is "$(jget "$T/u9env.json" "ascii(j['env']['NX_CAPTURE_DIR'][-3:])")" "'cd\ufffd'" "and so does env --json"
"$NX" capture -q -o "$T/none.ntff" -- /nonexistent/cmd 2>"$T/err6"
is "$?" "127" "missing command: 127"
grep -q "/nonexistent/cmd: No such file" "$T/err6"
ok $? "missing command named"
"$NX" capture -o "$T/x.ntff" 2>/dev/null
is "$?" "2" "no command: usage error"
"$NX" capture --set NX_BOGUS=1 -- true 2>/dev/null
is "$?" "2" "bad --set: usage error"

# 6. NX_LAYERS=none: no hook, no framework section.
"$NX" capture -q --set NX_LAYERS=none --set NX_CAPTURE_DIR="$T/c7" -o "$T/n.ntff" -- \
	"$PY" -c 'import os, torch; print(os.environ.get("PYTHONPATH", ""))' >"$T/out7" 2>/dev/null
is "$?|$(cat "$T/out7")" "0|" "NX_LAYERS=none: no PYTHONPATH hook"
is "$(man "$T/c7" "j['sections']")" "[]" "NX_LAYERS=none: no sections"

# 7. An existing sitecustomize is chained; their PYTHONPATH is kept.
mkdir -p "$T/site"
printf 'import os\nopen(os.environ["MARK"], "w").write("chained")\n' >"$T/site/sitecustomize.py"
MARK="$T/mark" PYTHONPATH="$T/site" "$NX" capture -q --set NX_CAPTURE_DIR="$T/c8" \
	-o "$T/s.ntff" -- "$PY" "$TRAIN" --steps 3 >/dev/null 2>&1
is "$?|$(cat "$T/mark" 2>/dev/null)" "0|chained" "their sitecustomize ran"
is "$(man "$T/c8" "j['layers']['framework']['hook']['steps']")" "3" "and ours too"

# 8. The config reaches the hook: window and options.
"$NX" capture -q --set NX_CAPTURE_DIR="$T/c9" --set NX_WARMUP_STEPS=0 --set NX_ACTIVE_STEPS=0 \
	--set NX_TORCH_RECORD_SHAPES=1 -o "$T/w.ntff" -- "$PY" "$TRAIN" --steps 5 >/dev/null 2>&1
is "$(jget "$T/c9/framework/trace.json" "len({e['name'] for e in (j if isinstance(j, list) else j['traceEvents']) if e['name'].startswith('ProfilerStep')})")" \
	"5" "NX_ACTIVE_STEPS=0 records every step until exit"
is "$(man "$T/c9" "j['layers']['framework']['hook']['window']")" \
	"{'wait': 0, 'warmup': 0, 'active': 0}" "window read by the hook"

# 9. Python processes started by the workload get their own trace.
"$NX" capture -q --set NX_CAPTURE_DIR="$T/c10" -o "$T/multi.ntff" -- "$PY" -c \
	"import subprocess, sys; subprocess.run([sys.executable, '$TRAIN', '--steps', '3'], check=True)" \
	>/dev/null 2>&1
is "$?" "0" "workload starting a Python child"
is "$(man "$T/c10" "[s['name'].startswith('framework/trace-') for s in j['sections']]")" "[True]" \
	"the child's trace-PID.json is a section"
is "$(man "$T/c10" "[c['steps'] for c in j['layers']['framework']['children']]")" "[3]" \
	"the child's report is in the manifest"
done_testing
