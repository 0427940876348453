/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-engine.c - the derivation engine: events arrive in processing
 * order (start time, then end time, then file order); their access sets go
 * through one interval map per buffer, their signals and waits are kept and
 * resolved at the end by counting each semaphore's signals in completion
 * order.  Edges into one event are deduplicated (one per source and kind)
 * and labelled with the bytes or the semaphore condition that caused them.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc-jw.h"
#include "common/tc-sort.h"
#include "deps/deps-int.h"
#include "store/store.h"

#define LABEL_MAX 200
#define LABEL_SHORT (LABEL_MAX - 43)	/* a name that fits with any "[LO:HI]" */

/* A string -> dense id table (ids from 0), open addressing. */
struct names {
	char **v;		/* id -> name */
	size_t *lens;		/* id -> strlen(name) */
	uint32_t n, cap;
	uint32_t *slots;	/* id + 1, 0 = empty */
	uint32_t nslots;
};

struct acc {
	uint32_t buf;
	bool write;
	uint64_t lo, hi;
};

struct signal {
	uint32_t sem;
	int64_t end;
	uint64_t idx;		/* processing order: breaks ties in end time */
	int64_t eid;
};

struct wait {
	uint32_t sem;
	int64_t n;
	int64_t eid;
	int64_t src;		/* resolved at finish */
};

struct scan {
	const char *p, *end;
	struct tc_buf str;	/* the last decoded string with escapes */
};

/* The label being built: items joined by ',' up to LABEL_MAX, then "...". */
struct label {
	char s[LABEL_MAX + 8];
	size_t len;
	bool full;
};

struct deps_engine {
	deps_edge_fn edge;
	deps_parts_fn parts;	/* optional: one-item labels in parts */
	deps_bad_fn bad;
	void *ctx;
	struct names bufs, sems;
	struct deps_imap **maps;	/* by buffer id */
	uint32_t nmaps;
	struct deps_pieces pc;	/* the event's pieces */
	struct deps_piece *ptmp;	/* sort scratch, cptmp entries */
	size_t cptmp;
	struct acc *accs;
	size_t naccs, caccs;
	struct signal *signals;
	size_t nsignals, csignals;
	struct wait *waits;
	size_t nwaits, cwaits;
	uint64_t nevents;
	int64_t cur_eid;
	int64_t cur_end;	/* end time of the event being parsed */
	int rc;
	struct label label;
	struct scan sc;
	struct tc_buf ops;	/* an operands string, NUL-terminated */
	struct deps_par *par;	/* NULL: the interval maps are run here, event by event */
};

static void par_free(struct deps_par *p);
static bool par_ready(const struct deps_par *p, uint64_t c);
static void par_report(struct deps_par *p, uint64_t upto, bool wait);
static size_t par_live(const struct deps_par *p);

#define GROW(arr, n, cap) TC_GROW(arr, n, cap, 16)

/* FNV-1a over a name's bytes: hash_str(), and the args scanner as it reads. */
#define HASH_INIT 2166136261u

static inline uint32_t
hash_step(uint32_t h, unsigned char c)
{
	return (h ^ c) * 16777619u;
}

static uint32_t
hash_str(const char *s, size_t len)
{
	uint32_t h = HASH_INIT;

	while (len--)
		h = hash_step(h, (unsigned char)*s++);
	return h;
}

/* Names are short (buffers, semaphores): compare them inline, not through memcmp(). */
static inline bool
names_eq(const char *a, const char *b, size_t len)
{
	size_t i = 0;

	while (i < len && a[i] == b[i])
		i++;
	return i == len;
}

/* names_id() with hash_str(@s, @len) given as @h. */
static uint32_t
names_id_h(struct names *t, const char *s, size_t len, uint32_t h)
{
	uint32_t i;

	if (2 * (t->n + 1) > t->nslots) {
		uint32_t ns = t->nslots ? t->nslots * 2 : 64;

		free(t->slots);
		t->slots = tc_xcalloc(ns, sizeof(*t->slots));
		t->nslots = ns;
		for (uint32_t k = 0; k < t->n; k++) {
			i = hash_str(t->v[k], strlen(t->v[k])) & (ns - 1);
			while (t->slots[i])
				i = (i + 1) & (ns - 1);
			t->slots[i] = k + 1;
		}
	}
	for (i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		uint32_t k = t->slots[i] - 1;

		if (t->lens[k] == len && names_eq(t->v[k], s, len))
			return k;
	}
	GROW(t->v, t->n, t->cap);
	t->lens = tc_xrealloc(t->lens, t->cap * sizeof(*t->lens));
	t->v[t->n] = tc_xstrndup(s, len);
	t->lens[t->n] = strlen(t->v[t->n]);
	t->slots[i] = t->n + 1;
	return t->n++;
}

static uint32_t
names_id(struct names *t, const char *s, size_t len)
{
	return names_id_h(t, s, len, hash_str(s, len));
}

static void
names_free(struct names *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->lens);
	free(t->slots);
}

struct deps_engine *
deps_engine_new(deps_edge_fn edge, deps_bad_fn bad, void *ctx)
{
	struct deps_engine *e = tc_xcalloc(1, sizeof(*e));

	e->edge = edge;
	e->bad = bad;
	e->ctx = ctx;
	tc_buf_init(&e->sc.str);
	tc_buf_init(&e->ops);
	return e;
}

void
deps_engine_set_parts(struct deps_engine *e, deps_parts_fn fn)
{
	e->parts = fn;
}

void
deps_engine_free(struct deps_engine *e)
{
	if (!e)
		return;
	par_free(e->par);
	for (uint32_t i = 0; i < e->nmaps; i++)
		deps_imap_free(e->maps[i]);
	free(e->maps);
	names_free(&e->bufs);
	names_free(&e->sems);
	free(e->pc.v);
	free(e->ptmp);
	free(e->accs);
	free(e->signals);
	free(e->waits);
	tc_buf_free(&e->sc.str);
	tc_buf_free(&e->ops);
	free(e);
}

size_t
deps_engine_live(const struct deps_engine *e)
{
	size_t n = 0;

	for (uint32_t i = 0; i < e->nmaps; i++)
		n += deps_imap_count(e->maps[i]);
	return n + par_live(e->par);
}

static void
report_bad(struct deps_engine *e, const char *what, const char *text, size_t len)
{
	char *t;

	if (!e->bad)
		return;
	t = tc_xstrndup(text, len);
	e->bad(e->ctx, e->cur_eid, what, t);
	free(t);
}

