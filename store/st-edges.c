/* SPDX-License-Identifier: MIT */
/*
 * store/st-edges.c - packed dependency edges (the format is in st-edges.h):
 * the collector that st_writer_finish() feeds and the read-only virtual
 * table `edges` that every trace connection sees.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/tc-jw.h"
#include "common/tc-rank.h"
#include "common/tc-varint.h"
#include "store/store-int.h"

#define ST_EDGE_KIND_BITS 3
#define ST_EDGE_KIND_MASK ((1u << ST_EDGE_KIND_BITS) - 1)
#define ST_LABEL_TEXT 1		/* label forms (st-edges.h) */
#define ST_LABEL_RANGE 2
#define ST_LABEL_WAIT 3
#define ST_LABEL_ARENA (32u << 20)	/* label bytes kept for interning before a reset */
#define ST_LABEL_SLOTS_MAX (1u << 21)

/* ---- the collector ---- */

#define ST_EDGE_PAGE_MAX (64u << 10)	/* bytes per page, at most */
#define ST_LCACHE 4096			/* direct-mapped label cache entries */
#define ST_LCACHE_TEXT 22

/*
 * What is collected, per partition (a range of 1 << part_shift event ids):
 *
 *   ins: groups of the edges into one dst that were added one after the
 *        other (the engine adds all the edges into an event at once), each
 *        a header of ST_GROUP_HDR bytes (u32 dst less the partition's first
 *        id, u16 body bytes) and a body that is already the
 *        ins blob's bytes for those edges (st-edges.h) but the first dst
 *        delta: svarint src - dst and the label part, then for each further
 *        edge a 0 byte (dst - previous dst) and the same.  Finishing sorts
 *        the groups by dst and copies their bodies after the delta.
 *   outs: one u64 per edge, src less the partition's first id << 35 |
 *        dst << 3 | kind (ids are below 2^32 and a partition has at most
 *        2^24 of them).
 *
 * Numbers are in the machine's byte order: the pages and the spill file
 * live and die with the process.  Neither a group nor a record spans two
 * pages.
 */
#define ST_GROUP_HDR 6
#define ST_LAB_MAX (3 * TC_VARINT_MAX)	/* a label part: kind and form, two numbers */
#define ST_REC_MAX (1 + TC_VARINT_MAX + ST_LAB_MAX)	/* an ins record */

struct st_epage {		/* a full page: in memory, or in the spill at off */
	uint8_t *mem;
	uint64_t off;
	uint32_t bytes;
};

struct st_estream {		/* one partition's ins or outs */
	struct st_epage *pages;
	size_t npages, cap;
	uint8_t *cur;		/* the page being filled */
	uint32_t used;
	uint64_t count, bytes;	/* groups (ins) or records (outs); their bytes */
	/* ins: the last group of the page being filled, still open to more edges */
	bool gopen;
	uint32_t gdst, gstart;
};

struct st_lslot {		/* interning: label text -> id */
	uint32_t hash, id, off, len;
};

struct st_lcache {		/* recently used short texts, in front of the slots */
	uint32_t hash, id;
	uint8_t len;
	char text[ST_LCACHE_TEXT];
};

struct st_edges {
	sqlite3 *db;
	int64_t max_id;
	unsigned part_shift;	/* event ids per partition: 1 << part_shift */
	uint32_t nparts;
	struct st_estream *in, *out;	/* [nparts]: by dst, by src */
	uint32_t page_bytes;
	size_t ram, ram_used;
	char *spill_base;
	struct st_spill spill;
	bool spilling;
	int64_t nedges;
	int failed;
	/* label texts */
	struct st_lcache *cache;
	struct st_lslot *slots;
	uint32_t nslots, nused;
	struct tc_buf arena;	/* texts of the interned labels */
	uint32_t next_label;	/* ids from 1; 0 is an empty entry */
	struct tc_buf group;	/* the edge_labels row being built */
	sqlite3_stmt *ins_label, *ins_block, *ins_outs, *ins_crit;
	const int64_t *ends;	/* borrowed: events' ends (ts + dur) by id, or by rank in end_set, or NULL */
	const struct tc_rank *end_set;	/* borrowed: the ids in ends when it is by rank, else NULL */
	int dbfd;		/* the database file, to start its writeback early; -1: none */
	struct st_spill *lender;	/* borrowed: pages come from its released bytes first, or NULL */
};

static int
st_edges_sqlerr(struct st_edges *x, struct tc_err *err, const char *what)
{
	return tc_err_set(err, -EIO, "edges: %s: %s", what, sqlite3_errmsg(x->db));
}

/*
 * Why a share of the memory rather than a fixed 64 MiB: a 10M-event engine
 * trace collects 1.3 GB of edges; keeping them in memory instead of writing
 * them to the spill file and mapping them back took 2.4 s off its ingest on
 * the development box (docs/benchmarks-deps.md, fifth round).  The share is
 * of what the process may use, so a server in a 2 GB container does not
 * plan on the host's memory; the spill file stays for traces beyond it.
 */
size_t
st_edges_ram(void)
{
	long mb = tc_env_num("NX_EDGE_RAM_MB", 1, (long)(ST_EDGE_RAM_MAX >> 20), 0);

	if (mb)
		return (size_t)mb << 20;
	return (size_t)tc_mem_share(16, ST_EDGE_RAM, ST_EDGE_RAM_MAX);
}

void
st_edges_usage(const struct st_edges *x, uint64_t *kept, uint64_t *spilled)
{
	*kept = x->ram_used;
	*spilled = x->spilling ? x->spill.size : 0;
}

int
st_edges_new(struct st_edges **out, sqlite3 *db, int64_t max_id, size_t ram,
	     const char *spill_base, struct tc_err *err)
{
	/*
	 * Cache lines of its own: every edge reads its first fields, and with
	 * another thread's data in the same line (perf: 87% of
	 * st_edges_add_text()'s samples on loading max_id) each read missed.
	 */
	size_t xsz = (sizeof(struct st_edges) + 63) & ~(size_t)63;
	struct st_edges *x = memset(tc_xaligned(64, xsz), 0, xsz);
	int rc = 0;

	*out = NULL;
	x->spill.fd = -1;
	x->dbfd = -1;
	if (max_id < 0 || max_id > UINT32_MAX) {
		rc = tc_err_set(err, -EINVAL, "edges: %lld events are too many", (long long)max_id);
		goto out;
	}
	x->db = db;
	x->max_id = max_id;
	x->part_shift = 16;
	while (((uint64_t)max_id >> x->part_shift) + 1 > ST_EDGE_PARTS)
		x->part_shift++;
	x->nparts = (uint32_t)((uint64_t)max_id >> x->part_shift) + 1;
	x->in = tc_xcalloc(x->nparts, sizeof(*x->in));
	x->out = tc_xcalloc(x->nparts, sizeof(*x->out));
	/* the pages being filled must fit in a quarter of the budget */
	x->page_bytes = (uint32_t)TC_MIN((size_t)ST_EDGE_PAGE_MAX, ram / 4 / (2 * x->nparts));
	if (x->page_bytes < 1024)
		x->page_bytes = 1024;
	x->ram = ram;
	x->spill_base = tc_xstrdup(spill_base);
	x->cache = tc_xcalloc(ST_LCACHE, sizeof(*x->cache));
	x->next_label = 1;
	tc_buf_init(&x->arena);
	tc_buf_init(&x->group);
	{
		uint8_t zero = 0;	/* label 0: an empty entry */

		tc_buf_add(&x->group, &zero, 1);
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO edge_labels(id, texts) VALUES (?, ?)", -1,
			       &x->ins_label, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO edge_blocks(id, ins) VALUES (?, ?)", -1,
			       &x->ins_block, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO edge_outs(id, outs) VALUES (?, ?)", -1,
			       &x->ins_outs, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO edge_crit(id, crit) VALUES (?, ?)", -1,
			       &x->ins_crit, NULL) != SQLITE_OK) {
		rc = st_edges_sqlerr(x, err, "prepare");
		goto out;
	}
out:
	if (rc < 0)
		st_edges_free(x);
	else
		*out = x;
	return rc;
}

/* Free page @mem (NULL: none) unless it is lent memory, which goes with its spill. */
static void
st_epage_free(const struct st_edges *x, void *mem)
{
	if (!x->lender || !st_spill_lent(x->lender, mem))
		free(mem);
}

/* Release the pages of @s (its bytes are written, or not wanted). */
static void
st_estream_clear(const struct st_edges *x, struct st_estream *s)
{
	for (size_t i = 0; i < s->npages; i++)
		st_epage_free(x, s->pages[i].mem);
	free(s->pages);
	st_epage_free(x, s->cur);
	memset(s, 0, sizeof(*s));
}

void
st_edges_free(struct st_edges *x)
{
	if (!x)
		return;
	for (uint32_t p = 0; x->in && x->out && p < x->nparts; p++) {
		st_estream_clear(x, &x->in[p]);
		st_estream_clear(x, &x->out[p]);
	}
	free(x->in);
	free(x->out);
	if (x->spill.fd >= 0)
		st_spill_close(&x->spill);
	free(x->spill_base);
	free(x->cache);
	free(x->slots);
	tc_buf_free(&x->arena);
	tc_buf_free(&x->group);
	sqlite3_finalize(x->ins_label);
	sqlite3_finalize(x->ins_block);
	sqlite3_finalize(x->ins_outs);
	sqlite3_finalize(x->ins_crit);
	free(x);
}

int64_t
st_edges_count(const struct st_edges *x)
{
	return x ? x->nedges : 0;
}

/* Write the label row being built (group @g); 0 or -EIO. */
static int
st_edges_flush_labels(struct st_edges *x, uint32_t g)
{
	int rc = 0;

	sqlite3_bind_int64(x->ins_label, 1, g);
	sqlite3_bind_blob(x->ins_label, 2, x->group.data, (int)x->group.len, SQLITE_STATIC);
	if (sqlite3_step(x->ins_label) != SQLITE_DONE)
		rc = -EIO;
	sqlite3_reset(x->ins_label);
	x->group.len = 0;
	return rc;
}

/* Forget every interned text (ids stay taken): bounds the table's memory. */
static void
st_edges_label_reset(struct st_edges *x)
{
	memset(x->slots, 0, x->nslots * sizeof(*x->slots));
	x->nused = 0;
	x->arena.len = 0;
}

static void
st_edges_label_grow(struct st_edges *x)
{
	uint32_t ns = x->nslots ? x->nslots * 2 : 4096;
	struct st_lslot *old = x->slots;

	x->slots = tc_xcalloc(ns, sizeof(*x->slots));
	for (uint32_t i = 0; i < x->nslots; i++) {
		uint32_t k;

		if (!old[i].id)
			continue;
		for (k = old[i].hash & (ns - 1); x->slots[k].id; k = (k + 1) & (ns - 1))
			;
		x->slots[k] = old[i];
	}
	free(old);
	x->nslots = ns;
}

