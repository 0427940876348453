/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-json.c - the Chrome Trace Event / PyTorch-Kineto JSON reader.
 * The streaming scanner (ing-json-scan.c) cuts the input into event spans;
 * each span is parsed in place (ing-json-val.c) and turned into store events:
 * X/B/E slices, instants, counters, async slices, and flow endpoints that are
 * bound to slices and chained into flow edges once the whole file is read.
 * See docs/json-ingest.md for the rules and the measured speed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc-sort.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/json-int.h"

#define CHUNK (1u << 20)
#define JICACHE 1024		/* intern cache slots, a power of 2 */

#define GROW(arr, n, cap) TC_GROW(arr, n, cap, 64)

/* ---- a string-keyed hash map to int, keys copied ---- */

struct jmap_ent {
	uint64_t h;
	char *key;
	size_t klen;
	int val;
};

struct jmap {
	struct jmap_ent *e;
	size_t cap, n;
	struct tc_arena *arena;	/* where keys are copied; NULL: malloc'd each */
};

static uint64_t
jhash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h | 1;
}

static int
jmap_get(const struct jmap *m, const char *k, size_t n, uint64_t h)
{
	size_t i;

	if (!m->cap)
		return -1;
	for (i = h & (m->cap - 1); m->e[i].h; i = (i + 1) & (m->cap - 1))
		if (m->e[i].h == h && m->e[i].klen == n && !memcmp(m->e[i].key, k, n))
			return m->e[i].val;
	return -1;
}

static void jmap_put(struct jmap *m, const char *k, size_t n, uint64_t h, int val);

static void
jmap_grow(struct jmap *m)
{
	struct jmap old = *m;
	size_t i;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->e = tc_xcalloc(m->cap, sizeof(*m->e));
	m->n = 0;
	for (i = 0; i < old.cap; i++) {
		if (!old.e[i].h)
			continue;
		size_t j = old.e[i].h & (m->cap - 1);

		while (m->e[j].h)
			j = (j + 1) & (m->cap - 1);
		m->e[j] = old.e[i];
		m->n++;
	}
	free(old.e);
}

static void
jmap_put(struct jmap *m, const char *k, size_t n, uint64_t h, int val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		jmap_grow(m);
	for (i = h & (m->cap - 1); m->e[i].h; i = (i + 1) & (m->cap - 1))
		;
	m->e[i].h = h;
	m->e[i].key = m->arena ? tc_arena_strndup(m->arena, k, n) : tc_xmemdup(k, n);
	m->e[i].klen = n;
	m->e[i].val = val;
	m->n++;
}

static void
jmap_free(struct jmap *m)
{
	size_t i;

	for (i = 0; i < m->cap && !m->arena; i++)
		free(m->e[i].key);
	free(m->e);
	memset(m, 0, sizeof(*m));
}

/* ---- reader state ---- */

/* An open B or async b/S waiting for its end. */
struct jopen {
	int64_t ts;
	uint32_t name, cat;
	int unit;
	char *args;		/* malloc'd or NULL */
	size_t args_len;
	bool access;		/* args has an access-set key */
	int flow_ident;		/* v2 bind_id identity, -1 none */
	int flow_phase;
};

struct jstack {
	struct jopen *v;
	size_t n, cap;
};

/* A pid: a host process, GPU or accelerator. */
struct jdev {
	int id;			/* store device id, 0 until an event needs it */
	char *pid;
	bool pid_int;
	int64_t pidnum;
	bool gpu_cat, accel_cat;
	char *name;		/* from M process_name */
	char *label;		/* from M process_labels */
	bool has_sort;
	int64_t sort;
	int kind;		/* ST_DEV_*, decided by finish_names() for its threads */
};

/* A (pid, tid): a thread or stream. */
struct jthread {
	int unit;		/* store unit id, 0 until an event needs it */
	int sync_unit;		/* its cuda_sync lane's, 0 until one needs it */
	int dev;		/* index into devs */
	char *tid;
	bool tid_int;
	char *name;		/* from M thread_name */
	bool has_sort;
	int64_t sort;
	struct jstack open;	/* B events */
};

enum { FL_BEGIN = 0, FL_STEP = 1, FL_END = 2 };
enum { BIND_ENCLOSING = 0, BIND_NEXT = 1, BIND_DIRECT = 2 };

struct jflow {
	int ident;
	int phase;
	int bind;
	int unit;
	int64_t ts;
	int64_t seq;		/* the bound slice (BIND_DIRECT: from the start), -1 none */
	uint64_t order;
};

struct jreader {
	struct st_writer *w;
	struct tc_input *in;
	const struct ing_opts *opts;
	const char *name;
	struct tc_err *err;

	struct jmap devmap, thrmap, unitmap, asyncmap, identmap;
	struct jdev *devs;
	size_t ndevs, capdevs;
	struct jthread *thr;
	size_t nthr, capthr;
	struct jstack *async;
	size_t nasync, capasync;
	struct jstack unfinished;	/* X without dur, closed at the end */
	struct ij_slice *sl;
	size_t nsl, capsl;
	struct jflow *fl;
	size_t nfl, capfl;
	char **labels;		/* per flow identity, in @names */
	int *lkinds;		/* per flow identity: enum st_edge_kind */
	int64_t *lcorr;		/* per flow identity: an "ac2g" launch's id, else -1 */
	struct ij_syncs *syncs;	/* cuda_sync events, NULL when none */
	size_t nlabels, caplabels;
	struct tc_arena names;	/* flow identity keys and labels */

	int last_thr;
	struct tc_buf last_key;

	int64_t ts_offset;	/* opts->ts_offset_ns, added to stored times only */
	int64_t max_end;
	bool any_time;
	uint64_t good, bad;
	char first_bad[200];
	struct tc_buf t1, t2, t3;	/* scratch */
	struct jicache *icache;		/* JICACHE slots */
};

/* One slot of the intern cache (a copy of the text and its string id). */
struct jicache {
	char *s;		/* malloc'd, NULL when empty */
	size_t len;
	uint32_t id;
};

/* The fields of one event that the reader looks at. */
struct jev {
	struct ij_val name, cat, ph, pid, tid, id, id2, bp, s, scope, bind_id, args, ts, dur;
	bool flow_in, flow_out;
	bool access;		/* args has a top-level access-set key (deps/) */
};

/* ---- small helpers ---- */

static void
count_bad(struct jreader *r, uint64_t index, uint64_t off, const char *why)
{
	if (!r->bad++)
		snprintf(r->first_bad, sizeof(r->first_bad), "event %llu at byte %llu: %s",
			 (unsigned long long)index, (unsigned long long)off, why);
	st_writer_count_bad(r->w, "event %llu at byte %llu: %s", (unsigned long long)index,
			    (unsigned long long)off, why);
}

/* Text of a scalar as a NUL-terminated string in @b (reset first). */
static void
scalar_text(const struct ij_val *v, struct tc_buf *b)
{
	tc_buf_reset(b);
	if (v->type == IJ_STR)
		ij_str_decode(v, b);
	else if (v->type != IJ_NONE)
		tc_buf_add(b, v->p, v->n);
	if (!b->data)
		tc_buf_add(b, "", 0);
}

/* The slot of @p/@n in the intern cache: a few 8-byte words mixed. */
static size_t
icache_slot(const char *p, size_t n)
{
	uint64_t a = 0, b = 0, c = 0, h;

	if (n >= 8) {
		memcpy(&a, p, 8);
		memcpy(&b, p + n - 8, 8);
		memcpy(&c, p + (n - 8) / 2, 8);
	} else {
		memcpy(&a, p, n);
	}
	h = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull ^ n;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h >> 40) & (JICACHE - 1);
}

/*
 * st_intern() through a direct-mapped cache: a trace has few distinct names
 * and categories, and a memcmp() on a hit is cheaper than the store's hash
 * of every byte and its lookup.
 */
static uint32_t
intern_raw(struct jreader *r, const char *p, size_t n)
{
	struct jicache *c = &r->icache[icache_slot(p, n)];

	if (c->s && c->len == n && !memcmp(c->s, p, n))
		return c->id;
	free(c->s);
	c->s = tc_xmalloc(n + 1);
	memcpy(c->s, p, n);
	c->len = n;
	c->id = st_intern(r->w, p, n);
	return c->id;
}

