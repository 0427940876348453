#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/perfetto/ntff-spec.sh - schemas/ntff.md is enough to read and write
# .ntff files: tests/perfetto/ntff_spec.py, a reader and writer written from
# that page alone, reads what `convert` writes (sections, payloads, verdicts
# on damaged copies) exactly as `ntff ls` does, and neuron-explorer reads
# what it writes (streamed sections, a gzip'd JSON payload, an attachment, a
# kind it does not know, clock offsets from the manifest, a section whose
# writer died).
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
SPEC="$NX_SRCDIR/tests/perfetto/ntff_spec.py"
SMALL="$NX_SRCDIR/tests/data/perfetto/small.pftrace"
JS="$NX_SRCDIR/tests/data/json/small-object.json"

# same_ls FILE NAME: `ntff ls --json` lists the sections the spec reader
# lists, field by field, and `verify` counts the damage it finds
same_ls() {
	"$NX" ntff ls --json "$1" >"$T/ours" 2>/dev/null
	"$NX" ntff verify "$1" >"$T/verify" 2>/dev/null
	"$PY" "$SPEC" ls "$1" >"$T/spec"
	"$PY" - "$T/ours" "$T/spec" "$T/verify" <<'PYEOF'
import json, re, sys
ours = [json.loads(l) for l in open(sys.argv[1])]
spec = [json.loads(l) for l in open(sys.argv[2])]
stop = spec.pop()['stop']
bad = 0
if len(ours) != len(spec):
    print('#   sections: ours %d, spec %d' % (len(ours), len(spec)))
    bad = 1
for o, s in zip(ours, spec):
    for k, v in s.items():
        if o.get(k) != v:
            print('#   section %d %s: ours %r, spec %r' % (s['index'], k, o.get(k), v))
            bad = 1
damaged = sum(s['status'] != 'ok' for s in spec) + (stop is not None and stop[0] in
                                                     ('truncated header', 'corrupt header'))
m = re.search(r': (\d+) sections? ok, (\d+) damaged$', open(sys.argv[3]).read().strip())
got = (int(m.group(1)), int(m.group(2))) if m else None
want = (sum(s['status'] == 'ok' for s in spec), damaged)
if got != want:
    print('#   verify: %r, spec %r' % (got, want))
    bad = 1
sys.exit(bad)
PYEOF
	ok $? "$2"
}

# --- what neuron-explorer writes, read from the spec ---
check "convert small.pftrace -> .ntff" "$NX" convert "$SMALL" "$T/a.ntff"
same_ls "$T/a.ntff" "spec reader lists convert's Perfetto container as ntff ls does"
"$PY" "$SPEC" cat "$T/a.ntff" import/small.pftrace | cmp -s - "$SMALL"
ok $? "spec reader: the inflated payload is the input"
is "$("$PY" "$SPEC" cat "$T/a.ntff" manifest.json | jget /dev/stdin "j['format'], j['sections'][0]['name']")" \
   "neuron-explorer-convert import/small.pftrace" "spec reader: the manifest names the section"
check "convert small-object.json -> .ntff" "$NX" convert "$JS" "$T/b.ntff"
same_ls "$T/b.ntff" "spec reader lists convert's JSON container as ntff ls does"
"$PY" "$SPEC" cat "$T/b.ntff" import/small-object.json | cmp -s - "$JS"
ok $? "spec reader: the JSON payload is the input"

# damaged copies: the same verdicts, offsets and counts
for how in flip-payload cut-payload cut-name cut-header flip-length bad-zlib raw-len; do
	"$PY" "$SPEC" damage "$T/a.ntff" "$T/$how.ntff" "$how"
	same_ls "$T/$how.ntff" "damaged ($how): ntff ls and verify agree with the spec reader"
	"$NX" ntff verify "$T/$how.ntff" >/dev/null 2>"$T/e.txt"
	is $? 1 "damaged ($how): verify exits 1"
	sed 's/^/#   /' "$T/e.txt"
done
"$NX" ntff verify "$T/cut-payload.ntff" 2>"$T/e.txt" >/dev/null
is "$(grep -c 'is truncated' "$T/e.txt")" 1 "a cut section is reported once"