/* The id of text @s (@len bytes): interned, or a new one.  0 or -errno. */
static int
st_edges_text(struct st_edges *x, const char *s, size_t len, uint32_t *id)
{
	uint32_t h, k;
	uint8_t v[TC_VARINT_MAX];
	struct st_lcache *c;

	if (len > INT32_MAX)
		return -EINVAL;
	h = st_hash(s, len);
	c = &x->cache[h & (ST_LCACHE - 1)];
	if (c->id && c->hash == h && c->len == len && !memcmp(c->text, s, len)) {
		*id = c->id;
		return 0;
	}
	if (2 * (x->nused + 1) > x->nslots) {
		if (x->nslots >= ST_LABEL_SLOTS_MAX)
			st_edges_label_reset(x);
		else
			st_edges_label_grow(x);
	}
	for (k = h & (x->nslots - 1); x->slots[k].id; k = (k + 1) & (x->nslots - 1)) {
		struct st_lslot *sl = &x->slots[k];

		if (sl->hash == h && sl->len == len && !memcmp(x->arena.data + sl->off, s, len)) {
			*id = sl->id;
			goto cache;
		}
	}
	if (x->next_label == UINT32_MAX)
		return -EOVERFLOW;
	*id = x->next_label++;
	tc_buf_add(&x->group, v, tc_uvarint_put(v, len));
	tc_buf_add(&x->group, s, len);
	if (x->next_label % ST_EDGE_LABELS == 0 &&
	    st_edges_flush_labels(x, *id / ST_EDGE_LABELS) < 0)
		return -EIO;
	if (x->arena.len + len > ST_LABEL_ARENA) {
		st_edges_label_reset(x);
		for (k = h & (x->nslots - 1); x->slots[k].id; k = (k + 1) & (x->nslots - 1))
			;
	}
	x->slots[k].hash = h;
	x->slots[k].id = *id;
	x->slots[k].off = (uint32_t)x->arena.len;
	x->slots[k].len = (uint32_t)len;
	tc_buf_add(&x->arena, s, len);
	x->nused++;
cache:
	if (len <= ST_LCACHE_TEXT) {
		c->hash = h;
		c->id = *id;
		c->len = (uint8_t)len;
		memcpy(c->text, s, len);
	}
	return 0;
}

/* A canonical decimal (no sign, no leading zero) of @n bytes into @v. */
static bool
st_dec(const char *s, size_t n, uint64_t *v)
{
	uint64_t r = 0;

	if (n == 0 || n > 20 || (s[0] == '0' && n > 1))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || r > (UINT64_MAX - d) / 10)
			return false;
		r = r * 10 + d;
	}
	*v = r;
	return true;
}

/* A label part (st-edges.h): uvarint @lk, then @n numbers @a, @b. */
struct st_lab {
	uint64_t lk, a, b;
	int n;
};

/*
 * The label part for @label: the form (st-edges.h) that rebuilds exactly
 * these bytes: "P[LO:HI]" and "P>=N" keep the prefix P as a text and the
 * numbers as varints, anything else is one text.  0 or -errno.
 */
static int
st_edges_label(struct st_edges *x, int kind, const char *s, size_t n, struct st_lab *l)
{
	uint64_t lo, hi;
	uint32_t id;
	size_t i;
	int rc;

	l->n = 0;
	l->a = l->b = 0;
	if (!s) {
		l->lk = (uint64_t)kind;
		return 0;
	}
	/* P[LO:HI] */
	if (n >= 5 && s[n - 1] == ']') {
		size_t colon = 0;

		for (i = n - 2; i > 0 && s[i] != '['; i--)
			if (s[i] == ':' && !colon)
				colon = i;
		if (i > 0 && colon > i && st_dec(s + i + 1, colon - i - 1, &lo) &&
		    st_dec(s + colon + 1, n - 2 - colon, &hi) && hi >= lo) {
			rc = st_edges_text(x, s, i, &id);
			if (rc < 0)
				return rc;
			l->lk = ((uint64_t)id << 2 | ST_LABEL_RANGE) << 3 | (uint64_t)kind;
			l->n = 2;
			l->a = lo;
			l->b = hi - lo;
			return 0;
		}
	}
	/* P>=N */
	for (i = n; i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9'; i--)
		;
	if (i >= 3 && i < n && s[i - 1] == '=' && s[i - 2] == '>' && st_dec(s + i, n - i, &lo)) {
		rc = st_edges_text(x, s, i - 2, &id);
		if (rc < 0)
			return rc;
		l->lk = ((uint64_t)id << 2 | ST_LABEL_WAIT) << 3 | (uint64_t)kind;
		l->n = 1;
		l->a = lo;
		return 0;
	}
	rc = st_edges_text(x, s, n, &id);
	if (rc < 0)
		return rc;
	l->lk = ((uint64_t)id << 2 | ST_LABEL_TEXT) << 3 | (uint64_t)kind;
	return 0;
}

/* The page of @s is full: keep it in memory while the budget allows, else spill it. */
static int
st_edges_page_done(struct st_edges *x, struct st_estream *s)
{
	struct st_epage *pg;
	int rc;

	if (s->npages == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->pages = tc_xrealloc(s->pages, s->cap * sizeof(*s->pages));
	}
	pg = &s->pages[s->npages++];
	pg->bytes = s->used;
	pg->mem = NULL;
	pg->off = 0;
	s->gopen = false;
	if (x->ram_used + x->page_bytes <= x->ram) {
		pg->mem = s->cur;
		s->cur = NULL;
		x->ram_used += x->page_bytes;
	} else {
		if (!x->spilling) {
			struct tc_err e = { 0 };

			rc = st_spill_open(&x->spill, x->spill_base, ".edges", 0, &e);
			if (rc < 0) {
				x->spill.fd = -1;
				return rc;
			}
			x->spilling = true;
		}
		pg->off = x->spill.size;
		rc = st_spill_write(&x->spill, s->cur, s->used);
		if (rc < 0)
			return rc;
	}
	s->used = 0;
	return 0;
}

/* Room for @n more bytes in the page of @s (a new page when it is full). */
static int
st_edges_room(struct st_edges *x, struct st_estream *s, size_t n)
{
	int rc;

	if (s->cur && s->used + n > x->page_bytes) {
		rc = st_edges_page_done(x, s);
		if (rc < 0)
			return rc;
	}
	if (!s->cur && x->lender)
		s->cur = st_spill_lend(x->lender, x->page_bytes);
	if (!s->cur)
		s->cur = tc_xmalloc(x->page_bytes);
	return 0;
}

static inline void
st_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t
st_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void
st_put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t
st_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Edge @src -> @dst of @kind: into the ins of dst's partition (its open
 * group when it is dst's) with label part @lk and @nnum numbers @a, @b
 * (st-edges.h), and into the outs of src's partition.
 */
static int
st_edges_put(struct st_edges *x, int64_t src, int64_t dst, int kind, uint64_t lk, int nnum,
	     uint64_t a, uint64_t b)
{
	struct st_estream *si = &x->in[(uint64_t)dst >> x->part_shift];
	struct st_estream *so = &x->out[(uint64_t)src >> x->part_shift];
	uint64_t mask = ((uint64_t)1 << x->part_shift) - 1, r;
	uint8_t *q;
	int rc;

	if (si->gopen && si->gdst == (uint32_t)dst && si->used + ST_REC_MAX <= x->page_bytes) {
		q = si->cur + si->used;
		*q++ = 0;	/* dst - previous dst */
	} else {
		rc = st_edges_room(x, si, ST_GROUP_HDR + ST_REC_MAX);
		if (rc < 0)
			goto fail;
		q = si->cur + si->used;
		st_put32(q, (uint32_t)((uint64_t)dst & mask));
		si->gopen = true;
		si->gdst = (uint32_t)dst;
		si->gstart = si->used;
		si->count++;
		q += ST_GROUP_HDR;
	}
	q += tc_uvarint_put(q, tc_zigzag(src - dst));
	q += tc_uvarint_put(q, lk);
	if (nnum > 0)
		q += tc_uvarint_put(q, a);
	if (nnum > 1)
		q += tc_uvarint_put(q, b);
	si->bytes += (size_t)(q - si->cur) - si->used;
	si->used = (uint32_t)(q - si->cur);
	st_put16(si->cur + si->gstart + 4, (uint16_t)(si->used - si->gstart - ST_GROUP_HDR));

	rc = st_edges_room(x, so, sizeof(r));
	if (rc < 0)
		goto fail;
	r = ((uint64_t)src & mask) << 35 | (uint64_t)dst << 3 | (uint64_t)kind;
	memcpy(so->cur + so->used, &r, sizeof(r));
	so->used += sizeof(r);
	so->bytes += sizeof(r);
	so->count++;
	x->nedges++;
	return 0;
fail:
	x->failed = rc;
	return rc;
}

static bool
st_edges_bad(const struct st_edges *x, int64_t src, int64_t dst, int kind)
{
	return src < 0 || dst < 0 || src > x->max_id || dst > x->max_id || kind < 0 ||
	       kind >= (1 << ST_EDGE_KIND_BITS);
}

void
st_edges_set_lender(struct st_edges *x, struct st_spill *sp)
{
	x->lender = sp;
}

void
st_edges_set_ends(struct st_edges *x, const int64_t *ends)
{
	x->ends = ends;
	x->end_set = NULL;
}

void
st_edges_set_ends_ranked(struct st_edges *x, const struct tc_rank *set, const int64_t *ends)
{
	x->ends = ends;
	x->end_set = set;
}

/* The end of event @id into *@end (st_edges_set_ends*()); false if it has none. */
static inline bool
st_edges_end(const struct st_edges *x, int64_t id, int64_t *end)
{
	if (!x->end_set) {
		*end = x->ends[id];
		return true;
	}
	if (!tc_rank_has(x->end_set, (uint64_t)id))
		return false;
	*end = x->ends[tc_rank_of(x->end_set, (uint64_t)id)];
	return true;
}

int
st_edges_add(struct st_edges *x, int64_t src, int64_t dst, int kind, const char *label,
	     size_t len)
{
	struct st_lab l;
	int rc;

	if (x->failed)
		return x->failed;
	if (st_edges_bad(x, src, dst, kind))
		return -EINVAL;
	rc = st_edges_label(x, kind, label, len, &l);
	if (rc == -EINVAL)
		return rc;
	if (rc < 0) {
		x->failed = rc;
		return rc;
	}
	return st_edges_put(x, src, dst, kind, l.lk, l.n, l.a, l.b);
}

int
st_edges_text_id(struct st_edges *x, const char *s, size_t len, uint32_t *id)
{
	int rc;

	if (x->failed)
		return x->failed;
	rc = st_edges_text(x, s, len, id);
	if (rc < 0 && rc != -EINVAL)
		x->failed = rc;
	return rc;
}

int
st_edges_add_text(struct st_edges *x, int64_t src, int64_t dst, int kind, int shape,
		  uint32_t text, uint64_t a, uint64_t b)
{
	if (x->failed)
		return x->failed;
	if (st_edges_bad(x, src, dst, kind) || text == 0 || text >= x->next_label ||
	    (shape != ST_LABEL_BYTES && shape != ST_LABEL_AT_LEAST) ||
	    (shape == ST_LABEL_BYTES && a > b))
		return -EINVAL;
	if (shape == ST_LABEL_BYTES)
		return st_edges_put(x, src, dst, kind,
				    ((uint64_t)text << 2 | ST_LABEL_RANGE) << 3 | (uint64_t)kind, 2,
				    a, b - a);
	return st_edges_put(x, src, dst, kind,
			    ((uint64_t)text << 2 | ST_LABEL_WAIT) << 3 | (uint64_t)kind, 1, a, 0);
}

int
st_edges_add_parts(struct st_edges *x, int64_t src, int64_t dst, int kind, int shape,
		   const char *name, size_t len, uint64_t a, uint64_t b)
{
	uint32_t id;
	int rc;

	if (x->failed)
		return x->failed;
	if (st_edges_bad(x, src, dst, kind) ||
	    (shape != ST_LABEL_BYTES && shape != ST_LABEL_AT_LEAST) ||
	    (shape == ST_LABEL_BYTES && a > b))
		return -EINVAL;
	rc = st_edges_text_id(x, name, len, &id);
	if (rc < 0)
		return rc;
	return st_edges_add_text(x, src, dst, kind, shape, id, a, b);
}

int
st_writer_add_edge(struct st_writer *w, int64_t src, int64_t dst, int kind, const char *label,
		   size_t len)
{
	return w->edges ? st_edges_add(w->edges, src, dst, kind, label, len) : -EINVAL;
}

int
st_writer_add_edge_parts(struct st_writer *w, int64_t src, int64_t dst, int kind, int shape,
			 const char *name, size_t len, uint64_t a, uint64_t b)
{
	return w->edges ? st_edges_add_parts(w->edges, src, dst, kind, shape, name, len, a, b)
			: -EINVAL;
}

int
st_writer_edge_text(struct st_writer *w, const char *s, size_t len, uint32_t *id)
{
	return w->edges ? st_edges_text_id(w->edges, s, len, id) : -EINVAL;
}

int
st_writer_add_edge_text(struct st_writer *w, int64_t src, int64_t dst, int kind, int shape,
			uint32_t text, uint64_t a, uint64_t b)
{
	return w->edges ? st_edges_add_text(w->edges, src, dst, kind, shape, text, a, b)
			: -EINVAL;
}

/* The bytes of page @i of @s (the page being filled last). */
static const uint8_t *
st_epage_data(const struct st_edges *x, const struct st_estream *s, size_t i, size_t *bytes)
{
	const struct st_epage *pg;

	if (i == s->npages) {
		*bytes = s->used;
		return s->cur;
	}
	pg = &s->pages[i];
	*bytes = pg->bytes;
	return pg->mem ? pg->mem : (const uint8_t *)x->spill.map + pg->off;
}

/*
 * Counting-sort (stably) the groups of @s by their dst: @to[k] gets the
 * header of the k-th; the groups of local id i are @to[first[i] ..
 * first[i + 1]).  Return: 0 or -EBADMSG.
 */
static int
st_edges_sort_in(const struct st_edges *x, const struct st_estream *s, uint32_t *first,
		 size_t nids, const uint8_t **to)
{
	memset(first, 0, (nids + 1) * sizeof(*first));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i <= s->npages; i++) {
			size_t bytes;
			const uint8_t *q = st_epage_data(x, s, i, &bytes), *end = q + bytes;

			while (q < end) {
				uint64_t local = st_get32(q), len = st_get16(q + 4);

				if (local >= nids || len > (size_t)(end - q) - ST_GROUP_HDR)
					return -EBADMSG;
				if (pass == 0)
					first[local + 1]++;
				else
					to[first[local]++] = q;
				q += ST_GROUP_HDR + len;
			}
		}
		if (pass == 0)
			for (size_t i = 1; i <= nids; i++)
				first[i] += first[i - 1];
	}
	/* first[i] is now past the last group of i: shift back */
	memmove(first + 1, first, nids * sizeof(*first));
	first[0] = 0;
	return 0;
}

