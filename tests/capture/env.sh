#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/capture/env.sh - `neuron-explorer env`: every key's translation for
# each backend, precedence, conflict and misspelling warnings, bad lines.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=${PYTHON3:-python3}
SRC=$(cd "$NX_SRCDIR" && pwd -P)

envj() { # envj ARGS...: run `env --json`, JSON in $T/e.json, stderr in $T/e.err
	"$NX" env --json "$@" >"$T/e.json" 2>"$T/e.err"
}
var() { jget "$T/e.json" "j['env'].get('$1', '<unset>')"; }
lay() { jget "$T/e.json" "sorted(j['variables'].get('$1', {}))"; }

# Defaults: every key has a value from env/defaults.env.
envj
ok $? "env --json runs"
is "$(jget "$T/e.json" "len(j['config'])")" "28" "28 keys"
is "$(jget "$T/e.json" "all(v['source']=='default' for v in j['config'].values())")" "True" \
	"all from defaults"
is "$(jget "$T/e.json" "j['config']['NX_OUTPUT']['where'].endswith('env/defaults.env:12')")" \
	"True" "default source names file:line"
for k in NX_OUTPUT NX_LAYERS NX_FRAMEWORK_PROFILER NX_TORCH_RECORD_SHAPES NX_TORCH_WITH_STACK \
	NX_TORCH_PROFILE_MEMORY NX_KERNEL_BACKEND NX_WARMUP_STEPS NX_ACTIVE_STEPS \
	NX_NEURON_NTH_EXEC NX_DEVICE_FILTER NX_CORES NX_MAX_EVENTS NX_SOURCE_MAPPING \
	NX_NEURON_DGE_NOTIFICATIONS NX_NEURON_PROFILE_TOOL NX_UPLOAD NX_TOKEN NX_TOKEN_FILE \
	NX_RUN_NAME NX_TAGS; do
	grep -q "^$k=" "$NX_SRCDIR/env/defaults.env"
	ok $? "$k documented in env/defaults.env"
	grep -q "$k" "$NX_SRCDIR/docs/capture.md"
	ok $? "$k documented in docs/capture.md"
done
is "$(jget "$T/e.json" "j['layers']['kernel']['backend_why'].startswith('auto:')")" "True" \
	"auto backend explains itself"

# Neuron backend, kernel + system, no framework profiler.
envj --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none --set NX_CAPTURE_DIR=/cap
is "$(var NEURON_RT_INSPECT_ENABLE)" "1" "neuron: INSPECT_ENABLE"
is "$(var NEURON_RT_INSPECT_OUTPUT_DIR)" "/cap/neuron" "neuron: OUTPUT_DIR in the capture dir"
is "$(var NEURON_RT_INSPECT_SYSTEM_PROFILE)" "1" "neuron: SYSTEM_PROFILE"
is "$(var NEURON_RT_INSPECT_DEVICE_PROFILE)" "session" "neuron: DEVICE_PROFILE explicit"
is "$(var NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC)" "1000000" "neuron: max events"
is "$(var NEURON_RT_INSPECT_EVENT_FILTER_NC)" "<unset>" "neuron: no core filter by default"
is "$(var NEURON_RT_ENABLE_DGE_NOTIFICATIONS)" "<unset>" "neuron: DGE off by default"
is "$(var PYTHONPATH)" "<unset>" "neuron: no torch hook"
is "$(var CUDA_INJECTION64_PATH)" "<unset>" "neuron: no CUPTI"
is "$(jget "$T/e.json" "j['kernel_backend']")" "neuron" "kernel backend neuron"

envj --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none --set NX_CORES=0-3,6 \
	--set NX_MAX_EVENTS=5000 --set NX_NEURON_DGE_NOTIFICATIONS=yes \
	--set NX_NEURON_DEVICE_PROFILE=model --set NX_NEURON_NTH_EXEC=3
is "$(var NEURON_RT_INSPECT_EVENT_FILTER_NC)" "0-3,6" "NX_CORES -> EVENT_FILTER_NC"
is "$(var NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC)" "5000" "NX_MAX_EVENTS -> MAX_EVENTS_PER_NC"
is "$(var NEURON_RT_ENABLE_DGE_NOTIFICATIONS)" "1" "NX_NEURON_DGE_NOTIFICATIONS"
is "$(var NEURON_RT_INSPECT_DEVICE_PROFILE)" "model" "model mode"
is "$(var NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP)" "2" "NX_NEURON_NTH_EXEC=3 -> NUM_WARMUP=2"

envj --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none --set NX_NEURON_NTH_EXEC=3
is "$(var NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP)" "<unset>" "nth exec ignored in session mode"
grep -q "only applies in model mode" "$T/e.err"
ok $? "nth exec in session mode warns"