static void
add_acc(struct deps_engine *e, bool write, const char *buf, size_t len, uint64_t lo,
	uint64_t hi)
{
	GROW(e->accs, e->naccs, e->caccs);
	e->accs[e->naccs].buf = names_id(&e->bufs, buf, len);
	e->accs[e->naccs].write = write;
	e->accs[e->naccs].lo = lo;
	e->accs[e->naccs].hi = hi;
	e->naccs++;
}

static void
add_signal(struct deps_engine *e, const char *sem, size_t len, int64_t end)
{
	GROW(e->signals, e->nsignals, e->csignals);
	e->signals[e->nsignals].sem = names_id(&e->sems, sem, len);
	e->signals[e->nsignals].end = end;
	e->signals[e->nsignals].idx = e->nevents;
	e->signals[e->nsignals].eid = e->cur_eid;
	e->nsignals++;
}

static void
add_wait(struct deps_engine *e, const char *sem, size_t len, int64_t n)
{
	GROW(e->waits, e->nwaits, e->cwaits);
	e->waits[e->nwaits].sem = names_id(&e->sems, sem, len);
	e->waits[e->nwaits].n = n;
	e->waits[e->nwaits].eid = e->cur_eid;
	e->waits[e->nwaits].src = 0;
	e->nwaits++;
}

/* deps_opsink callbacks for Neuron operands. */
struct opctx {
	struct deps_engine *e;
	int64_t end;
};

static void
op_access(void *ctx, bool write, const char *buf, size_t len, uint64_t lo, uint64_t hi)
{
	add_acc(((struct opctx *)ctx)->e, write, buf, len, lo, hi);
}

static void
op_signal(void *ctx, const char *sem, size_t len)
{
	struct opctx *o = ctx;

	add_signal(o->e, sem, len, o->end);
}

static void
op_wait(void *ctx, const char *sem, size_t len, int64_t n)
{
	add_wait(((struct opctx *)ctx)->e, sem, len, n);
}

static void
op_bad(void *ctx, const char *tok, size_t len)
{
	report_bad(((struct opctx *)ctx)->e, "operand", tok, len);
}

/*
 * A small scanner for the args object: only the top-level keys we use are
 * decoded; every other value is skipped without building anything (Jansson
 * would allocate a tree per event, the largest cost of the analysis).
 * Strings without escapes are used where they lie in the args text.
 */
static void
sc_ws(struct scan *sc)
{
	while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' || *sc->p == '\n' ||
				   *sc->p == '\r'))
		sc->p++;
}

/* The first '"' or '\\' in [@q, @end), or @end: eight bytes at a time. */
static inline const char *
sc_quote(const char *q, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

	for (; end - q >= 8; q += 8) {
		uint64_t w, x, y, m;

		memcpy(&w, q, sizeof(w));
		x = w ^ (ones * '"');
		y = w ^ (ones * '\\');
		/* a byte's high bit for each zero byte of x or y; the lowest is exact */
		m = ((x - ones) & ~x & highs) | ((y - ones) & ~y & highs);
		if (m)
			return q + (__builtin_ctzll(m) >> 3);
	}
#endif
	while (q < end && *q != '"' && *q != '\\')
		q++;
	return q;
}

/*
 * The string at sc->p (on its opening quote) into *@s, *@len: a pointer
 * into the args text, or into sc->str (NUL-terminated) when it has escapes.
 */
static int
sc_string(struct scan *sc, const char **s, size_t *len)
{
	const char *q;

	if (sc->p >= sc->end || *sc->p != '"')
		return -EINVAL;
	q = sc_quote(++sc->p, sc->end);
	if (q < sc->end && *q == '"') {
		*s = sc->p;
		*len = (size_t)(q - sc->p);
		sc->p = q + 1;
		return 0;
	}
	tc_buf_reset(&sc->str);
	tc_buf_adds(&sc->str, "");
	for (; sc->p < sc->end; sc->p++) {
		const char *run = sc->p;

		while (sc->p < sc->end && *sc->p != '"' && *sc->p != '\\')
			sc->p++;
		tc_buf_add(&sc->str, run, sc->p - run);
		if (sc->p >= sc->end)
			break;
		if (*sc->p == '"') {
			sc->p++;
			*s = sc->str.data;
			*len = sc->str.len;
			return 0;
		}
		if (++sc->p >= sc->end)
			break;
		switch (*sc->p) {
		case 'b': tc_buf_addc(&sc->str, '\b'); break;
		case 'f': tc_buf_addc(&sc->str, '\f'); break;
		case 'n': tc_buf_addc(&sc->str, '\n'); break;
		case 'r': tc_buf_addc(&sc->str, '\r'); break;
		case 't': tc_buf_addc(&sc->str, '\t'); break;
		case 'u': {
			unsigned u = 0;

			for (int k = 1; k <= 4; k++) {
				int h = sc->p + k < sc->end ? tc_hexval(sc->p[k]) : -1;

				if (h < 0)
					return -EINVAL;
				u = u * 16 + h;
			}
			sc->p += 4;
			tc_buf_add_utf8(&sc->str, u);
			break;
		}
		default:
			tc_buf_addc(&sc->str, *sc->p);
		}
	}
	return -EINVAL;
}

/* Skip one value of any type. */
static int
sc_skip(struct scan *sc)
{
	int depth = 0;

	sc_ws(sc);
	do {
		if (sc->p >= sc->end)
			return -EINVAL;
		if (*sc->p == '"') {
			const char *q = sc->p + 1;

			while (q < sc->end && *q != '"')
				q += *q == '\\' ? 2 : 1;
			if (q >= sc->end)
				return -EINVAL;
			sc->p = q + 1;
		} else if (*sc->p == '{' || *sc->p == '[') {
			depth++;
			sc->p++;
		} else if (*sc->p == '}' || *sc->p == ']') {
			if (--depth < 0)
				return -EINVAL;
			sc->p++;
		} else if (depth) {
			sc->p++;
		} else {
			while (sc->p < sc->end && *sc->p != ',' && *sc->p != '}' && *sc->p != ']')
				sc->p++;
		}
	} while (depth);
	return 0;
}

/*
 * The access string at sc->p (on its opening quote) when it is plain: no
 * escape, a name of printable bytes, then nothing or a plain "[LO:HI]"
 * with LO < HI, then the closing quote.  Scanned once, its name hashed on
 * the way, and added as do_access() would.  Return: false, having done
 * nothing, for anything else (the general path then decodes and reports
 * it).
 */
