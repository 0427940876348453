/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-deps-engine.c - the dependency rules on hand-built event
 * streams with known answers: access-string and operand parsing, the
 * interval map, flow/anti/output edges, semaphore order edges and the
 * reporting of malformed strings.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "deps/deps-int.h"
#include "store/store.h"
#include "tests/tap.h"

static struct tc_buf got;	/* "src>dst:kind:label;" in report order */
static int nbad;
static char first_bad[256];

static const char *kname[] = { "flow", "order", "anti", "output" };

static int
on_edge(void *ctx, int64_t src, int64_t dst, int kind, const char *label, size_t len)
{
	tc_buf_printf(&got, "%lld>%lld:%s:%s;", (long long)src, (long long)dst, kname[kind], label);
	return 0;
}

/* The same line from a label in parts, as the text it stands for. */
static int nparts;

static int
on_parts(void *ctx, int64_t src, int64_t dst, int kind, const struct deps_label *l)
{
	nparts++;
	if (l->shape == DEPS_LABEL_BYTES)
		tc_buf_printf(&got, "%lld>%lld:%s:%.*s[%llu:%llu];", (long long)src, (long long)dst,
			      kname[kind], (int)l->len, l->name, (unsigned long long)l->a,
			      (unsigned long long)l->b);
	else
		tc_buf_printf(&got, "%lld>%lld:%s:%.*s>=%llu;", (long long)src, (long long)dst,
			      kname[kind], (int)l->len, l->name, (unsigned long long)l->a);
	return 0;
}

static void
on_bad(void *ctx, int64_t eid, const char *what, const char *text)
{
	if (!nbad++)
		snprintf(first_bad, sizeof(first_bad), "event %lld: bad %s \"%s\"", (long long)eid,
			 what, text);
}

struct ev {
	int64_t ts, dur;
	const char *args;
};

/*
 * Run events (ids 1..n, already in processing order) and return the edges.
 * Every run is done twice, with and without labels in parts: both must
 * read the same.
 */
static bool use_parts;
static int parts_differ;

static const char *run1(const struct ev *evs, int n);

static const char *
run(const struct ev *evs, int n)
{
	char *text = tc_xstrdup(run1(evs, n));

	use_parts = true;
	if (strcmp(run1(evs, n), text))
		parts_differ++;
	use_parts = false;
	run1(evs, n);
	free(text);
	return got.data;
}

static const char *
run1(const struct ev *evs, int n)
{
	struct deps_engine *e = deps_engine_new(on_edge, on_bad, NULL);

	if (use_parts)
		deps_engine_set_parts(e, on_parts);
	tc_buf_reset(&got);
	tc_buf_adds(&got, "");
	nbad = 0;
	first_bad[0] = '\0';
	for (int i = 0; i < n; i++)
		deps_engine_event(e, i + 1, evs[i].ts, evs[i].dur, evs[i].args,
				  evs[i].args ? strlen(evs[i].args) : 0);
	deps_engine_finish(e);
	deps_engine_free(e);
	return got.data;
}

static void
test_parse(void)
{
	struct deps_access a;
	const char *name;
	size_t len;
	int64_t n;

	is_int(deps_access_parse("A", &a), 0, "whole buffer parses");
	ok(a.lo == 0 && a.hi == DEPS_WHOLE && a.name_len == 1, "whole buffer is [0, max)");
	is_int(deps_access_parse("act.0[0:64]", &a), 0, "decimal range parses");
	ok(a.lo == 0 && a.hi == 64 && a.name_len == 5, "decimal range values");
	is_int(deps_access_parse("B[0x100:0X1f0]", &a), 0, "hex range parses");
	ok(a.lo == 0x100 && a.hi == 0x1f0, "hex range values");
	is_int(deps_access_parse("B[ 4 : 8 ]", &a), 0, "spaces inside brackets are allowed");
	is_int(deps_access_parse("", &a), -EINVAL, "empty rejected");
	is_int(deps_access_parse("[0:4]", &a), -EINVAL, "no name rejected");
	is_int(deps_access_parse("A[8:4]", &a), -EINVAL, "lo > hi rejected");
	is_int(deps_access_parse("A[4:4]", &a), -EINVAL, "empty range rejected");
	is_int(deps_access_parse("A[0:", &a), -EINVAL, "unclosed rejected");
	is_int(deps_access_parse("A[0:4]x", &a), -EINVAL, "trailing text rejected");
	is_int(deps_access_parse("A[0-4]", &a), -EINVAL, "no colon rejected");
	is_int(deps_access_parse("A[0x:4]", &a), -EINVAL, "bare 0x rejected");
	is_int(deps_access_parse("A[0:99999999999999999999999]", &a), -EINVAL, "overflow rejected");
	is_int(deps_access_parse("my buf", &a), -EINVAL, "space in name rejected");

	is_int(deps_wait_parse("S>=3", &name, &len, &n), 0, "wait parses");
	ok(len == 1 && n == 3, "wait values");
	is_int(deps_wait_parse("S[5]>=16", &name, &len, &n), 0, "bracketed wait parses");
	ok(len == 4 && n == 16, "bracketed wait values");
	is_int(deps_wait_parse("S", &name, &len, &n), -EINVAL, "wait without >= rejected");
	is_int(deps_wait_parse(">=3", &name, &len, &n), -EINVAL, "wait without name rejected");
	is_int(deps_wait_parse("S>=x", &name, &len, &n), -EINVAL, "wait with bad count rejected");
	is_int(deps_wait_parse("S>=-1", &name, &len, &n), -EINVAL, "negative count rejected");
}

