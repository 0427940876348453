#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/perfetto/ntff.sh - `convert IN OUT.ntff` and `ntff ls|cat|verify`
# through the real binary, on a good container and on damaged copies (a
# flipped payload byte, a file cut mid-section): damage is reported by
# section name and byte offset with a non-zero exit.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
SMALL="$NX_SRCDIR/tests/data/perfetto/small.pftrace"

"$NX" ntff --help >"$T/h.txt"; ok $? "ntff --help exits 0"
grep -q "verify" "$T/h.txt"; ok $? "ntff --help lists verify"
"$NX" ntff frob x 2>/dev/null; is $? 2 "ntff: unknown command exits 2"

check "convert small.pftrace -> .ntff" "$NX" convert "$SMALL" "$T/a.ntff"
"$NX" ntff ls "$T/a.ntff" >"$T/ls.txt"; ok $? "ls exits 0"
sed 's/^/#   /' "$T/ls.txt"
grep -Eq '^0 +perfetto +yes .* ok +import/small.pftrace$' "$T/ls.txt"; ok $? "ls: the trace section, compressed, CRC ok"
grep -Eq '^1 +manifest +no .* ok +manifest.json$' "$T/ls.txt"; ok $? "ls: the manifest"
"$NX" ntff ls --json "$T/a.ntff" >"$T/ls.json"; ok $? "ls --json exits 0"
is "$(head -1 "$T/ls.json" | jget /dev/stdin "j['kind'], j['status'], j['raw']" 2>/dev/null)" \
   "perfetto ok $(wc -c <"$SMALL" | tr -d ' ')" "ls --json: kind, status, raw size"
"$NX" ntff verify "$T/a.ntff" >"$T/v.txt"; ok $? "verify exits 0 on a good file"
"$NX" ntff cat "$T/a.ntff" >"$T/m.json"; ok $? "cat prints the manifest"
is "$(jget "$T/m.json" "j['format_version'], j['layers']['import']['source_format'], j['sections'][0]['name']")" \
   "1 perfetto import/small.pftrace" "manifest: version, layer, sections"
"$NX" ntff cat "$T/a.ntff" import/small.pftrace >"$T/x.pftrace"; ok $? "cat SECTION by name"
cmp -s "$T/x.pftrace" "$SMALL"; ok $? "cat SECTION gives the original bytes"
"$NX" ntff cat "$T/a.ntff" 0 | cmp -s - "$SMALL"; ok $? "cat by index"
"$NX" ntff cat --raw "$T/a.ntff" 0 | "$PY" -c "import sys,zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read()))" | cmp -s - "$SMALL"
ok $? "cat --raw gives the zlib stream as stored"
"$NX" ntff cat "$T/a.ntff" nope 2>"$T/e.txt"; is $? 1 "cat of a missing section exits 1"
"$NX" ingest --data "$T/d" --json "$T/a.ntff" >"$T/i.json"; ok $? "the .ntff ingests"
is "$(jget "$T/i.json" "j['format'], j['slices'], j['instants'], j['flows']['flow']")" \
   "ntff 2 2 1" "ingest: format ntff and the trace's events"

# a flipped byte in the payload of section 0
off=$("$NX" ntff ls --json "$T/a.ntff" | head -1 | jget /dev/stdin "j['offset']")
cp "$T/a.ntff" "$T/flip.ntff"
"$PY" - "$T/flip.ntff" <<'PYEOF'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
b[16 + 40 + len("import/small.pftrace") + 7] ^= 0x20
open(p, 'wb').write(b)
PYEOF
"$NX" ntff verify "$T/flip.ntff" >"$T/v.txt" 2>"$T/e.txt"; is $? 1 "verify exits 1 on a flipped byte"
grep -q "import/small.pftrace\" at byte $off: CRC mismatch" "$T/e.txt"; ok $? "verify names the section and its offset"
sed 's/^/#   /' "$T/e.txt"
"$NX" ntff ls "$T/flip.ntff" >"$T/ls.txt"; is $? 1 "ls exits 1 on damage"
grep -q "bad-crc" "$T/ls.txt"; ok $? "ls shows bad-crc"
"$NX" ingest --data "$T/d" "$T/flip.ntff" 2>"$T/e.txt" >/dev/null; is $? 1 "ingest of the only (damaged) data section fails"
grep -q "no trace data loaded.*import/small.pftrace.*CRC mismatch" "$T/e.txt"; ok $? "ingest says why"
is "$(wc -l <"$T/e.txt" | tr -d ' ')" 1 "one-line message"