envj --set NX_KERNEL_BACKEND=neuron --set NX_LAYERS=system
is "$(var NEURON_RT_INSPECT_DEVICE_PROFILE)" "0" "system only: DEVICE_PROFILE=0 explicit"
is "$(var NEURON_RT_INSPECT_SYSTEM_PROFILE)" "1" "system only: SYSTEM_PROFILE=1"
envj --set NX_KERNEL_BACKEND=neuron --set NX_LAYERS=kernel
is "$(var NEURON_RT_INSPECT_SYSTEM_PROFILE)" "0" "kernel only: SYSTEM_PROFILE=0 explicit"
envj --set NX_KERNEL_BACKEND=neuron --set NX_LAYERS=framework
is "$(var NEURON_RT_INSPECT_ENABLE)" "<unset>" "framework only: no inspect"

# Compile-time source mapping.
envj --set NX_SOURCE_MAPPING=1
is "$(lay compile)" "['NEURON_FRAMEWORK_DEBUG', 'NKI_DEBUG_INFO', 'XLA_HLO_DEBUG', 'XLA_IR_DEBUG']" \
	"source mapping sets the four compile-time variables"
is "$(var NKI_DEBUG_INFO)" "True" "NKI_DEBUG_INFO=True"
envj
is "$(lay compile)" "[]" "no compile-time variables by default"

# CUPTI.
: >"$T/libfake-cupti.so"
NX_CUPTI_LIB="$T/libfake-cupti.so" envj --set NX_KERNEL_BACKEND=cupti --set NX_CAPTURE_DIR=/cap
is "$(var CUDA_INJECTION64_PATH)" "$T/libfake-cupti.so" "cupti: CUDA_INJECTION64_PATH"
is "$(var NX_CUPTI_OUTPUT)" "/cap/kernel/cupti.json" "cupti: output in the capture dir"
is "$(var NX_TORCH_ACTIVITIES)" "cpu" "cupti: torch records CPU only (one CUPTI subscriber)"
is "$(var NX_DEVICE_FILTER)" "" "cupti: device filter passed through"
is "$(var NEURON_RT_INSPECT_ENABLE)" "<unset>" "cupti: no Neuron variables"
NX_CUPTI_LIB=/nonexistent envj --set NX_KERNEL_BACKEND=cupti
if [ -z "$(ls "$NX_BUILDDIR"/capture/cupti/.libs/libnx-cupti.so 2>/dev/null)" ]; then
	is "$(var CUDA_INJECTION64_PATH)" "<unset>" "cupti without the library: not set"
	grep -q "no CUPTI collector" "$T/e.err"
	ok $? "cupti without the library: warned"
else
	is "$(var CUDA_INJECTION64_PATH)" "$NX_BUILDDIR/capture/cupti/.libs/libnx-cupti.so" \
		"cupti: the built collector"
fi

# Backend none.
envj --set NX_KERNEL_BACKEND=none
is "$(lay neuron)$(lay cuda)" "[][]" "none: no kernel variables"
is "$(jget "$T/e.json" "j['layers']['kernel']['runs']")" "False" "none: kernel layer off"

# Torch.
PYTHONPATH=/their/path envj --set NX_TORCH_RECORD_SHAPES=1 --set NX_TORCH_WITH_STACK=on \
	--set NX_TORCH_PROFILE_MEMORY=true --set NX_WARMUP_STEPS=2 --set NX_ACTIVE_STEPS=4 \
	--set NX_KERNEL_BACKEND=none
is "$(var PYTHONPATH)" "$SRC/capture/python:/their/path" "torch: hook first on PYTHONPATH, theirs kept"
is "$(var NX_TORCH_RECORD_SHAPES)$(var NX_TORCH_WITH_STACK)$(var NX_TORCH_PROFILE_MEMORY)" "111" \
	"torch options passed through normalised"
is "$(var NX_WARMUP_STEPS)/$(var NX_ACTIVE_STEPS)" "2/4" "window passed through"
is "$(var NX_TORCH_ACTIVITIES)" "cpu,cuda" "torch: CUDA activities when CUPTI is not ours"
envj --set NX_FRAMEWORK_PROFILER=none
is "$(var PYTHONPATH)" "<unset>" "profiler none: no hook"

# Upload keys; the token never reaches the workload and is masked.
envj --set NX_UPLOAD=http://127.0.0.1:9/ --set NX_TOKEN=s3cret --set NX_RUN_NAME=r1 \
	--set NX_TAGS=a,b
is "$(var NX_UPLOAD)|$(var NX_RUN_NAME)|$(var NX_TAGS)" "http://127.0.0.1:9/|r1|a,b" "upload keys"
is "$(var NX_TOKEN)" "<unset>" "token not given to the workload"
is "$(jget "$T/e.json" "j['config']['NX_TOKEN']['value']")" "***" "token masked"
grep -q s3cret "$T/e.json"
ok $((! $?)) "token never printed"

# Precedence: --set > environment > --env FILE > defaults.
printf 'NX_ACTIVE_STEPS=7\nNX_WARMUP_STEPS=6\nNX_TAGS=file\n' >"$T/p.env"
NX_WARMUP_STEPS=5 NX_TAGS=env envj --env "$T/p.env" --set NX_TAGS=set
is "$(jget "$T/e.json" "j['config']['NX_ACTIVE_STEPS']['value'], j['config']['NX_ACTIVE_STEPS']['where']")" \
	"7 $T/p.env:1" "file beats defaults (with file:line)"