static uint32_t
intern_val(struct jreader *r, const struct ij_val *v)
{
	if (v->type != IJ_STR)
		return 0;
	if (!v->esc)
		return intern_raw(r, v->p, v->n);
	tc_buf_reset(&r->t3);
	ij_str_decode(v, &r->t3);
	return st_intern(r->w, r->t3.data ? r->t3.data : "", r->t3.len);
}

/* A time field: number or numeric string, microseconds -> ns. */
static int
time_val(const struct ij_val *v, int64_t *out)
{
	if (v->type == IJ_NUM || (v->type == IJ_STR && !v->esc))
		return ij_us_to_ns(v->p, v->n, out);
	return -EINVAL;
}

static bool
is_int_text(const char *s, int64_t *out)
{
	return *s && tc_parse_i64(s, out) == 0;
}

/* Find member @key of the object text @obj (already validated). */
static bool
obj_get(const struct ij_val *obj, const char *key, struct ij_val *out)
{
	const char *p, *end, *why, *at;
	struct ij_val k;
	bool first = true;
	size_t kl = strlen(key);

	if (obj->type != IJ_OBJ)
		return false;
	p = obj->p + 1;
	end = obj->p + obj->n;
	while (ij_obj_next(&p, end, first, &k, out, &why, &at) == 1) {
		first = false;
		if (ij_key_is(&k, key, kl))
			return true;
	}
	return false;
}

static bool
args_empty(const struct ij_val *a)
{
	const char *p;

	if (a->type != IJ_OBJ)
		return true;
	p = ij_ws(a->p + 1, a->p + a->n);
	return p < a->p + a->n && *p == '}';
}

/* ---- devices and units ---- */

static int
get_dev(struct jreader *r, const struct ij_val *pid)
{
	struct jdev *d;
	uint64_t h;
	int i;

	scalar_text(pid, &r->t1);
	h = jhash(r->t1.data, r->t1.len);
	i = jmap_get(&r->devmap, r->t1.data, r->t1.len, h);
	if (i >= 0)
		return i;
	GROW(r->devs, r->ndevs, r->capdevs);
	i = (int)r->ndevs++;
	d = &r->devs[i];
	memset(d, 0, sizeof(*d));
	d->pid = tc_xstrndup(r->t1.data, r->t1.len);
	d->pid_int = is_int_text(d->pid, &d->pidnum);
	jmap_put(&r->devmap, r->t1.data, r->t1.len, h, i);
	return i;
}

static int
dev_id(struct jreader *r, int di)
{
	struct jdev *d = &r->devs[di];
	char *key, *name;

	if (d->id)
		return d->id;
	key = tc_xasprintf("pid:%s", d->pid);
	name = d->pid_int ? tc_xasprintf("process %s", d->pid)
			  : tc_xstrdup(*d->pid ? d->pid : "(no pid)");
	d->id = st_device(r->w, key, ST_DEV_PROCESS, name);
	free(key);
	free(name);
	return d->id;
}

static int
get_thread(struct jreader *r, const struct ij_val *pid, const struct ij_val *tid)
{
	struct jthread *t;
	uint64_t h;
	int i, di;

	/* key = pid \x1f tid as text: Kineto writes tid 25738 and "25738" for one thread */
	tc_buf_reset(&r->t2);
	if (pid->type == IJ_STR)
		ij_str_decode(pid, &r->t2);
	else if (pid->p)
		tc_buf_add(&r->t2, pid->p, pid->n);
	tc_buf_addc(&r->t2, '\x1f');
	if (tid->type == IJ_STR)
		ij_str_decode(tid, &r->t2);
	else if (tid->p)
		tc_buf_add(&r->t2, tid->p, tid->n);
	if (r->last_thr >= 0 && r->last_key.len == r->t2.len &&
	    !memcmp(r->last_key.data, r->t2.data, r->t2.len))
		return r->last_thr;
	h = jhash(r->t2.data, r->t2.len);
	i = jmap_get(&r->thrmap, r->t2.data, r->t2.len, h);
	if (i < 0) {
		di = get_dev(r, pid);
		GROW(r->thr, r->nthr, r->capthr);
		i = (int)r->nthr++;
		t = &r->thr[i];
		memset(t, 0, sizeof(*t));
		t->dev = di;
		scalar_text(tid, &r->t1);
		t->tid = tc_xstrndup(r->t1.data, r->t1.len);
		{
			int64_t x;

			t->tid_int = is_int_text(t->tid, &x);
		}
		jmap_put(&r->thrmap, r->t2.data, r->t2.len, h, i);
	}
	tc_buf_reset(&r->last_key);
	tc_buf_add(&r->last_key, r->t2.data, r->t2.len);
	r->last_thr = i;
	return i;
}

static int
thread_unit(struct jreader *r, int ti)
{
	struct jthread *t = &r->thr[ti];
	char *key, *name;
	int dev;

	if (t->unit)
		return t->unit;
	dev = dev_id(r, t->dev);
	key = tc_xasprintf("tid:%s", t->tid);
	name = t->tid_int ? tc_xasprintf("thread %s", t->tid)
			  : tc_xstrdup(*t->tid ? t->tid : "(no tid)");
	t->unit = st_unit(r->w, dev, key, ST_UNIT_THREAD, name);
	free(key);
	free(name);
	return t->unit;
}

/* A unit keyed by text under device @di (or the global device when di < 0). */
static int
aux_unit(struct jreader *r, int di, const char *key, int kind, const char *name)
{
	char *full;
	uint64_t h;
	int u, dev;

	full = tc_xasprintf("%d\x1f%s", di, key);
	h = jhash(full, strlen(full));
	u = jmap_get(&r->unitmap, full, strlen(full), h);
	if (u < 0) {
		dev = di >= 0 ? dev_id(r, di) : st_device(r->w, "global", ST_DEV_OTHER, "Global");
		u = st_unit(r->w, dev, key, kind, name);
		jmap_put(&r->unitmap, full, strlen(full), h, u);
	}
	free(full);
	return u;
}

static bool
cat_is_gpu(const struct ij_val *c)
{
	static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset",
		"gpu_user_annotation", "Kernel", "Memcpy", "Memset" };
	size_t i;

	for (i = 0; i < TC_ARRAY_SIZE(cats); i++)
		if (ij_key_is(c, cats[i], strlen(cats[i])))
			return true;
	return false;
}

static bool
cat_is_accel(const struct ij_val *c)
{
	return c->n > 5 && !memcmp(c->p, "mtia_", 5) && !IJ_KEY_IS(c, "mtia_runtime");
}

/* ---- events into the store ---- */

/*
 * One event into the store.  @access: the args carry an access-set key
 * (the reader parsed them, so the store need not look).
 */
static int
add_event(struct jreader *r, int unit, int kind, int64_t ts, int64_t dur, uint32_t name,
	  uint32_t cat, double value, const char *args, size_t args_len, bool access,
	  int64_t *seq_out)
{
	struct st_event ev = {
		.unit = unit, .kind = kind, .ts = ts + r->ts_offset, .dur = dur,
		.name = name, .cat = cat, .value = value, .args = args, .args_len = args_len,
		.args_scanned = true, .has_access = access,
	};
	int64_t seq = st_event_add(r->w, &ev);

	if (seq < 0)
		return tc_err_set(r->err, (int)seq, "%s: writing the trace store failed",
				  r->name);
	if (!r->any_time || ts + dur > r->max_end)
		r->max_end = ts + dur;
	r->any_time = true;
	r->good++;
	if (kind == ST_EV_SLICE) {
		GROW(r->sl, r->nsl, r->capsl);
		r->sl[r->nsl].unit = unit;
		r->sl[r->nsl].ts = ts;
		r->sl[r->nsl].end = ts + dur;
		r->sl[r->nsl].seq = (uint32_t)seq;
		r->sl[r->nsl].parent = -1;
		r->nsl++;
	}
	if (seq_out)
		*seq_out = seq;
	return 0;
}

/*
 * The edge kind of a flow: flows are `flow` edges, except those whose
 * category names another kind ("nx.order", "nx.anti", "nx.output"), which
 * writers such as the CUPTI collector use for cross-stream event waits.
 */
static int
flow_kind(const char *cat)
{
	if (!strncmp(cat, "nx.", 3)) {
		int k = st_edge_kind_parse(cat + 3);

		if (k >= 0)
			return k;
	}
	return ST_EDGE_FLOW;
}