/*
 * Access strings through the engine's args scanner (whose plain strings
 * take a path of their own) against deps_access_parse(): a writer then a
 * reader of each; a string that parses gives one flow edge labelled with
 * what it parsed to, one that does not is reported twice, as it is.
 */
static void
test_scan_access(void)
{
	static const char *const strs[] = {
		"A", "A[0:64]", "act.0[0:64]", "B[0x100:0X1f0]", "B[0xA:0xb]", "B[ 4 : 8 ]",
		"[0:4]", "A[8:4]", "A[4:4]", "A[0:", "A[0:4]x", "A[0-4]", "A[0x:4]", "A[:4]",
		"A[0:]", "A[]", "A[0:99999999999999999999999]", "A[0:18446744073709551615]",
		"A[0:0x10000000000000000]", "A[0:0xffffffffffffffff]", "A[0:1234567890123456789]",
		"A[0:12345678901234567890]", "A[00:010]", "A[0x0010:0x0020]", "my buf", "A]",
		"A[1:2][3:4]", "A\t", "\x01A[0:4]", "caf\xc3\xa9[0:4]", "A[1:2]]", "A[[1:2]",
	};
	/* JSON texts of a few with escapes, and what they decode to */
	static const char *const esc[][2] = {
		{ "A\\u005b0:4]", "A[0:4]" }, { "\\u0041[0:4]", "A[0:4]" }, { "A\\\"B[0:4]", "A\"B[0:4]" },
		{ "A\\\\[0:4]", "A\\[0:4]" }, { "A\\t[0:4]", "A\t[0:4]" }, { "A[0:4\\u005d", "A[0:4]" },
	};
	size_t n = sizeof(strs) / sizeof(strs[0]), ne = sizeof(esc) / sizeof(esc[0]);
	int bad = 0;

	for (size_t i = 0; i < n + ne; i++) {
		const char *text = i < n ? strs[i] : esc[i - n][1];
		const char *json = i < n ? strs[i] : esc[i - n][0];
		char args[2][256], want[256], wbad[256];
		struct deps_access a;
		struct ev evs[2] = { { 0, 1, args[0] }, { 1, 1, args[1] } };

		for (int form = 0; form < 2; form++) {	/* in an array, alone */
			const char *o = form ? "" : "[", *c = form ? "" : "]";

			snprintf(args[0], sizeof(args[0]), "{\"pc\": 1, \"writes\": %s\"%s\"%s}", o, json, c);
			snprintf(args[1], sizeof(args[1]), "{\"reads\":%s \"%s\" %s, \"x\": 2}", o, json, c);
			if (deps_access_parse(text, &a) == 0) {
				if (a.hi == DEPS_WHOLE)
					snprintf(want, sizeof(want), "1>2:flow:%.*s;", (int)a.name_len, a.name);
				else
					snprintf(want, sizeof(want), "1>2:flow:%.*s[%llu:%llu];",
						 (int)a.name_len, a.name, (unsigned long long)a.lo,
						 (unsigned long long)a.hi);
				wbad[0] = '\0';
			} else {
				want[0] = '\0';
				snprintf(wbad, sizeof(wbad), "event 1: bad access string \"%s\"", text);
			}
			if (strcmp(run(evs, 2), want) || strcmp(first_bad, wbad) ||
			    nbad != (wbad[0] ? 2 : 0)) {
				printf("# access string %zu (%s), form %d: edges \"%s\", first bad \"%s\"\n", i,
				     json, form, got.data, first_bad);
				bad++;
			}
		}
	}
	is_int(bad, 0, "the args scanner reads every access string as deps_access_parse() does");
}