static bool
sc_access_fast(struct deps_engine *e, struct scan *sc, bool write)
{
	const char *p = sc->p + 1, *end = sc->end, *name = p;
	uint32_t h = HASH_INIT;	/* as hash_str() */
	uint64_t lo = 0, hi = DEPS_WHOLE;

	for (; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"' || c == '[' || c == '\\' || c == ']' || c <= ' ')
			break;
		h = hash_step(h, c);
	}
	if (p == name || p == end || (*p != '"' && *p != '['))
		return false;
	if (*p == '[') {
		const char *q = deps_offset_plain(p + 1, end, ':', &lo);

		q = q ? deps_offset_plain(q, end, ']', &hi) : NULL;
		if (!q || q == end || *q != '"' || lo >= hi)
			return false;
		sc->p = q + 1;
	} else {
		sc->p = p + 1;
	}
	GROW(e->accs, e->naccs, e->caccs);
	e->accs[e->naccs].buf = names_id_h(&e->bufs, name, (size_t)(p - name), h);
	e->accs[e->naccs].write = write;
	e->accs[e->naccs].lo = lo;
	e->accs[e->naccs].hi = hi;
	e->naccs++;
	return true;
}

typedef void (*str_fn)(struct deps_engine *e, const char *s, size_t len, bool arg);
static void do_access(struct deps_engine *e, const char *s, size_t len, bool write);

/*
 * The value at sc->p: a string or an array of strings, each handed to @fn;
 * other values (and non-string elements) are reported under @what.
 */
static int
sc_strings(struct deps_engine *e, struct scan *sc, const char *key, const char *what, str_fn fn,
	   bool arg)
{
	const char *s;
	size_t len;

	sc_ws(sc);
	if (sc->p < sc->end && *sc->p == '"') {
		if (fn == do_access && sc_access_fast(e, sc, arg))
			return 0;
		if (sc_string(sc, &s, &len))
			return -EINVAL;
		fn(e, s, len, arg);
		return 0;
	}
	if (sc->p >= sc->end || *sc->p != '[') {
		const char *v = sc->p;
		char msg[128];

		if (sc_skip(sc))
			return -EINVAL;
		snprintf(msg, sizeof(msg), "%s: %.*s", key, (int)TC_MIN(sc->p - v, 100), v);
		report_bad(e, what, msg, strlen(msg));
		return 0;
	}
	sc->p++;
	sc_ws(sc);
	if (sc->p < sc->end && *sc->p == ']') {
		sc->p++;
		return 0;
	}
	for (;;) {
		sc_ws(sc);
		if (sc->p < sc->end && *sc->p == '"') {
			if (fn == do_access && sc_access_fast(e, sc, arg))
				;	/* a plain access string, added */
			else if (sc_string(sc, &s, &len))
				return -EINVAL;
			else
				fn(e, s, len, arg);
		} else {
			const char *v = sc->p;

			if (sc_skip(sc))
				return -EINVAL;
			report_bad(e, what, v, TC_MIN(sc->p - v, 100));
		}
		sc_ws(sc);
		if (sc->p < sc->end && *sc->p == ',') {
			sc->p++;
			continue;
		}
		if (sc->p < sc->end && *sc->p == ']') {
			sc->p++;
			return 0;
		}
		return -EINVAL;
	}
}

static void
do_operands(struct deps_engine *e, const char *ops, size_t len, bool unused)
{
	struct opctx oc = { e, e->cur_end };
	struct deps_opsink sink = { &oc, op_access, op_signal, op_wait, op_bad };

	/* the operand parser wants a C string */
	tc_buf_reset(&e->ops);
	tc_buf_add(&e->ops, ops, len);
	tc_buf_adds(&e->ops, "");
	deps_operands_parse(e->ops.data, &sink);
}

static void
do_access(struct deps_engine *e, const char *s, size_t len, bool write)
{
	struct deps_access a;

	if (deps_access_parse_n(s, len, &a)) {
		report_bad(e, "access string", s, len);
		return;
	}
	add_acc(e, write, a.name, a.name_len, a.lo, a.hi);
}

static void
do_signal(struct deps_engine *e, const char *s, size_t len, bool unused)
{
	bool bad = len == 0;

	/* what a wait's name may not hold either (deps_wait_parse_n()): one could never wait on it */
	for (size_t i = 0; i < len && !bad; i++)
		bad = isspace((unsigned char)s[i]) || s[i] == '>' || s[i] == '=' || s[i] == '\0';
	if (bad) {
		report_bad(e, "signal", s, len);
		return;
	}
	add_signal(e, s, len, e->cur_end);
}

static void
do_wait(struct deps_engine *e, const char *s, size_t len, bool unused)
{
	const char *name;
	size_t nlen;
	int64_t n;

	if (deps_wait_parse_n(s, len, &name, &nlen, &n)) {
		report_bad(e, "wait", s, len);
		return;
	}
	add_wait(e, name, nlen, n);
}

/* Walk the args object; 0, or -EINVAL when it is not a JSON object. */
static int
scan_args(struct deps_engine *e, const char *args, size_t args_len)
{
	struct scan *sc = &e->sc;

	sc->p = args;
	sc->end = args + args_len;
	sc_ws(sc);
	if (sc->p >= sc->end || *sc->p != '{')
		return -EINVAL;
	sc->p++;
	sc_ws(sc);
	if (sc->p < sc->end && *sc->p == '}')
		return 0;
	for (;;) {
		char key[16];
		const char *k;
		size_t klen;
		int rc;

		sc_ws(sc);
		if (sc_string(sc, &k, &klen))
			return -EINVAL;
		/* copied: decoding the value may reuse sc->str */
		klen = klen < sizeof(key) ? klen : 0;
		memcpy(key, k, klen);
		key[klen] = '\0';
		sc_ws(sc);
		if (sc->p >= sc->end || *sc->p != ':')
			return -EINVAL;
		sc->p++;
		/* by length first: most keys are none of these */
		if (klen == 5 && !memcmp(key, "reads", 5))
			rc = sc_strings(e, sc, key, "access string", do_access, false);
		else if (klen == 6 && !memcmp(key, "writes", 6))
			rc = sc_strings(e, sc, key, "access string", do_access, true);
		else if (klen == 7 && !memcmp(key, "signals", 7))
			rc = sc_strings(e, sc, key, "signal", do_signal, false);
		else if (klen == 5 && !memcmp(key, "waits", 5))
			rc = sc_strings(e, sc, key, "wait", do_wait, false);
		else if (klen == 8 && !memcmp(key, "operands", 8))
			rc = sc_strings(e, sc, key, "operand", do_operands, false);
		else
			rc = sc_skip(sc);
		if (rc)
			return rc;
		sc_ws(sc);
		if (sc->p < sc->end && *sc->p == ',') {
			sc->p++;
			continue;
		}
		if (sc->p < sc->end && *sc->p == '}')
			return 0;
		return -EINVAL;
	}
}