is "$(jget "$T/e.json" "j['config']['NX_WARMUP_STEPS']['value'], j['config']['NX_WARMUP_STEPS']['source']")" \
	"5 environment" "environment beats file"
is "$(jget "$T/e.json" "j['config']['NX_TAGS']['value'], j['config']['NX_TAGS']['source']")" \
	"set --set" "--set beats environment"

# Profiles.
envj --env "$NX_SRCDIR/env/framework.env"
is "$(jget "$T/e.json" "j['config']['NX_LAYERS']['value'], j['kernel_backend']")" \
	"framework none" "framework profile"
envj --env "$NX_SRCDIR/env/full.env" --set NX_KERNEL_BACKEND=none
is "$(lay compile)" "['NEURON_FRAMEWORK_DEBUG', 'NKI_DEBUG_INFO', 'XLA_HLO_DEBUG', 'XLA_IR_DEBUG']" \
	"full profile: source mapping"
envj --env "$NX_SRCDIR/env/kernel.env" --set NX_KERNEL_BACKEND=neuron
is "$(var PYTHONPATH)|$(var NEURON_RT_INSPECT_ENABLE)" "<unset>|1" "kernel profile"
envj --env "$NX_SRCDIR/env/neuron-model.env"
is "$(var NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP)" "2" "neuron-model profile"

# Conflict: Neuron inspect + torch.profiler in one process.
envj --set NX_KERNEL_BACKEND=neuron
grep -q "conflict:.*forbid NEURON_RT_INSPECT_ENABLE=1 together with torch.profiler" "$T/e.err"
ok $? "conflict warned on stderr"
is "$(jget "$T/e.json" "any('conflict' in w for w in j['warnings'])")" "True" "conflict in JSON"
is "$(var NEURON_RT_INSPECT_ENABLE)|$(var PYTHONPATH)" "1|<unset>" "kernel wins by default"
envj --set NX_KERNEL_BACKEND=neuron --set NX_CONFLICT_PREFER=framework
is "$(var NEURON_RT_INSPECT_ENABLE)|$(var PYTHONPATH)" "<unset>|$SRC/capture/python" \
	"NX_CONFLICT_PREFER=framework keeps torch"

# Misspelt keys.
"$NX" env --set NX_ACTIVE_STEP=3 >/dev/null 2>"$T/e.err"
is "$?" "2" "--set unknown key fails"
grep -q "did you mean NX_ACTIVE_STEPS" "$T/e.err"
ok $? "--set suggests the closest key"
NX_WARMUP_STPES=2 envj
grep -q "environment: unknown variable NX_WARMUP_STPES (did you mean NX_WARMUP_STEPS?)" "$T/e.err"
ok $? "misspelt environment variable warned"
printf '# mine\nNX_LAYRES=kernel\n' >"$T/typo.env"
envj --env "$T/typo.env"
ok $? "file typo is only a warning"
grep -q "$T/typo.env:2: unknown key NX_LAYRES (did you mean NX_LAYERS?)" "$T/e.err"
ok $? "file typo: file:line and suggestion"

# Bad config lines: a clear error with file and line.
bad() { # bad NAME TEXT EXPECTED
	printf "$2" >"$T/bad.env"
	"$NX" env --env "$T/bad.env" >/dev/null 2>"$T/e.err"
	is "$?" "2" "$1: exit 2"
	if grep -qF "$T/bad.env:$3" "$T/e.err"; then ok 0 "$1: message"; else
		ok 1 "$1: message"; sed 's/^/#   /' "$T/e.err"; fi
}
bad "no equals" 'NX_LAYERS=kernel\njust words\n' "2: expected KEY=VALUE"
bad "bad value" '\n\nNX_ACTIVE_STEPS=lots\n' "3: NX_ACTIVE_STEPS: 'lots' is not a non-negative integer"
bad "bad enum" 'NX_KERNEL_BACKEND=rocm\n' "1: NX_KERNEL_BACKEND: 'rocm' is not one of auto|cupti|neuron|none"
bad "open quote" 'NX_RUN_NAME="abc\n' "1: unterminated \" quote"
bad "bad layer" 'NX_LAYERS=framework,gpu\n' "1: NX_LAYERS: 'gpu' is not one of"
"$NX" env --env "$T/missing.env" >/dev/null 2>"$T/e.err"
is "$?" "2" "missing file fails"
grep -q "$T/missing.env: No such file" "$T/e.err"
ok $? "missing file named"

# Text output lists the layers' variables.
"$NX" env --set NX_KERNEL_BACKEND=neuron --set NX_FRAMEWORK_PROFILER=none >"$T/e.txt" 2>/dev/null
grep -q '^\[neuron\]' "$T/e.txt" && grep -q '^NEURON_RT_INSPECT_DEVICE_PROFILE=session' "$T/e.txt"
ok $? "text output per layer"
done_testing
