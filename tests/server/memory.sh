#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/memory.sh - how serve, ingest and convert ask for memory:
# glibc's malloc on transparent huge pages (cli/cli-thp.c: the program runs
# itself again with glibc.malloc.hugetlb=1 in GLIBC_TUNABLES) and SQLite's
# pages from one shared pool (store/st-pcache.c).  Checked on a real server
# through /proc, and on real ingests: the same store whichever way memory
# came, the pool used, and a bad setting refused with a one-line error.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
GEN=${NX_BUILDDIR:-$(pwd)}/tests/deps-gen
[ -x "$GEN" ] || skip_all "no tests/deps-gen in the build directory"
[ -r /proc/self/environ ] || skip_all "no /proc"

printf 'always [madvise] never\n' >"$T/thp-madvise"
printf 'always madvise [never]\n' >"$T/thp-never"
printf '[always] madvise never\n' >"$T/thp-always"
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
new_glibc=0
# shellcheck disable=SC2086 # two numbers
[ -n "$glibc" ] && set -- $glibc && { [ "$1" -gt 2 ] || { [ "$1" -eq 2 ] && [ "$2" -ge 35 ]; }; } &&
	new_glibc=1
valgrind=0
case "${LD_PRELOAD:-}" in *vgpreload*) valgrind=1 ;; esac

# tunables ENV-WORDS...: start a server under env(1) with ENV-WORDS, and set
# TUN to the GLIBC_TUNABLES the running server has ("-" when unset).
tunables() {
	SRV_ENV="$*"
	TUN="no server"
	srv_start "$T/d1" || return 0
	tr '\0' '\n' <"/proc/$SRV_PID/environ" >"$T/environ"
	TUN=$(sed -n 's/^GLIBC_TUNABLES=//p' "$T/environ")
	TUN=${TUN:--}
}
# heap_hg: the server's [heap] mapping is marked for huge pages (VmFlags hg)
heap_hg() {
	awk '/ \[heap\]$/ { h = 1; next } /^[0-9a-f]+-[0-9a-f]+ / { h = 0 }
	     h && /^VmFlags:.* hg/ { f = 1 } END { exit !f }' "/proc/$SRV_PID/smaps"
}
heap_not_hg() { ! heap_hg; }
# heap_check NAME heap_hg|heap_not_hg: after a request, where the kernel's own
# THP mode is madvise (glibc asks for huge pages only there)
heap_check() {
	if [ "$asan" -eq 1 ]; then
		skip "AddressSanitizer's malloc ignores glibc's tunables"
	elif [ "$madvise_kernel" -eq 1 ]; then
		curl -s "$URL/api/traces" >/dev/null
		check "$1" "$2"
	else
		skip "the kernel's THP mode is not madvise"
	fi
}
madvise_kernel=0
grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null && madvise_kernel=1
# AddressSanitizer's allocator replaces glibc's malloc and ignores its
# tunables: the exec still happens, its effect cannot be seen
asan=0
ldd "$NX" 2>/dev/null | grep -q libasan && asan=1

if [ "$new_glibc" -eq 1 ] && [ "$valgrind" -eq 0 ]; then
	tunables -u GLIBC_TUNABLES -u NX_MALLOC_THP NX_THP_SYSFS="$T/thp-madvise"
	is "$TUN" "glibc.malloc.hugetlb=1" "THP mode madvise: serve runs with the tunable"
	is "$(curl -s "$URL/healthz" | head -c 200 | grep -c '"ok"')" 1 \
		"the same process id answers (exec, not fork)"
	is "$(cat "/proc/$SRV_PID/comm")" "neuron-explorer" "named after the program, not /proc/self/exe"
	grep -q '^NX_THP_SYSFS=' "$T/environ"
	ok $? "the rest of the environment carried over"
	# The tunable does what it is for where the kernel's own mode is madvise:
	# glibc marks the heap it grows for huge pages (VmFlags hg).
	heap_check "the server's heap asks for huge pages" heap_hg
	grep -q '^NX_THP_REEXEC=' "$T/environ"
	ok $? "the exec'd process was marked, so that it does not exec again"
	is "$(ps -o args= -p "$SRV_PID" | grep -c 'serve --listen')" 1 "with the same arguments"
	srv_stop

	# glibc cuts GLIBC_TUNABLES at the first ':' where /proc shows it, as it
	# parses it: the user's part shows, ours is seen by what it does.
	tunables GLIBC_TUNABLES=glibc.malloc.arena_max=2 NX_THP_SYSFS="$T/thp-madvise"
	is "$TUN" "glibc.malloc.arena_max=2" "the user's tunables are kept"
	heap_check "... and ours appended: the heap asks for huge pages" heap_hg
	srv_stop
	tunables GLIBC_TUNABLES=glibc.malloc.hugetlb=0 NX_THP_SYSFS="$T/thp-madvise"
	is "$TUN" "glibc.malloc.hugetlb=0" "the user's own hugetlb setting stands"
	srv_stop
else
	for n in 1 2 3 4 5 6 7 8 9 10; do skip "glibc before 2.35 or under valgrind: no re-exec"; done
