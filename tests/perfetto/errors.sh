#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/perfetto/errors.sh - bad Perfetto input fails `ingest` with a
# non-zero exit and one line naming the file and the byte offset: garbage
# after a packet tag, a truncated varint, a truncated packet, a truncated gzip
# stream, a corrupt compressed_packets block.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
SMALL="$NX_SRCDIR/tests/data/perfetto/small.pftrace"

# fails NAME FILE REGEX
fails() {
	"$NX" ingest --data "$T/d" "$2" >"$T/out.txt" 2>"$T/err.txt"
	rc=$?
	[ $rc -eq 1 ]; ok $? "$1: exit status 1 ($rc)"
	is "$(wc -l <"$T/err.txt" | tr -d ' ')" 1 "$1: one-line message"
	grep -Eq "$3" "$T/err.txt"; ok $? "$1: message says /$3/"
	sed 's/^/#   /' "$T/err.txt"
}

printf '\n\377\377' >"$T/varint.pftrace"
fails "truncated varint" "$T/varint.pftrace" "truncated varint \(packet length\) at byte 0"
head -c $(( $(wc -c <"$SMALL") - 3 )) "$SMALL" >"$T/cut.pftrace"
fails "truncated packet" "$T/cut.pftrace" "truncated packet at byte [0-9]+: [0-9]+ bytes announced, [0-9]+ present"
{ cat "$SMALL"; printf '\017\001'; } >"$T/tag.pftrace"
fails "bad field tag" "$T/tag.pftrace" "bad field tag 0xf at byte $(wc -c <"$SMALL" | tr -d ' ')"
gzip -c "$SMALL" >"$T/z.gz"
head -c $(( $(wc -c <"$T/z.gz") - 12 )) "$T/z.gz" >"$T/cut.pftrace.gz"
fails "truncated gzip" "$T/cut.pftrace.gz" "gzip"
"$PY" - "$T/badz.pftrace" <<'PYEOF'
import sys
# a packet whose compressed_packets (field 50) is not a zlib stream
payload = b'\x92\x03' + bytes([12]) + b'not zlib....'
sys.stdout = open(sys.argv[1], 'wb')
sys.stdout.write(b'\x0a' + bytes([len(payload)]) + payload)
PYEOF
fails "corrupt compressed_packets" "$T/badz.pftrace" "corrupt compressed_packets at byte 0"
gzip -c "$SMALL" >"$T/ok.pftrace.gz"
"$NX" ingest --data "$T/d" --json "$T/ok.pftrace.gz" >"$T/ok.json"; ok $? "the same trace gzip'd ingests"
is "$(jget "$T/ok.json" "j['format'], j['slices']")" "perfetto 2" "gzip'd: detected as perfetto by content"
done_testing