static struct tc_buf ops;

static void
o_access(void *ctx, bool write, const char *buf, size_t len, uint64_t lo, uint64_t hi)
{
	tc_buf_printf(&ops, "%c %.*s[%llu:%llu];", write ? 'W' : 'R', (int)len, buf,
		      (unsigned long long)lo, (unsigned long long)hi);
}

static void
o_signal(void *ctx, const char *sem, size_t len)
{
	tc_buf_printf(&ops, "sig %.*s;", (int)len, sem);
}

static void
o_wait(void *ctx, const char *sem, size_t len, int64_t n)
{
	tc_buf_printf(&ops, "wait %.*s>=%lld;", (int)len, sem, (long long)n);
}

static void
o_bad(void *ctx, const char *tok, size_t len)
{
	tc_buf_printf(&ops, "bad %.*s;", (int)len, tok);
}

static const char *
opsparse(const char *s)
{
	struct deps_opsink sink = { NULL, o_access, o_signal, o_wait, o_bad };

	tc_buf_reset(&ops);
	tc_buf_adds(&ops, "");
	deps_operands_parse(s, &sink);
	return ops.data;
}

static void
test_operands(void)
{
	is_str(opsparse("S[5] (Tensor)++@complete acc_flags=3 src=fp16@0x5600[1,0,0][3,1,1] "
			"dst=fp32@0x7000"),
	       "sig S[5];R mem[22016:22022];W mem[28672:28676];",
	       "neuron operands: signal, strided src, scalar dst");
	is_str(opsparse("$S[45]>=16 $S[8]++@complete"), "wait S[45]>=16;sig S[8];",
	       "core barrier: wait and signal");
	is_str(opsparse("src=bf16@sb:0x10[2][4] dst=..."), "R sb[16:30];",
	       "address space prefix names the buffer; placeholder dst ignored");
	is_str(opsparse("src=xyz@0x10 dst=fp16@zz"), "bad src=xyz@0x10;bad dst=fp16@zz;",
	       "unknown dtype and bad address reported");
	is_str(opsparse("$S[1]>=q"), "bad $S[1]>=q;", "bad wait count reported");
}

/*
 * Random signals and waits on three semaphores (negative and equal end
 * times included) against a model: the N-th completion of S, in (end,
 * processing order), is the source of "S>=N".  One wait per event, so
 * every label is one condition.
 */
#define SEMN 3000
static int64_t sem_end[SEMN];

