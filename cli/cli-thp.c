/* SPDX-License-Identifier: MIT */
/*
 * cli/cli-thp.c - run the memory-heavy commands with glibc's malloc asking
 * for transparent huge pages (cli_thp_reexec()).
 *
 * An ingest touches every page of its working set once: the seq map, the
 * staged runs, the edge pages, SQLite's page cache, each fresh from the
 * kernel.  With 4 KiB pages that is 125k page faults for the 1M-event
 * dependency trace and 134k for the 500 MB Perfetto file (docs/
 * benchmarks-deps.md, "Fourteenth round"); on a virtual machine a fault
 * costs several microseconds.  glibc's tunable glibc.malloc.hugetlb=1
 * (glibc 2.35 on) makes malloc madvise(MADV_HUGEPAGE) its heaps and large
 * mappings, so that one fault maps 2 MiB where the kernel's THP mode is
 * "madvise" (Debian's default).  Tunables are read once, when the program
 * is loaded, hence the exec: the same program, arguments and process id,
 * with the tunable added to GLIBC_TUNABLES.
 *
 * Skipped, and the command runs as it is, when NX_MALLOC_THP=0, when
 * GLIBC_TUNABLES already says glibc.malloc.hugetlb (the user's choice
 * stands), in the exec'd process itself (NX_THP_REEXEC, removed again at
 * once), when the kernel's THP mode is not "madvise" ("always" needs no
 * asking, "never" would refuse), under valgrind (whose tools would not
 * follow the exec), when started through the dynamic loader (see
 * cli_thp_self_is()), or when the exec fails.
 */
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cmds.h"
#include "common/tc.h"

#define CLI_THP_TUNABLE "glibc.malloc.hugetlb"
/* set across the exec, so that the second process never execs again: glibc
 * rewrites GLIBC_TUNABLES as it parses it, so it is no reliable marker */
#define CLI_THP_AGAIN "NX_THP_REEXEC"

/* True when the kernel hands out huge pages to regions that ask (mode "madvise"). */
static bool
cli_thp_madvise_mode(void)
{
	const char *path = getenv("NX_THP_SYSFS");	/* tests point it elsewhere */
	char buf[128];
	size_t n;
	FILE *f;

	f = fopen(path && *path ? path : "/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, "[madvise]") != NULL;
}

/*
 * True when @exe, what /proc/self/exe names, is the file this code was
 * loaded from.  Not so when the program was started through the dynamic
 * loader ("/lib64/ld-linux-x86-64.so.2 neuron-explorer serve"):
 * /proc/self/exe is the loader then, and exec'ing it with our argv would
 * have it load a file named after the first argument.  Compared by the
 * path /proc/self/maps gives the mapping that holds this function (by
 * path, not device and inode: on overlayfs, as in containers, the maps
 * show the underlying file's inode under the overlay's path).
 */
static bool
cli_thp_self_is(const char *exe)
{
	uintptr_t me = (uintptr_t)(void *)cli_thp_self_is;
	unsigned long lo, hi;
	bool same = false;
	char line[PATH_MAX + 128];
	int at;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		at = -1;	/* %n is not reached on a line with fewer fields */
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) != 2 || at < 0 ||
		    me < lo || me >= hi)
			continue;
		line[strcspn(line, "\n")] = '\0';
		same = !strcmp(line + at, exe);
		break;
	}
	fclose(f);
	return same;
}

/* True for glibc 2.35 and later, which know the tunable. */
static bool
cli_thp_glibc_knows(void)
{
	int major = 0, minor = 0;

	if (sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2)
		return false;
	return major > 2 || (major == 2 && minor >= 35);
}

void
cli_thp_reexec(char **argv)
{
	const char *on = getenv("NX_MALLOC_THP");
	const char *tun = getenv("GLIBC_TUNABLES");
	const char *pre = getenv("LD_PRELOAD");
	char self[PATH_MAX], *old, *val;
	ssize_t n;

	if (getenv(CLI_THP_AGAIN)) {	/* we are the exec'd process */
		unsetenv(CLI_THP_AGAIN);
		return;
	}
	if (on && !strcmp(on, "0"))
		return;
	if (tun && strstr(tun, CLI_THP_TUNABLE))
		return;
	if (pre && strstr(pre, "vgpreload"))
		return;
	if (!cli_thp_glibc_knows() || !cli_thp_madvise_mode())
		return;
	/* the real path, not /proc/self/exe: that would name the process "exe" */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || (size_t)n >= sizeof(self) - 1)
		return;
	self[n] = '\0';
	if (!cli_thp_self_is(self))
		return;
	old = tun ? tc_xstrdup(tun) : NULL;	/* setenv() may drop what @tun points to */
	val = tc_xasprintf("%s%s" CLI_THP_TUNABLE "=1", tun ? tun : "", tun && *tun ? ":" : "");
	if (setenv("GLIBC_TUNABLES", val, 1) == 0 && setenv(CLI_THP_AGAIN, "1", 1) == 0)
		execv(self, argv);
	/* deleted, not allowed: run as we are, and say nothing of it */
	unsetenv(CLI_THP_AGAIN);
	if (old)
		setenv("GLIBC_TUNABLES", old, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	free(old);
	free(val);
}