static inline bool
piece_lt(const struct deps_piece *x, const struct deps_piece *y)
{
	if (x->src != y->src)
		return x->src < y->src;
	if (x->kind != y->kind)
		return x->kind < y->kind;
	if (x->buf != y->buf)
		return x->buf < y->buf;
	return x->lo < y->lo;
}

/* piece_sort(): common/tc-sort.h, for events with many pieces */
TC_MSORT_DEFINE(piece_sort, struct deps_piece, piece_lt)

#define PIECE_RANK_MAX 16	/* pieces sorted by rank_pieces() at most */

/*
 * Sort the @n (at most PIECE_RANK_MAX) pieces at @v into @out by rank:
 * a piece goes after every piece that piece_lt() puts before it and every
 * equal one before it in @v (so the order is piece_sort()'s, which is
 * stable).  The comparisons are of one 128-bit key (source, kind, buffer,
 * start) and do not branch: an event's handful of pieces come in no
 * order, and an insertion sort mispredicted about a branch per
 * comparison.  Return: false, having done nothing, when a key does not
 * fit (a source past 32 bits, a buffer id past 29).
 */
static bool
rank_pieces(const struct deps_piece *v, size_t n, struct deps_piece *out)
{
	unsigned __int128 key[PIECE_RANK_MAX];

	for (size_t i = 0; i < n; i++) {
		if (v[i].src < 0 || v[i].src > UINT32_MAX || v[i].buf >= (1u << 29) ||
		    v[i].kind < 0 || v[i].kind > 7)
			return false;
		key[i] = (unsigned __int128)((uint64_t)v[i].src << 32 |
					     (uint64_t)v[i].kind << 29 | v[i].buf) << 64 |
			 v[i].lo;
	}
	for (size_t i = 0; i < n; i++) {
		size_t r = 0;

		for (size_t j = 0; j < i; j++)
			r += key[j] <= key[i];
		for (size_t j = i + 1; j < n; j++)
			r += key[j] < key[i];
		out[r] = v[i];
	}
	return true;
}

/* Sort the @n pieces of one event at @v; *@tmp (*@ctmp entries) is the scratch. */
static void
sort_pieces(struct deps_piece *v, size_t n, struct deps_piece **tmp, size_t *ctmp)
{
	if (n > *ctmp) {
		*ctmp = TC_MAX(n, (size_t)PIECE_RANK_MAX);
		*tmp = tc_xrealloc(*tmp, *ctmp * sizeof(**tmp));
	}
	if (n <= PIECE_RANK_MAX && rank_pieces(v, n, *tmp)) {
		memcpy(v, *tmp, n * sizeof(*v));
		return;
	}
	piece_sort(v, *tmp, n);
}

static void
label_reset(struct label *l)
{
	l->len = 0;
	l->full = false;
	l->s[0] = '\0';
}

/*
 * Append an item of @n bytes: after a ',' unless first; when it would pass
 * LABEL_MAX, "..." instead and nothing more.
 */
static void
label_add(struct label *l, const char *s, size_t n)
{
	if (l->full || l->len >= LABEL_MAX)
		return;
	if (l->len)
		l->s[l->len++] = ',';
	if (l->len + n > LABEL_MAX) {
		memcpy(l->s + l->len, "...", 4);
		l->len += 3;
		l->full = true;
		return;
	}
	memcpy(l->s + l->len, s, n);
	l->len += n;
	l->s[l->len] = '\0';
}

/* One byte run as a label item: "BUF", "BUF[LO:]" or "BUF[LO:HI]". */
static void
label_run(struct label *l, const char *buf, uint64_t lo, uint64_t hi)
{
	char s[LABEL_MAX + 64], *p;
	size_t n = strnlen(buf, LABEL_MAX);

	memcpy(s, buf, n);
	p = s + n;
	if (lo != 0 || hi != DEPS_WHOLE) {
		*p++ = '[';
		p += tc_u64_text(p, lo);
		*p++ = ':';
		if (hi != DEPS_WHOLE)
			p += tc_u64_text(p, hi);
		*p++ = ']';
	}
	label_add(l, s, (size_t)(p - s));
}

/* The buffer names as a thread that reports edges sees them (id -> name, length). */
struct nview {
	char *const *v;
	const size_t *lens;
};

/*
 * Group the @n pieces @pv of event @dst, sorted by (source, kind, buffer,
 * start), by (source, kind) and report one edge each: labels of buffers
 * named by @nv, built in @lab.
 */
static int
flush_pieces(struct deps_engine *e, const struct nview *nv, struct label *lab, int64_t dst,
	     const struct deps_piece *pv, size_t n)
{
	size_t i = 0, j;
	int rc = 0;

	while (i < n && !rc) {
		const struct deps_piece *p = &pv[i];

		/* one contiguous run of one buffer: the label in parts */
		if (e->parts && p->hi != DEPS_WHOLE) {
			uint64_t hi = p->hi;

			for (j = i + 1; j < n && pv[j].src == p->src && pv[j].kind == p->kind &&
			     pv[j].buf == p->buf && pv[j].lo <= hi && pv[j].hi != DEPS_WHOLE; j++)
				hi = TC_MAX(hi, pv[j].hi);
			if ((j == n || pv[j].src != p->src || pv[j].kind != p->kind) &&
			    nv->lens[p->buf] <= LABEL_SHORT) {
				struct deps_label l = { DEPS_LABEL_BYTES, p->buf, nv->v[p->buf],
							nv->lens[p->buf], p->lo, hi };

				rc = e->parts(e->ctx, p->src, dst, p->kind, &l);
				i = j;
				continue;
			}
		}
		label_reset(lab);
		for (j = i; j < n && pv[j].src == pv[i].src && pv[j].kind == pv[i].kind;) {
			uint32_t buf = pv[j].buf;
			uint64_t lo = pv[j].lo, hi = pv[j].hi;

			/* one label item per contiguous run of bytes */
			for (; j < n && pv[j].src == pv[i].src && pv[j].kind == pv[i].kind &&
			     pv[j].buf == buf && pv[j].lo <= hi; j++)
				hi = TC_MAX(hi, pv[j].hi);
			label_run(lab, nv->v[buf], lo, hi);
		}
		rc = e->edge(e->ctx, pv[i].src, dst, pv[i].kind, lab->s, lab->len);
		i = j;
	}
	return rc;
}