static int
cmp_sig(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (sem_end[x] != sem_end[y])
		return sem_end[x] < sem_end[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void
test_sem_random(void)
{
	static struct ev evs[SEMN];
	static char text[SEMN][64];
	static int sig[3][SEMN];
	int nsig[3] = { 0 }, wsem[SEMN], wn[SEMN];
	struct tc_buf want;
	uint64_t x = 99;
	char *have;

	tc_buf_init(&want);
	for (int i = 0; i < SEMN; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		evs[i].ts = -1000 + i / 3;	/* processing order: ts, then end, then index */
		evs[i].dur = (int64_t)(x >> 60);
		sem_end[i] = evs[i].ts + evs[i].dur;
		wsem[i] = -1;
		if ((x >> 20) % 2) {
			int s = (int)((x >> 24) % 3);

			snprintf(text[i], sizeof(text[i]), "{\"signals\":[\"S%d\"]}", s);
			sig[s][nsig[s]++] = i;
		} else if (i > 100) {
			wsem[i] = (int)((x >> 24) % 3);
			wn[i] = 1 + (int)((x >> 30) % 200);
			snprintf(text[i], sizeof(text[i]), "{\"waits\":[\"S%d>=%d\"]}", wsem[i], wn[i]);
		} else {
			snprintf(text[i], sizeof(text[i]), "{}");
		}
		evs[i].args = text[i];
	}
	/* events arrive sorted by (ts, end): sort each run of equal ts by dur */
	for (int i = 1; i < SEMN; i++)
		for (int j = i; j > 0 && evs[j].ts == evs[j - 1].ts && evs[j].dur < evs[j - 1].dur; j--) {
			struct ev t = evs[j];

			evs[j] = evs[j - 1];
			evs[j - 1] = t;
		}
	/* the model, from the events as they will be numbered */
	memset(nsig, 0, sizeof(nsig));
	for (int i = 0; i < SEMN; i++) {
		int s, n;

		sem_end[i] = evs[i].ts + evs[i].dur;
		wsem[i] = -1;
		if (sscanf(evs[i].args, "{\"signals\":[\"S%d\"]}", &s) == 1)
			sig[s][nsig[s]++] = i;
		else if (sscanf(evs[i].args, "{\"waits\":[\"S%d>=%d\"]}", &s, &n) == 2) {
			wsem[i] = s;
			wn[i] = n;
		}
	}
	for (int s = 0; s < 3; s++)
		qsort(sig[s], (size_t)nsig[s], sizeof(int), cmp_sig);
	for (int i = 0; i < SEMN; i++)
		if (wsem[i] >= 0 && wn[i] <= nsig[wsem[i]] && sig[wsem[i]][wn[i] - 1] != i)
			tc_buf_printf(&want, "%d>%d:order:S%d>=%d;", sig[wsem[i]][wn[i] - 1] + 1, i + 1,
				      wsem[i], wn[i]);
	have = tc_xstrdup(run(evs, SEMN));
	ok(want.len > 1000, "the random semaphore run has many waits that resolve");
	is_str(have, want.data, "random semaphores: every wait's source is its N-th completion");
	free(have);
	tc_buf_free(&want);
}

static void
test_rules(void)
{
	/* Partial overlaps, a read over bytes of two writers, WAR and WAW. */
	static const struct ev overlap[] = {
		{ 0, 10, "{\"writes\":[\"A[0:64]\"]}" },
		{ 10, 10, "{\"writes\":[\"A[32:96]\"]}" },
		{ 20, 10, "{\"reads\":[\"A[0:128]\"]}" },
		{ 30, 10, "{\"writes\":[\"A\"]}" },
	};
	is_str(run(overlap, 4),
	       "1>2:output:A[32:64];"
	       "1>3:flow:A[0:32];2>3:flow:A[32:96];"
	       "1>4:output:A[0:32];2>4:output:A[32:96];3>4:anti:A[0:128];",
	       "partial overlaps, two writers read, WAR and WAW");

	/* Whole-buffer write, hex sub-range read; disjoint ranges do not depend. */
	static const struct ev whole[] = {
		{ 0, 5, "{\"writes\":\"B\"}" },
		{ 5, 5, "{\"reads\":[\"B[0x10:0x20]\"]}" },
		{ 10, 5, "{\"writes\":[\"B[0x40:0x50]\"]}" },
		{ 15, 5, "{\"reads\":[\"B[0:0x10]\", \"C\"]}" },
		{ 20, 5, "{\"writes\":[\"B[0x10:0x18]\"]}" },
	};
	is_str(run(whole, 5),
	       "1>2:flow:B[16:32];1>3:output:B[64:80];1>4:flow:B[0:16];"
	       "1>5:output:B[16:24];2>5:anti:B[16:24];",
	       "whole buffer vs sub-ranges, disjoint ranges independent");

	/* Several readers since the last write all get anti edges; a re-read is one reader. */
	static const struct ev readers[] = {
		{ 0, 1, "{\"writes\":[\"X[0:8]\"]}" },
		{ 1, 1, "{\"reads\":[\"X[0:4]\"]}" },
		{ 2, 1, "{\"reads\":[\"X[4:8]\", \"X[0:8]\"]}" },
		{ 3, 1, "{\"reads\":[\"X\"], \"writes\":[\"X[0:8]\"]}" },
		{ 4, 1, "{\"writes\":[\"X[2:3]\"]}" },
	};
	is_str(run(readers, 5),
	       "1>2:flow:X[0:4];1>3:flow:X[0:8];"
	       "1>4:flow:X[0:8];1>4:output:X[0:8];2>4:anti:X[0:4];3>4:anti:X[0:8];"
	       "4>5:output:X[2:3];",
	       "readers since last write, self read-write, no self edges");

	/* Semaphores: completion order differs from start order. */
	static const struct ev sems[] = {
		{ 0, 10, "{\"signals\":[\"S\"]}" },	/* completes at 10: 1st */
		{ 1, 29, "{\"signals\":[\"S\"]}" },	/* completes at 30: 3rd */
		{ 2, 18, "{\"signals\":[\"S\"]}" },	/* completes at 20: 2nd */
		{ 31, 1, "{\"waits\":[\"S>=2\"]}" },
		{ 32, 1, "{\"waits\":[\"S>=3\", \"S>=1\"]}" },
		{ 33, 1, "{\"waits\":[\"S>=4\", \"T>=1\", \"S>=0\"]}" },
	};
	is_str(run(sems, 6), "3>4:order:S>=2;1>5:order:S>=1;2>5:order:S>=3;",
	       "semaphore count reaches N in completion order; unsatisfied waits give no edge");

	/* A chain of waits across semaphores; ties in end time by processing order. */
	static const struct ev chain[] = {
		{ 0, 10, "{\"signals\":[\"P\"]}" },
		{ 5, 5, "{\"signals\":[\"P\"]}" },
		{ 10, 5, "{\"waits\":[\"P>=2\"], \"signals\":[\"Q\"]}" },
		{ 15, 5, "{\"waits\":[\"Q>=1\"]}" },
	};
	is_str(run(chain, 4), "2>3:order:P>=2;3>4:order:Q>=1;",
	       "chain of waits; equal end times counted in processing order");

	/* Waits of one event on one source keep their order in the label; negative times. */
	static const struct ev same_src[] = {
		{ -50, 10, "{\"signals\":[\"T\", \"S\"]}" },
		{ -30, 5, "{\"waits\":[\"T>=1\", \"S>=1\", \"U>=1\"]}" },
		{ -20, 5, "{\"waits\":[\"S>=1\", \"T>=1\"]}" },
	};
	is_str(run(same_src, 3), "1>2:order:T>=1,S>=1;1>3:order:S>=1,T>=1;",
	       "waits on one source: one edge, conditions in the order given");

	test_sem_random();

	/* Malformed strings are dropped and reported; the rest of the event counts. */
	static const struct ev bad[] = {
		{ 0, 1, "{\"writes\":[\"A[8:4]\", \"A[0:4]\"]}" },
		{ 1, 1, "{\"reads\":[\"A[0:\", 7, \"A\"], \"waits\":[\"S\"], \"signals\":[\"\"]}" },
		{ 2, 1, "{\"reads\":5}" },
		{ 3, 1, "not json" },
	};
	is_str(run(bad, 4), "1>2:flow:A[0:4];", "good strings of a bad event still count");
	is_int(nbad, 6, "every malformed string counted");
	is_str(first_bad, "event 1: bad access string \"A[8:4]\"", "first example kept");

	/* Long names and many runs still go out as text, in the same order. */
	static const struct ev text[] = {
		{ 0, 1, "{\"writes\":[\"B[0:8]\", \"B[16:24]\", \"C\"]}" },
		{ 1, 1, "{\"writes\":[\"C[0:5]\"]}" },
		{ 2, 1, "{\"reads\":[\"B\", \"C\"]}" },
		{ 3, 1, "{\"writes\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa[0:1]\"]}" },
		{ 4, 1, "{\"writes\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa[0:1]\"]}" },
	};
	is_str(run(text, 5),
	       "1>2:output:C[0:5];1>3:flow:B[0:8],B[16:24],C[5:];2>3:flow:C[0:5];"
	       "4>5:output:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa[0:1];",
	       "several runs in one label, an open end, a name too long to take in parts");
	/* Escapes in keys, access strings and skipped values; quotes at every offset of a word. */
	static const struct ev esc[] = {
		{ 0, 1, "{\"note\": \"say \\\"hi\\\" \\\\\", \"wr\\u0069tes\": [\"long_buffer_\\u004e[0:8]\"]}" },
		{ 1, 1, "{\"reads\": [\"long_buffer_N\\u005b0:4]\", \"x\"], \"z\": {\"q\": \"]\\\"}\"}}" },
		{ 2, 1, "{\"a\":\"\",\"bb\":\"1234567\",\"reads\":[\"long_buffer_N[4:8]\"]}" },
	};
	is_str(run(esc, 3), "1>2:flow:long_buffer_N[0:4];1>3:flow:long_buffer_N[4:8];",
	       "escaped keys and strings decode; quotes inside skipped values do not end them");
	is_int(parts_differ, 0, "labels in parts read the same as text, on every run above");
	nparts = 0;
	use_parts = true;
	run1(overlap, 4);
	run1(sems, 6);
	use_parts = false;
	is_int(nparts, 9, "one-item labels went out in parts");
}

static void
count_emit(void *ctx, int64_t src, int kind, uint64_t lo, uint64_t hi)
{
	(*(int *)ctx)++;
}

/* A map started as a grid (deps-intervals.c) or as the tree. */
static struct deps_imap *
imap_new(bool grid)
{
	struct deps_imap *m = deps_imap_new();

	deps_imap_set_grid(m, grid);
	return m;
}

static const char *const mode_name[2] = { "tree", "grid" };

static void
test_imap_bounded(bool grid)
{
	struct deps_imap *m = imap_new(grid);
	int n = 0;

	/* Many small writes then one covering write: intervals coalesce. */
	for (int i = 0; i < 10000; i++)
		deps_imap_access(m, i * 16, i * 16 + 16, true, i + 1, count_emit, &n);
	is_intf(deps_imap_count(m), 10000, "%s: one interval per disjoint write", mode_name[grid]);
	is_intf(deps_imap_is_grid(m), grid, "%s: 16-byte tiles keep it a %s", mode_name[grid], mode_name[grid]);
	is_intf(n, 0, "%s: disjoint writes do not depend", mode_name[grid]);
	deps_imap_access(m, 0, DEPS_WHOLE, true, 20000, count_emit, &n);
	is_intf(deps_imap_count(m), 1, "%s: a covering write leaves one interval", mode_name[grid]);
	ok(!deps_imap_is_grid(m), "%s: a whole-buffer access makes the tree", mode_name[grid]);
	is_intf(n, 10000, "%s: and depends on every earlier writer", mode_name[grid]);
	deps_imap_free(m);
}

/* Brute force: per byte, the last writer and the readers since. */
#define BF 256
static unsigned char bf_got[4][BF][512];	/* [kind][byte][src] reported */

static void
bf_emit(void *ctx, int64_t src, int kind, uint64_t lo, uint64_t hi)
{
	for (uint64_t b = lo; b < hi && b < BF; b++)
		bf_got[kind][b][src]++;
}

static void
test_imap_random(bool grid)
{
	static int64_t writer[BF];
	static unsigned char readers[BF][512];
	struct deps_imap *m = imap_new(grid);
	uint32_t x = 12345;
	int bad = 0, dup = 0;

	memset(writer, 0, sizeof(writer));
	memset(readers, 0, sizeof(readers));
	for (int64_t ev = 1; ev < 500; ev++) {
		x = x * 1103515245 + 12345;
		uint64_t lo = (x >> 8) % BF, len = 1 + (x >> 20) % 64, hi = TC_MIN(lo + len, BF);
		bool write = (x >> 4) & 1;

		memset(bf_got, 0, sizeof(bf_got));
		deps_imap_access(m, lo, hi, write, ev, bf_emit, NULL);
		for (uint64_t b = 0; b < BF; b++)
			for (int64_t s = 1; s < ev; s++) {
				int want_flow = 0, want_out = 0, want_anti = 0;

				if (b >= lo && b < hi) {
					want_flow = !write && writer[b] == s;
					want_out = write && writer[b] == s;
					want_anti = write && readers[b][s];
				}
				if (bf_got[ST_EDGE_FLOW][b][s] > 1 || bf_got[ST_EDGE_OUTPUT][b][s] > 1 ||
				    bf_got[ST_EDGE_ANTI][b][s] > 1)
					dup++;
				if (!!bf_got[ST_EDGE_FLOW][b][s] != want_flow ||
				    !!bf_got[ST_EDGE_OUTPUT][b][s] != want_out ||
				    !!bf_got[ST_EDGE_ANTI][b][s] != want_anti)
					bad++;
			}
		for (uint64_t b = lo; b < hi; b++) {
			if (write) {
				writer[b] = ev;
				memset(readers[b], 0, sizeof(readers[b]));
			} else {
				readers[b][ev] = 1;
			}
		}
	}
	is_intf(bad, 0, "%s: interval map agrees with a byte-by-byte model on 500 random accesses",
	       mode_name[grid]);
	is_intf(dup, 0, "%s: no byte reported twice for one source", mode_name[grid]);
	ok(deps_imap_count(m) <= BF, "%s: live intervals stay bounded by the bytes touched",
	   mode_name[grid]);
	deps_imap_free(m);
}

/*
 * A bigger random run against a per-byte model: thousands of live intervals
 * (a tree several levels deep), accesses that span many leaves, writes that
 * merge them and reads that cut them.
 */
#define BIG 8192
struct big_model {
	int64_t writer[BIG];
	int64_t *readers[BIG];
	int nreaders[BIG], capreaders[BIG];
	int64_t stamp[3][BIG];	/* [flow, output, anti count] seen this access */
	int bad, dup, reported;
	uint64_t lo, hi;
	int64_t ev;
};

static void
big_emit(void *ctx, int64_t src, int kind, uint64_t lo, uint64_t hi)
{
	struct big_model *b = ctx;

	for (uint64_t x = lo; x < hi; x++) {
		b->reported++;
		if (x < b->lo || x >= b->hi || x >= BIG) {
			b->bad++;
			continue;
		}
		if (kind == ST_EDGE_ANTI) {
			int found = 0;

			for (int i = 0; i < b->nreaders[x]; i++)
				found |= b->readers[x][i] == src;
			if (!found)
				b->bad++;
			b->stamp[2][x]++;
		} else {
			int k = kind == ST_EDGE_FLOW ? 0 : 1;

			if (b->writer[x] != src)
				b->bad++;
			if (b->stamp[k][x] == b->ev)
				b->dup++;
			b->stamp[k][x] = b->ev;
		}
	}
}

/*
 * One random run against the per-byte model; @tile: accesses of 1 to 3
 * whole tiles of that many bytes (the intervals are then tiles or runs of
 * them, and most accesses reuse them whole, updated in place) up to event
 * @tiled_until, else of any bytes.  Return: the most live intervals seen.
 */
static size_t
imap_run(struct big_model *b, struct deps_imap *m, uint64_t x, int nev, uint64_t tile,
	 int tiled_until, int *missing)
{
	size_t maxlive = 0;

	memset(b, 0, offsetof(struct big_model, readers));
	for (int i = 0; i < BIG; i++)
		b->nreaders[i] = 0;
	memset(b->stamp, 0, sizeof(b->stamp));
	b->bad = b->dup = b->reported = 0;
	*missing = 0;
	for (b->ev = 1; b->ev <= nev; b->ev++) {
		uint64_t len;
		bool write;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (tile && b->ev <= tiled_until) {
			len = tile * (1 + (x >> 20) % 3);
			b->lo = (x >> 33) % (BIG / tile) * tile;
		} else {
			len = (x >> 40) % 50 == 0 ? 1 + (x >> 20) % 4000 : 1 + (x >> 20) % 24;
			b->lo = (x >> 33) % BIG;
		}
		b->hi = TC_MIN(b->lo + len, BIG);
		write = (x >> 13) % 3 == 0;
		memset(b->stamp[2], 0, sizeof(b->stamp[2]));
		deps_imap_access(m, b->lo, b->hi, write, b->ev, big_emit, b);
		for (uint64_t y = b->lo; y < b->hi; y++) {
			int want_anti = 0;

			if (b->writer[y] && b->writer[y] != b->ev && b->stamp[write ? 1 : 0][y] != b->ev)
				(*missing)++;
			for (int i = 0; write && i < b->nreaders[y]; i++)
				want_anti += b->readers[y][i] != b->ev;
			if (write && b->stamp[2][y] != want_anti)
				(*missing)++;
			if (write) {
				b->writer[y] = b->ev;
				b->nreaders[y] = 0;
			} else if (!b->nreaders[y] || b->readers[y][b->nreaders[y] - 1] != b->ev) {
				if (b->nreaders[y] == b->capreaders[y]) {
					b->capreaders[y] = b->capreaders[y] ? 2 * b->capreaders[y] : 4;
					b->readers[y] = tc_xrealloc(b->readers[y],
								    b->capreaders[y] * sizeof(int64_t));
				}
				b->readers[y][b->nreaders[y]++] = b->ev;
			}
		}
		maxlive = TC_MAX(maxlive, deps_imap_count(m));
	}
	return maxlive;
}

static void
test_imap_big(bool grid)
{
	static struct big_model b;
	const char *mode = mode_name[grid];
	struct deps_imap *m = imap_new(grid);
	size_t maxlive;
	int missing;

	maxlive = imap_run(&b, m, 987654321, 30000, 0, 0, &missing);
	is_intf(b.bad, 0, "%s: big random run: every reported byte is a true dependency", mode);
	is_intf(b.dup + missing, 0, "%s: big random run: none missing, none twice", mode);
	ok(maxlive > 1000 && maxlive <= BIG, "%s: big random run kept %zu live intervals at most",
	   mode, maxlive);
	deps_imap_access(m, 0, DEPS_WHOLE, true, b.ev, big_emit, &b);
	is_intf(deps_imap_count(m), 1, "%s: a covering write after it leaves one interval", mode);
	deps_imap_free(m);

	/* tiles reused whole: the in-place path, reads over runs of tiles, long reader lists */
	m = imap_new(grid);
	maxlive = imap_run(&b, m, 42, 30000, 16, 30000, &missing);
	is_intf(b.bad, 0, "%s: tiled random run: every reported byte is a true dependency", mode);
	is_intf(b.dup + missing, 0, "%s: tiled random run: none missing, none twice", mode);
	ok(maxlive > BIG / 16 / 2 && maxlive <= BIG / 16, "%s: tiled random run kept %zu live "
	   "intervals", mode, maxlive);
	is_intf(deps_imap_is_grid(m), grid, "%s: tiles keep it a %s", mode, mode);
	deps_imap_free(m);

	/* tiles of 256 first, then any bytes: a grid halves its granule down to one byte */
	m = imap_new(grid);
	imap_run(&b, m, 7, 20000, 256, 5000, &missing);
	is_intf(b.bad, 0, "%s: tiles then any bytes: every reported byte is a true dependency", mode);
	is_intf(b.dup + missing, 0, "%s: tiles then any bytes: none missing, none twice", mode);
	is_intf(deps_imap_is_grid(m), grid, "%s: it stays a %s (8192 one-byte cells for a grid)", mode, mode);
	deps_imap_free(m);
	for (int i = 0; i < BIG; i++) {	/* b is static: ready for the next call */
		free(b.readers[i]);
		b.readers[i] = NULL;
		b.capreaders[i] = 0;
	}
}

/* A grid past its limits turns into the tree with its state. */
struct dep_log {
	int n;
	int64_t src[8];
	int kind[8];
	uint64_t lo[8], hi[8];
};

static void
log_emit(void *ctx, int64_t src, int kind, uint64_t lo, uint64_t hi)
{
	struct dep_log *l = ctx;

	if (l->n < 8) {
		l->src[l->n] = src;
		l->kind[l->n] = kind;
		l->lo[l->n] = lo;
		l->hi[l->n] = hi;
	}
	l->n++;
}

static void
test_imap_grid_limits(void)
{
	struct deps_imap *m = imap_new(true), *v[64];
	struct dep_log l = { 0 };
	int trees = 0, bad = 0;

	deps_imap_access(m, 0, 16, true, 1, log_emit, &l);
	deps_imap_access(m, 0, 32, false, 2, log_emit, &l);	/* [16, 32): never written */
	ok(deps_imap_is_grid(m) && l.n == 1 && l.src[0] == 1 && l.kind[0] == ST_EDGE_FLOW &&
	   l.lo[0] == 0 && l.hi[0] == 16, "grid: a read after a write: one flow, over the write");
	l.n = 0;
	deps_imap_access(m, 1, ((uint64_t)1 << 20) + 1, true, 3, log_emit, &l);
	ok(!deps_imap_is_grid(m), "grid: 2^20 one-byte cells are too many: the tree");
	ok(l.n == 3 && l.src[0] == 1 && l.kind[0] == ST_EDGE_OUTPUT && l.lo[0] == 1 &&
	   l.hi[0] == 16 && l.src[1] == 2 && l.kind[1] == ST_EDGE_ANTI && l.lo[1] == 1 &&
	   l.hi[1] == 16 && l.src[2] == 2 && l.kind[2] == ST_EDGE_ANTI && l.lo[2] == 16 &&
	   l.hi[2] == 32, "  and it keeps the grid's writer and readers (%d deps)", l.n);
	deps_imap_free(m);

	/* the process's grids share 64 MiB: 64 maps of 65536 one-byte cells do not all fit */
	for (int i = 0; i < 64; i++) {
		v[i] = imap_new(true);
		l.n = 0;
		deps_imap_access(v[i], 1, 65536, true, 1, log_emit, &l);
		deps_imap_access(v[i], 3, 5, false, 2, log_emit, &l);
		trees += !deps_imap_is_grid(v[i]);
		/* [3, 5) from event 1: one piece from the tree, one a byte from a grid */
		{
			uint64_t bytes = 0;

			for (int k = 0; k < l.n && k < 8; k++)
				if (l.src[k] == 1 && l.kind[k] == ST_EDGE_FLOW && l.lo[k] >= 3 &&
				    l.hi[k] <= 5)
					bytes += l.hi[k] - l.lo[k];
			bad += !(l.n <= 2 && bytes == 2);
		}
	}
	ok(trees > 0 && trees < 64, "grid: past the process's share, new maps are trees (%d of 64)",
	   trees);
	is_int(bad, 0, "  grids and trees alike report the flow");
	for (int i = 0; i < 64; i++)
		deps_imap_free(v[i]);
	m = imap_new(true);
	deps_imap_access(m, 1, 65536, true, 1, log_emit, &l);
	ok(deps_imap_is_grid(m), "  freed grids give their share back");
	deps_imap_free(m);
}

int
main(void)
{
	tc_buf_init(&got);
	tc_buf_init(&ops);
	test_parse();
	test_scan_access();
	test_operands();
	test_rules();
	for (int grid = 0; grid < 2; grid++) {
		test_imap_bounded(grid);
		test_imap_random(grid);
		test_imap_big(grid);
	}
	test_imap_grid_limits();
	tc_buf_free(&got);
	tc_buf_free(&ops);
	return tap_done();
}