fi
# Started through the dynamic loader, /proc/self/exe is the loader: no
# exec (it would have the loader open a file named "serve"), and it runs.
interp=$(ldd "$NX" 2>/dev/null | sed -n 's/^[[:space:]]*\(\/[^ ]*ld-linux[^ ]*\) .*/\1/p' | head -1)
if [ -n "$interp" ] && [ -x "$interp" ]; then
	tunables -u GLIBC_TUNABLES NX_THP_SYSFS="$T/thp-madvise" "$interp"
	is "$TUN" "-" "through the loader ($interp): no re-exec"
	is "$(curl -s "$URL/healthz" | grep -c '"ok"')" 1 "... and the server answers"
	srv_stop
	NX_THP_SYSFS="$T/thp-madvise" "$interp" "$NX" ingest --data "$T/ld" "$NX_SRCDIR/tests/data/json/edge-kinds.json" \
		>/dev/null 2>"$T/ld.err"
	ok $? "ingest through the loader exits 0"
else
	for n in 1 2 3; do skip "no ld-linux loader named by ldd"; done
fi
tunables -u GLIBC_TUNABLES NX_MALLOC_THP=0 NX_THP_SYSFS="$T/thp-madvise"
is "$TUN" "-" "NX_MALLOC_THP=0: no re-exec"
heap_check "... and the heap is left as it is" heap_not_hg
srv_stop
tunables -u GLIBC_TUNABLES NX_THP_SYSFS="$T/thp-never"
is "$TUN" "-" "THP mode never: nothing to ask for"
srv_stop
tunables -u GLIBC_TUNABLES NX_THP_SYSFS="$T/thp-always"
is "$TUN" "-" "THP mode always: no need to ask"
srv_stop
tunables -u GLIBC_TUNABLES NX_THP_SYSFS="$T/no-such-file"
is "$TUN" "-" "no THP in the kernel: nothing to ask for"
srv_stop

# Ingest: the same store with the tunable, the pool, a pool too small for
# the ingest's cache (SQLite takes malloc for the rest), and neither.
"$GEN" -n 20000 -s 7 >"$T/t.json"
ok $? "a 20000-event dependency trace"
ingest() { # NAME ENV-WORDS...: ingest t.json into $T/NAME under env(1); ID: its id
	_name=$1; shift
	env "$@" "$NX" ingest --data "$T/$_name" --json "$T/t.json" >"$T/$_name.json" 2>"$T/$_name.err"
	ok $? "ingest ($_name)"
	ID=$(jget "$T/$_name.json" "j['id']")
}
ingest all -u GLIBC_TUNABLES NX_THP_SYSFS="$T/thp-madvise" NX_STORE_TIMING=1
id=$ID
ingest all2 -u GLIBC_TUNABLES NX_THP_SYSFS="$T/thp-madvise"
id2=$ID
grep -E '^store: page pool ([0-9]+ of [0-9]+ slots|off$)' "$T/all.err" >"$T/pool"
ok $? "NX_STORE_TIMING=1 reports the page pool"
if [ "$asan" -eq 1 ]; then
	check "off by default under AddressSanitizer" grep -q 'page pool off' "$T/pool"
else
	check "the pool held the ingest's pages" \
		awk '{ for (i = 1; i <= NF; i++) if ($i == "most;") m = $(i - 1) } END { exit !(m > 16) }' "$T/pool"
fi
ingest none NX_MALLOC_THP=0 NX_PAGE_POOL=0 NX_STORE_TIMING=1
id3=$ID
check "NX_PAGE_POOL=0 turns the pool off" grep -q '^store: page pool off' "$T/none.err"
ingest small NX_PAGE_POOL=4 NX_STORE_TIMING=1
id4=$ID
check "a 4-slot pool spills to malloc" \
	grep -Eq '^store: page pool [0-9]+ of 4 slots in use, [0-9]+ at most; [0-9.]*[1-9][0-9.]* MB overflow' "$T/small.err"
store_digest "$T/all" "$id" >"$T/dig.all"
store_digest "$T/all2" "$id2" >"$T/dig.all2"
store_digest "$T/none" "$id3" >"$T/dig.none"
store_digest "$T/small" "$id4" >"$T/dig.small"
check "the store is not empty" test "$(wc -l <"$T/dig.all")" -gt 1000
check "the same store twice" cmp "$T/dig.all" "$T/dig.all2"
check "the same store without the tunable and the pool" cmp "$T/dig.all" "$T/dig.none"
check "... and with the pool spilling" cmp "$T/dig.all" "$T/dig.small"

for bad in abc -1 12x 99999999; do
	NX_PAGE_POOL=$bad "$NX" ingest --data "$T/bad" --json "$T/t.json" >/dev/null 2>"$T/bad.err"
	is $? 2 "NX_PAGE_POOL=$bad: exit 2"
	check "one line saying what it must be" \
		sh -c "[ \$(wc -l <'$T/bad.err') -eq 1 ] && grep -q '^neuron-explorer: NX_PAGE_POOL must be' '$T/bad.err'"
done
check "nothing was stored by the refused runs" test ! -e "$T/bad/traces"
done_testing