/* The same for the records of the outs, by src, into @to. */
static int
st_edges_sort_out(const struct st_edges *x, const struct st_estream *s, uint32_t *first,
		  size_t nids, uint64_t *to)
{
	memset(first, 0, (nids + 1) * sizeof(*first));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i <= s->npages; i++) {
			size_t bytes;
			const uint8_t *q = st_epage_data(x, s, i, &bytes);

			if (bytes % 8)
				return -EBADMSG;
			for (size_t k = 0; k < bytes; k += 8) {
				uint64_t r, local;

				memcpy(&r, q + k, sizeof(r));
				local = r >> 35;

				if (local >= nids)
					return -EBADMSG;
				if (pass == 0)
					first[local + 1]++;
				else
					to[first[local]++] = r;
			}
		}
		if (pass == 0)
			for (size_t i = 1; i <= nids; i++)
				first[i] += first[i - 1];
	}
	memmove(first + 1, first, nids * sizeof(*first));
	first[0] = 0;
	return 0;
}

/*
 * Point the entries of blob index @idx from group @g on that @slot reaches
 * (the first event at or past them is @slot, less the block's first id) at
 * entry offset @off, after an entry of event @prev.  Return: the first
 * group still to point.
 */
static int
st_idx_fill(uint8_t *idx, int g, unsigned slot, unsigned prev, size_t off)
{
	for (; g < ST_EDGE_GROUPS && (unsigned)g * ST_EDGE_GROUP <= slot; g++) {
		uint8_t *e = idx + 5 * g;

		e[0] = (uint8_t)off;
		e[1] = (uint8_t)(off >> 8);
		e[2] = (uint8_t)(off >> 16);
		e[3] = (uint8_t)(off >> 24);
		e[4] = (uint8_t)prev;
	}
	return g;
}

/*
 * The ins blob of groups [@a, @b) (sorted, of the block at @block_base) into
 * @buf, its index first; its size (0 for none: no blob).
 */
static size_t
st_edges_enc_in(const uint8_t *const *g, size_t a, size_t b, uint32_t part_base,
		uint32_t block_base, uint8_t *buf)
{
	uint8_t *e0 = buf + ST_EDGE_IDX, *p = e0;
	uint32_t prev = block_base;
	int grp = 0;

	if (a == b)
		return 0;
	for (size_t i = a; i < b; i++) {
		uint32_t dst = part_base + st_get32(g[i]);
		size_t len = st_get16(g[i] + 4);

		grp = st_idx_fill(buf, grp, dst - block_base, prev - block_base, (size_t)(p - e0));
		p += tc_uvarint_put(p, dst - prev);
		memcpy(p, g[i] + ST_GROUP_HDR, len);
		p += len;
		prev = dst;
	}
	st_idx_fill(buf, grp, ST_EDGE_BLOCK, prev - block_base, (size_t)(p - e0));
	return (size_t)(p - buf);
}

/* The outs blob of records [@a, @b) into @buf, its index first; its size (0 for none). */
static size_t
st_edges_enc_out(const uint64_t *r, size_t a, size_t b, uint32_t part_base, uint32_t block_base,
		 uint8_t *buf)
{
	uint8_t *e0 = buf + ST_EDGE_IDX, *p = e0;
	uint32_t prev = block_base;
	int grp = 0;

	if (a == b)
		return 0;
	for (size_t i = a; i < b; i++) {
		uint32_t src = part_base + (uint32_t)(r[i] >> 35);
		int64_t dst = (int64_t)(r[i] >> 3 & 0xffffffffu);

		grp = st_idx_fill(buf, grp, src - block_base, prev - block_base, (size_t)(p - e0));
		p += tc_uvarint_put(p, src - prev);
		p += tc_uvarint_put(p, tc_zigzag(dst - (int64_t)src));
		*p++ = (uint8_t)(r[i] & 7);	/* uvarint kind: one byte */
		prev = src;
	}
	st_idx_fill(buf, grp, ST_EDGE_BLOCK, prev - block_base, (size_t)(p - e0));
	return (size_t)(p - buf);
}

/* ---- blob entries (st-edges.h), as the packer writes them and readers read them ---- */

struct ev_entry {
	uint64_t d, z, lk, a, b;
	int form, kind;		/* from lk */
};

/* Entry @e's kind and label form, from its lk; SQLITE_CORRUPT for a label part of no form. */
static inline int
ev_entry_lk(struct ev_entry *e)
{
	uint64_t x = e->lk >> ST_EDGE_KIND_BITS;

	e->kind = (int)(e->lk & ST_EDGE_KIND_MASK);
	e->form = x ? (int)(x & 3) : 0;
	return x && e->form == 0 ? SQLITE_CORRUPT : SQLITE_OK;
}

/* Parse one blob entry at *@q, a bound checked at every byte; SQLITE_OK or SQLITE_CORRUPT. */
static int
ev_entry_get_checked(const uint8_t **q, const uint8_t *end, struct ev_entry *e)
{
	e->a = e->b = 0;
	if (tc_uvarint_get(q, end, &e->d) || tc_uvarint_get(q, end, &e->z) ||
	    tc_uvarint_get(q, end, &e->lk) || ev_entry_lk(e) != SQLITE_OK)
		return SQLITE_CORRUPT;
	if ((e->form == ST_LABEL_RANGE || e->form == ST_LABEL_WAIT) && tc_uvarint_get(q, end, &e->a))
		return SQLITE_CORRUPT;
	if (e->form == ST_LABEL_RANGE && (tc_uvarint_get(q, end, &e->b) || e->a + e->b < e->a))
		return SQLITE_CORRUPT;
	return SQLITE_OK;
}

/*
 * Parse one blob entry at *@q; SQLITE_OK or SQLITE_CORRUPT.  Where
 * TC_VARINT_MAX bytes are left for each of its five numbers (all but a
 * blob's last few entries) they are decoded without a bound check per
 * byte: the same numbers and checks as ev_entry_get_checked(), in about
 * half the instructions (the crit pass and the queries read every entry).
 */
static inline int
ev_entry_get(const uint8_t **q, const uint8_t *end, struct ev_entry *e)
{
	const uint8_t *p = *q;

	if (end - p < 5 * TC_VARINT_MAX)
		return ev_entry_get_checked(q, end, e);
	e->a = e->b = 0;
	if (tc_uvarint_get_room(&p, &e->d) || tc_uvarint_get_room(&p, &e->z) ||
	    tc_uvarint_get_room(&p, &e->lk) || ev_entry_lk(e) != SQLITE_OK)
		return SQLITE_CORRUPT;
	if ((e->form == ST_LABEL_RANGE || e->form == ST_LABEL_WAIT) &&
	    tc_uvarint_get_room(&p, &e->a))
		return SQLITE_CORRUPT;
	if (e->form == ST_LABEL_RANGE && (tc_uvarint_get_room(&p, &e->b) || e->a + e->b < e->a))
		return SQLITE_CORRUPT;
	*q = p;
	return SQLITE_OK;
}

/*
 * Step to entry @e from the id before it, *@cur, and give the edge's other
 * end in *@other.  Return: false when the entry is damaged (an id delta
 * past the block, or an other end out of range).
 */
static bool
ev_step(const struct ev_entry *e, int64_t *cur, int64_t *other)
{
	if (e->d >= ST_EDGE_BLOCK)
		return false;
	*cur += (int64_t)e->d;
	return !__builtin_add_overflow(*cur, tc_unzigzag(e->z), other);
}

/* Scratch of st_edges_enc_crit(): a block's edges in, as read. */
struct st_crit_tmp {
	int64_t *src, *end;	/* tc_xrealloc'd, @cap each */
	uint32_t *at;		/* the dst less the block's first << ST_EDGE_KIND_BITS | kind */
	size_t cap;
	uint8_t second[ST_EDGE_BLOCK * 2 * TC_VARINT_MAX];	/* the blob's second part, as written */
};

#define ST_CRIT_AHEAD 16	/* sources whose end is prefetched ahead */

static void
st_crit_tmp_free(struct st_crit_tmp *t)
{
	free(t->src);
	free(t->end);
	free(t->at);
}