/* The flow identity known by @key/@n, or -1 (*@h is set for flow_ident_add()). */
static int
flow_ident_find(struct jreader *r, const char *key, size_t n, uint64_t *h)
{
	*h = jhash(key, n);
	return jmap_get(&r->identmap, key, n, *h);
}

/* A new flow identity; @label/@llen is what its edges are labelled. */
static int
flow_ident_add(struct jreader *r, const char *key, size_t n, uint64_t h, const char *label,
	       size_t llen, int kind, int64_t corr)
{
	int i;

	GROW(r->labels, r->nlabels, r->caplabels);
	r->lkinds = tc_xrealloc(r->lkinds, r->caplabels * sizeof(*r->lkinds));
	r->lcorr = tc_xrealloc(r->lcorr, r->caplabels * sizeof(*r->lcorr));
	i = (int)r->nlabels++;
	r->lkinds[i] = kind;
	r->lcorr[i] = corr;
	r->labels[i] = tc_arena_strndup(&r->names, label, llen);
	jmap_put(&r->identmap, key, n, h, i);
	return i;
}

static void
add_flow(struct jreader *r, int ident, int phase, int bind, int unit, int64_t ts, int64_t seq)
{
	struct jflow *f;

	GROW(r->fl, r->nfl, r->capfl);
	f = &r->fl[r->nfl];
	f->ident = ident;
	f->phase = phase;
	f->bind = bind;
	f->unit = unit;
	f->ts = ts;
	f->seq = seq;
	f->order = r->nfl++;
}

/* Flow v2 on a slice: bind_id + flow_in / flow_out. */
static int
v2_ident(struct jreader *r, const struct jev *e, int *phase)
{
	uint64_t h;
	int id;

	if (e->bind_id.type != IJ_NUM && e->bind_id.type != IJ_STR)
		return -1;
	if (!e->flow_in && !e->flow_out)
		return -1;
	*phase = e->flow_in && e->flow_out ? FL_STEP : e->flow_out ? FL_BEGIN : FL_END;
	scalar_text(&e->bind_id, &r->t1);
	tc_buf_reset(&r->t2);
	tc_buf_adds(&r->t2, "v2\x1f");
	tc_buf_add(&r->t2, r->t1.data, r->t1.len);
	id = flow_ident_find(r, r->t2.data, r->t2.len, &h);
	if (id < 0) {
		tc_buf_reset(&r->t3);
		tc_buf_adds(&r->t3, "flow:");
		tc_buf_add(&r->t3, r->t1.data, strnlen(r->t1.data, r->t1.len));
		id = flow_ident_add(r, r->t2.data, r->t2.len, h, r->t3.data, r->t3.len,
				    ST_EDGE_FLOW, -1);
	}
	return id;
}

/* Identity text of an async or flow id: id (number/string) or id2 {local|global}. */
static bool
id_text(const struct jev *e, struct tc_buf *b)
{
	struct ij_val v;

	tc_buf_reset(b);
	if (e->id.type == IJ_NUM || e->id.type == IJ_STR) {
		scalar_text(&e->id, b);
		return true;
	}
	if (e->id2.type == IJ_OBJ) {
		if (obj_get(&e->id2, "local", &v)) {
			tc_buf_adds(b, "local:");
		} else if (obj_get(&e->id2, "global", &v)) {
			tc_buf_adds(b, "global:");
		} else {
			return false;
		}
		if (v.type == IJ_STR)
			ij_str_decode(&v, b);
		else
			tc_buf_add(b, v.p, v.n);
		return true;
	}
	return false;
}

static void
push_open(struct jstack *st, int64_t ts, uint32_t name, uint32_t cat, int unit,
	  const struct ij_val *args, bool access)
{
	struct jopen *o;

	GROW(st->v, st->n, st->cap);
	o = &st->v[st->n++];
	memset(o, 0, sizeof(*o));
	o->ts = ts;
	o->name = name;
	o->cat = cat;
	o->unit = unit;
	o->flow_ident = -1;
	if (!args_empty(args)) {
		o->args = tc_xmemdup(args->p, args->n);	/* args_len bytes, a NUL or not */
		o->args_len = args->n;
		o->access = access;
	}
}

/* Open a slice of thread @ti (B, or X without dur) on @st, with the v2 flow
 * (bind_id / flow_in / flow_out) it carries, bound when it closes. */
static void
push_open_thread(struct jreader *r, struct jstack *st, const struct jev *e, int ti, int64_t ts,
		 uint32_t name, uint32_t cat)
{
	int id, phase;

	push_open(st, ts, name, cat, thread_unit(r, ti), &e->args, e->access);
	id = v2_ident(r, e, &phase);
	if (id >= 0) {
		st->v[st->n - 1].flow_ident = id;
		st->v[st->n - 1].flow_phase = phase;
	}
}

/*
 * Close @o at @end with its own args, or else the E's (@eargs, whose access
 * flag is @eaccess); frees o->args.
 */
static int
close_open(struct jreader *r, struct jopen *o, int64_t end, const struct ij_val *eargs,
	   bool eaccess)
{
	const char *args = o->args;
	size_t alen = o->args_len;
	bool access = o->access;
	int64_t seq;
	int ret;

	if (!args && eargs && !args_empty(eargs)) {
		args = eargs->p;
		alen = eargs->n;
		access = eaccess;
	}
	ret = add_event(r, o->unit, ST_EV_SLICE, o->ts, end - o->ts, o->name, o->cat, 0, args,
			alen, access, &seq);
	if (!ret && o->flow_ident >= 0)
		add_flow(r, o->flow_ident, o->flow_phase, BIND_DIRECT, o->unit, o->ts, seq);
	free(o->args);
	o->args = NULL;
	return ret;
}

static struct jstack *
async_stack(struct jreader *r, const char *key, size_t n)
{
	uint64_t h = jhash(key, n);
	int i = jmap_get(&r->asyncmap, key, n, h);

	if (i < 0) {
		GROW(r->async, r->nasync, r->capasync);
		i = (int)r->nasync++;
		memset(&r->async[i], 0, sizeof(r->async[i]));
		jmap_put(&r->asyncmap, key, n, h, i);
	}
	return &r->async[i];
}

static void
meta_event(struct jreader *r, const struct jev *e)
{
	struct ij_val v;
	struct jdev *d;
	struct jthread *t;
	int64_t x;
	int ti;
	bool proc = e->name.n > 8 && !memcmp(e->name.p, "process_", 8);
	bool thread = e->name.n > 7 && !memcmp(e->name.p, "thread_", 7);

	if (!proc && !thread)
		return;		/* num_cpus and other M events are ignored */
	if (proc) {
		int di = get_dev(r, &e->pid);	/* may move r->devs */

		d = &r->devs[di];
		if (IJ_KEY_IS(&e->name, "process_name") && obj_get(&e->args, "name", &v) &&
		    v.type == IJ_STR) {
			scalar_text(&v, &r->t1);
			free(d->name);
			d->name = tc_xstrdup(r->t1.data);
		} else if (IJ_KEY_IS(&e->name, "process_labels") &&
			   obj_get(&e->args, "labels", &v) && v.type == IJ_STR) {
			scalar_text(&v, &r->t1);
			free(d->label);
			d->label = tc_xstrdup(r->t1.data);
		} else if (IJ_KEY_IS(&e->name, "process_sort_index") &&
			   obj_get(&e->args, "sort_index", &v) && v.type == IJ_NUM) {
			scalar_text(&v, &r->t1);
			if (is_int_text(r->t1.data, &x)) {
				d->sort = x;
				d->has_sort = true;
			}
		}
		return;
	}
	ti = get_thread(r, &e->pid, &e->tid);	/* may move r->thr */
	t = &r->thr[ti];
	if (IJ_KEY_IS(&e->name, "thread_name") && obj_get(&e->args, "name", &v) &&
	    v.type == IJ_STR) {
		scalar_text(&v, &r->t1);
		while (r->t1.len && r->t1.data[r->t1.len - 1] == ' ')
			r->t1.data[--r->t1.len] = '\0';
		free(t->name);
		t->name = tc_xstrdup(r->t1.data);
	} else if (IJ_KEY_IS(&e->name, "thread_sort_index") &&
		   obj_get(&e->args, "sort_index", &v) && v.type == IJ_NUM) {
		scalar_text(&v, &r->t1);
		if (is_int_text(r->t1.data, &x)) {
			t->sort = x;
			t->has_sort = true;
		}
	}
}

