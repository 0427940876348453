#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/staging.sh - where the writer stages a trace (NX_SPILL_RAM_MB):
# the sorted runs (which the analysis reads again), the args and the explicit edges kept
# in memory (the default share), all in spill files (a share of 0), or in
# memory until a small share runs out and in files from there, store the
# same events, args and edges.  A synthetic engine trace (tests/deps-gen)
# with small runs (NX_STORE_RUN_KEYS) so that there are many of them.
# And how the store itself is written: with O_DIRECT through "nx-direct"
# (the default) or through the page cache (NX_STORE_DIRECT=0), the same.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

gen_trace 60000 11
# ingest_with DIR [VAR=VALUE...]: the id; the "staging" line in DIR.lines
ingest_with() {
	iw_dir=$1
	shift
	ingest_timed "$iw_dir" '^store: staging' NX_STORE_RUN_KEYS=5000 "$@"
}
# in_ram DIR, filed DIR, share DIR: MB, as printed
in_ram() { sed 's/.* \([0-9.]*\) MB reserved in memory.*/\1/' "$1.lines"; }
filed() { sed 's/.* \([0-9.]*\) MB to files.*/\1/' "$1.lines"; }
share() { sed 's/.*(share \([0-9.]*\) MB).*/\1/' "$1.lines"; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b) }'; }

a=$(ingest_with "$T/a")
ok $? "ingest with the default share"
b=$(ingest_with "$T/b" NX_SPILL_RAM_MB=0)
ok $? "ingest with NX_SPILL_RAM_MB=0"
c=$(ingest_with "$T/c" NX_SPILL_RAM_MB=8)
ok $? "ingest with NX_SPILL_RAM_MB=8"

is "$(filed "$T/a")" "0.0" "the default share keeps the staging in memory"
is "$(gt "$(in_ram "$T/a")" 1)" "1" "  ($(in_ram "$T/a") MB of it)"
is "$(gt "$(share "$T/a")" 67)" "1" "  a share of at least 64 MiB ($(share "$T/a") MB)"
is "$(in_ram "$T/b")" "0.0" "a share of 0 keeps nothing in memory"
is "$(gt "$(filed "$T/b")" 1)" "1" "  and writes the staging to files ($(filed "$T/b") MB)"
is "$(share "$T/c")" "8.4" "NX_SPILL_RAM_MB=8 sets the share"
is "$(gt "$(in_ram "$T/c")" 4)" "1" "  which holds some in memory ($(in_ram "$T/c") MB)"
is "$(gt "$(filed "$T/c")" 1)" "1" "  and writes the rest to files ($(filed "$T/c") MB)"
is "$(gt "$(filed "$T/b")" "$(filed "$T/c")")" "1" "  less than with none in memory"

sum() {
	"$NX" sql "$1" "SELECT id, unit, ts, dur, depth, name, cat, kind, value, args FROM events" |
		md5sum
}
esum() { "$NX" sql "$1" "SELECT src, dst, kind, label FROM edges" | md5sum; }
is "$(jget "$T/a.json" "j['slices']")" "60000" "all 60000 events stored"
for x in b c; do
	eval "id=\$$x"
	is "$(sum "$T/$x/traces/$id.db")" "$(sum "$T/a/traces/$a.db")" \
		"$x: the same events and args"
	is "$(esum "$T/$x/traces/$id.db")" "$(esum "$T/a/traces/$a.db")" \
		"$x: the same edges, labels included"
done
is "$(jget "$T/a.json" "sum(j['flows'].values()) > 100000")" "True" "and there are edges"

# direct DIR: the MB the store's file took in direct writes, as printed
direct() { sed -n 's/^store: direct *\([0-9.]*\) MB.*/\1/p' "$1.err"; }
e=$(ingest_with "$T/e" NX_STORE_DIRECT=0)
ok $? "ingest with NX_STORE_DIRECT=0"
is "$(gt "$(direct "$T/a")" 5)" "1" "by default the store is written directly ($(direct "$T/a") MB)"
is "$(direct "$T/e")" "0.0" "  and with NX_STORE_DIRECT=0 through the page cache"
is "$(sum "$T/e/traces/$e.db")" "$(sum "$T/a/traces/$a.db")" "  the same events and args"
is "$(esum "$T/e/traces/$e.db")" "$(esum "$T/a/traces/$a.db")" "  the same edges"
is "$("$NX" sql "$T/a/traces/$a.db" "PRAGMA integrity_check")" "ok" \
	"  and the directly written store passes SQLite's integrity check"

for bad in x -1 99999999; do
	ingest_with "$T/d$bad" NX_SPILL_RAM_MB=$bad >/dev/null
	is "$(share "$T/d$bad")" "$(share "$T/a")" "NX_SPILL_RAM_MB=$bad is ignored"
done
done_testing