/* uvarint 1 + (zigzag(src - dst) << 3 | kind), uvarint zigzag(lag) at @p: its length */
static size_t
st_crit_put(uint8_t *p, int64_t src, int64_t dst, uint32_t kind, int64_t lag)
{
	size_t n = tc_uvarint_put(p, 1 + (tc_zigzag(src - dst) << ST_EDGE_KIND_BITS | kind));

	return n + tc_uvarint_put(p + n, tc_zigzag(lag));
}

/*
 * The crit blob of the block at @block_base into @buf, from its ins blob
 * (@ins, @len bytes, as st_edges_enc_in() wrote it) and @x's event ends, in two
 * parts, the first led by its length (uvarint).  Each has an entry per
 * event of the block from the first up to the last with edges in: uvarint
 * 0 for none, else a source of its edges as uvarint 1 + (zigzag(src - dst)
 * << 3 | kind of its first edge in the ins) then uvarint zigzag(end of dst
 * - end of src).  The first part gives the source that ends last (the
 * larger source on equal ends), the second the next one in that order.
 * Its size (0 for none: no blob, also when an end difference does not fit
 * in 64 bits).  The critical path's walk reads it instead of every edge's
 * source, and knows when they end without reading them
 * (deps/deps-critical.c); it decodes the second part of a block only when
 * it visited a first source already.
 *
 * In three passes: the entries are read, then their sources' ends (loads
 * that do not wait for each other: the sources lie anywhere in the ends, and
 * most are cache misses), then compared.
 */
static size_t
st_edges_enc_crit(const struct st_edges *x, const uint8_t *ins, size_t len, uint32_t block_base,
		  struct st_crit_tmp *t, uint8_t *buf)
{
	const uint8_t *q = ins + ST_EDGE_IDX, *end = ins + len;
	int64_t cur = block_base;
	/* the first part after room for its length, the second aside */
	uint8_t *p = buf + TC_VARINT_MAX, *p2;
	uint32_t next = 0;	/* the first event of the block not yet written */
	size_t n = 0, len1, len2, lp;

	if (!len)
		return 0;
	p2 = t->second;
	while (q < end) {
		struct ev_entry e;

		if (ev_entry_get(&q, end, &e) != SQLITE_OK)
			return 0;	/* not ours: no blob, the walk reads the edges */
		if (n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 4096;
			t->src = tc_xrealloc(t->src, t->cap * sizeof(*t->src));
			t->end = tc_xrealloc(t->end, t->cap * sizeof(*t->end));
			t->at = tc_xrealloc(t->at, t->cap * sizeof(*t->at));
		}
		if (!ev_step(&e, &cur, &t->src[n]))
			return 0;
		t->at[n++] = (uint32_t)(cur - block_base) << ST_EDGE_KIND_BITS | (uint32_t)e.kind;
	}
	for (size_t k = 0; k < n; k++) {
		if (!x->end_set && k + ST_CRIT_AHEAD < n)	/* sources lie anywhere in ends */
			__builtin_prefetch(&x->ends[t->src[k + ST_CRIT_AHEAD]]);
		if (!st_edges_end(x, t->src[k], &t->end[k]))
			return 0;	/* not ours: no blob */
	}
	for (size_t k = 0; k < n;) {
		uint32_t slot = t->at[k] >> ST_EDGE_KIND_BITS;
		int64_t dst = (int64_t)(block_base + slot), lag, dend;
		size_t first = k, best = k, second = SIZE_MAX;

		for (k++; k < n && t->at[k] >> ST_EDGE_KIND_BITS == slot; k++)
			if (t->end[k] > t->end[best] ||
			    (t->end[k] == t->end[best] && t->src[k] > t->src[best]))
				best = k;
		/* the next source in the same order: another source, its first edge */
		for (size_t j = first; j < k; j++)
			if (t->src[j] != t->src[best] &&
			    (second == SIZE_MAX || t->end[j] > t->end[second] ||
			     (t->end[j] == t->end[second] && t->src[j] > t->src[second])))
				second = j;
		for (; next < slot; next++) {
			*p++ = 0;
			*p2++ = 0;
		}
		if (!st_edges_end(x, dst, &dend) ||
		    __builtin_sub_overflow(dend, t->end[best], &lag))
			return 0;
		p += st_crit_put(p, t->src[best], dst, t->at[best] & ST_EDGE_KIND_MASK, lag);
		if (second == SIZE_MAX) {
			*p2++ = 0;
		} else {
			if (__builtin_sub_overflow(dend, t->end[second], &lag))
				return 0;
			p2 += st_crit_put(p2, t->src[second], dst,
					  t->at[second] & ST_EDGE_KIND_MASK, lag);
		}
		next = slot + 1;
	}
	len1 = (size_t)(p - (buf + TC_VARINT_MAX));
	len2 = (size_t)(p2 - t->second);
	lp = tc_uvarint_put(buf, len1);
	memmove(buf + lp, buf + TC_VARINT_MAX, len1);
	memcpy(buf + lp + len1, t->second, len2);
	return lp + len1 + len2;
}

/*
 * Finishing: each partition is sorted and its blocks' blobs encoded (a
 * "pack"), then the blocks are written in order.  With two CPUs or more
 * (and NX_DEPS_THREADS not 1) ST_PACKERS threads pack the next partitions,
 * taking them in order, while this one writes the blocks of the last, at
 * most ST_PACK_AHEAD ahead: packing costs about three times what writing
 * does, so one packer left the writer waiting most of the time.  Memory is
 * the budget plus ST_PACK_AHEAD + 1 partitions' blobs and ST_PACKERS
 * partitions' sort arrays.
 */
#define ST_PACK_AHEAD 2
#define ST_PACKERS 2		/* at most ST_PACK_AHEAD */
#define ST_PACK_MIN_EDGES 65536	/* fewer edges: packed on this thread */

struct st_prow {		/* one block's edge_blocks, edge_outs and edge_crit rows */
	int64_t id;
	size_t ioff, ilen, ooff, olen, coff, clen;	/* its blobs in the pack's buffer; len 0: no row */
};

struct st_pack {		/* the rows of one partition */
	uint8_t *buf;
	size_t cap;
	struct st_prow *rows;
	size_t nrows, crows;
	int rc;			/* 0, or -EBADMSG: a record does not parse */
};

struct st_packer {		/* the scratch of a thread that packs */
	const uint8_t **gs;
	uint64_t *rs;
	uint32_t *fa, *fb;
	size_t gcap, rcap;
	struct st_crit_tmp crit;
};

static void
st_packer_free(struct st_packer *k)
{
	free(k->gs);
	free(k->rs);
	free(k->fa);
	free(k->fb);
	st_crit_tmp_free(&k->crit);
}

/*
 * Sort partition @p and encode its blocks into @pk, then let its pages go
 * (they are only read here).  Memory: the sort arrays in @k and the blobs.
 */
static void
st_edges_pack(struct st_edges *x, uint32_t p, struct st_packer *k, struct st_pack *pk)
{
	size_t nids = (size_t)1 << x->part_shift, need;
	struct st_estream *si = &x->in[p], *so = &x->out[p];
	uint32_t base = p << x->part_shift;

	pk->nrows = 0;
	pk->rc = 0;
	if (!k->fa) {
		k->fa = tc_xmalloc((nids + 1) * sizeof(*k->fa));
		k->fb = tc_xmalloc((nids + 1) * sizeof(*k->fb));
	}
	/* scratch for the partition (nothing in it is kept: no realloc copies) */
	if (si->count > k->gcap) {
		k->gcap = si->count;
		free(k->gs);
		k->gs = tc_xmalloc(k->gcap * sizeof(*k->gs));
	}
	if (so->count > k->rcap) {
		k->rcap = so->count;
		free(k->rs);
		k->rs = tc_xmalloc(k->rcap * sizeof(*k->rs));
	}
	/* a bound for all the blocks of the partition */
	need = si->bytes + si->count * TC_VARINT_MAX + so->count * 3 * TC_VARINT_MAX +
	       2 * ST_EDGE_IDX * (nids / ST_EDGE_BLOCK + 1);
	if (x->ends)	/* four varints an event, and a length */
		need += (nids / ST_EDGE_BLOCK + 1) * (ST_EDGE_BLOCK * 4 + 1) * TC_VARINT_MAX;
	if (need > pk->cap) {
		pk->cap = need;
		free(pk->buf);
		pk->buf = tc_xmalloc(need);
	}
	if (st_edges_sort_in(x, si, k->fa, nids, k->gs) < 0 ||
	    st_edges_sort_out(x, so, k->fb, nids, k->rs) < 0) {
		pk->rc = -EBADMSG;
		goto out;
	}
	need = 0;
	for (size_t i = 0; i < nids; i += ST_EDGE_BLOCK) {
		size_t a0 = k->fa[i], a1 = k->fa[TC_MIN(i + ST_EDGE_BLOCK, nids)];
		size_t b0 = k->fb[i], b1 = k->fb[TC_MIN(i + ST_EDGE_BLOCK, nids)];
		struct st_prow *r;

		if (a0 == a1 && b0 == b1)
			continue;
		if (pk->nrows == pk->crows) {
			pk->crows = pk->crows ? 2 * pk->crows : 256;
			pk->rows = tc_xrealloc(pk->rows, pk->crows * sizeof(*pk->rows));
		}
		r = &pk->rows[pk->nrows++];
		r->id = (base + (int64_t)i) / ST_EDGE_BLOCK;
		r->ioff = need;
		r->ilen = st_edges_enc_in(k->gs, a0, a1, base, base + (uint32_t)i, pk->buf + need);
		need += r->ilen;
		r->ooff = need;
		r->olen = st_edges_enc_out(k->rs, b0, b1, base, base + (uint32_t)i, pk->buf + need);
		need += r->olen;
		r->coff = need;
		r->clen = x->ends ? st_edges_enc_crit(x, pk->buf + r->ioff, r->ilen,
						      base + (uint32_t)i, &k->crit, pk->buf + need) : 0;
		need += r->clen;
	}
out:
	st_estream_clear(x, si);
	st_estream_clear(x, so);
	if (x->spilling)
		st_spill_drop(&x->spill);
}

/* Insert row (@id, blob @p of @len bytes) with @st, when @len is not 0.  Return: 0 or -errno. */
static int
st_edges_put_row(struct st_edges *x, sqlite3_stmt *st, int64_t id, const uint8_t *p, size_t len,
		 struct tc_err *err)
{
	int rc = 0;