static int
counter_event(struct jreader *r, const struct jev *e, int di, int64_t ts, uint32_t cat,
	      uint64_t index, uint64_t off)
{
	const char *p, *end, *why, *at;
	struct ij_val k, v;
	bool first = true;
	double val;
	int n = 0, ret, u;
	char *series;
	uint32_t name;

	if (e->args.type != IJ_OBJ) {
		count_bad(r, index, off, "counter without args");
		return 0;
	}
	p = e->args.p + 1;
	end = e->args.p + e->args.n;
	while (ij_obj_next(&p, end, first, &k, &v, &why, &at) == 1) {
		first = false;
		if (v.type == IJ_NUM) {
			if (ij_num_double(v.p, v.n, &val))
				continue;
		} else if (v.type == IJ_STR && !v.esc) {
			if (ij_num_double(v.p, v.n, &val))
				continue;
		} else {
			continue;
		}
		scalar_text(&e->name, &r->t1);
		tc_buf_reset(&r->t2);
		tc_buf_add(&r->t2, r->t1.data, r->t1.len);
		if (e->id.type == IJ_NUM || e->id.type == IJ_STR) {
			scalar_text(&e->id, &r->t1);
			tc_buf_printf(&r->t2, "[%s]", r->t1.data);
		}
		tc_buf_addc(&r->t2, '.');
		ij_str_decode(&k, &r->t2);
		series = tc_xasprintf("counter:%s", r->t2.data);
		u = aux_unit(r, di, series, ST_UNIT_COUNTER, r->t2.data);
		free(series);
		name = st_intern(r->w, r->t2.data, r->t2.len);
		ret = add_event(r, u, ST_EV_COUNTER, ts, 0, name, cat, val, NULL, 0, false, NULL);
		if (ret)
			return ret;
		n++;
	}
	if (!n)
		count_bad(r, index, off, "counter without numeric args");
	return 0;
}

static int
async_event(struct jreader *r, const struct jev *e, char ph, int di, int64_t ts, uint32_t name,
	    uint32_t cat, uint64_t index, uint64_t off)
{
	struct jstack *st;
	struct jopen *o;
	char *key, *uname;
	int u, ret;
	size_t i;

	if (!id_text(e, &r->t1)) {
		count_bad(r, index, off, "async event without id");
		return 0;
	}
	scalar_text(&e->cat, &r->t2);
	/* The stack key: deprecated S/F pair by name too. */
	tc_buf_reset(&r->t3);
	tc_buf_printf(&r->t3, "%c\x1f%d\x1f%s\x1f%s\x1f", (ph == 'S' || ph == 'F') ? 'S' : 'b',
		      di, r->t2.data, r->t1.data);
	if (ph == 'S' || ph == 'F') {
		if (e->name.type == IJ_STR)
			tc_buf_add(&r->t3, e->name.p, e->name.n);
	} else if (e->scope.type == IJ_STR) {
		tc_buf_add(&r->t3, e->scope.p, e->scope.n);
	}
	st = async_stack(r, r->t3.data, r->t3.len);
	if (ph == 'b' || ph == 'S' || ph == 'n') {
		scalar_text(&e->name, &r->t1);
		key = tc_xasprintf("async:%s:%s", r->t2.data, r->t1.data);
		uname = tc_xstrdup(*r->t1.data ? r->t1.data : "(async)");
		u = aux_unit(r, di, key, ST_UNIT_ASYNC, uname);
		free(key);
		free(uname);
		if (ph == 'n')
			return add_event(r, u, ST_EV_INSTANT, ts, 0, name, cat, 0,
					 args_empty(&e->args) ? NULL : e->args.p,
					 args_empty(&e->args) ? 0 : e->args.n, e->access, NULL);
		push_open(st, ts, name, cat, u, &e->args, e->access);
		return 0;
	}
	/* e / F */
	if (!st->n) {
		st_writer_count_unmatched(r->w);
		return 0;
	}
	i = st->n - 1;
	if (name && ph == 'e') {
		size_t j;

		for (j = st->n; j-- > 0;)
			if (st->v[j].name == name) {
				i = j;
				break;
			}
	}
	o = &st->v[i];
	if (ts < o->ts) {
		count_bad(r, index, off, "async end before its begin");
		return 0;
	}
	ret = close_open(r, o, ts, &e->args, e->access);
	memmove(&st->v[i], &st->v[i + 1], (st->n - i - 1) * sizeof(*st->v));
	st->n--;
	return ret;
}

static void
flow_v1(struct jreader *r, const struct jev *e, char ph, int ti, int64_t ts, uint64_t index,
	uint64_t off)
{
	size_t idlen;
	uint64_t h;
	int64_t corr;
	int id, bind, kind;

	if (!id_text(e, &r->t1)) {
		count_bad(r, index, off, "flow event without id");
		return;
	}
	/* the identity: id \x1f name \x1f cat; the label: name:id */
	idlen = r->t1.len;
	scalar_text(&e->name, &r->t2);
	tc_buf_add(&r->t1, "\x1f", 1);
	tc_buf_add(&r->t1, r->t2.data, r->t2.len);
	tc_buf_add(&r->t1, "\x1f", 1);
	scalar_text(&e->cat, &r->t3);
	tc_buf_add(&r->t1, r->t3.data, r->t3.len);
	kind = flow_kind(r->t3.data);
	id = flow_ident_find(r, r->t1.data, r->t1.len, &h);
	if (id < 0) {
		/* as text: a decoded \u0000 ends each part */
		tc_buf_reset(&r->t3);
		tc_buf_add(&r->t3, r->t2.data, strnlen(r->t2.data, r->t2.len));
		tc_buf_addc(&r->t3, ':');
		tc_buf_add(&r->t3, r->t1.data, strnlen(r->t1.data, idlen));
		/* Kineto's launch flows carry the correlation id (ing-json-sync.c) */
		corr = -1;
		if (e->cat.type == IJ_STR && IJ_KEY_IS(&e->cat, "ac2g") && e->id.type == IJ_NUM &&
		    idlen < 24) {
			char num[24];

			memcpy(num, r->t1.data, idlen);
			num[idlen] = 0;
			if (tc_parse_i64(num, &corr) || corr < 0)
				corr = -1;
		}
		id = flow_ident_add(r, r->t1.data, r->t1.len, h, r->t3.data, r->t3.len, kind,
				    corr);
	}
	bind = BIND_ENCLOSING;
	if (ph == 'f' && !(e->bp.type == IJ_STR && IJ_KEY_IS(&e->bp, "e")))
		bind = BIND_NEXT;
	add_flow(r, id, ph == 's' ? FL_BEGIN : ph == 't' ? FL_STEP : FL_END, bind,
		 thread_unit(r, ti), ts, -1);
}

/* Is a member key one deps/ reads (st_access_key()), compared as deps/ reads
 * it: decoded, up to a NUL? */
static bool
access_key_val(const struct ij_val *k)
{
	struct tc_buf b;
	bool yes;

	if (!k->esc)
		return st_access_key(k->p, k->n);
	tc_buf_init(&b);
	ij_str_decode(k, &b);
	yes = b.len && b.len < 16 && st_access_key(b.data, strnlen(b.data, b.len));
	tc_buf_free(&b);
	return yes;
}

/*
 * The args object starting at @p (its '{'), a member of the event: walk its
 * members to see their keys (e->access) while validating them as
 * ij_value_at() would.  Return: the byte after it, or NULL with @why/@at set
 * exactly as ij_value_at() sets them.
 */
static const char *
parse_args(struct jev *e, const char *p, const char *end, const char **why, const char **at)
{
	const char *q = p + 1;
	struct ij_val k, v;
	bool first = true, access = false;
	int ret;

	while ((ret = ij_member(&q, end, first, &k, why, at)) == 1) {
		first = false;
		if (!access && access_key_val(&k))
			access = true;
		q = ij_value_at(q, end, &v, 2, why, at);
		if (!q)
			break;
	}
	if (ret == 0) {
		e->access = access;
		e->args.type = IJ_OBJ;
		e->args.p = p;
		e->args.n = (size_t)(q - p);
		e->args.esc = false;
		return q;
	}
	/* a syntax error: let the generic parser word it */
	q = ij_value_at(p, end, &v, 1, why, at);
	if (q) {	/* cannot happen: both accept the same text */
		*why = "invalid args";
		*at = p;
	}
	return NULL;
}

