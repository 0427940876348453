#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/capture/neuron.sh - the Neuron collection logic without a Neuron
# device: a stand-in workload writes files the way the runtime does into
# NEURON_RT_INSPECT_OUTPUT_DIR; capture must attach every one of them, run
# the configured vendor processing tool and add its Perfetto export, and
# survive a failing tool.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

# The stand-in workload: the runtime's layout <out>/<instance>_pid_<pid>/...
cat >"$T/work.sh" <<'W'
#!/bin/sh
[ "$NEURON_RT_INSPECT_ENABLE" = 1 ] || exit 9
d="$NEURON_RT_INSPECT_OUTPUT_DIR/i-0abc_pid_$$"
mkdir -p "$d/20260101"
printf 'NEFF' >"$d/neff_1234.neff"
printf 'NTFF' >"$d/1234_instid_0_vnc_0.ntff"
printf 'pb' >"$d/ntrace.pb"
printf 'pb' >"$d/trace_info.pb"
printf '{"traceEvents":[]}' >"$d/20260101/trace.json"
echo "device=$NEURON_RT_INSPECT_DEVICE_PROFILE system=$NEURON_RT_INSPECT_SYSTEM_PROFILE"
exit "${1:-0}"
W
chmod +x "$T/work.sh"

"$NX" capture --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none \
	--set NX_CAPTURE_DIR="$T/c1" -o "$T/run.ntff" -- "$T/work.sh" 4 >"$T/out" 2>"$T/err"
is "$?" "4" "workload status returned"
is "$(cat "$T/out")" "device=session system=1" "runtime variables reached the workload"
is "$(jget "$T/c1/manifest.json" "sorted(s['name'].split('/', 2)[2] for s in j['sections'] if s['name'].startswith('neuron/'))")" \
	"['1234_instid_0_vnc_0.ntff', '20260101/trace.json', 'neff_1234.neff', 'ntrace.pb', 'trace_info.pb']" \
	"every runtime file attached, sub-folders included"
is "$(jget "$T/c1/manifest.json" "{s['kind'] for s in j['sections']}")" "{4}" "as attachments"
is "$(jget "$T/c1/manifest.json" "j['layers']['kernel']['sections']")" "5" "kernel layer produced 5"
is "$(jget "$T/c1/manifest.json" "j['layers']['framework']['runs'], j['layers']['system']['runs']")" \
	"False True" "layers recorded"
if "$NX" ntff ls "$T/run.ntff" >"$T/ls" 2>&1; then
	grep -q "neuron/i-0abc_pid_[0-9]*/ntrace.pb" "$T/ls"
	ok $? "ntff ls shows the attachments"
else
	skip "ntff ls not in this build"
fi

# Nothing written by the runtime: a warning, the capture still succeeds.
"$NX" capture --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none \
	--set NX_CAPTURE_DIR="$T/c2" -o "$T/empty.ntff" -- /bin/true 2>"$T/err"
is "$?" "0" "empty runtime output: exit 0"
grep -q "the Neuron runtime wrote nothing" "$T/err"
ok $? "empty runtime output: warned"

# A failing vendor tool: warned, raw files still attached.
printf '#!/bin/sh\necho broken >&2\nexit 3\n' >"$T/bad-tool"
chmod +x "$T/bad-tool"
"$NX" capture --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none \
	--set NX_NEURON_PROFILE_TOOL="$T/bad-tool" --set NX_CAPTURE_DIR="$T/c3" -o "$T/b.ntff" -- \
	"$T/work.sh" >/dev/null 2>"$T/err"
is "$?" "0" "failing tool: workload status kept"
grep -q "bad-tool view -d .* --output-format perfetto failed" "$T/err"
ok $? "failing tool: warned"
is "$(jget "$T/c3/manifest.json" "len(j['sections'])")" "5" "failing tool: attachments kept"

# The vendor tool's Perfetto export becomes trace data.
need_perfetto() { [ -n "$SHARED" ] && [ -f "$SHARED/perfetto_difftest_flow_events_track_event.pb" ]; }
if need_perfetto; then
	cat >"$T/tool" <<TOOL
#!/bin/sh
[ "\$1" = view ] && [ "\$2" = -d ] && [ -d "\$3" ] && [ "\$5" = perfetto ] || exit 2
cp "$SHARED/perfetto_difftest_flow_events_track_event.pb" ./system_profile.pftrace
TOOL
	chmod +x "$T/tool"
	"$NX" capture --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none \
		--set NX_NEURON_PROFILE_TOOL="$T/tool" --set NX_CAPTURE_DIR="$T/c4" \
		-o "$T/p.ntff" -- "$T/work.sh" >/dev/null 2>"$T/err"
	is "$?" "0" "tool: exit 0"
	is "$(jget "$T/c4/manifest.json" "[s['kind'] for s in j['sections'] if s['name'] == 'kernel/neuron/system_profile.pftrace']")" \
		"[2]" "tool export added as a Perfetto section"
	if "$NX" ingest --data "$T/data" --json "$T/p.ntff" >"$T/ing.json" 2>"$T/ing.err"; then
		is "$(jget "$T/ing.json" "j['slices'], j['flows']['flow']")" "8 8" \
			"ingest reads the tool's export (slices and flows)"
	else
		ok 1 "ingest of p.ntff"
		sed 's/^/#   /' "$T/ing.err"
	fi
else
	skip "no ../shared perfetto fixture"
	skip "no ../shared perfetto fixture"
	skip "no ../shared perfetto fixture"
fi
done_testing