	if (!len)
		return 0;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_blob(st, 2, p, (int)len, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = st_edges_sqlerr(x, err, "blocks");
	sqlite3_reset(st);
	return rc;
}

/*
 * Write the rows of @pk: a block's ins, outs and crit blobs each in a table
 * of its own, so that reading one does not read the pages of those stored
 * before it in a row (SQLite follows a row's overflow pages in order).
 * Return: 0 or -errno with @err set.
 */
static int
st_edges_write_pack(struct st_edges *x, const struct st_pack *pk, struct tc_err *err)
{
	int rc = 0;

	if (pk->rc < 0)
		return tc_err_set(err, pk->rc, "edges: a record does not parse");
	for (size_t i = 0; i < pk->nrows && !rc; i++) {
		const struct st_prow *r = &pk->rows[i];

		rc = st_edges_put_row(x, x->ins_block, r->id, pk->buf + r->ioff, r->ilen, err);
		if (!rc)
			rc = st_edges_put_row(x, x->ins_outs, r->id, pk->buf + r->ooff, r->olen,
					      err);
		if (!rc)
			rc = st_edges_put_row(x, x->ins_crit, r->id, pk->buf + r->coff, r->clen,
					      err);
	}
	return rc;
}

/* The threads that pack ahead (nx-edge-pack) and what they share with the writer. */
struct st_packq {
	struct st_edges *x;
	uint32_t *parts;	/* the partitions with edges, in order */
	size_t nparts;
	struct st_pack slot[ST_PACK_AHEAD + 1];	/* parts[i] in slot[i % (AHEAD + 1)] */
	size_t ready[ST_PACK_AHEAD + 1];	/* under mu: i + 1 once parts[i] is in its slot */
	size_t next;		/* under mu: the first partition no packer took */
	size_t written;		/* under mu */
	bool stop;		/* under mu: the writer failed */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/*
 * A packer takes the partitions in order, one at a time, so the one the
 * writer waits for is always taken by a packer that does not wait, or is
 * the next to be taken; however many packers started, all are packed.
 */
static void *
st_packq_main(void *arg)
{
	struct st_packq *q = arg;
	struct st_packer k = { 0 };

	tc_thread_name("edge-pack");
	for (;;) {
		size_t i;
		bool stop;

		pthread_mutex_lock(&q->mu);
		i = q->next++;
		/* its slot was parts[i - AHEAD - 1]'s: free once that is written */
		while (i < q->nparts && i - q->written > ST_PACK_AHEAD && !q->stop)
			pthread_cond_wait(&q->cv, &q->mu);
		stop = q->stop || i >= q->nparts;
		pthread_mutex_unlock(&q->mu);
		if (stop)
			break;
		st_edges_pack(q->x, q->parts[i], &k, &q->slot[i % (ST_PACK_AHEAD + 1)]);
		pthread_mutex_lock(&q->mu);
		q->ready[i % (ST_PACK_AHEAD + 1)] = i + 1;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
	}
	st_packer_free(&k);
	return NULL;
}

/*
 * Whether to pack on a second thread: two CPUs or more, enough edges, and
 * not NX_DEPS_THREADS=1 (which keeps the analysis on one thread).
 */
static bool
st_edges_pack_ahead(const struct st_edges *x)
{
	if (tc_env_num("NX_DEPS_THREADS", 1, LONG_MAX, 0) == 1)
		return false;
	return x->nedges >= ST_PACK_MIN_EDGES && tc_ncpus() >= 2;
}

/*
 * Start writing back what SQLite has handed the kernel so far, without
 * waiting: the blocks are written last, so without this most of them are
 * still dirty when the store is fsync'd (0.6 s of waiting at 10M events).
 */
static void
st_edges_kick(struct st_edges *x)
{
	if (x->dbfd >= 0)
		(void)sync_file_range(x->dbfd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

/*
 * Pack on a thread and write here, partition by partition.  Return: 0,
 * -errno with @err set, or 1 when the thread could not start (nothing done).
 */
static int
st_edges_finish_ahead(struct st_edges *x, uint32_t *parts, size_t nparts,
		      int (*tick)(void *ctx, double frac), void *ctx, struct tc_err *err)
{
	struct st_packq q = { .x = x, .parts = parts, .nparts = nparts };
	pthread_t th[ST_PACKERS];
	unsigned started = 0, want = nparts > 2 ? ST_PACKERS : 1;
	int rc = 0;

	pthread_mutex_init(&q.mu, NULL);
	pthread_cond_init(&q.cv, NULL);
	while (started < want && !pthread_create(&th[started], NULL, st_packq_main, &q))
		started++;
	if (!started) {
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < nparts && !rc; i++) {
		pthread_mutex_lock(&q.mu);
		while (q.ready[i % (ST_PACK_AHEAD + 1)] != i + 1)
			pthread_cond_wait(&q.cv, &q.mu);
		pthread_mutex_unlock(&q.mu);
		rc = st_edges_write_pack(x, &q.slot[i % (ST_PACK_AHEAD + 1)], err);
		st_edges_kick(x);
		if (!rc && tick && tick(ctx, (double)(i + 1) / (double)nparts) < 0)
			rc = tc_err_set(err, -ECANCELED, ST_CANCELLED);
		pthread_mutex_lock(&q.mu);
		q.written++;
		q.stop = rc < 0;
		pthread_cond_broadcast(&q.cv);
		pthread_mutex_unlock(&q.mu);
	}
	for (unsigned j = 0; j < started; j++)
		pthread_join(th[j], NULL);
out:
	for (int i = 0; i <= ST_PACK_AHEAD; i++) {
		free(q.slot[i].buf);
		free(q.slot[i].rows);
	}
	pthread_cond_destroy(&q.cv);
	pthread_mutex_destroy(&q.mu);
	return rc;
}

int
st_edges_finish(struct st_edges *x, int (*tick)(void *ctx, double frac), void *ctx,
		struct tc_err *err)
{
	uint32_t *parts = NULL;
	size_t nparts = 0;
	int rc = x->failed;

	if (rc < 0) {
		rc = tc_err_set(err, rc, "edges: %s", strerror(-rc));
		goto out;
	}
	if (x->group.len && st_edges_flush_labels(x, (x->next_label - 1) / ST_EDGE_LABELS) < 0) {
		rc = st_edges_sqlerr(x, err, "labels");
		goto out;
	}
	if (x->spilling) {
		rc = st_spill_map(&x->spill);
		if (rc < 0) {
			rc = tc_err_set(err, rc, "edges: spill: %s", strerror(-rc));
			goto out;
		}
	}
	/* the spill base is the database's own path (st_fin_edges()) */
	x->dbfd = open(x->spill_base, O_RDONLY | O_CLOEXEC);
	parts = tc_xmalloc((x->nparts + 1) * sizeof(*parts));
	for (uint32_t p = 0; p < x->nparts; p++)
		if (x->in[p].count || x->out[p].count)
			parts[nparts++] = p;
	if (nparts && tick && tick(ctx, 0) < 0) {
		rc = tc_err_set(err, -ECANCELED, ST_CANCELLED);
		goto out;
	}
	if (nparts > 1 && st_edges_pack_ahead(x)) {
		rc = st_edges_finish_ahead(x, parts, nparts, tick, ctx, err);
		if (rc <= 0)
			goto out;
		rc = 0;		/* no thread: pack here */
	}
	{
		struct st_packer k = { 0 };
		struct st_pack pk = { 0 };

		for (size_t i = 0; i < nparts && !rc; i++) {
			st_edges_pack(x, parts[i], &k, &pk);
			rc = st_edges_write_pack(x, &pk, err);
			st_edges_kick(x);
			if (!rc && tick && tick(ctx, (double)(i + 1) / (double)nparts) < 0)
				rc = tc_err_set(err, -ECANCELED, ST_CANCELLED);
		}
		st_packer_free(&k);
		free(pk.buf);
		free(pk.rows);
	}
out:
	if (x->dbfd >= 0)
		close(x->dbfd);
	x->dbfd = -1;
	free(parts);
	return rc;
}

/* ---- the virtual table ---- */

enum { EV_SRC, EV_DST, EV_KIND, EV_LABEL };

#define EV_BY_DST 1
#define EV_BY_SRC 2
#define EV_BY_KIND 4

#define EV_SLOT_NONE UINT32_MAX

/*
 * The last ins or outs blob read, with where each event's entries start,
 * found a group of ST_EDGE_GROUP events at a time through the blob's index
 * as lookups need them: a lookup decodes the entries of its event's group
 * once, and later lookups in the group (a critical path walks back through
 * neighbouring events) go straight to theirs.
 */
struct ev_view {
	int64_t block;		/* -1: none */
	sqlite3_stmt *get_len;	/* the blob's length, or no row */
	sqlite3_blob *h;	/* open on the last row read (its blob is read through it) */
	/*
	 * The blob as far as it is read (sqlite3_malloc'd, @cap bytes): its
	 * index and the entries of the groups in @done, at their offsets.
	 */
	uint8_t *blob;
	int len, cap;
	uint64_t done[(ST_EDGE_GROUPS + 63) / 64];	/* bit g: group g is read and indexed */
	uint32_t off[ST_EDGE_BLOCK];	/* event i's first entry, EV_SLOT_NONE: none */
	uint8_t prev[ST_EDGE_BLOCK];	/* the id before it, less the block's first */
};

/*
 * Crit blobs (st-edges.h) decoded, EV_CRITS of them, a block in slot
 * block % EV_CRITS: a critical path moves back through a few units at a
 * time, whose blocks lie apart.
 */
#define EV_CRITS 16

struct ev_crit {
	int64_t block;		/* -1: none */
	bool known;		/* false: no blob (or a damaged one): the walk reads the edges */
	/* [i][0]: the source that ends last, [i][1]: the next one */
	uint32_t src[ST_EDGE_BLOCK][2];	/* 1 + the source, 0: none */
	uint8_t kind[ST_EDGE_BLOCK][2];
	int64_t lag[ST_EDGE_BLOCK][2];	/* the event's end less the source's */
	int second;		/* the blob's second part: 0 not read yet, 1 decoded, -1 damaged */
	int nslots;		/* entries in each part */
};

struct ev_vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	struct st_conn *conn;	/* shared with the connection's events table, or NULL */
	struct tc_buf text;	/* a label being rebuilt */
	sqlite3_stmt *get_label;
	struct ev_view view[2];	/* [0] ins, [1] outs */
	struct ev_crit *crit;	/* [EV_CRITS], sqlite3_malloc'd when first asked */
	sqlite3_stmt *get_crit;
	/* the last label row read: its texts, where each starts and its length */
	int64_t lgroup;
	uint8_t *lblob;
	uint32_t loff[ST_EDGE_LABELS], llen[ST_EDGE_LABELS];
	int lcount;
};

struct ev_row {
	int64_t src, dst, rowid;
	uint64_t a, b;		/* the numbers of a range or wait label */
	uint32_t label;		/* text id (0: no label) */
	uint8_t kind, form;
};

struct ev_cursor {
	sqlite3_vtab_cursor base;
	struct ev_row *rows;
	size_t n, cap, i;
	sqlite3_stmt *scan;	/* full scans: the blocks, in order */
	bool eof;
	int kind;		/* -1: any */
};

static int
ev_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
	   char **errmsg)
{
	struct ev_vtab *vt;
	int rc;

	rc = sqlite3_declare_vtab(db, "CREATE TABLE x(src INTEGER, dst INTEGER, kind INTEGER, "
				  "label TEXT)");
	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->db = db;
	vt->conn = aux;
	if (vt->conn && !strcmp(argv[1], "main"))
		vt->conn->edges = vt;
	vt->lgroup = -1;
	vt->view[0].block = vt->view[1].block = -1;
	tc_buf_init(&vt->text);
	*out = &vt->base;
	return SQLITE_OK;
}

static int
ev_disconnect(sqlite3_vtab *base)
{
	struct ev_vtab *vt = (struct ev_vtab *)base;

	if (vt->conn && vt->conn->edges == vt)
		vt->conn->edges = NULL;
	sqlite3_finalize(vt->get_label);
	sqlite3_finalize(vt->get_crit);
	sqlite3_free(vt->crit);
	sqlite3_free(vt->lblob);
	for (int i = 0; i < 2; i++) {
		sqlite3_finalize(vt->view[i].get_len);
		sqlite3_blob_close(vt->view[i].h);
		sqlite3_free(vt->view[i].blob);
	}
	tc_buf_free(&vt->text);
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int
ev_best_index(sqlite3_vtab *base, sqlite3_index_info *info)
{
	int at[3] = { -1, -1, -1 }, n = 0, plan = 0;

	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ || c->iColumn < 0 ||
		    c->iColumn > EV_KIND)
			continue;
		at[c->iColumn] = i;
	}
	/* argv: dst, src, kind, those present, in that order */
	if (at[EV_DST] >= 0) {
		plan |= EV_BY_DST;
		info->aConstraintUsage[at[EV_DST]].argvIndex = ++n;
		info->aConstraintUsage[at[EV_DST]].omit = 1;
	}
	if (at[EV_SRC] >= 0) {
		plan |= EV_BY_SRC;
		info->aConstraintUsage[at[EV_SRC]].argvIndex = ++n;
		info->aConstraintUsage[at[EV_SRC]].omit = 1;
	}
	if (at[EV_KIND] >= 0) {
		plan |= EV_BY_KIND;
		info->aConstraintUsage[at[EV_KIND]].argvIndex = ++n;
		info->aConstraintUsage[at[EV_KIND]].omit = 1;
	}
	info->idxNum = plan;
	if (plan & (EV_BY_DST | EV_BY_SRC)) {
		info->estimatedCost = 20;
		info->estimatedRows = 8;
	} else {
		info->estimatedCost = plan & EV_BY_KIND ? 4e6 : 5e6;
		info->estimatedRows = plan & EV_BY_KIND ? 1000000 : 4000000;
	}
	return SQLITE_OK;
}

static int
ev_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out)
{
	struct ev_cursor *c = sqlite3_malloc(sizeof(*c));

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int
ev_close(sqlite3_vtab_cursor *base)
{
	struct ev_cursor *c = (struct ev_cursor *)base;

	sqlite3_finalize(c->scan);
	sqlite3_free(c->rows);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int
ev_err(struct ev_vtab *vt, int rc, const char *what)
{
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = sqlite3_mprintf("edges: %s: %s", what, sqlite3_errmsg(vt->db));
	return rc;
}

/* Block @block's data is damaged: say how (@why), SQLITE_CORRUPT. */
static int
ev_corrupt(struct ev_vtab *vt, int64_t block, const char *why)
{
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = sqlite3_mprintf("edges: block %lld: %s", (long long)block, why);
	return SQLITE_CORRUPT;
}

static int
ev_prep(struct ev_vtab *vt, sqlite3_stmt **st, const char *sql)
{
	if (*st)
		return SQLITE_OK;
	if (sqlite3_prepare_v2(vt->db, sql, -1, st, NULL) != SQLITE_OK)
		return ev_err(vt, SQLITE_ERROR, "prepare");
	return SQLITE_OK;
}

/*
 * Copy the blob of row @id that *@st (prepared from @sql on first use)
 * returns into *@blob (sqlite3_malloc'd, owned by the vtab; the previous
 * one is freed) and *@len.  Return: SQLITE_OK, SQLITE_DONE when there is no
 * such row, or an error (@what names the lookup).
 */
static int
ev_fetch(struct ev_vtab *vt, sqlite3_stmt **st, const char *sql, int64_t id, uint8_t **blob,
	 int *len, const char *what)
{
	int rc = ev_prep(vt, st, sql), s, n;

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(*st, 1, id);
	s = sqlite3_step(*st);
	if (s != SQLITE_ROW) {
		sqlite3_reset(*st);
		return s == SQLITE_DONE ? SQLITE_DONE : ev_err(vt, SQLITE_ERROR, what);
	}
	n = sqlite3_column_bytes(*st, 0);
	sqlite3_free(*blob);
	*blob = sqlite3_malloc(n + 1);
	if (!*blob) {
		sqlite3_reset(*st);
		return SQLITE_NOMEM;
	}
	if (n)	/* NULL: the block has no edge that way */
		memcpy(*blob, sqlite3_column_blob(*st, 0), (size_t)n);
	*len = n;
	sqlite3_reset(*st);
	return SQLITE_OK;
}

#define EV_FROM_INS 0xff	/* row form: an outs row, its label is in the ins */
#define EV_BLOCK_MAX (INT64_C(1) << 30)	/* blocks a rowid can number (1 << 38 events) */

static uint32_t
ev_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Where the entries of group @g of view @v end (once read: its index entries are). */
static const uint8_t *
ev_group_end(const struct ev_view *v, int g)
{
	return v->blob + ST_EDGE_IDX + (g + 1 < ST_EDGE_GROUPS ? ev_le32(v->blob + 5 * (g + 1)) :
				       (uint32_t)(v->len - ST_EDGE_IDX));
}

/*
 * The length of block @block's ins (@by_src false) or outs blob into
 * *@len.  Return: SQLITE_OK, SQLITE_DONE when the block has none that way
 * (no row, or NULL), or an error.
 */
static int
ev_view_len(struct ev_vtab *vt, struct ev_view *v, bool by_src, int64_t block, int *len)
{
	/* typeof() and length() read the record's header, not the blob */
	int rc = ev_prep(vt, &v->get_len, by_src ?
			 "SELECT typeof(outs), length(outs) FROM edge_outs WHERE id = ?" :
			 "SELECT typeof(ins), length(ins) FROM edge_blocks WHERE id = ?");
	const char *t;

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(v->get_len, 1, block);
	rc = sqlite3_step(v->get_len);
	t = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(v->get_len, 0) : NULL;
	if (t && !strcmp(t, "null"))
		rc = SQLITE_DONE;
	else if (t && strcmp(t, "blob"))
		rc = SQLITE_CORRUPT;	/* a damaged row: text or a number */
	else if (t)
		*len = sqlite3_column_int(v->get_len, 1);
	else if (rc != SQLITE_DONE)
		rc = ev_err(vt, rc, "lookup");
	sqlite3_reset(v->get_len);
	return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/*
 * Point view @v's blob handle at block @block's ins (@by_src false) or outs
 * blob, its length into *@len: reopened on the row, or opened when there is
 * no handle yet (a failed reopen leaves none).  Return: SQLITE_OK, SQLITE_DONE
 * when the block has none that way (no row, or NULL), or an error.
 */
static int
ev_view_open(struct ev_vtab *vt, struct ev_view *v, bool by_src, int64_t block, int *len)
{
	int rc = v->h ? sqlite3_blob_reopen(v->h, block) :
			sqlite3_blob_open(vt->db, "main", by_src ? "edge_outs" : "edge_blocks",
					  by_src ? "outs" : "ins",
					  block, 0, &v->h);

	if (rc == SQLITE_OK) {
		*len = sqlite3_blob_bytes(v->h);
		return SQLITE_OK;
	}
	sqlite3_blob_close(v->h);
	v->h = NULL;
	if (rc == SQLITE_NOMEM)
		return rc;
	/* why: no such row or a NULL is an answer (it costs a copy of the blob, if any) */
	rc = ev_view_len(vt, v, by_src, block, len);
	return rc == SQLITE_OK ? ev_err(vt, SQLITE_CORRUPT, "lookup") : rc;
}

/* Read bytes [@at, @at + @n) of view @v's blob into v->blob, through its handle. */
static int
ev_view_read(struct ev_vtab *vt, struct ev_view *v, int at, int n)
{
	int rc = sqlite3_blob_read(v->h, v->blob + at, n, at);

	return rc == SQLITE_OK ? rc : ev_err(vt, rc, "lookup");
}

/*
 * Read and index the entries of group @g of view @v: where each event's
 * entries start.  Return: SQLITE_OK, SQLITE_CORRUPT (the index
 * points out of the blob or back, or an entry's event is not in the group)
 * or an error.
 */
static int
ev_view_group(struct ev_vtab *vt, struct ev_view *v, int g)
{
	const uint8_t *ix = v->blob + 5 * g;
	uint32_t n = (uint32_t)(v->len - ST_EDGE_IDX), from, to;
	int lo = g * ST_EDGE_GROUP, cur, rc;
	const uint8_t *q, *end;

	/* its index entry and the next one's offset: what it needs of the index */
	if ((rc = ev_view_read(vt, v, 5 * g, g + 1 < ST_EDGE_GROUPS ? 9 : 5)) != SQLITE_OK)
		return rc;
	from = ev_le32(ix);
	to = g + 1 < ST_EDGE_GROUPS ? ev_le32(ix + 5) : n;
	cur = ix[4];
	if (from > to || to > n || (cur >= lo && cur))
		return SQLITE_CORRUPT;
	for (int i = lo; i < lo + ST_EDGE_GROUP; i++)
		v->off[i] = EV_SLOT_NONE;
	if (to > from &&
	    (rc = ev_view_read(vt, v, ST_EDGE_IDX + (int)from, (int)(to - from))) != SQLITE_OK)
		return rc;
	q = v->blob + ST_EDGE_IDX + from;
	end = v->blob + ST_EDGE_IDX + to;
	while (q < end) {
		uint32_t at = (uint32_t)(q - v->blob);
		int prev = cur;
		struct ev_entry e;

		if (ev_entry_get(&q, end, &e) != SQLITE_OK || e.d >= ST_EDGE_BLOCK ||
		    prev + (int)e.d < lo || prev + (int)e.d >= lo + ST_EDGE_GROUP)
			return SQLITE_CORRUPT;
		cur = prev + (int)e.d;
		if (v->off[cur] == EV_SLOT_NONE) {
			v->off[cur] = at;
			v->prev[cur] = (uint8_t)prev;
		}
	}
	v->done[g / 64] |= UINT64_C(1) << (g % 64);
	return SQLITE_OK;
}

/*
 * Block @block's ins (@by_src false) or outs blob in vt->view, read and
 * indexed at least for event @slot of the block (its off[] is final).
 * Return: SQLITE_OK, SQLITE_DONE when the block has none that way, or an
 * error.
 */
static int
ev_view_get(struct ev_vtab *vt, int64_t block, bool by_src, int slot, struct ev_view **out)
{
	struct ev_view *v = &vt->view[by_src];
	int g = slot / ST_EDGE_GROUP, rc, len = 0;

	*out = v;
	if (v->block != block) {
		v->block = -1;
		rc = ev_view_open(vt, v, by_src, block, &len);
		if (rc != SQLITE_OK && rc != SQLITE_DONE)
			return rc;
		if (len && len < ST_EDGE_IDX)
			return SQLITE_CORRUPT;	/* shorter than its index */
		if (len > v->cap) {
			sqlite3_free(v->blob);
			v->cap = 0;
			if (!(v->blob = sqlite3_malloc(len)))
				return SQLITE_NOMEM;
			v->cap = len;
		}
		v->len = len;
		v->block = block;
		memset(v->done, 0, sizeof(v->done));
	}
	if (!v->len)
		return SQLITE_DONE;
	if (!(v->done[g / 64] >> (g % 64) & 1) && (rc = ev_view_group(vt, v, g)) != SQLITE_OK) {
		v->block = -1;
		return rc;
	}
	return SQLITE_OK;
}

/*
 * Decode the entries [@q, @end) of block @block's ins or (@by_src) outs blob
 * @blob, the id before the first of them @cur, and keep the rows whose own
 * end is @self (< 0: all), whose other end is @peer (< 0: any) and whose
 * kind is @kind (< 0: any).  A row's id is its entry's offset in the blob.
 */
static int
ev_decode(struct ev_cursor *c, const uint8_t *blob, const uint8_t *q, const uint8_t *end,
	  int64_t block, bool by_src, int64_t cur, int64_t self, int64_t peer, int kind)
{
	int64_t last;

	if (block < 0 || block >= EV_BLOCK_MAX)
		return SQLITE_CORRUPT;	/* a damaged row id: past what rowids can number */
	last = block * ST_EDGE_BLOCK + ST_EDGE_BLOCK - 1;
	while (q < end) {
		int64_t i = q - blob, other;
		struct ev_entry e;
		struct ev_row *r;
		int k;

		if (ev_entry_get(&q, end, &e) != SQLITE_OK || !ev_step(&e, &cur, &other) ||
		    cur > last)
			return SQLITE_CORRUPT;
		if (self >= 0 && cur > self)
			break;
		k = e.kind;
		if ((self >= 0 && cur != self) || (peer >= 0 && other != peer) ||
		    (kind >= 0 && k != kind))
			continue;
		if (c->n == c->cap) {
			size_t nc = c->cap ? c->cap * 2 : 64;

			r = sqlite3_realloc64(c->rows, nc * sizeof(*r));
			if (!r)
				return SQLITE_NOMEM;
			c->rows = r;
			c->cap = nc;
		}
		r = &c->rows[c->n++];
		r->src = by_src ? cur : other;
		r->dst = by_src ? other : cur;
		r->kind = (uint8_t)k;
		r->form = by_src ? EV_FROM_INS : (uint8_t)e.form;
		r->label = (uint32_t)(e.lk >> (ST_EDGE_KIND_BITS + 2));
		r->a = e.a;
		r->b = e.b;
		r->rowid = ((block << 32 | i) << 1) | by_src;
	}
	return SQLITE_OK;
}

/*
 * Where the entries of event @self (>= 0) begin in its block's ins blob (or,
 * @by_src, its outs blob): *@q, up to *@end, the id before the first *@cur.
 * Return: SQLITE_OK, SQLITE_DONE when it has none, or an error.
 */
static int
ev_entries_at(struct ev_vtab *vt, int64_t self, bool by_src, const uint8_t **q,
	      const uint8_t **end, int64_t *cur)
{
	int64_t block = self / ST_EDGE_BLOCK;
	int slot = (int)(self % ST_EDGE_BLOCK), rc;
	struct ev_view *v;

	if ((rc = ev_view_get(vt, block, by_src, slot, &v)) != SQLITE_OK)
		return rc;
	if (v->off[slot] == EV_SLOT_NONE)
		return SQLITE_DONE;
	*q = v->blob + v->off[slot];
	*end = ev_group_end(v, slot / ST_EDGE_GROUP);	/* its entries are in its group */
	*cur = block * ST_EDGE_BLOCK + v->prev[slot];
	return SQLITE_OK;
}

/*
 * The ins entry of edge @r->src -> @r->dst of kind @r->kind, the @occ-th
 * (from 0) of such entries: fills @r's form and numbers.  Return:
 * SQLITE_OK, SQLITE_DONE when there is none, or an error.
 */
static int
ev_ins_find(struct ev_vtab *vt, struct ev_row *r, size_t occ)
{
	const uint8_t *q, *end;
	int64_t cur;
	int rc;

	if (r->dst < 0)
		return SQLITE_DONE;	/* a damaged outs row: no ins holds its label */
	if ((rc = ev_entries_at(vt, r->dst, false, &q, &end, &cur)) != SQLITE_OK)
		return rc;
	while (q < end) {
		struct ev_entry e;
		int64_t other;

		if (ev_entry_get(&q, end, &e) != SQLITE_OK || !ev_step(&e, &cur, &other))
			return SQLITE_CORRUPT;
		if (cur > r->dst)
			break;
		if (cur != r->dst || other != r->src || e.kind != r->kind || occ--)
			continue;
		r->form = (uint8_t)e.form;
		r->label = (uint32_t)(e.lk >> (ST_EDGE_KIND_BITS + 2));
		r->a = e.a;
		r->b = e.b;
		return SQLITE_OK;
	}
	return SQLITE_DONE;
}

/*
 * The label of outs row @i of cursor @c, from the ins of its dst: the entry
 * of the same src and kind, the n-th if the cursor's rows before it have n
 * with the same dst and kind (explicit edges may repeat a pair; both lists
 * keep the order the edges were added in).  Fills @r's form and numbers.
 * Return: SQLITE_OK, SQLITE_DONE when there is none, or an error.
 */
static int
ev_from_ins(struct ev_vtab *vt, const struct ev_cursor *c, size_t i, struct ev_row *r)
{
	size_t occ = 0;

	for (size_t j = 0; j < i; j++)
		occ += c->rows[j].dst == r->dst && c->rows[j].kind == r->kind;
	return ev_ins_find(vt, r, occ);
}

/* An integer argument, or false when the value can equal no integer column. */
static bool
ev_int_arg(sqlite3_value *v, int64_t *out)
{
	int t = sqlite3_value_numeric_type(v);

	if (t == SQLITE_INTEGER) {
		*out = sqlite3_value_int64(v);
		return true;
	}
	if (t == SQLITE_FLOAT) {
		double d = sqlite3_value_double(v);

		if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d) {
			*out = (int64_t)d;
			return true;
		}
	}
	return false;
}

/* The next block of a full scan into the cursor's rows (eof when none is left). */
static int
ev_scan_next(struct ev_cursor *c)
{
	struct ev_vtab *vt = (struct ev_vtab *)c->base.pVtab;
	int rc;

	c->n = c->i = 0;
	while (c->n == 0) {
		int s = sqlite3_step(c->scan);
		const uint8_t *p;
		int64_t block;

		if (s == SQLITE_DONE) {
			c->eof = true;
			return SQLITE_OK;
		}
		if (s != SQLITE_ROW)
			return ev_err(vt, SQLITE_ERROR, "scan");
		p = sqlite3_column_blob(c->scan, 1);
		block = sqlite3_column_int64(c->scan, 0);
		if (block < 0 || block >= EV_BLOCK_MAX)
			return ev_corrupt(vt, block, "id out of range");
		if (!p)
			continue;	/* NULL: the block has no edge into it */
		if (sqlite3_column_bytes(c->scan, 1) < ST_EDGE_IDX)
			return ev_corrupt(vt, block, "ins shorter than its index");
		rc = ev_decode(c, p, p + ST_EDGE_IDX, p + sqlite3_column_bytes(c->scan, 1), block,
			       false, block * ST_EDGE_BLOCK, -1, -1, c->kind);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

static int
ev_filter(sqlite3_vtab_cursor *base, int plan, const char *idx, int argc, sqlite3_value **argv)
{
	struct ev_cursor *c = (struct ev_cursor *)base;
	struct ev_vtab *vt = (struct ev_vtab *)base->pVtab;
	int64_t dst = -1, src = -1, kind = -1;
	int a = 0, rc;
	bool none = false;

	c->n = c->i = 0;
	c->eof = false;
	sqlite3_finalize(c->scan);
	c->scan = NULL;
	if (plan & EV_BY_DST)
		none |= !ev_int_arg(argv[a++], &dst) || dst < 0;
	if (plan & EV_BY_SRC)
		none |= !ev_int_arg(argv[a++], &src) || src < 0;
	if (plan & EV_BY_KIND)
		none |= !ev_int_arg(argv[a++], &kind) || kind < 0 || kind > INT32_MAX;
	c->kind = (int)kind;
	if (none) {
		c->eof = true;
		return SQLITE_OK;
	}
	if (plan & (EV_BY_DST | EV_BY_SRC)) {
		bool by_src = !(plan & EV_BY_DST);
		int64_t self = by_src ? src : dst, block = self / ST_EDGE_BLOCK;
		int slot = (int)(self % ST_EDGE_BLOCK);
		struct ev_view *v;

		rc = ev_view_get(vt, block, by_src, slot, &v);
		if (rc == SQLITE_OK && v->off[slot] != EV_SLOT_NONE)
			rc = ev_decode(c, v->blob, v->blob + v->off[slot],
				       ev_group_end(v, slot / ST_EDGE_GROUP), block,
				       by_src, block * ST_EDGE_BLOCK + v->prev[slot], self,
				       by_src ? -1 : src, (int)kind);
		else if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
		c->eof = c->n == 0;
		return rc;
	}
	if (sqlite3_prepare_v2(vt->db, "SELECT id, ins FROM edge_blocks ORDER BY id", -1, &c->scan,
			       NULL) != SQLITE_OK)
		return ev_err(vt, SQLITE_ERROR, "scan");
	return ev_scan_next(c);
}

static int
ev_next(sqlite3_vtab_cursor *base)
{
	struct ev_cursor *c = (struct ev_cursor *)base;

	if (++c->i < c->n)
		return SQLITE_OK;
	if (c->scan)
		return ev_scan_next(c);
	c->eof = true;
	return SQLITE_OK;
}

static int
ev_eof(sqlite3_vtab_cursor *base)
{
	struct ev_cursor *c = (struct ev_cursor *)base;

	return c->eof || c->i >= c->n;
}

/* Text of label @id into *@s, *@len (valid until the next call); SQLITE_DONE when missing. */
static int
ev_label(struct ev_vtab *vt, uint32_t id, const char **s, int *len)
{
	int64_t g = id / ST_EDGE_LABELS;
	int k = (int)(id % ST_EDGE_LABELS), rc;

	if (g != vt->lgroup) {
		const uint8_t *p, *end;
		int n;

		vt->lgroup = -1;
		vt->lcount = 0;
		rc = ev_fetch(vt, &vt->get_label, "SELECT texts FROM edge_labels WHERE id = ?", g,
			      &vt->lblob, &n, "label");
		if (rc != SQLITE_OK)
			return rc;
		p = vt->lblob;
		end = p + n;
		while (p < end && vt->lcount < ST_EDGE_LABELS) {
			uint64_t l;

			if (tc_uvarint_get(&p, end, &l) || l > (uint64_t)(end - p))
				return SQLITE_CORRUPT;
			vt->loff[vt->lcount] = (uint32_t)(p - vt->lblob);
			vt->llen[vt->lcount++] = (uint32_t)l;
			p += l;
		}
		vt->lgroup = g;
	}
	if (k >= vt->lcount)
		return SQLITE_DONE;
	*s = (const char *)vt->lblob + vt->loff[k];
	*len = (int)vt->llen[k];
	return SQLITE_OK;
}

/*
 * The label text of row @r (its form and numbers known) into *@s, *@len
 * (valid until the next call).  Return: SQLITE_OK, SQLITE_DONE when it has
 * none, or an error.
 */
static int
ev_label_text(struct ev_vtab *vt, const struct ev_row *r, const char **s, int *len)
{
	char num[24];
	int rc;

	if (!r->form)
		return SQLITE_DONE;
	if ((rc = ev_label(vt, r->label, s, len)) != SQLITE_OK || r->form == ST_LABEL_TEXT)
		return rc;
	/* a prefix and numbers: rebuild the text they came from (no printf: chains label thousands) */
	tc_buf_reset(&vt->text);
	tc_buf_add(&vt->text, *s, (size_t)*len);
	if (r->form == ST_LABEL_RANGE) {
		tc_buf_addc(&vt->text, '[');
		tc_buf_add(&vt->text, num, (size_t)tc_u64_text(num, r->a));
		tc_buf_addc(&vt->text, ':');
		tc_buf_add(&vt->text, num, (size_t)tc_u64_text(num, r->a + r->b));
		tc_buf_addc(&vt->text, ']');
	} else {
		tc_buf_add(&vt->text, ">=", 2);
		tc_buf_add(&vt->text, num, (size_t)tc_u64_text(num, r->a));
	}
	*s = vt->text.data;
	*len = (int)vt->text.len;
	return SQLITE_OK;
}

static int
ev_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int col)
{
	struct ev_cursor *c = (struct ev_cursor *)base;
	const struct ev_row *r = &c->rows[c->i];

	switch (col) {
	case EV_SRC:
		sqlite3_result_int64(ctx, r->src);
		break;
	case EV_DST:
		sqlite3_result_int64(ctx, r->dst);
		break;
	case EV_KIND:
		sqlite3_result_int(ctx, r->kind);
		break;
	case EV_LABEL: {
		struct ev_vtab *vt = (struct ev_vtab *)base->pVtab;
		struct ev_row in;
		const char *s;
		int len, rc;

		if (r->form == EV_FROM_INS) {
			in = *r;
			rc = ev_from_ins(vt, c, c->i, &in);
			if (rc == SQLITE_DONE) {
				sqlite3_result_null(ctx);
				break;
			}
			if (rc != SQLITE_OK)
				return rc;
			r = &in;
		}
		rc = ev_label_text(vt, r, &s, &len);
		if (rc == SQLITE_DONE)
			sqlite3_result_null(ctx);
		else if (rc == SQLITE_OK)
			sqlite3_result_text(ctx, s, len, SQLITE_TRANSIENT);
		else
			return rc;
		break;
	}
	}
	return SQLITE_OK;
}

static int
ev_rowid(sqlite3_vtab_cursor *base, sqlite_int64 *rowid)
{
	struct ev_cursor *c = (struct ev_cursor *)base;

	*rowid = c->rows[c->i].rowid;
	return SQLITE_OK;
}

static const sqlite3_module ev_module = {
	.iVersion = 0,
	.xCreate = NULL,	/* eponymous only */
	.xConnect = ev_connect,
	.xBestIndex = ev_best_index,
	.xDisconnect = ev_disconnect,
	.xDestroy = ev_disconnect,
	.xOpen = ev_open,
	.xClose = ev_close,
	.xFilter = ev_filter,
	.xNext = ev_next,
	.xEof = ev_eof,
	.xColumn = ev_column,
	.xRowid = ev_rowid,
};

int
st_conn_edges(struct st_conn *c, int64_t id, bool out, struct st_edge_end **v, size_t *n,
	      size_t *cap)
{
	struct ev_vtab *vt = c ? c->edges : NULL;
	const uint8_t *q, *end;
	int64_t cur;
	int rc;

	*n = 0;
	if (!vt)
		return -EAGAIN;
	if (id < 0)
		return 0;
	if ((rc = ev_entries_at(vt, id, out, &q, &end, &cur)) != SQLITE_OK)
		return rc == SQLITE_DONE ? 0 : -EIO;
	while (q < end) {
		struct ev_entry e;
		int64_t other;

		if (ev_entry_get(&q, end, &e) != SQLITE_OK || !ev_step(&e, &cur, &other))
			return -EIO;
		if (cur > id)
			break;
		if (cur != id)
			continue;
		TC_GROW(*v, *n, *cap, 16);
		(*v)[(*n)++] = (struct st_edge_end){
			.id = other, .kind = e.kind,
			.label = out ? (struct st_label_ref){ .form = ST_LABEL_AT_DST } :
				       (struct st_label_ref){
					.a = e.a, .b = e.b, .form = (uint8_t)e.form,
					.text = (uint32_t)(e.lk >> (ST_EDGE_KIND_BITS + 2)) } };
	}
	return 0;
}

/*
 * Decode part @w (0 or 1) of a crit blob, @q to @end, into @k's entries of
 * block @block.  Return: the number of entries, -1 when it does not decode.
 */
static int
ev_crit_part(const uint8_t *q, const uint8_t *end, int64_t block, int w, struct ev_crit *k)
{
	int64_t dst = block * ST_EDGE_BLOCK;
	int i = 0;

	for (; q < end && i < ST_EDGE_BLOCK; i++, dst++) {
		/* an entry is two varints at most: no bound checks per byte where they fit */
		bool room = end - q >= 2 * TC_VARINT_MAX;
		uint64_t v, lag;
		int64_t src;

		if (room ? tc_uvarint_get_room(&q, &v) : tc_uvarint_get(&q, end, &v))
			return -1;
		if (!v)
			continue;
		v--;
		if (__builtin_add_overflow(dst, tc_unzigzag(v >> ST_EDGE_KIND_BITS), &src) ||
		    src < 0 || src >= UINT32_MAX ||
		    (room ? tc_uvarint_get_room(&q, &lag) : tc_uvarint_get(&q, end, &lag)))
			return -1;
		k->src[i][w] = (uint32_t)src + 1;
		k->kind[i][w] = (uint8_t)(v & ST_EDGE_KIND_MASK);
		k->lag[i][w] = tc_unzigzag(lag);
	}
	return q == end ? i : -1;	/* all of it decoded */
}

/*
 * Step vt->get_crit to block @block's crit blob: *@q to *@end, both NULL
 * when it has none (or no row).  Reset the statement after use.  Return:
 * SQLITE_OK or an error.
 */
static int
ev_crit_blob(struct ev_vtab *vt, int64_t block, const uint8_t **q, const uint8_t **end)
{
	int rc = ev_prep(vt, &vt->get_crit, "SELECT crit FROM edge_crit WHERE id = ?1"), s;

	*q = *end = NULL;
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(vt->get_crit, 1, block);
	s = sqlite3_step(vt->get_crit);
	if (s == SQLITE_ROW) {
		*q = sqlite3_column_blob(vt->get_crit, 0);
		*end = *q ? *q + sqlite3_column_bytes(vt->get_crit, 0) : NULL;
	} else if (s != SQLITE_DONE) {
		sqlite3_reset(vt->get_crit);
		return ev_err(vt, SQLITE_ERROR, "lookup");
	}
	return SQLITE_OK;
}

/* Past the length of a crit blob's first part at @q: where its second starts, NULL if damaged. */
static const uint8_t *
ev_crit_split(const uint8_t **q, const uint8_t *end)
{
	uint64_t len1;

	if (!*q || tc_uvarint_get(q, end, &len1) || len1 > (uint64_t)(end - *q))
		return NULL;
	return *q + len1;
}

/*
 * Decode the first part of block @block's crit blob into @k (the second is
 * read again when first asked: few blocks need it).  Return: SQLITE_OK
 * (k->known false when it has none or it does not decode) or an error.
 */
static int
ev_crit_load(struct ev_vtab *vt, int64_t block, struct ev_crit *k)
{
	const uint8_t *q, *end, *e1;
	int rc = ev_crit_blob(vt, block, &q, &end);

	if (rc != SQLITE_OK) {
		k->block = -1;
		return rc;
	}
	k->block = block;
	k->known = false;
	k->second = 0;
	memset(k->src, 0, sizeof(k->src));
	if ((e1 = ev_crit_split(&q, end))) {
		k->nslots = ev_crit_part(q, e1, block, 0, k);
		k->known = k->nslots >= 0;
	}
	sqlite3_reset(vt->get_crit);
	return SQLITE_OK;
}

/* Decode the second part of @k's crit blob: 1, or -1 when it is damaged or gone. */
static int
ev_crit_second(struct ev_vtab *vt, struct ev_crit *k)
{
	const uint8_t *q, *end, *e1;
	int got = -1;

	if (ev_crit_blob(vt, k->block, &q, &end) != SQLITE_OK)
		return -1;
	/* the same number of entries as the first part */
	if ((e1 = ev_crit_split(&q, end)) && ev_crit_part(e1, end, k->block, 1, k) == k->nslots)
		got = 1;
	sqlite3_reset(vt->get_crit);
	return got;
}

int
st_conn_crit(struct st_conn *c, int64_t id, int n, struct st_crit *out)
{
	struct ev_vtab *vt = c ? c->edges : NULL;
	int64_t block = id / ST_EDGE_BLOCK;
	struct ev_crit *k;

	if (!vt)
		return -EAGAIN;
	if (id < 0)
		return 1;
	if (!vt->crit) {
		vt->crit = sqlite3_malloc(EV_CRITS * sizeof(*vt->crit));
		if (!vt->crit)
			return -ENOMEM;
		for (int i = 0; i < EV_CRITS; i++)
			vt->crit[i].block = -1;
	}
	k = &vt->crit[block % EV_CRITS];
	if (k->block != block && ev_crit_load(vt, block, k) != SQLITE_OK)
		return -EIO;
	if (!k->known)
		return 1;
	if (n > 1 && !k->second)
		k->second = ev_crit_second(vt, k);
	if (n > 1 && k->second < 0)
		return 1;
	for (int w = 0; w < n && w < 2; w++)
		out[w] = (struct st_crit){ .src = (int64_t)k->src[id % ST_EDGE_BLOCK][w] - 1,
					   .kind = k->kind[id % ST_EDGE_BLOCK][w],
					   .lag = k->lag[id % ST_EDGE_BLOCK][w] };
	return 0;
}

/* The label of row @r (its form and numbers known) into @out: 0, 1 when it has none, -EIO. */
static int
ev_label_out(struct ev_vtab *vt, const struct ev_row *r, struct tc_buf *out)
{
	const char *s;
	int rc, len;

	rc = ev_label_text(vt, r, &s, &len);
	if (rc == SQLITE_DONE)
		return 1;
	if (rc != SQLITE_OK)
		return -EIO;
	tc_buf_reset(out);
	tc_buf_add(out, s, (size_t)len);
	return 0;
}

int
st_conn_label(struct st_conn *c, int64_t src, int64_t dst, int kind, struct tc_buf *out)
{
	struct ev_vtab *vt = c ? c->edges : NULL;
	struct ev_row r = { .src = src, .dst = dst, .kind = (uint8_t)kind };
	int rc;

	if (!vt)
		return -EAGAIN;
	if (kind < 0 || kind >= 1 << ST_EDGE_KIND_BITS)
		return -ENOENT;
	rc = ev_ins_find(vt, &r, 0);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	return rc == SQLITE_OK ? ev_label_out(vt, &r, out) : -EIO;
}

int
st_conn_label_of(struct st_conn *c, const struct st_label_ref *ref, struct tc_buf *out)
{
	struct ev_vtab *vt = c ? c->edges : NULL;
	struct ev_row r = { .form = ref->form, .label = ref->text, .a = ref->a, .b = ref->b };

	if (!vt)
		return -EAGAIN;
	if (ref->form > ST_LABEL_WAIT)
		return -EIO;	/* not a label an entry holds */
	return ev_label_out(vt, &r, out);
}

int
st_edges_register_conn(sqlite3 *db, struct st_conn *c)
{
	return sqlite3_create_module_v2(db, "edges", &ev_module, c, c ? st_conn_unref : NULL) ==
	       SQLITE_OK ? 0 : -EIO;
}

int
st_edges_register(sqlite3 *db)
{
	return st_edges_register_conn(db, NULL);
}
