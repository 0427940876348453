/* SPDX-License-Identifier: MIT */
/*
 * common/tc-limits.c - what this process may use of the machine: memory and
 * CPUs, lowered to the limits of its cgroup (a container's, systemd's
 * MemoryMax= and CPUQuota=) and, for CPUs, to its affinity mask.  Budgets
 * sized from the machine alone over-commit inside a container: a 2 GB
 * container on a 64 GB host, 8 threads under a 2-CPU quota.
 *
 * Cgroup files are read under a root prefix so the tests can hand over
 * fake /proc and /sys trees.  Limits apply down the hierarchy, so every
 * directory from the process's cgroup up to the mount's top counts (the top
 * alone is what a container sees when its path is not visible inside).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/tc.h"

/* A limit read from cgroup directory @dir; 0: none there. */
typedef uint64_t (*tc_limit_fn)(const char *dir);

/* The first number in file @path (@n2: a second one, "QUOTA PERIOD"); 0 if none. */
static uint64_t
tc_read_num(const char *path, uint64_t *n2)
{
	char buf[64], *end, *end2;
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	if (n2)
		*n2 = 0;
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9') {
		v = strtoull(buf, &end, 10);
		if (n2 && *end == ' ') {
			*n2 = strtoull(end + 1, &end2, 10);
			end = end2;
		}
		if (*end && *end != '\n')
			v = 0;
	}
	fclose(f);
	return v;
}

/* tc_read_num() of file @name in directory @dir. */
static uint64_t
tc_read_in(const char *dir, const char *name, uint64_t *n2)
{
	char *f = tc_xasprintf("%s/%s", dir, name);
	uint64_t v = tc_read_num(f, n2);

	free(f);
	return v;
}

static uint64_t
tc_mem_v2(const char *dir)
{
	return tc_read_in(dir, "memory.max", NULL);
}

static uint64_t
tc_mem_v1(const char *dir)
{
	return tc_read_in(dir, "memory.limit_in_bytes", NULL);
}

/* CPUs of a quota: QUOTA / PERIOD rounded up; 0 without a quota. */
static uint64_t
tc_cpus_of(uint64_t quota, uint64_t period)
{
	return quota && period ? (quota + period - 1) / period : 0;
}

static uint64_t
tc_cpu_v2(const char *dir)
{
	uint64_t period, quota = tc_read_in(dir, "cpu.max", &period);	/* "max 100000": 0 */

	return tc_cpus_of(quota, period);
}

static uint64_t
tc_cpu_v1(const char *dir)
{
	/* a quota of -1 (none) reads as 0 */
	return tc_cpus_of(tc_read_in(dir, "cpu.cfs_quota_us", NULL),
			  tc_read_in(dir, "cpu.cfs_period_us", NULL));
}

/* The least of @fn over @mount + @path and every directory above it; 0 if none. */
static uint64_t
tc_cgroup_least(const char *root, const char *mount, const char *path, tc_limit_fn fn)
{
	char *p = tc_xstrdup(path);
	uint64_t least = 0;

	for (;;) {
		char *dir = tc_xasprintf("%s%s%s", root, mount, strcmp(p, "/") ? p : "");
		uint64_t v = fn(dir);
		char *slash = strrchr(p, '/');

		free(dir);
		if (v && (!least || v < least))
			least = v;
		if (slash && slash != p)
			*slash = 0;
		else if (*p && strcmp(p, "/"))
			strcpy(p, "/");
		else
			break;
	}
	free(p);
	return least;
}

/* Whether the comma-separated @list names controller @name. */
static bool
tc_has_ctl(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *c = list; c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL)
		if (!strncmp(c, name, n) && (c[n] == ',' || !c[n]))
			return true;
	return false;
}

/*
 * The least limit over the process's cgroups (@root/proc/self/cgroup): @v2
 * on the unified hierarchy, @v1 on the @ctl controller's mount (@mounts, the
 * directories it may be mounted at under /sys/fs/cgroup, NULL-terminated).
 */
static uint64_t
tc_cgroup_limit(const char *root, tc_limit_fn v2, const char *ctl, const char *const *mounts,
		tc_limit_fn v1)
{
	char *cg = tc_xasprintf("%s/proc/self/cgroup", root), line[4096];
	FILE *f = fopen(cg, "re");
	uint64_t least = 0, v;

	while (f && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2++ = 0;
		c2[strcspn(c2, "\n")] = 0;
		v = 0;
		if (!c1[1] && !strncmp(line, "0:", 2)) {	/* v2: 0::PATH */
			v = tc_cgroup_least(root, "/sys/fs/cgroup", c2, v2);
		} else if (tc_has_ctl(c1 + 1, ctl)) {
			for (int i = 0; mounts[i] && !v; i++)
				v = tc_cgroup_least(root, mounts[i], c2, v1);
		}
		if (v && (!least || v < least))
			least = v;
	}
	if (f)
		fclose(f);
	free(cg);
	return least;
}

uint64_t
tc_mem_total_at(const char *root)
{
	static const char *const mounts[] = { "/sys/fs/cgroup/memory", NULL };
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
	uint64_t lim = tc_cgroup_limit(root, tc_mem_v2, "memory", mounts, tc_mem_v1);

	return lim && (!mem || lim < mem) ? lim : mem;
}

uint64_t
tc_mem_total(void)
{
	return tc_mem_total_at("");
}

uint64_t
tc_mem_share(unsigned div, uint64_t least, uint64_t most)
{
	uint64_t mem = tc_mem_total();

	return mem ? TC_MAX(least, TC_MIN(mem / div, most)) : least;
}

int
tc_ncpus_at(const char *root)
{
	static const char *const mounts[] = {
		"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuacct,cpu", NULL
	};
	cpu_set_t set;
	long n = 0;
	uint64_t q;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0)
		n = 1;
	q = tc_cgroup_limit(root, tc_cpu_v2, "cpu", mounts, tc_cpu_v1);
	if (q && q < (uint64_t)n)
		n = (long)q;
	return (int)TC_MIN(n, 4096L);
}

int
tc_ncpus(void)
{
	return tc_ncpus_at("");
}