/*
 * Parse the event object at @p (white space, then '{') up to its closing
 * '}', within [@p, @end).  Return: the byte after the '}', or NULL with
 * @why/@at set on a syntax error (an object running past @end included).
 */
static const char *
parse_event(struct jev *e, const char *p, const char *end, const char **why, const char **at)
{
	struct ij_val k, v;
	bool first = true;
	int ret;

	memset(e, 0, sizeof(*e));
	p = ij_ws(p, end);
	p++;	/* '{', checked by the caller */
	while ((ret = ij_member(&p, end, first, &k, why, at)) == 1) {
		first = false;
		if (!k.esc && k.n == 4 && !memcmp(k.p, "args", 4)) {
			p = ij_ws(p, end);
			if (p < end && *p == '{') {
				p = parse_args(e, p, end, why, at);
				if (!p)
					return NULL;
				continue;
			}
		}
		p = ij_value_at(p, end, &v, 1, why, at);
		if (!p)
			return NULL;
		if (k.esc)
			continue;
		switch (k.n) {
		case 1:
			if (k.p[0] == 's')
				e->s = v;
			break;
		case 2:
			if (k.p[0] == 'p' && k.p[1] == 'h')
				e->ph = v;
			else if (k.p[0] == 't' && k.p[1] == 's')
				e->ts = v;
			else if (k.p[0] == 'i' && k.p[1] == 'd')
				e->id = v;
			else if (k.p[0] == 'b' && k.p[1] == 'p')
				e->bp = v;
			break;
		case 3:
			if (!memcmp(k.p, "pid", 3))
				e->pid = v;
			else if (!memcmp(k.p, "tid", 3))
				e->tid = v;
			else if (!memcmp(k.p, "dur", 3))
				e->dur = v;
			else if (!memcmp(k.p, "cat", 3))
				e->cat = v;
			else if (!memcmp(k.p, "id2", 3))
				e->id2 = v;
			break;
		case 4:
			if (!memcmp(k.p, "name", 4))
				e->name = v;
			else if (!memcmp(k.p, "args", 4)) {
				e->args = v;
				e->access = false;
			}
			break;
		case 5:
			if (!memcmp(k.p, "scope", 5))
				e->scope = v;
			break;
		case 7:
			if (!memcmp(k.p, "bind_id", 7))
				e->bind_id = v;
			else if (!memcmp(k.p, "flow_in", 7))
				e->flow_in = v.type == IJ_TRUE;
			break;
		case 8:
			if (!memcmp(k.p, "flow_out", 8))
				e->flow_out = v.type == IJ_TRUE;
			break;
		}
	}
	return ret < 0 ? NULL : p;
}

static bool
pidtid_ok(const struct ij_val *v)
{
	return v->type == IJ_NONE || v->type == IJ_NUM || v->type == IJ_STR;
}

/* Integer member @key of @args (a number or a numeric string), or -1. */
static int64_t
args_int(struct jreader *r, const struct ij_val *args, const char *key)
{
	struct ij_val v;
	int64_t x;

	if (!obj_get(args, key, &v) || (v.type != IJ_NUM && v.type != IJ_STR))
		return -1;
	scalar_text(&v, &r->t3);
	return is_int_text(r->t3.data, &x) && x >= 0 ? x : -1;
}

/*
 * The kind of a Kineto "cuda_sync" slice on a numbered stream (enum
 * ij_sync_kind, from the "cuda_sync_kind" arg or else the name), or -1.
 */
static int
sync_kind(struct jreader *r, const struct jev *e, int ti)
{
	const char *tn = r->thr[ti].name;
	struct ij_val v;
	size_t tl;

	if (e->cat.type != IJ_STR || !IJ_KEY_IS(&e->cat, "cuda_sync") || !r->thr[ti].tid_int)
		return -1;
	tl = tn ? strlen(tn) : 0;
	if (tl >= 5 && !strcmp(tn + tl - 5, " sync"))
		return -1;	/* a sync lane already (our own Chrome JSON export) */
	if (obj_get(&e->args, "cuda_sync_kind", &v) && v.type == IJ_STR)
		scalar_text(&v, &r->t3);
	else
		scalar_text(&e->name, &r->t3);
	return ij_sync_kind_parse(r->t3.data);
}

/*
 * The lane of stream @ti's synchronisations: Kineto draws them on the
 * stream's row, but they time the host's wait, overlap the stream's work
 * and are not work of the stream, so they get a row of their own (the
 * stream's nesting and program order stay its operations').
 */
static int
sync_unit(struct jreader *r, int ti)
{
	struct jthread *t = &r->thr[ti];
	char *key, *name;

	if (t->sync_unit)
		return t->sync_unit;
	key = tc_xasprintf("sync:%s", t->tid);
	name = tc_xasprintf("stream %s sync", t->tid);
	t->sync_unit = aux_unit(r, t->dev, key, ST_UNIT_TRACK, name);
	free(key);
	free(name);
	return t->sync_unit;
}

/* ij_sync_ops.stream_units: the units of device @dev's stream @stream (-1: all). */
static int
sync_stream_units(void *ctx, int dev, int64_t stream, int *out, int max)
{
	const struct jreader *r = ctx;
	int n = 0;

	for (size_t i = 0; i < r->nthr && n < max; i++) {
		const struct jthread *t = &r->thr[i];
		int64_t x;

		if (t->dev != dev || !t->unit)
			continue;
		if (stream >= 0 && (!t->tid_int || tc_parse_i64(t->tid, &x) || x != stream))
			continue;
		out[n++] = t->unit;
	}
	return n;
}