# --- what the spec writer writes, read by neuron-explorer ---
"$PY" "$SPEC" make "$T/c.ntff" "$SMALL" "$JS"; ok $? "spec writer: five sections"
"$NX" ntff verify "$T/c.ntff" >"$T/v.txt"; ok $? "verify accepts it"
grep -q ': 5 sections ok, 0 damaged$' "$T/v.txt"; ok $? "... every section ok"
same_ls "$T/c.ntff" "ntff ls lists it as the spec reader does"
is "$("$NX" ntff ls --json "$T/c.ntff" | sed -n 4p | jget /dev/stdin "j['kind'], j['kind_id']")" \
   "unknown 99" "a kind it does not know is listed, not fatal"
"$NX" ntff cat "$T/c.ntff" kernel/trace.pftrace | cmp -s - "$SMALL"
ok $? "a streamed (rewritten header) zlib section reads back"
"$NX" ntff cat "$T/c.ntff" framework/trace.json.gz | gzip -dc | cmp -s - "$JS"
ok $? "a gzip'd JSON payload stored as is reads back"

# ingest: both trace sections, the framework layer moved by its 5000 ns
"$NX" ingest --data "$T/d" --json "$SMALL" >"$T/p.json"; ok $? "ingest small.pftrace alone"
"$NX" ingest --data "$T/d" --json "$JS" >"$T/j.json"; ok $? "ingest small-object.json alone"
"$NX" ingest --data "$T/d" --json "$T/c.ntff" >"$T/c.json"; ok $? "ingest the spec writer's file"
is "$(jget "$T/c.json" "j['format'], j['slices']")" \
   "ntff $(( $(jget "$T/p.json" "j['slices']") + $(jget "$T/j.json" "j['slices']") ))" \
   "it holds the slices of both trace sections"
names() {
	"$NX" sql "$T/d/traces/$(jget "$1" "j['id']").db" \
		"SELECT s.s || ' ' || e.ts FROM events e JOIN strings s ON s.id = e.name"
}
names "$T/p.json" >"$T/p.ev"; names "$T/j.json" >"$T/j.ev"; names "$T/c.json" >"$T/c.ev"
"$PY" - "$T/p.ev" "$T/j.ev" "$T/c.ev" <<'PYEOF'
import sys
rd = lambda p: sorted(l.rstrip('\n').rsplit(' ', 1) for l in open(p) if l.strip())
want = sorted(rd(sys.argv[1]) + [[n, str(int(t) + 5000)] for n, t in rd(sys.argv[2])])
got = rd(sys.argv[3])
if got != want:
    print('#   got  %r\n#   want %r' % (got[:6], want[:6]))
sys.exit(got != want)
PYEOF
ok $? "events: the kernel layer's as they are, the framework layer's 5000 ns later"

# a writer that died while streaming the last section
"$PY" "$SPEC" make "$T/k.ntff" "$SMALL" "$JS" --incomplete
"$NX" ntff verify "$T/k.ntff" >"$T/v.txt" 2>"$T/e.txt"; is $? 1 "verify exits 1 on an incomplete section"
grep -q ': 5 sections ok, 1 damaged$' "$T/v.txt"; ok $? "... five sections ok, one damaged"
is "$(grep -c 'kernel/late.pftrace.*never completed' "$T/e.txt")" 1 "... said once, by name"
same_ls "$T/k.ntff" "ntff ls lists it as the spec reader does"
"$NX" ingest --data "$T/d" --json "$T/k.ntff" >"$T/k.json" 2>"$T/e.txt"
ok $? "the complete sections still ingest"
is "$(jget "$T/k.json" "j['slices']")" "$(jget "$T/c.json" "j['slices']")" "... all of them"
"$NX" sql "$T/d/traces/$(jget "$T/k.json" "j['id']").db" \
	"SELECT value FROM meta WHERE key = 'warnings'" >"$T/w.json"
is "$(jget "$T/w.json" "len(j), 'kernel/late.pftrace' in j[0] and 'never completed' in j[0]")" \
   "1 True" "one warning names the incomplete section"
done_testing