/*
 * ---- the interval maps split across threads (deps_engine_set_threads()) ----
 *
 * The rules of one buffer depend only on the accesses to that buffer, so
 * each worker owns the maps of the buffers whose id is k modulo the number
 * of workers.  The engine's thread scans the args (buffer ids are given in
 * first-seen order, as with one thread) and hands the accesses over in
 * batches of events in processing order; every worker goes through every
 * batch, applies the accesses to its buffers (an event's reads, then its
 * writes) and sorts each event's pieces.  Then, batch after batch, the
 * workers' sorted pieces of each event are merged (a piece's buffer decides
 * its worker, so no two workers have equal keys and the merge is the sort
 * one thread does) and the edges reported in processing order, exactly as
 * one thread does: the store sees the same edges in the same order.  With
 * two or three threads, whoever is free reports the oldest batch that all
 * workers are done with, one batch at a time: a worker with nothing to
 * map, or the engine's thread between two batches of args once two or
 * more wait (and when its ring is full); with four threads or more a
 * thread of its own does (nx-deps-report), so that scanning the args and
 * reporting the edges run side by side too.
 */
#define PAR_MAX 8		/* threads at most, the engine's included */
#define PAR_RING 8		/* batches in flight */
#define PAR_REPORT_AT 2	/* the engine's thread reports from this many unreported on */
#define PAR_BATCH 2048		/* events per batch */
#define PAR_REPORTER 4		/* from this many threads on, one reports the edges */

struct par_out {		/* one worker's pieces of one batch */
	struct deps_pieces pc;	/* sorted per event */
	uint32_t *first;	/* event i's: p[first[i] .. first[i + 1]) */
	size_t cfirst;
};

struct par_batch {		/* events with accesses, in processing order */
	uint32_t *eid;
	uint32_t *first;	/* event i's accesses: acc[first[i] .. first[i + 1]) */
	size_t nev, cev;
	struct acc *acc;
	size_t nacc, cacc;
	/* the buffer names first seen in it: ids names_from .. nnames - 1 */
	uint32_t names_from, nnames;
	char **new_names;
	size_t *new_lens, cnew;
	struct par_out out[PAR_MAX];	/* written by worker k, read once it is done */
};

struct par_worker {
	struct deps_par *par;
	int k;
	pthread_t th;
	struct deps_imap **maps;	/* buffer b (b % n == k) at b / n */
	uint32_t nmaps;
	struct deps_piece *ptmp;	/* sort scratch */
	size_t cptmp;
	uint64_t done;		/* batches done (under mu) */
	int64_t cpu_ns;		/* the thread's CPU time after its last batch (under mu) */
};

struct deps_par {
	struct deps_engine *e;
	int n;			/* workers started */
	uint32_t names_sent;	/* buffer names handed over (the engine's thread) */
	struct par_worker w[PAR_MAX];
	struct par_batch ring[PAR_RING];	/* batch b in ring[b % PAR_RING] */
	uint64_t published;	/* batches handed over (under mu) */
	uint64_t combined;	/* batches reported (under mu) */
	bool reporting;		/* a thread is reporting batch combined (under mu) */
	bool quit;		/* under mu */
	int rc;			/* the first error of an edge callback (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv_work;	/* a batch was handed over: workers */
	pthread_cond_t cv_done;	/* a worker is done with one: the reporting side */
	pthread_cond_t cv_free;	/* one was reported: the engine's thread, or one waiting to report */
	/* the reporting side: the engine's thread and idle workers, or the reporter below */
	bool reporter;
	pthread_t rth;
	int64_t rcpu_ns;	/* the reporter's CPU time after its last batch (under mu) */
	char **names;		/* its copy of the engine's buffer names (the strings stay put) */
	size_t *lens;
	uint32_t nnames;
	struct label label;
	struct deps_piece *pieces;	/* merge scratch */
	size_t cpieces;
};

/* Worker @w's part of batch @b: the accesses to its buffers, each event's pieces sorted. */
static void
par_run(struct par_worker *w, struct par_batch *b)
{
	uint32_t n = (uint32_t)w->par->n, k = (uint32_t)w->k;
	struct par_out *o = &b->out[k];
	/*
	 * The pieces are collected in a copy of o->pc, on this thread's stack:
	 * o lies in the batch, next to the other workers' parts and the fields
	 * the engine's thread writes, and a store to it for every piece made
	 * the cache line go back and forth between the cores.
	 */
	struct deps_pieces pc = o->pc;

	pc.n = 0;
	if (b->nev + 1 > o->cfirst) {
		o->cfirst = b->nev + 1;
		o->first = tc_xrealloc(o->first, o->cfirst * sizeof(*o->first));
	}
	o->first[0] = 0;
	for (size_t i = 0; i < b->nev; i++) {
		size_t start = pc.n;

		for (int pass = 0; pass < 2; pass++)
			for (uint32_t j = b->first[i]; j < b->first[i + 1]; j++) {
				const struct acc *a = &b->acc[j];
				uint32_t m = a->buf / n;

				if (a->buf - m * n != k || a->write != (pass == 1))
					continue;
				while (m >= w->nmaps) {
					w->maps = tc_xrealloc(w->maps, (w->nmaps + 1) * sizeof(*w->maps));
					w->maps[w->nmaps++] = deps_imap_new();
				}
				pc.buf = a->buf;
				deps_imap_add(w->maps[m], a->lo, a->hi, a->write, b->eid[i], &pc);
			}
		if (pc.n - start > 1)
			sort_pieces(pc.v + start, pc.n - start, &w->ptmp, &w->cptmp);
		o->first[i + 1] = (uint32_t)pc.n;
	}
	o->pc = pc;
}