/* Turn one parsed event into store calls.  0 or -errno with r->err set. */
static int
handle_event(struct jreader *r, const struct jev *e, uint64_t index, uint64_t off)
{
	int64_t ts = 0, dur = 0, seq;
	uint32_t name, cat;
	int ti, di, ret, ph1, phase, sk, rc;
	bool need_ts;

	if (e->ph.type != IJ_STR || e->ph.n < 1) {
		count_bad(r, index, off,
			  e->ph.type == IJ_NONE ? "missing ph" : "ph is not a string");
		return 0;
	}
	ph1 = e->ph.p[0];
	if (e->ph.n != 1)
		return 0;	/* unknown phase: skipped silently */
	switch (ph1) {
	case 'X': case 'B': case 'E': case 'i': case 'I': case 'R': case 'C':
	case 'b': case 'e': case 'n': case 'S': case 'F': case 's': case 't': case 'f':
		need_ts = true;
		break;
	case 'M':
		need_ts = false;
		break;
	default:
		return 0;	/* N/O/D objects, P samples, V/v, c, (, ), T/p steps... */
	}
	if (!pidtid_ok(&e->pid) || !pidtid_ok(&e->tid)) {
		count_bad(r, index, off, "pid or tid is not a number or string");
		return 0;
	}
	if (e->name.type != IJ_NONE && e->name.type != IJ_STR) {
		count_bad(r, index, off, "name is not a string");
		return 0;
	}
	if (e->cat.type != IJ_NONE && e->cat.type != IJ_STR) {
		count_bad(r, index, off, "cat is not a string");
		return 0;
	}
	if (ph1 == 'M') {
		meta_event(r, e);
		return 0;
	}
	if (need_ts) {
		if (e->ts.type == IJ_NONE) {
			count_bad(r, index, off, "missing ts");
			return 0;
		}
		if ((rc = time_val(&e->ts, &ts))) {
			count_bad(r, index, off, rc == -ERANGE ? "ts is out of range (beyond "
				  "9e15 us)" : "ts is not a number");
			return 0;
		}
	}
	ti = get_thread(r, &e->pid, &e->tid);
	di = r->thr[ti].dev;
	if (e->cat.type == IJ_STR && !r->devs[di].gpu_cat && !r->devs[di].accel_cat) {
		if (cat_is_gpu(&e->cat))
			r->devs[di].gpu_cat = true;
		else if (cat_is_accel(&e->cat))
			r->devs[di].accel_cat = true;
	}
	name = intern_val(r, &e->name);
	cat = intern_val(r, &e->cat);

	switch (ph1) {
	case 'X':
		if (e->dur.type == IJ_NONE) {
			/* Chrome writes X without dur for a slice still running when
			 * tracing stopped: keep it open until the end of the trace. */
			push_open_thread(r, &r->unfinished, e, ti, ts, name, cat);
			return 0;
		}
		if ((rc = time_val(&e->dur, &dur))) {
			count_bad(r, index, off, rc == -ERANGE ? "dur is out of range (beyond "
				  "9e15 us)" : "dur is not a number");
			return 0;
		}
		if (dur < 0) {
			count_bad(r, index, off, "negative dur");
			return 0;
		}
		sk = sync_kind(r, e, ti);
		/* Kineto's Context Syncs sit on tid -1 ("Device 0"), where nothing runs */
		ret = add_event(r, sk < 0 || r->thr[ti].tid[0] == '-' ? thread_unit(r, ti) :
				sync_unit(r, ti), ST_EV_SLICE, ts,
				dur, name, cat, 0, args_empty(&e->args) ? NULL : e->args.p,
				args_empty(&e->args) ? 0 : e->args.n, e->access, &seq);
		if (ret)
			return ret;
		if (sk >= 0)
			ij_syncs_add(&r->syncs, sk, thread_unit(r, ti), r->thr[ti].dev, seq, ts,
				     ts + dur, args_int(r, &e->args, "correlation"),
				     args_int(r, &e->args, "wait_on_stream"));
		{
			int id = v2_ident(r, e, &phase);

			if (id >= 0)
				add_flow(r, id, phase, BIND_DIRECT, thread_unit(r, ti), ts, seq);
		}
		return 0;
	case 'B':
		push_open_thread(r, &r->thr[ti].open, e, ti, ts, name, cat);
		return 0;
	case 'E': {
		struct jstack *st = &r->thr[ti].open;

		if (!st->n) {
			st_writer_count_unmatched(r->w);
			return 0;
		}
		if (ts < st->v[st->n - 1].ts) {
			count_bad(r, index, off, "E before its B");
			return 0;
		}
		st->n--;
		return close_open(r, &st->v[st->n], ts, &e->args, e->access);
	}
	case 'i': case 'I': case 'R': {
		int u;

		if (e->s.type == IJ_STR && IJ_KEY_IS(&e->s, "g"))
			u = aux_unit(r, -1, "instants", ST_UNIT_TRACK, "Global instants");
		else if (e->s.type == IJ_STR && IJ_KEY_IS(&e->s, "p"))
			u = aux_unit(r, di, "process-instants", ST_UNIT_TRACK, "Process instants");
		else
			u = thread_unit(r, ti);
		return add_event(r, u, ST_EV_INSTANT, ts, 0, name, cat, 0,
				 args_empty(&e->args) ? NULL : e->args.p,
				 args_empty(&e->args) ? 0 : e->args.n, e->access, NULL);
	}
	case 'C':
		return counter_event(r, e, di, ts, cat, index, off);
	case 'b': case 'e': case 'n': case 'S': case 'F':
		return async_event(r, e, (char)ph1, di, ts, name, cat, index, off);
	case 's': case 't': case 'f':
		flow_v1(r, e, (char)ph1, ti, ts, index, off);
		return 0;
	}
	return 0;
}

static int
on_event(void *ctx, const char *p, size_t n, uint64_t index, uint64_t off)
{
	struct jreader *r = ctx;
	const char *why = NULL, *at = NULL, *q;
	struct jev e;

	q = ij_ws(p, p + n);
	if (q >= p + n || *q != '{') {
		if (q < p + n && (*q == '[' || *q == '"' || *q == '-' || *q == 't' || *q == 'f' ||
				  *q == 'n' || (*q >= '0' && *q <= '9'))) {
			struct ij_val v;

			if (!ij_value(q, p + n, &v, &why, &at))
				goto syntax;
			count_bad(r, index, off, "not an object");
			return 0;
		}
		why = "expected an event object";
		at = q;
		goto syntax;
	}
	q = parse_event(&e, p, p + n, &why, &at);
	if (!q)
		goto syntax;
	q = ij_ws(q, p + n);
	if (q != p + n) {
		why = "unexpected data after the event object";
		at = q;
		goto syntax;
	}
	return handle_event(r, &e, index, off);
syntax:
	return tc_err_set(r->err, -EINVAL, "%s: byte %llu: invalid JSON in event %llu: %s",
			  r->name, (unsigned long long)(off + (uint64_t)(at - p)),
			  (unsigned long long)index, why);
}

/*
 * The scanner's fast path: the event at @p ('{' first) lies in the current
 * chunk, [@p, @p + @avail).  Parse it in place; decline (0) when it does not
 * parse there, so that on_event() gets the captured span and reports the
 * error, or reads an event that runs into the next chunk.
 * Return: the event's length, 0, or -errno.
 */
static long
on_event_at(void *ctx, const char *p, size_t avail, uint64_t index, uint64_t off)
{
	struct jreader *r = ctx;
	const char *why, *at, *q;
	struct jev e;
	int ret;

	q = parse_event(&e, p, p + avail, &why, &at);
	if (!q)
		return 0;
	ret = handle_event(r, &e, index, off);
	return ret < 0 ? ret : (long)(q - p);
}

static int
on_meta(void *ctx, const char *key, size_t keylen, const char *val, size_t vallen, uint64_t off)
{
	struct jreader *r = ctx;
	const char *why, *at, *q;
	struct ij_val v;
	char *k;

	if (!val)
		return 0;	/* too big to keep (systemTraceEvents, stackFrames...) */
	q = ij_value(val, val + vallen, &v, &why, &at);
	if (!q || ij_ws(q, val + vallen) != val + vallen)
		return tc_err_set(r->err, -EINVAL, "%s: byte %llu: invalid JSON in top-level "
				  "\"%.*s\": %s", r->name,
				  (unsigned long long)(off + (uint64_t)((q ? q : at) - val)),
				  (int)TC_MIN(keylen, 64), key, q ? "trailing data" : why);
	if (v.type == IJ_OBJ || v.type == IJ_ARR) {
		if (vallen > 16384)
			return 0;
	} else if (vallen > 1024) {
		return 0;
	}
	k = tc_xasprintf("json.%.*s", (int)keylen, key);
	scalar_text(&v, &r->t1);
	st_writer_set_meta(r->w, k, r->t1.data);
	free(k);
	return 0;
}

/* ---- the end: open slices, flows, names ---- */

static int
close_all(struct jreader *r, struct jstack *st)
{
	int ret = 0;

	while (st->n) {
		struct jopen *o = &st->v[--st->n];
		int64_t end = r->max_end > o->ts ? r->max_end : o->ts;

		st_writer_count_unmatched(r->w);
		if (!ret)
			ret = close_open(r, o, end, NULL, false);
		else
			free(o->args);
	}
	return ret;
}

/* Slices by unit, start, longest first, file order: a total order. */
static inline bool
slice_less(const struct ij_slice *x, const struct ij_slice *y)
{
	if (x->unit != y->unit)
		return x->unit < y->unit;
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->end != y->end)
		return x->end > y->end;
	return x->seq < y->seq;
}

/* Flow endpoints by identity, time, phase s < t < f, file order: a total order. */
static inline bool
flow_less(const struct jflow *x, const struct jflow *y)
{
	if (x->ident != y->ident)
		return x->ident < y->ident;
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->phase != y->phase)
		return x->phase < y->phase;
	return x->order < y->order;
}

/* slice_sort(), flow_sort(): common/tc-sort.h */
TC_MSORT_DEFINE(slice_sort, struct ij_slice, slice_less)
TC_MSORT_DEFINE(flow_sort, struct jflow, flow_less)

size_t
ij_slice_bound(const struct ij_slice *sl, size_t nsl, int unit, int64_t t, bool upper)
{
	return TC_LOWER_BOUND(nsl, m, sl[m].unit < unit ||
			      (sl[m].unit == unit && (upper ? sl[m].ts <= t : sl[m].ts < t)));
}

static int64_t
bind_flow(const struct jreader *r, const struct jflow *f)
{
	size_t i;
	int64_t c;

	if (f->bind == BIND_DIRECT)
		return f->seq;
	if (f->bind == BIND_NEXT) {
		i = ij_slice_bound(r->sl, r->nsl, f->unit, f->ts, false);
		return (i < r->nsl && r->sl[i].unit == f->unit) ? r->sl[i].seq : -1;
	}
	i = ij_slice_bound(r->sl, r->nsl, f->unit, f->ts, true);
	if (i == 0 || r->sl[i - 1].unit != f->unit)
		return -1;
	for (c = (int64_t)i - 1; c >= 0; c = r->sl[c].parent)
		if (r->sl[c].ts <= f->ts && f->ts <= r->sl[c].end)
			return r->sl[c].seq;
	return -1;
}

