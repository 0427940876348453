/* SPDX-License-Identifier: MIT */
/* fuzz/fuzz-replay.c - the corpus replay driver shared by the fuzz targets. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc.h"
#include "fuzz/fuzz-replay.h"

static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct tc_buf b;
	char chunk[8192];
	size_t n;

	if (!f)
		return -1;
	tc_buf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		tc_buf_add(&b, chunk, n);
	fclose(f);
	LLVMFuzzerTestOneInput((const uint8_t *)(b.data ? b.data : ""), b.len);
	tc_buf_free(&b);
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
fuzz_replay_main(const char *corpus, int argc, char **argv)
{
	const char *src = getenv("NX_SRCDIR");
	char dir[1024], path[2048];
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	int failed = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/fuzz/corpus/%s", argc > 1 ? argv[1] : src ? src : ".",
		 corpus);
	d = opendir(dir);
	if (!d) {
		printf("1..0 # SKIP no corpus at %s\n", dir);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = tc_xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = tc_xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (replay_file(path)) {
			printf("not ok %zu - %s: cannot read\n", i + 1, names[i]);
			failed++;
		} else {
			printf("ok %zu - %s replays\n", i + 1, names[i]);
		}
		fflush(stdout);
		free(names[i]);
	}
	free(names);
	if (n < 10) {
		printf("not ok %zu - corpus has %zu files, want at least 10\n", n + 1, n);
		failed++;
		n++;
	}
	printf("1..%zu\n", n);
	return failed ? 1 : 0;
}