static void *
par_main(void *arg)
{
	struct par_worker *w = arg;
	struct deps_par *p = w->par;
	char name[16];

	snprintf(name, sizeof(name), "deps-%d", w->k);
	tc_thread_name(name);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct par_batch *b;
		int64_t ns;

		while (w->done == p->published && !p->quit) {
			/*
			 * Nothing to map: report the oldest batch if it is
			 * ready, then look for work again.
			 */
			if (!p->reporter && !p->reporting && p->combined < p->published &&
			    par_ready(p, p->combined)) {
				par_report(p, p->combined + 1, false);
				w->cpu_ns = tc_thread_cpu_ns();
				continue;
			}
			pthread_cond_wait(&p->cv_work, &p->mu);
		}
		if (p->quit)
			break;
		b = &p->ring[w->done % PAR_RING];
		pthread_mutex_unlock(&p->mu);
		par_run(w, b);
		ns = tc_thread_cpu_ns();
		pthread_mutex_lock(&p->mu);
		w->cpu_ns = ns;
		w->done++;
		pthread_cond_signal(&p->cv_done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Whether every worker is done with batch @c (under mu). */
static bool
par_ready(const struct deps_par *p, uint64_t c)
{
	for (int k = 0; k < p->n; k++)
		if (p->w[k].done <= c)
			return false;
	return true;
}

/*
 * Report the edges of batch @b, which every worker is done with: per event,
 * the workers' sorted pieces merged.  Runs on the reporting side only.
 */
static int
par_combine(struct deps_par *p, struct par_batch *b)
{
	struct deps_engine *e = p->e;
	struct nview nv;
	int rc = 0;

	/* batches come in order: the names first seen in this one follow ours */
	if (b->nnames > p->nnames) {
		size_t k = b->nnames - b->names_from;

		p->names = tc_xrealloc(p->names, b->nnames * sizeof(*p->names));
		p->lens = tc_xrealloc(p->lens, b->nnames * sizeof(*p->lens));
		memcpy(p->names + b->names_from, b->new_names, k * sizeof(*p->names));
		memcpy(p->lens + b->names_from, b->new_lens, k * sizeof(*p->lens));
		p->nnames = b->nnames;
	}
	nv.v = p->names;
	nv.lens = p->lens;
	for (size_t i = 0; i < b->nev && !rc; i++) {
		const struct deps_piece *one = NULL, *at[PAR_MAX], *end[PAR_MAX];
		size_t total = 0;
		int lists = 0;

		for (int k = 0; k < p->n; k++) {
			const struct par_out *o = &b->out[k];

			if (o->first[i + 1] == o->first[i])
				continue;
			at[lists] = one = o->pc.v + o->first[i];
			end[lists] = o->pc.v + o->first[i + 1];
			total += (size_t)(end[lists] - at[lists]);
			lists++;
		}
		if (lists == 1) {
			rc = flush_pieces(e, &nv, &p->label, b->eid[i], one, total);
			continue;
		}
		if (!lists)
			continue;
		if (total > p->cpieces) {
			p->cpieces = TC_MAX(total, 2 * p->cpieces);
			p->pieces = tc_xrealloc(p->pieces, p->cpieces * sizeof(*p->pieces));
		}
		for (size_t q = 0; q < total; q++) {
			int best = 0;

			for (int l = 1; l < lists; l++)
				if (piece_lt(at[l], at[best]))
					best = l;
			p->pieces[q] = *at[best]++;
			if (at[best] == end[best]) {
				at[best] = at[--lists];
				end[best] = end[lists];
			}
		}
		rc = flush_pieces(e, &nv, &p->label, b->eid[i], p->pieces, total);
	}
	return rc;
}

/*
 * Report batch p->combined once every worker is done with it, and so on
 * up to @upto; with @wait, until @upto are reported, else those done.
 * Without a reporter thread, the engine's thread and idle workers share
 * this: one at a time (p->reporting), in batch order.  After an error the
 * batches are let go without reporting.  Called under mu, which it drops
 * while it reports.
 */
static void
par_report(struct deps_par *p, uint64_t upto, bool wait)
{
	while (p->combined < upto && !p->quit) {
		struct par_batch *b;
		int rc = 0;

		if (p->reporting || !par_ready(p, p->combined)) {
			if (!wait)
				return;
			/* the thread reporting signals cv_free, a worker done cv_done */
			pthread_cond_wait(p->reporting ? &p->cv_free : &p->cv_done, &p->mu);
			continue;
		}
		p->reporting = true;
		b = &p->ring[p->combined % PAR_RING];
		pthread_mutex_unlock(&p->mu);
		if (!p->rc)	/* only the reporting thread writes it */
			rc = par_combine(p, b);
		pthread_mutex_lock(&p->mu);
		if (rc && !p->rc)
			p->rc = rc;
		b->nev = b->nacc = 0;
		p->combined++;
		p->reporting = false;
		pthread_cond_broadcast(&p->cv_free);
	}
}

static void *
par_reporter(void *arg)
{
	struct deps_par *p = arg;

	tc_thread_name("deps-report");
	pthread_mutex_lock(&p->mu);
	while (!p->quit) {
		if (p->combined < p->published)
			par_report(p, p->published, true);
		else
			pthread_cond_wait(&p->cv_done, &p->mu);
		p->rcpu_ns = tc_thread_cpu_ns();
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/*
 * Hand the batch being filled to the workers, with the names it may need;
 * report what is done (without a reporter); wait until the next slot is
 * free.  Return: 0 or the first error of an edge callback.
 */
static int
par_publish(struct deps_engine *e)
{
	struct deps_par *p = e->par;
	struct par_batch *b = &p->ring[p->published % PAR_RING];
	int rc;

	/* the engine's name arrays move as they grow: the new names go with the batch */
	b->names_from = p->names_sent;
	b->nnames = e->bufs.n;
	if (b->nnames > b->names_from) {
		size_t k = b->nnames - b->names_from;

		if (k > b->cnew) {
			b->cnew = k;
			b->new_names = tc_xrealloc(b->new_names, k * sizeof(*b->new_names));
			b->new_lens = tc_xrealloc(b->new_lens, k * sizeof(*b->new_lens));
		}
		memcpy(b->new_names, e->bufs.v + b->names_from, k * sizeof(*b->new_names));
		memcpy(b->new_lens, e->bufs.lens + b->names_from, k * sizeof(*b->new_lens));
		p->names_sent = b->nnames;
	}
	pthread_mutex_lock(&p->mu);
	p->published++;
	pthread_cond_broadcast(&p->cv_work);
	if (p->reporter) {
		pthread_cond_signal(&p->cv_done);
		while (p->published - p->combined >= PAR_RING)
			pthread_cond_wait(&p->cv_free, &p->mu);
	} else {
		/*
		 * Report the oldest batch if it is ready and no worker is at
		 * it, once PAR_REPORT_AT wait: left to the workers until the
		 * ring was full, this thread then waited for a worker's
		 * report of the slot it needed (a fifth of the phase at 10M
		 * events).  One batch, then back to the args.
		 */
		if (p->published - p->combined >= PAR_REPORT_AT)
			par_report(p, p->combined + 1, false);
		if (p->published - p->combined >= PAR_RING)
			par_report(p, p->published - PAR_RING + 1, true);
	}
	rc = p->rc;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

/* Queue event @eid's accesses (e->accs) into the batch being filled. */
static int
par_add(struct deps_engine *e, int64_t eid)
{
	struct deps_par *p = e->par;
	struct par_batch *b = &p->ring[p->published % PAR_RING];

	if (b->nev + 1 >= b->cev) {
		b->cev = b->cev ? 2 * b->cev : PAR_BATCH + 1;
		b->eid = tc_xrealloc(b->eid, b->cev * sizeof(*b->eid));
		b->first = tc_xrealloc(b->first, b->cev * sizeof(*b->first));
	}
	if (b->nacc + e->naccs > b->cacc) {
		b->cacc = TC_MAX(b->nacc + e->naccs, 2 * b->cacc);
		b->acc = tc_xrealloc(b->acc, b->cacc * sizeof(*b->acc));
	}
	if (!b->nev)
		b->first[0] = 0;
	memcpy(b->acc + b->nacc, e->accs, e->naccs * sizeof(*e->accs));
	b->nacc += e->naccs;
	b->eid[b->nev++] = (uint32_t)eid;
	b->first[b->nev] = (uint32_t)b->nacc;
	return b->nev >= PAR_BATCH ? par_publish(e) : 0;
}

/* Hand over the last batch and wait until every queued event's edges are reported. */
static int
par_flush(struct deps_engine *e)
{
	struct deps_par *p = e->par;
	int rc = 0;

	if (p->ring[p->published % PAR_RING].nev)
		rc = par_publish(e);
	pthread_mutex_lock(&p->mu);
	if (p->reporter)
		while (p->combined < p->published)
			pthread_cond_wait(&p->cv_free, &p->mu);
	else
		par_report(p, p->published, true);
	if (!rc)
		rc = p->rc;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

/* Stop the threads and free everything (@p->n workers and the reporter, if any, started). */
static void
par_free(struct deps_par *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->cv_work);
	pthread_cond_broadcast(&p->cv_done);
	pthread_mutex_unlock(&p->mu);
	if (p->reporter)
		pthread_join(p->rth, NULL);
	for (int k = 0; k < p->n; k++) {
		struct par_worker *w = &p->w[k];

		pthread_join(w->th, NULL);
		for (uint32_t i = 0; i < w->nmaps; i++)
			deps_imap_free(w->maps[i]);
		free(w->maps);
		free(w->ptmp);
	}
	for (int r = 0; r < PAR_RING; r++) {
		struct par_batch *b = &p->ring[r];

		free(b->eid);
		free(b->first);
		free(b->acc);
		free(b->new_names);
		free(b->new_lens);
		for (int k = 0; k < PAR_MAX; k++) {
			free(b->out[k].pc.v);
			free(b->out[k].first);
		}
	}
	free(p->names);
	free(p->lens);
	free(p->pieces);
	pthread_cond_destroy(&p->cv_work);
	pthread_cond_destroy(&p->cv_done);
	pthread_cond_destroy(&p->cv_free);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* The live intervals of the workers' maps (they are idle). */
static size_t
par_live(const struct deps_par *p)
{
	size_t n = 0;

	for (int k = 0; p && k < p->n; k++)
		for (uint32_t i = 0; i < p->w[k].nmaps; i++)
			n += deps_imap_count(p->w[k].maps[i]);
	return n;
}

int64_t
deps_engine_thread_cpu(struct deps_engine *e, int k, const char **what)
{
	struct deps_par *p = e->par;
	int64_t ns = -1;

	if (!p || k < 0 || k > p->n || (k == p->n && !p->reporter))
		return -1;
	pthread_mutex_lock(&p->mu);
	ns = k < p->n ? p->w[k].cpu_ns : p->rcpu_ns;
	pthread_mutex_unlock(&p->mu);
	*what = k < p->n ? "worker" : "reporter";
	return ns;
}

int
deps_engine_set_threads(struct deps_engine *e, int n)
{
	struct deps_par *p;
	int rc = 0, workers, err;

	if (e->par || e->nevents)
		return -EBUSY;
	if (n <= 1)
		return 0;
	n = TC_MIN(n, PAR_MAX);
	p = tc_xcalloc(1, sizeof(*p));
	p->e = e;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv_work, NULL);
	pthread_cond_init(&p->cv_done, NULL);
	pthread_cond_init(&p->cv_free, NULL);
	p->reporter = n >= PAR_REPORTER;
	workers = n - 1 - p->reporter;
	/* the workers read p->n only once a batch is handed over: set it first */
	p->n = workers;
	for (int k = 0; k < workers; k++) {
		p->w[k].par = p;
		p->w[k].k = k;
	}
	for (int k = 0; k < workers; k++) {
		err = pthread_create(&p->w[k].th, NULL, par_main, &p->w[k]);
		if (err) {	/* stop those started: the engine stays on one thread */
			p->n = k;
			p->reporter = false;
			goto fail;
		}
	}
	if (p->reporter) {
		err = pthread_create(&p->rth, NULL, par_reporter, p);
		if (err) {
			p->reporter = false;
			goto fail;
		}
	}
	e->par = p;
	return 0;
fail:
	rc = -err;
	par_free(p);
	return rc;
}

int
deps_engine_event(struct deps_engine *e, int64_t eid, int64_t ts, int64_t dur, const char *args,
		  size_t args_len)
{
	size_t i;
	int rc;

	if (e->rc)
		return e->rc;
	if (eid < 1 || eid > UINT32_MAX)	/* the interval maps keep 32 bits */
		return -ERANGE;
	e->nevents++;
	e->cur_eid = eid;
	if (!args)
		return 0;
	e->naccs = 0;
	e->cur_end = ts + (dur > 0 ? dur : 0);
	if (scan_args(e, args, args_len))
		e->naccs = 0;	/* not a JSON object: no access sets (the reader checked it) */
	if (e->par) {
		rc = e->naccs ? par_add(e, eid) : 0;
		if (rc)
			e->rc = rc;
		return rc;
	}

	/* All reads see the state before this event; then its writes. */
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < e->naccs; i++) {
			struct acc *a = &e->accs[i];

			if (a->write != (pass == 1))
				continue;
			while (a->buf >= e->nmaps) {
				e->maps = tc_xrealloc(e->maps, (e->nmaps + 1) * sizeof(*e->maps));
				e->maps[e->nmaps++] = deps_imap_new();
			}
			e->pc.buf = a->buf;
			deps_imap_add(e->maps[a->buf], a->lo, a->hi, a->write, eid, &e->pc);
		}
	if (e->pc.n > 1)
		sort_pieces(e->pc.v, e->pc.n, &e->ptmp, &e->cptmp);
	{
		struct nview nv = { e->bufs.v, e->bufs.lens };

		rc = flush_pieces(e, &nv, &e->label, eid, e->pc.v, e->pc.n);
	}
	e->pc.n = 0;
	if (rc)
		e->rc = rc;
	return rc;
}

static inline bool
signal_end_lt(const struct signal *x, const struct signal *y)
{
	return x->end < y->end;
}

#define SIGNAL_SEM(x, arg) ((size_t)(x)->sem)

/*
 * sort_signals(v, n, nsems, 0): signals by (semaphore, end, processing
 * order), into a new array (common/tc-sort.h).  They were added in
 * processing order, so a stable sort by (semaphore, end) gives that: a
 * counting pass by semaphore, then each semaphore's signals merge-sorted by
 * end.  Those mostly come in end order already (a unit runs its events in
 * sequence), so most merges are skipped.  This replaced an LSD radix sort
 * of (semaphore, end) keys and a permutation of the signals, whose
 * scattered passes over tens of MB took about 1 s for the 2.5M signals and
 * waits of the 10M-event bench trace.
 */
TC_BUCKET_MSORT_DEFINE(sort_signals, struct signal, SIGNAL_SEM, signal_end_lt)

static inline bool
wait_lt(const struct wait *x, const struct wait *y)
{
	return x->eid != y->eid ? x->eid < y->eid : x->src < y->src;
}

#define WAIT_EID_HIGH(x, shift) ((size_t)((uint64_t)(x)->eid >> (shift)))

/*
 * sort_waits(v, n, nb, shift): waits by (event, source), stably (an
 * event's waits on one source keep their order), into a new array: a
 * counting pass by the event id's high bits, with about as many buckets as
 * waits (@shift and @nb from waits_shift()), then each bucket (a few waits)
 * merge-sorted.  Two passes over the waits where an LSD radix sort took six
 * and a permutation.
 */
TC_BUCKET_MSORT_DEFINE(sort_waits, struct wait, WAIT_EID_HIGH, wait_lt)

/* The shift that leaves about as many buckets of event ids as waits; *@nb gets their number. */
static unsigned
waits_shift(const struct wait *v, size_t n, size_t *nb)
{
	int64_t max = 0;
	unsigned shift = 0;

	for (size_t i = 0; i < n; i++)
		max = TC_MAX(max, v[i].eid);
	while ((size_t)((uint64_t)max >> shift) >= n)
		shift++;
	*nb = (size_t)((uint64_t)max >> shift) + 1;
	return shift;
}

int
deps_engine_finish(struct deps_engine *e)
{
	size_t *off = NULL, *cnt = NULL, i, j;
	int rc = e->rc;

	if (!rc && e->par) {
		rc = par_flush(e);
		e->rc = rc;
	}
	if (rc || !e->nwaits)
		return rc;
	if (e->nsignals > 1) {
		e->signals = sort_signals(e->signals, e->nsignals, e->sems.n, 0);
		e->csignals = e->nsignals;
	}
	off = tc_xcalloc(e->sems.n + 1, sizeof(*off));
	cnt = tc_xcalloc(e->sems.n + 1, sizeof(*cnt));
	for (i = e->nsignals; i-- > 0;) {
		off[e->signals[i].sem] = i;
		cnt[e->signals[i].sem]++;
	}
	/* Resolve: the N-th completion (1-based) made the count reach N. */
	for (i = 0; i < e->nwaits; i++) {
		struct wait *w = &e->waits[i];

		if (w->n >= 1 && (uint64_t)w->n <= cnt[w->sem])
			w->src = e->signals[off[w->sem] + w->n - 1].eid;
		if (w->src == w->eid)
			w->src = 0;
	}
	{
		size_t nb;
		unsigned shift = waits_shift(e->waits, e->nwaits, &nb);

		e->waits = sort_waits(e->waits, e->nwaits, nb, shift);
	}
	e->cwaits = e->nwaits;
	for (i = 0; i < e->nwaits && !rc; i = j) {
		const char *sem = e->sems.v[e->waits[i].sem];
		size_t slen = e->sems.lens[e->waits[i].sem];

		if (e->parts && e->waits[i].src && (i + 1 == e->nwaits ||
		    e->waits[i + 1].eid != e->waits[i].eid || e->waits[i + 1].src != e->waits[i].src) &&
		    slen <= LABEL_SHORT) {
			struct deps_label l = { DEPS_LABEL_WAIT, e->waits[i].sem, sem, slen,
						(uint64_t)e->waits[i].n, 0 };

			rc = e->parts(e->ctx, e->waits[i].src, e->waits[i].eid, ST_EDGE_ORDER, &l);
			j = i + 1;
			continue;
		}
		label_reset(&e->label);
		for (j = i; j < e->nwaits && e->waits[j].eid == e->waits[i].eid &&
		     e->waits[j].src == e->waits[i].src; j++) {
			if (e->waits[i].src) {
				char *s = tc_xasprintf("%s>=%lld", e->sems.v[e->waits[j].sem],
						       (long long)e->waits[j].n);

				label_add(&e->label, s, strlen(s));
				free(s);
			}
		}
		if (e->waits[i].src)
			rc = e->edge(e->ctx, e->waits[i].src, e->waits[i].eid, ST_EDGE_ORDER,
				     e->label.s, e->label.len);
	}
	free(off);
	free(cnt);
	e->rc = rc;
	return rc;
}