static int
resolve_flows(struct jreader *r)
{
	int64_t *stack = NULL, prev = -1;
	size_t sp = 0, i;
	bool open = false, need_slices = false;
	int ret;

	need_slices = r->syncs != NULL;	/* ij_syncs_resolve() reads them sorted */
	for (i = 0; i < r->nfl && !need_slices; i++)
		need_slices = r->fl[i].bind != BIND_DIRECT;
	if (need_slices) {
		struct ij_slice *tmp = tc_xmalloc((r->nsl / 2 + 1) * sizeof(*tmp));

		slice_sort(r->sl, tmp, r->nsl);
		free(tmp);
		stack = tc_xmalloc(r->nsl * sizeof(*stack) + 1);
	}
	for (i = 0; need_slices && i < r->nsl; i++) {
		if (i == 0 || r->sl[i].unit != r->sl[i - 1].unit)
			sp = 0;
		while (sp && r->sl[stack[sp - 1]].end <= r->sl[i].ts &&
		       !(r->sl[stack[sp - 1]].end == r->sl[i].ts &&
			 r->sl[stack[sp - 1]].ts == r->sl[i].ts))
			sp--;
		r->sl[i].parent = sp ? stack[sp - 1] : -1;
		stack[sp++] = (int64_t)i;
	}
	free(stack);
	for (i = 0; i < r->nfl; i++) {
		struct jflow *f = &r->fl[i];
		int64_t sync;

		/* a launch flow into a synchronisation: to its own lane's slice */
		if (r->syncs && f->phase == FL_END && r->lcorr[f->ident] >= 0 &&
		    (sync = ij_syncs_by_corr(r->syncs, r->lcorr[f->ident])) > 0)
			f->seq = sync;
		else
			f->seq = bind_flow(r, f);
	}
	if (r->nfl) {
		struct jflow *tmp = tc_xmalloc((r->nfl / 2 + 1) * sizeof(*tmp));

		flow_sort(r->fl, tmp, r->nfl);
		free(tmp);
	}
	for (i = 0; i < r->nfl; i++) {
		const struct jflow *f = &r->fl[i];

		if (i == 0 || f->ident != r->fl[i - 1].ident) {
			if (open)
				st_writer_count_unmatched(r->w);	/* s without f */
			open = false;
		}
		if (f->phase == FL_BEGIN) {
			if (open)
				st_writer_count_unmatched(r->w);
			open = true;
			prev = f->seq;
			continue;
		}
		if (!open) {
			st_writer_count_unmatched(r->w);	/* f (or t) without s */
			continue;
		}
		if (prev > 0 && f->seq > 0) {
			if (prev != f->seq) {
				ret = st_edge_add(r->w, prev, f->seq, r->lkinds[f->ident],
						  r->labels[f->ident]);
				if (ret < 0)
					return tc_err_set(r->err, ret, "%s: writing a flow edge "
							  "failed", r->name);
				if (r->syncs && r->lcorr[f->ident] >= 0)
					ij_syncs_launch(r->syncs, prev, f->seq, r->lcorr[f->ident]);
			}
		} else {
			st_writer_count_unmatched(r->w);	/* an end bound to no slice */
		}
		prev = f->seq;
		if (f->phase == FL_END)
			open = false;
	}
	if (open)
		st_writer_count_unmatched(r->w);
	return 0;
}

/* "GPU 3", "MTIA 17": the word and a number. */
static bool
label_is(const char *s, const char *word)
{
	size_t n = strlen(word);

	if (!s || strncmp(s, word, n) || s[n] != ' ' || s[n + 1] < '0' || s[n + 1] > '9')
		return false;
	for (s += n + 1; *s >= '0' && *s <= '9'; s++)
		;
	return *s == '\0';
}

static void
finish_names(struct jreader *r)
{
	size_t i;

	for (i = 0; i < r->ndevs; i++) {
		struct jdev *d = &r->devs[i];
		int kind = ST_DEV_PROCESS;
		char *name = NULL;

		if (!d->id)
			continue;
		if (label_is(d->label, "GPU") || label_is(d->name, "GPU") ||
		    (d->gpu_cat && d->pid_int && d->pidnum >= 0 && d->pidnum < 4096)) {
			kind = ST_DEV_GPU;
			name = label_is(d->label, "GPU") ? tc_xstrdup(d->label) :
			       label_is(d->name, "GPU") ? tc_xstrdup(d->name) :
			       tc_xasprintf("GPU %s", d->pid);
		} else if ((d->label && !label_is(d->label, "CPU") && d->label[0] &&
			    strchr(d->label, ' ') && d->label[strlen(d->label) - 1] >= '0' &&
			    d->label[strlen(d->label) - 1] <= '9' && d->pid_int &&
			    d->pidnum >= 0 && d->pidnum < 4096) ||
			   (d->accel_cat && d->pid_int && d->pidnum >= 0 && d->pidnum < 4096)) {
			kind = ST_DEV_ACCEL;
			name = d->label ? tc_xstrdup(d->label) : tc_xasprintf("accelerator %s",
									      d->pid);
		} else if (d->name) {
			name = tc_xstrdup(d->name);
		}
		d->kind = kind;
		st_device_set_kind(r->w, d->id, kind);
		if (name)
			st_device_set_name(r->w, d->id, name);
		if (kind != ST_DEV_PROCESS && d->name && (!name || strcmp(d->name, name)))
			st_device_set_label(r->w, d->id, d->name);
		else if (kind == ST_DEV_PROCESS && d->label)
			st_device_set_label(r->w, d->id, d->label);
		if (d->has_sort)
			st_device_set_sort(r->w, d->id, d->sort);
		free(name);
	}
	for (i = 0; i < r->nthr; i++) {
		struct jthread *t = &r->thr[i];
		const struct jdev *d = &r->devs[t->dev];
		bool gpu;

		if (!t->unit)
			continue;
		/* the threads of a GPU or accelerator are its streams, whichever rule found it */
		gpu = d->id && (d->kind == ST_DEV_GPU || d->kind == ST_DEV_ACCEL);
		if (gpu) {
			st_unit_set_kind(r->w, t->unit, ST_UNIT_STREAM);
			if (!t->name && t->tid_int) {
				char *n = tc_xasprintf("stream %s", t->tid);

				st_unit_set_name(r->w, t->unit, n);
				free(n);
			}
		} else if (!d->pid_int && !t->tid_int) {
			/*
			 * Named on both levels ("Traces" / "PyTorch Profiler",
			 * Kineto's profiler spans): a lane, not an OS thread, so
			 * no program order.  A named process with numeric
			 * thread ids ("CPU functions", torch 1.13) keeps them.
			 */
			st_unit_set_kind(r->w, t->unit, ST_UNIT_TRACK);
		}
		if (t->name)
			st_unit_set_name(r->w, t->unit, t->name);
		if (t->has_sort)
			st_unit_set_sort(r->w, t->unit, t->sort);
	}
}

static void
reader_free(struct jreader *r)
{
	size_t i, j;

	for (i = 0; i < r->ndevs; i++) {
		free(r->devs[i].pid);
		free(r->devs[i].name);
		free(r->devs[i].label);
	}
	for (i = 0; i < r->nthr; i++) {
		for (j = 0; j < r->thr[i].open.n; j++)
			free(r->thr[i].open.v[j].args);
		free(r->thr[i].open.v);
		free(r->thr[i].tid);
		free(r->thr[i].name);
	}
	for (i = 0; i < r->nasync; i++) {
		for (j = 0; j < r->async[i].n; j++)
			free(r->async[i].v[j].args);
		free(r->async[i].v);
	}
	for (j = 0; j < r->unfinished.n; j++)
		free(r->unfinished.v[j].args);
	free(r->unfinished.v);
	free(r->labels);
	free(r->lkinds);
	free(r->lcorr);
	ij_syncs_free(r->syncs);
	free(r->devs);
	free(r->thr);
	free(r->async);
	free(r->sl);
	free(r->fl);
	jmap_free(&r->devmap);
	jmap_free(&r->thrmap);
	jmap_free(&r->unitmap);
	jmap_free(&r->asyncmap);
	jmap_free(&r->identmap);
	tc_arena_free(&r->names);
	for (i = 0; r->icache && i < JICACHE; i++)
		free(r->icache[i].s);
	free(r->icache);
	tc_buf_free(&r->last_key);
	tc_buf_free(&r->t1);
	tc_buf_free(&r->t2);
	tc_buf_free(&r->t3);
}