# rewrite_sec FILE MODE: section 0 changed and its CRCs made right again, so that
# only the zlib stream (MODE zlib) or the header's raw length (MODE rawlen) is wrong
rewrite_sec() {
	"$PY" - "$1" "$2" <<'PYEOF'
import struct, sys, zlib
p, mode = sys.argv[1], sys.argv[2]
b = bytearray(open(p, 'rb').read())
h = 16					# section 0's header, after the file header
nl = struct.unpack_from('<I', b, h + 8)[0]
stored = struct.unpack_from('<Q', b, h + 12)[0]
d = h + 40 + nl
if mode == 'zlib':
    b[d + 1000] ^= 0xff
    struct.pack_into('<I', b, h + 28, zlib.crc32(bytes(b[d:d + stored])))
else:
    struct.pack_into('<Q', b, h + 20, stored + 1)
struct.pack_into('<I', b, h + 36, zlib.crc32(bytes(b[h:h + 36]) + bytes(b[h + 40:h + 40 + nl])))
open(p, 'wb').write(b)
PYEOF
}
# a zlib stream that does not inflate, under a right CRC: bad data, not a bad CRC (the
# section past the reader's 256 KiB pieces, the damage in the first)
"$PY" - "$T/big.json" <<'PYEOF'
import json, random, sys
r = random.Random(7)
ev = [{"ph": "X", "name": "%032x" % r.getrandbits(128), "pid": 1, "tid": 1, "ts": i, "dur": 1}
      for i in range(20000)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PYEOF
"$NX" convert "$T/big.json" "$T/z.ntff"
is "$("$NX" ntff ls --json "$T/z.ntff" | head -1 | jget /dev/stdin "j['stored'] > 3 * 262144 // 2")" True \
	"a zlib section of more than 1.5 reader pieces"
zoff=$("$NX" ntff ls --json "$T/z.ntff" | head -1 | jget /dev/stdin "j['offset']")
rewrite_sec "$T/z.ntff" zlib
"$NX" ntff verify "$T/z.ntff" >/dev/null 2>"$T/e.txt"; is $? 1 "verify exits 1 on a zlib stream that does not inflate"
grep -q "import/big.json\" at byte $zoff: corrupt zlib payload" "$T/e.txt"; ok $? "... and says so (not a CRC mismatch)"
sed 's/^/#   /' "$T/e.txt"
"$NX" ntff ls "$T/z.ntff" >"$T/ls.txt"; grep -q "bad-data" "$T/ls.txt"; ok $? "ls shows bad-data"
# an uncompressed section (a gzip'd input is kept as it is) whose header says another raw length
gzip -c "$SMALL" >"$T/small.pftrace.gz"
"$NX" convert "$T/small.pftrace.gz" "$T/u.ntff"
is "$("$NX" ntff ls --json "$T/u.ntff" | head -1 | jget /dev/stdin "j['compressed']" 2>/dev/null)" False \
	"a gzip'd input is stored uncompressed"
"$NX" ntff verify "$T/u.ntff" >/dev/null; ok $? "... and verifies"
rewrite_sec "$T/u.ntff" rawlen
"$NX" ntff verify "$T/u.ntff" >/dev/null 2>"$T/e.txt"; is $? 1 "verify exits 1 when an uncompressed section's raw length is not its stored length"
grep -q "uncompressed, [0-9]* bytes stored, header says [0-9]* raw" "$T/e.txt"; ok $? "... and says so"
sed 's/^/#   /' "$T/e.txt"

# cut in the middle of section 0
head -c $((off + 60)) "$T/a.ntff" >"$T/cut.ntff"
"$NX" ntff verify "$T/cut.ntff" >/dev/null 2>"$T/e.txt"; is $? 1 "verify exits 1 on a cut file"
grep -q "import/small.pftrace\" at byte $off is truncated" "$T/e.txt"; ok $? "cut: names the section and offset"
"$NX" ingest --data "$T/d" "$T/cut.ntff" >/dev/null 2>"$T/e.txt"; is $? 1 "ingest of a cut file with no complete data section fails"
sed 's/^/#   /' "$T/e.txt"

# .ntff -> .ntff copies the sections, manifest included
check "convert .ntff -> .ntff" "$NX" convert "$T/a.ntff" "$T/b.ntff"
"$NX" ntff cat "$T/b.ntff" import/small.pftrace | cmp -s - "$SMALL"; ok $? "copied section intact"
"$NX" ntff cat "$T/b.ntff" | cmp -s - "$T/m.json"; ok $? "copied manifest unchanged"
# ... and salvages a damaged one: the bad section is left out, the rest verifies
"$NX" convert "$T/flip.ntff" "$T/salvaged.ntff" 2>"$T/e.txt"; ok $? "convert of a damaged .ntff succeeds"
grep -q "skipping: .*import/small.pftrace.*CRC mismatch" "$T/e.txt"; ok $? "and says which section it left out"
"$NX" ntff verify "$T/salvaged.ntff" >/dev/null; ok $? "the salvaged file verifies"
is "$("$NX" ntff ls --json "$T/salvaged.ntff" | jget /dev/stdin "j['name']")" manifest.json \
   "the salvaged file keeps the manifest only"
# a damaged section whose name is not UTF-8 is still named (the reason was dropped)
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}' >"$T/in$(printf '\376').json"
"$NX" convert "$T/in$(printf '\376').json" "$T/u8.ntff"
"$PY" - "$T/u8.ntff" <<'PYEOF'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[d.find(b'in\xfe.json') + 60] ^= 0xff
open(sys.argv[1], 'wb').write(d)
PYEOF
"$NX" ingest --data "$T/d" "$T/u8.ntff" 2>"$T/e.txt" >/dev/null; is $? 1 "a damaged section named with a byte that is not UTF-8: ingest fails"
grep -q "no trace data loaded.*import/in.*json.*CRC mismatch" "$T/e.txt"; ok $? "and says why"
is "$("$NX" ntff ls --json "$T/u8.ntff" 2>/dev/null | head -1 | jget /dev/stdin "ascii(j['name'])")" \
	"'import/in\ufffd.json'" "ls --json writes its name as UTF-8, the bad byte as U+FFFD"
"$NX" ntff ls "$T/notthere.ntff" 2>"$T/e.txt"; is $? 1 "missing file exits 1"
done_testing