/* ---- reading ahead on a second thread ---- */

#define JFEED_BUFS 3		/* the one being scanned and two read ahead */
#define JFEED_MIN (8u << 20)	/* inputs smaller than this are read inline (gzip: 1/8) */

/*
 * The input, read (and inflated) by a thread of its own while the reader
 * scans the previous buffer: read(2)'s copy, or inflate() for a gzip'd
 * trace, then runs beside the parse.  Each buffer holds what one
 * tc_input_read() returned, so the reader sees the same pieces, the same
 * end and the same error as when it reads inline.  Without the thread
 * (small or unsized input, or pthread_create() failed) jfeed_next() reads
 * inline into buf[0].
 */
struct jfeed {
	struct tc_input *in;
	size_t chunk;
	bool thr_on;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf[JFEED_BUFS];
	long len[JFEED_BUFS];		/* what tc_input_read() returned into it */
	uint64_t raw_off[JFEED_BUFS];	/* tc_input_raw_offset() after it */
	unsigned filled, used;		/* buffers read / given back, counting up */
	bool quit;
	struct tc_err err;		/* the thread's read error */
};

static void *
jfeed_thread(void *arg)
{
	struct jfeed *f = arg;
	unsigned k;
	long got;

	tc_thread_name("json-read");
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->quit && f->filled - f->used >= JFEED_BUFS)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->quit)
			break;
		k = f->filled % JFEED_BUFS;
		pthread_mutex_unlock(&f->mu);
		got = tc_input_read(f->in, f->buf[k], f->chunk, &f->err);
		pthread_mutex_lock(&f->mu);
		f->len[k] = got;
		f->raw_off[k] = tc_input_raw_offset(f->in);
		f->filled++;
		pthread_cond_broadcast(&f->cv);
		if (got <= 0)
			break;	/* the end, or an error: nothing more to read */
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/*
 * Start reading @in in @chunk-byte pieces; @thread: 1 on a thread, 0
 * inline, -1 on a thread when the input is big enough to gain from it.
 */
static void
jfeed_start(struct jfeed *f, struct tc_input *in, size_t chunk, int thread)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->in = in;
	f->chunk = chunk;
	if (thread < 0)
		thread = tc_input_raw_size(in) * (tc_input_is_gzip(in) ? 8 : 1) >= JFEED_MIN;
	f->buf[0] = tc_xmalloc(chunk);
	if (!thread)
		return;
	for (i = 1; i < JFEED_BUFS; i++)
		f->buf[i] = tc_xmalloc(chunk);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->thr_on = pthread_create(&f->thr, NULL, jfeed_thread, f) == 0;
	if (!f->thr_on) {
		pthread_cond_destroy(&f->cv);
		pthread_mutex_destroy(&f->mu);
	}
}

/*
 * The next piece of input in *@p: its length, 0 at the end, or -errno with
 * @err set.  Hand it back with jfeed_done() before asking for the next.
 * @raw_off: out, the input's raw offset after it (for progress).
 */
static long
jfeed_next(struct jfeed *f, const char **p, uint64_t *raw_off, struct tc_err *err)
{
	unsigned k;
	long got;

	if (!f->thr_on) {
		got = tc_input_read(f->in, f->buf[0], f->chunk, err);
		*p = f->buf[0];
		*raw_off = tc_input_raw_offset(f->in);
		return got;
	}
	pthread_mutex_lock(&f->mu);
	while (f->filled == f->used)
		pthread_cond_wait(&f->cv, &f->mu);
	k = f->used % JFEED_BUFS;
	got = f->len[k];
	*p = f->buf[k];
	*raw_off = f->raw_off[k];
	pthread_mutex_unlock(&f->mu);
	if (got < 0 && err && !err->code)
		*err = f->err;
	return got;
}

static void
jfeed_done(struct jfeed *f)
{
	if (!f->thr_on)
		return;
	pthread_mutex_lock(&f->mu);
	f->used++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Stop the thread (it finishes the read it is in) and free the buffers. */
static void
jfeed_stop(struct jfeed *f)
{
	size_t i;

	if (f->thr_on) {
		pthread_mutex_lock(&f->mu);
		f->quit = true;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
		pthread_join(f->thr, NULL);
		pthread_cond_destroy(&f->cv);
		pthread_mutex_destroy(&f->mu);
		f->thr_on = false;
	}
	for (i = 0; i < JFEED_BUFS; i++)
		free(f->buf[i]);
	memset(f->buf, 0, sizeof(f->buf));
}

static const struct ij_scan_ops scan_ops = {
	.event = on_event,
	.meta = on_meta,
	.event_at = on_event_at,
};

int
ing_json_read(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
	      struct tc_err *err)
{
	return ing_json_read_chunks(w, in, opts, CHUNK, -1, err);
}

int
ing_json_read_chunks(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
		     size_t chunk, int thread, struct tc_err *err)
{
	struct jreader r;
	struct ij_scan scan;
	struct jfeed feed;
	const char *p;
	uint64_t raw_size = tc_input_raw_size(in), raw_off;
	long got;
	size_t i;
	int ret = 0;

	memset(&r, 0, sizeof(r));
	r.w = w;
	r.in = in;
	r.opts = opts;
	r.name = tc_input_name(in);
	r.err = err;
	r.last_thr = -1;
	r.ts_offset = opts ? opts->ts_offset_ns : 0;
	tc_buf_init(&r.last_key);
	tc_buf_init(&r.t1);
	tc_buf_init(&r.t2);
	tc_buf_init(&r.t3);
	tc_arena_init(&r.names, 64 << 10);
	r.icache = tc_xcalloc(JICACHE, sizeof(*r.icache));
	r.identmap.arena = &r.names;
	ij_scan_init(&scan, &scan_ops, &r, r.name);

	jfeed_start(&feed, in, chunk ? chunk : CHUNK, thread);
	for (;;) {
		got = jfeed_next(&feed, &p, &raw_off, err);
		if (got < 0) {
			ret = (int)got;
			goto out;
		}
		if (got == 0)
			break;
		ret = ij_scan_feed(&scan, p, (size_t)got, err);
		jfeed_done(&feed);
		if (ret)
			goto out;
		if (opts && opts->progress && raw_size &&
		    opts->progress(opts->ctx, TC_MIN(1.0, (double)raw_off / (double)raw_size)) < 0) {
			ret = tc_err_set(err, -ECANCELED, "%s: " ST_CANCELLED, r.name);
			goto out;
		}
	}
	jfeed_stop(&feed);
	ret = ij_scan_end(&scan, err);
	if (ret)
		goto out;
	for (i = 0; i < r.nthr && !ret; i++)
		ret = close_all(&r, &r.thr[i].open);
	for (i = 0; i < r.nasync && !ret; i++)
		ret = close_all(&r, &r.async[i]);
	if (!ret)
		ret = close_all(&r, &r.unfinished);
	if (ret)
		goto out;
	if (!r.good) {
		if (r.bad)
			ret = tc_err_set(err, -EINVAL, "%s: all %llu events are bad; first: %s",
					 r.name, (unsigned long long)r.bad, r.first_bad);
		else
			ret = tc_err_set(err, -EINVAL, "%s: byte %llu: not a trace: no timed "
					 "events among %llu", r.name,
					 (unsigned long long)scan.off,
					 (unsigned long long)scan.events);
		goto out;
	}
	ret = resolve_flows(&r);
	if (ret)
		goto out;
	if (r.syncs) {
		static const struct ij_sync_ops sync_ops = { .stream_units = sync_stream_units };

		ret = ij_syncs_resolve(r.syncs, r.sl, r.nsl, &sync_ops, &r, w);
		if (ret) {
			ret = tc_err_set(err, ret, "%s: writing a synchronisation edge failed",
					 r.name);
			goto out;
		}
	}
	finish_names(&r);
	st_writer_set_meta(w, "format", "json");
	if (opts && opts->progress)
		opts->progress(opts->ctx, 1.0);
out:
	jfeed_stop(&feed);
	ij_scan_free(&scan);
	reader_free(&r);
	return ret;
}
