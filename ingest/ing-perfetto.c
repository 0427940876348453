/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-perfetto.c - the Perfetto protobuf reader.  Streams a Trace
 * (0x0A <varint len> <TracePacket> ...) packet by packet from a tc_input, so
 * memory stays bounded by the largest packet plus the open slices, and maps
 * tracks to units, processes to devices, TrackEvents to events and flow ids
 * to flow edges.  Semantics follow Perfetto's trace processor; see
 * docs/perfetto-ingest.md for what is kept and what is skipped.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <zlib.h>
#include "common/tc-json.h"
#include "common/tc-jw.h"
#include "common/tc-sort.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/perfetto-int.h"

typedef Perfetto__Protos__TracePacket PfPacket;
typedef Perfetto__Protos__TrackEvent PfEvent;
typedef Perfetto__Protos__TrackEvent__LegacyEvent PfLegacy;
typedef Perfetto__Protos__TrackDescriptor PfTrackDesc;
typedef Perfetto__Protos__DebugAnnotation PfAnnot;

#define PF_CLOCK_BOOTTIME 6
#define PF_SEQ_CLOCK_MIN 64
#define PF_SEQ_CLOCK_MAX 127
#define PF_SEQ_CLEARED 1
#define PF_SEQ_NEEDS_STATE 2
#define PF_MAX_DEPTH 4		/* compressed_packets inside compressed_packets */
#define PF_TCACHE_BITS 8	/* track cache: 256 slots */
#define PF_NO_ID UINT64_MAX	/* pf_seq.cat_ids: look it up again */

enum { PF_TE_UNSPEC, PF_TE_BEGIN, PF_TE_END, PF_TE_INSTANT, PF_TE_COUNTER };
enum { PF_FLOW_IN = 1, PF_FLOW_OUT = 2, PF_FLOW_INOUT = 3 };
enum { PF_TRK_GLOBAL, PF_TRK_PROCESS, PF_TRK_THREAD, PF_TRK_COUNTER, PF_TRK_NAMED };

/* Synthetic track uuids (never seen in real traces: top bits set). */
#define PF_UUID_THREAD(pid, tid) \
	(0xF100000000000000ULL ^ ((uint64_t)(uint32_t)(pid) << 28) ^ (uint64_t)(tid))
#define PF_UUID_TCOUNTER(pid, tid, k) \
	(0xF300000000000000ULL ^ ((uint64_t)(k) << 52) ^ ((uint64_t)(uint32_t)(pid) << 28) ^ \
	 (uint64_t)(tid))
#define PF_UUID_ASYNC(pid, id) \
	(0xF200000000000000ULL ^ ((uint64_t)(uint32_t)(pid) << 32) ^ (uint64_t)(id))

struct pf_clock {
	bool known;
	bool incremental;
	int64_t mult;		/* ns per unit */
	int64_t last_ns;	/* incremental clocks: current value in ns */
	int64_t offset;		/* trace time = clock ns + offset */
};

/* An event's args text: borrowed, from pf_args() until its next call. */
struct pf_argtxt {
	const char *text;	/* JSON object text, NUL-terminated, or NULL */
	size_t len;
	int access;		/* a top-level access-set key (1) or not (0); -1: not
				 * looked at, the store looks (st_event.args_scanned) */
};

/* One open slice on a track, waiting for its end. */
struct pf_open {
	int64_t ts;
	uint32_t name, cat;
	char *args;		/* owned: a copy of the begin's args text */
	size_t args_len;
	int access;		/* struct pf_argtxt's */
	uint64_t handle;	/* flow handle, 0 until a flow needs it */
};

struct pf_track {
	uint64_t uuid, parent;
	bool has_parent;
	int kind;
	int64_t pid, tid;
	bool has_pid;
	char *name;
	int64_t sort;
	bool has_sort;
	int nx_kind;		/* our export's unit kind + 1, 0: none */
	bool nx_over;		/* our export's "(overlaps)" track: its parent's unit */
	/* counters */
	int ctype;
	int64_t mult;
	bool incremental;
	double inc_value;
	uint64_t inc_gen;	/* sequence generation the running sum belongs to */
	/* store */
	int unit;
	struct pf_open *open;
	size_t nopen, capopen;
};

struct pf_proc {
	char *name;
	char *label;		/* process_labels joined, kept until the device exists */
	int dev;
	int64_t sort;
	bool has_sort;
};

struct pf_seq {
	uint32_t id;
	uint64_t gen;		/* bumped on every incremental-state clear */
	bool valid;
	struct pf_map names;	/* iid -> st string id */
	struct pf_map cats;	/* iid -> char * */
	struct pf_map cat_ids;	/* iid -> st string id of cats' entry, once used */
	struct pf_map dnames;	/* iid -> char * */
	struct pf_map dvals;	/* iid -> char * */
	bool has_def_track;
	uint64_t def_track;
	uint32_t def_clock;
	uint64_t *def_extra, *def_dextra;
	size_t n_def_extra, n_def_dextra;
	bool has_thread;
	int64_t pid, tid;
	int64_t legacy_ref_us;
	int64_t legacy_tt_us, legacy_ic;	/* thread time / instruction count bases */
	int64_t last_ts;
	struct pf_clock clocks[PF_SEQ_CLOCK_MAX - PF_SEQ_CLOCK_MIN + 1];
};

struct pf_edge {
	uint64_t src, dst;	/* flow handles */
	uint64_t id;
};

struct pf_flowop {
	int64_t ts;
	uint64_t order;		/* file order, to keep the sort stable */
	uint64_t id;
	uint64_t handle;
	int op;
};

struct pf_ctx {
	struct st_writer *w;
	const struct ing_opts *opts;
	struct tc_input *in;
	const char *name;
	struct tc_err *err;
	/* one arena per compressed_packets nesting level: a nested packet must
	 * not release the memory of the packet that holds it */
	struct tc_arena arena[PF_MAX_DEPTH + 1];
	ProtobufCAllocator alloc[PF_MAX_DEPTH + 1];

	struct pf_map seqs;	/* seq id -> struct pf_seq * */
	struct pf_seq *seq_last;	/* the last one pf_seq_get() gave */
	struct pf_map tracks;	/* uuid -> struct pf_track * */
	/* direct-mapped cache in front of tracks (tracks live until the end) */
	struct pf_track *tcache[1 << PF_TCACHE_BITS];
	struct pf_map procs;	/* pid -> struct pf_proc * */
	struct pf_map flows;	/* flow id -> source handle (flow_ids, flow_ids_old) */
	struct pf_map lflows;	/* legacy bind id -> source handle */

	int primary_clock;
	struct pf_clock gclocks[PF_SEQ_CLOCK_MIN];

	int64_t *hseq;		/* flow handle -> store sequence number (0: not yet) */
	size_t nh, caph;
	struct pf_edge *edges;
	size_t nedges, capedges;
	struct pf_flowop *ops;
	size_t nops, capops;

	int global_dev;
	int64_t ts_offset;	/* ing_opts.ts_offset_ns */
	int64_t max_ts;
	uint64_t packets, skipped, events;
	uint64_t n_type[5];		/* TrackEvents by type */
	uint64_t n_phase[128];		/* untyped legacy events by phase */
	uint64_t n_end_unmatched;	/* SLICE_END with no open slice */
	uint64_t n_compressed;
	int depth;		/* compressed_packets nesting */
	struct tc_buf args;	/* pf_args() scratch */
	bool fast_real;		/* pf_args_probe() said yes */
	/* our own export (PF_NX_*): its edges come from nx.deps, not flows */
	bool nx;		/* an event with nx.id was seen */
	int64_t nx_id;		/* the current event's, -1 none */
	const char *nx_deps;	/* the current event's, NULL none */
	struct pf_nx *nxr;	/* noted ids and edges */
};

/* ---- small helpers ---- */

static void *
pf_alloc(void *data, size_t size)
{
	return tc_arena_alloc(data, size ? size : 1);
}

static void
pf_nofree(void *data, void *p)
{
}

static struct pf_seq *
pf_seq_get(struct pf_ctx *c, uint32_t id)
{
	bool created;
	uint64_t *slot;
	struct pf_seq *s;

	if (c->seq_last && c->seq_last->id == id)	/* runs of one sequence */
		return c->seq_last;
	slot = pf_map_slot(&c->seqs, id, &created);
	if (!created)
		return c->seq_last = (struct pf_seq *)(uintptr_t)*slot;
	s = tc_xcalloc(1, sizeof(*s));
	s->id = id;
	pf_map_init(&s->names);
	pf_map_init(&s->cats);
	pf_map_init(&s->cat_ids);
	pf_map_init(&s->dnames);
	pf_map_init(&s->dvals);
	*slot = (uintptr_t)s;
	c->seq_last = s;
	return s;
}

static void
pf_strmap_clear(struct pf_map *m)
{
	size_t i = 0;
	uint64_t k, v;

	while (pf_map_each(m, &i, &k, &v))
		free((void *)(uintptr_t)v);
	pf_map_clear(m);
}

static void
pf_seq_reset(struct pf_seq *s)
{
	/* Interned data and incremental counters restart; trace_packet_defaults
	 * stay until replaced (as in Perfetto's trace processor). */
	pf_map_clear(&s->names);
	pf_strmap_clear(&s->cats);
	pf_map_clear(&s->cat_ids);
	pf_strmap_clear(&s->dnames);
	pf_strmap_clear(&s->dvals);
	s->gen++;
	s->valid = true;
}

static void
pf_seq_free(struct pf_seq *s)
{
	pf_seq_reset(s);
	free(s->def_extra);
	free(s->def_dextra);
	pf_map_free(&s->names);
	pf_map_free(&s->cats);
	pf_map_free(&s->cat_ids);
	pf_map_free(&s->dnames);
	pf_map_free(&s->dvals);
	free(s);
}

/* The slot of @uuid in the track cache. */
static struct pf_track **
pf_track_cached(struct pf_ctx *c, uint64_t uuid)
{
	return &c->tcache[(uuid * 0x9E3779B97F4A7C15ULL) >> (64 - PF_TCACHE_BITS)];
}

/* The track @uuid, NULL when none was made. */
static struct pf_track *
pf_track_find(struct pf_ctx *c, uint64_t uuid)
{
	struct pf_track **ct = pf_track_cached(c, uuid);
	uint64_t v;

	if (*ct && (*ct)->uuid == uuid)
		return *ct;
	if (!pf_map_get(&c->tracks, uuid, &v))
		return NULL;
	return *ct = (struct pf_track *)(uintptr_t)v;
}

static struct pf_track *
pf_track_get(struct pf_ctx *c, uint64_t uuid, bool *created)
{
	struct pf_track *t = pf_track_find(c, uuid);

	if (created)
		*created = !t;
	if (t)
		return t;
	t = tc_xcalloc(1, sizeof(*t));
	t->uuid = uuid;
	t->kind = uuid ? PF_TRK_NAMED : PF_TRK_GLOBAL;
	*pf_map_slot(&c->tracks, uuid, NULL) = (uintptr_t)t;
	*pf_track_cached(c, uuid) = t;
	return t;
}

static struct pf_proc *
pf_proc_get(struct pf_ctx *c, int64_t pid)
{
	bool created;
	uint64_t *slot = pf_map_slot(&c->procs, (uint64_t)pid, &created);

	if (created)
		*slot = (uintptr_t)tc_xcalloc(1, sizeof(struct pf_proc));
	return (struct pf_proc *)(uintptr_t)*slot;
}

static void
pf_set_str(char **dst, const char *s)
{
	if (!s || (*dst && !strcmp(*dst, s)))
		return;
	free(*dst);
	*dst = tc_xstrdup(s);
}

static uint32_t
pf_intern(struct pf_ctx *c, const char *s)
{
	return s ? st_intern(c->w, s, strlen(s)) : 0;
}

/* ---- tracks, units and devices ---- */

/* The pid of the process a track belongs to (walking parent_uuid). */
static bool
pf_track_pid(struct pf_ctx *c, struct pf_track *t, int64_t *pid)
{
	int hops;

	for (hops = 0; t && hops < 64; hops++) {
		uint64_t v;

		if (t->has_pid) {
			*pid = t->pid;
			return true;
		}
		if (!t->has_parent || !pf_map_get(&c->tracks, t->parent, &v))
			return false;
		t = (struct pf_track *)(uintptr_t)v;
	}
	return false;
}

static int
pf_device_for(struct pf_ctx *c, struct pf_track *t)
{
	int64_t pid;
	struct pf_proc *p;
	char key[48], name[64];

	if (!pf_track_pid(c, t, &pid)) {
		if (!c->global_dev)
			c->global_dev = st_device(c->w, "global", ST_DEV_OTHER, "Global");
		return c->global_dev;
	}
	p = pf_proc_get(c, pid);
	if (!p->dev) {
		snprintf(key, sizeof(key), "pid:%" PRId64, pid);
		snprintf(name, sizeof(name), "Process %" PRId64, pid);
		p->dev = st_device(c->w, key, ST_DEV_PROCESS, p->name ? p->name : name);
		st_device_set_sort(c->w, p->dev, p->has_sort ? p->sort : pid);
		if (p->label)
			st_device_set_label(c->w, p->dev, p->label);
	}
	return p->dev;
}

static const char *
pf_track_name(struct pf_track *t, char *buf, size_t len)
{
	if (t->name)
		return t->name;
	switch (t->kind) {
	case PF_TRK_GLOBAL:
		return "Default Track";
	case PF_TRK_PROCESS:
		snprintf(buf, len, "Process %" PRId64, t->pid);
		return buf;
	case PF_TRK_THREAD:
		snprintf(buf, len, "Thread %" PRId64, t->tid);
		return buf;
	case PF_TRK_COUNTER:
		if (t->ctype == 1)
			return "thread_time";
		if (t->ctype == 2)
			return "thread_instruction_count";
		return "Counter";
	}
	snprintf(buf, len, "Track %" PRIu64, t->uuid);
	return buf;
}

static int
pf_unit_kind(struct pf_ctx *c, struct pf_track *t)
{
	int64_t pid;

	/* our export says what the unit was (an engine, a stream...) */
	if (t->nx_kind && t->kind != PF_TRK_COUNTER && t->nx_kind - 1 != ST_UNIT_COUNTER)
		return t->nx_kind - 1;
	switch (t->kind) {
	case PF_TRK_THREAD:
		return ST_UNIT_THREAD;
	case PF_TRK_COUNTER:
		return ST_UNIT_COUNTER;
	case PF_TRK_NAMED:
		return pf_track_pid(c, t, &pid) ? ST_UNIT_ASYNC : ST_UNIT_TRACK;
	}
	return ST_UNIT_TRACK;
}

static int
pf_unit_of(struct pf_ctx *c, struct pf_track *t)
{
	char key[64], buf[64];

	if (t->unit)
		return t->unit;
	if (t->nx_over && t->has_parent) {
		struct pf_track *p = pf_track_find(c, t->parent);

		if (p && !p->nx_over)
			return t->unit = pf_unit_of(c, p);
	}
	if (t->kind == PF_TRK_THREAD)
		snprintf(key, sizeof(key), "tid:%" PRId64, t->tid);
	else
		snprintf(key, sizeof(key), "uuid:%" PRIu64, t->uuid);
	t->unit = st_unit(c->w, pf_device_for(c, t), key, pf_unit_kind(c, t),
			  pf_track_name(t, buf, sizeof(buf)));
	if (t->has_sort)
		st_unit_set_sort(c->w, t->unit, t->sort);
	else if (t->kind == PF_TRK_THREAD)
		st_unit_set_sort(c->w, t->unit, t->tid);
	return t->unit;
}

static void
pf_process_desc(struct pf_ctx *c, const Perfetto__Protos__ProcessDescriptor *pd)
{
	struct pf_proc *p;
	const char *name = pd->process_name;

	if (!pd->has_pid)
		return;
	p = pf_proc_get(c, pd->pid);
	if (!name && pd->n_cmdline && pd->cmdline[0] && pd->cmdline[0][0])
		name = pd->cmdline[0];
	if (name && (!p->name || strcmp(p->name, name))) {
		pf_set_str(&p->name, name);
		if (p->dev)
			st_device_set_name(c->w, p->dev, name);
	}
	if (pd->has_legacy_sort_index) {
		p->sort = pd->legacy_sort_index;
		p->has_sort = true;
		if (p->dev)
			st_device_set_sort(c->w, p->dev, p->sort);
	}
	/* the descriptor most often comes before the process's first event */
	if (pd->n_process_labels) {
		struct tc_buf b;
		size_t i;

		tc_buf_init(&b);
		for (i = 0; i < pd->n_process_labels; i++)
			tc_buf_printf(&b, "%s%s", i ? ", " : "", pd->process_labels[i]);
		pf_set_str(&p->label, b.data);
		if (p->dev)
			st_device_set_label(c->w, p->dev, b.data);
		tc_buf_free(&b);
	}
}

static struct pf_track *
pf_thread_track(struct pf_ctx *c, int64_t pid, int64_t tid, const char *name)
{
	struct pf_track *t = pf_track_get(c, PF_UUID_THREAD(pid, tid), NULL);

	t->kind = PF_TRK_THREAD;
	t->pid = pid;
	t->tid = tid;
	t->has_pid = true;
	if (name && (!t->name || strcmp(t->name, name))) {
		pf_set_str(&t->name, name);
		if (t->unit)
			st_unit_set_name(c->w, t->unit, name);
	}
	return t;
}

static void
pf_track_desc(struct pf_ctx *c, const PfTrackDesc *d)
{
	struct pf_track *t;
	const char *name = d->name ? d->name : d->static_name;
	char buf[64];

	if (!d->has_uuid)
		return;
	t = pf_track_get(c, d->uuid, NULL);
	if (d->has_parent_uuid) {
		t->parent = d->parent_uuid;
		t->has_parent = d->parent_uuid != d->uuid;
	}
	if (d->process) {
		pf_process_desc(c, d->process);
		if (d->process->has_pid) {
			t->kind = PF_TRK_PROCESS;
			t->pid = d->process->pid;
			t->has_pid = true;
			if (!name)
				name = d->process->process_name;
		}
	}
	if (d->thread && d->thread->has_tid) {
		t->kind = PF_TRK_THREAD;
		t->tid = d->thread->tid;
		t->pid = d->thread->has_pid ? d->thread->pid : 0;
		t->has_pid = d->thread->has_pid;
		if (!name)
			name = d->thread->thread_name;
		if (d->thread->has_legacy_sort_index) {
			t->sort = d->thread->legacy_sort_index;
			t->has_sort = true;
		}
		/* the sequence-level thread track of the same thread shares its name */
		if (name && d->thread->has_pid)
			pf_thread_track(c, d->thread->pid, d->thread->tid, name);
	}
	if (d->counter) {
		const Perfetto__Protos__CounterDescriptor *cd = d->counter;

		t->kind = PF_TRK_COUNTER;
		t->ctype = cd->has_type ? cd->type : 0;
		t->mult = cd->has_unit_multiplier ? cd->unit_multiplier : 0;
		t->incremental = cd->has_is_incremental && cd->is_incremental;
	}
	if (d->has_sibling_order_rank) {
		t->sort = d->sibling_order_rank;
		t->has_sort = true;
	}
	if (d->description && !strcmp(d->description, PF_NX_OVER_DESC))
		t->nx_over = true;
	if (d->description && !strncmp(d->description, PF_NX_UNIT_DESC, strlen(PF_NX_UNIT_DESC))) {
		int k = st_unit_kind_parse(d->description + strlen(PF_NX_UNIT_DESC));

		t->nx_kind = k + 1;
		if (t->unit && k >= 0)
			st_unit_set_kind(c->w, t->unit, pf_unit_kind(c, t));
	}
	if (name && (!t->name || strcmp(t->name, name))) {
		pf_set_str(&t->name, name);
		if (t->unit)
			st_unit_set_name(c->w, t->unit, pf_track_name(t, buf, sizeof(buf)));
	}
}

/* ---- clocks ---- */

static struct pf_clock *
pf_clock_of(struct pf_ctx *c, struct pf_seq *s, uint32_t id)
{
	if (id >= PF_SEQ_CLOCK_MIN && id <= PF_SEQ_CLOCK_MAX)
		return &s->clocks[id - PF_SEQ_CLOCK_MIN];
	if (id < PF_SEQ_CLOCK_MIN)
		return &c->gclocks[id];
	return NULL;
}

/*
 * *@out = @ts * @mult + @add, in nanoseconds; false when that leaves the
 * 64-bit range (damaged or hostile input: the caller drops what it dates).
 */
static bool
pf_scale(uint64_t ts, int64_t mult, int64_t add, int64_t *out)
{
	int64_t ns;

	return !__builtin_mul_overflow((int64_t)ts, mult, &ns) &&
	       !__builtin_add_overflow(ns, add, out);
}

static void
pf_clock_snapshot(struct pf_ctx *c, struct pf_seq *s, const Perfetto__Protos__ClockSnapshot *cs)
{
	int64_t ref_ns = 0;
	bool have_ref = false;
	size_t i;

	/* The trace clock may only change before any event was placed on it. */
	if (cs->has_primary_trace_clock && cs->primary_trace_clock > 0 && !c->events)
		c->primary_clock = cs->primary_trace_clock;
	/* The reference point: the primary clock, else any clock already mapped. */
	for (i = 0; i < cs->n_clocks; i++) {
		const Perfetto__Protos__ClockSnapshot__Clock *k = cs->clocks[i];
		int64_t mult = k->has_unit_multiplier_ns && k->unit_multiplier_ns ?
			       (int64_t)k->unit_multiplier_ns : 1;

		if (k->clock_id == (uint32_t)c->primary_clock) {
			have_ref = pf_scale(k->timestamp, mult, 0, &ref_ns);
			break;
		}
	}
	for (i = 0; !have_ref && i < cs->n_clocks; i++) {
		const Perfetto__Protos__ClockSnapshot__Clock *k = cs->clocks[i];
		struct pf_clock *pc = pf_clock_of(c, s, k->clock_id);

		if (pc && pc->known && !pc->incremental)
			have_ref = pf_scale(k->timestamp, pc->mult, pc->offset, &ref_ns);
	}
	for (i = 0; i < cs->n_clocks; i++) {
		const Perfetto__Protos__ClockSnapshot__Clock *k = cs->clocks[i];
		struct pf_clock *pc = pf_clock_of(c, s, k->clock_id);
		int64_t mult = k->has_unit_multiplier_ns && k->unit_multiplier_ns ?
			       (int64_t)k->unit_multiplier_ns : 1;
		int64_t ns, offset;

		if (!pc || k->clock_id == (uint32_t)c->primary_clock ||
		    !pf_scale(k->timestamp, mult, 0, &ns))
			continue;	/* a time out of range relates nothing */
		if (!have_ref) {	/* nothing to relate it to: use it as trace time */
			ref_ns = ns;
			have_ref = true;
		}
		if (__builtin_sub_overflow(ref_ns, ns, &offset))
			continue;
		pc->known = true;
		pc->incremental = k->has_is_incremental && k->is_incremental;
		pc->mult = mult;
		pc->last_ns = ns;
		pc->offset = offset;
	}
}

/*
 * Convert a packet timestamp on @clock to trace time.  Return: 0, -ENOENT
 * when the clock is unknown, -ERANGE when the time leaves the 64-bit range.
 */
static int
pf_to_trace(struct pf_ctx *c, struct pf_seq *s, uint32_t clock, uint64_t ts, int64_t *out)
{
	struct pf_clock *pc;
	int64_t last;

	if (!clock || clock == (uint32_t)c->primary_clock) {
		*out = (int64_t)ts;
		return 0;
	}
	pc = pf_clock_of(c, s, clock);
	if (!pc || !pc->known) {
		if (clock >= PF_SEQ_CLOCK_MIN)
			return -ENOENT;
		*out = (int64_t)ts;	/* a builtin clock never snapshotted: take as is */
		return 0;
	}
	if (!pc->incremental)
		return pf_scale(ts, pc->mult, pc->offset, out) ? 0 : -ERANGE;
	if (!pf_scale(ts, pc->mult, pc->last_ns, &last) ||
	    __builtin_add_overflow(last, pc->offset, out))
		return -ERANGE;
	pc->last_ns = last;
	return 0;
}

/* ---- interning ---- */

static void
pf_strmap_put(struct pf_map *m, uint64_t iid, const char *s, size_t len)
{
	uint64_t *slot = pf_map_slot(m, iid, NULL);

	free((void *)(uintptr_t)*slot);
	*slot = (uintptr_t)tc_xstrndup(s ? s : "", s ? len : 0);
}

static const char *
pf_strmap_get(const struct pf_map *m, uint64_t iid)
{
	uint64_t v;

	return pf_map_get(m, iid, &v) ? (const char *)(uintptr_t)v : NULL;
}

static void
pf_interned(struct pf_ctx *c, struct pf_seq *s, const Perfetto__Protos__InternedData *d)
{
	size_t i;

	for (i = 0; i < d->n_event_names; i++) {
		const char *n = d->event_names[i]->name;

		*pf_map_slot(&s->names, d->event_names[i]->iid, NULL) = pf_intern(c, n ? n : "");
	}
	for (i = 0; i < d->n_event_categories; i++) {
		const char *n = d->event_categories[i]->name;
		uint64_t iid = d->event_categories[i]->iid, v;

		pf_strmap_put(&s->cats, iid, n, n ? strlen(n) : 0);
		if (pf_map_get(&s->cat_ids, iid, &v))	/* redefined: intern again */
			*pf_map_slot(&s->cat_ids, iid, NULL) = PF_NO_ID;
	}
	for (i = 0; i < d->n_debug_annotation_names; i++) {
		const char *n = d->debug_annotation_names[i]->name;

		pf_strmap_put(&s->dnames, d->debug_annotation_names[i]->iid, n, n ? strlen(n) : 0);
	}
	for (i = 0; i < d->n_debug_annotation_string_values; i++) {
		const Perfetto__Protos__InternedString *is = d->debug_annotation_string_values[i];

		pf_strmap_put(&s->dvals, is->iid, (const char *)is->str.data, is->str.len);
	}
}

/* ---- args ---- */

/*
 * Set @o's member @name to @v (a new reference).  Names are bytes, and
 * Jansson refuses a key that is not UTF-8: such a key gets U+FFFD for each
 * bad byte rather than the argument being dropped.
 */
static void
pf_set_arg(json_t *o, const char *name, json_t *v)
{
	json_t *k;

	if (!v)
		return;
	json_incref(v);		/* json_object_set_new() drops one on failure too */
	if (!json_object_set_new(o, name, v)) {
		json_decref(v);
		return;
	}
	k = tc_json_str(name);
	json_object_set_new(o, json_string_value(k), v);
	json_decref(k);
}

static json_t *
pf_annot_value(struct pf_seq *s, const PfAnnot *a, int depth)
{
	char buf[32];
	size_t i;

	if (depth > 32)
		return json_null();
	if (a->n_dict_entries) {
		json_t *o = json_object();

		for (i = 0; i < a->n_dict_entries; i++) {
			const PfAnnot *e = a->dict_entries[i];
			const char *n = e->name ? e->name :
					e->has_name_iid ? pf_strmap_get(&s->dnames, e->name_iid) : NULL;

			pf_set_arg(o, n ? n : "?", pf_annot_value(s, e, depth + 1));
		}
		return o;
	}
	if (a->n_array_values) {
		json_t *arr = json_array();

		for (i = 0; i < a->n_array_values; i++)
			json_array_append_new(arr, pf_annot_value(s, a->array_values[i], depth + 1));
		return arr;
	}
	if (a->has_bool_value)
		return json_boolean(a->bool_value);
	if (a->has_uint_value)
		return json_integer((json_int_t)a->uint_value);
	if (a->has_int_value)
		return json_integer(a->int_value);
	if (a->has_double_value)
		return json_real(a->double_value);
	if (a->string_value)
		return tc_json_str(a->string_value);
	if (a->has_string_value_iid)
		return tc_json_str(pf_strmap_get(&s->dvals, a->string_value_iid));
	if (a->has_pointer_value) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, a->pointer_value);
		return json_string(buf);
	}
	if (a->legacy_json_value) {
		json_t *v = json_loads(a->legacy_json_value, JSON_DECODE_ANY, NULL);

		return v ? v : tc_json_str(a->legacy_json_value);
	}
	return json_null();
}

/* Whether annotation name @n is one our export adds (PF_NX_*): not an arg. */
static inline bool
pf_nx_name(const char *n)
{
	return n && n[0] == 'n' && n[1] == 'x' && n[2] == '.' &&
	       (!strcmp(n, PF_NX_ID) || !strcmp(n, PF_NX_DEPS));
}

/*
 * The debug annotations as a JSON object text (malloc'd), NULL when none,
 * built with jansson: the reference for pf_args_fast(), and what takes the
 * annotations it does not.
 */
static char *
pf_args_json(struct pf_seq *s, const PfEvent *te)
{
	json_t *o;
	char *txt;
	size_t i;

	o = json_object();
	for (i = 0; i < te->n_debug_annotations; i++) {
		const PfAnnot *a = te->debug_annotations[i];
		const char *n = a->name ? a->name :
				a->has_name_iid ? pf_strmap_get(&s->dnames, a->name_iid) : NULL;
		json_t *v;

		if (pf_nx_name(a->name))
			continue;
		v = pf_annot_value(s, a, 0);
		if (!v)
			continue;
		pf_set_arg(o, n ? n : "arg", v);
	}
	txt = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	return txt;
}

/*
 * @str as a JSON string the way json_dumps(JSON_ENSURE_ASCII) writes it,
 * appended to @b; false when it holds a byte >= 0x80 (UTF-8 validation and
 * \u escapes are left to jansson).
 */
static bool
pf_json_str(struct tc_buf *b, const char *str)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(str);
	/* the most it can take: every byte as \u00XX, and the quotes */
	char *o0 = tc_buf_room(b, 6 * n + 2), *o = o0;
	const unsigned char *p = (const unsigned char *)str, *end = p + n;

	*o++ = '"';
	/* 8 bytes at a time while none needs an escape or is >= 0x80 */
	while (end - p >= 8) {
		const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
		uint64_t w, q, bs;

		memcpy(&w, p, 8);
		q = w ^ (ones * '"');
		bs = w ^ (ones * '\\');
		if ((w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs)
			break;
		memcpy(o, p, 8);
		o += 8;
		p += 8;
	}
	for (; p < end; p++) {
		unsigned char c = *p;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			*o++ = (char)c;
			continue;
		}
		if (c >= 0x80)
			return false;	/* nothing committed */
		*o++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*o++ = (char)c;
			break;
		case '\b':
			*o++ = 'b';
			break;
		case '\f':
			*o++ = 'f';
			break;
		case '\n':
			*o++ = 'n';
			break;
		case '\r':
			*o++ = 'r';
			break;
		case '\t':
			*o++ = 't';
			break;
		default:
			memcpy(o, "u00", 3);
			o[3] = hex[c >> 4];
			o[4] = hex[c & 15];
			o += 5;
			break;
		}
	}
	*o++ = '"';
	tc_buf_commit(b, (size_t)(o - o0));
	return true;
}

static void
pf_json_int(struct tc_buf *b, int64_t v)
{
	char buf[24];

	tc_buf_add(b, buf, (size_t)tc_i64_text(buf, v));
}

/* A finite double as jansson writes it (tc_real_text()); pf_args_probe()
 * checks that the jansson we run with agrees before pf_args_fast() relies
 * on it. */
static void
pf_json_real(struct tc_buf *b, double v)
{
	char buf[TC_REAL_TEXT_MAX];

	tc_buf_add(b, buf, (size_t)tc_real_text(buf, v));
}

/* Whether pf_json_real() (@real) or pf_json_int() writes @v as jansson does. */
static bool
pf_args_same(double v, bool real)
{
	json_t *j = real ? json_real(v) : json_integer((json_int_t)v);
	char *txt = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII);
	struct tc_buf b;
	bool same;

	tc_buf_init(&b);
	if (real)
		pf_json_real(&b, v);
	else
		pf_json_int(&b, (int64_t)v);
	same = txt && b.data && !strcmp(txt, b.data);
	tc_buf_free(&b);
	free(txt);
	json_decref(j);
	return same;
}

/* Whether pf_json_int/pf_json_real write what the jansson we run with writes. */
static bool
pf_args_probe(void)
{
	static const double v[] = { 0.0, -0.0, 1.0, -2.5, 0.1, 48.211, 1275.5, 1e20, 1e-5,
				    1.5e300, -3.25e-300, 123456789012345680.0, 1.0 / 3.0,
				    1275.0, -1025.0, 999999999999999.0, 1e15, -1e15 };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!pf_args_same(v[i], true))
			return false;
	return pf_args_same(-1025.0, false) && pf_args_same(4294967296.0, false);
}

/*
 * The debug annotations' JSON object text into @b without building jansson
 * values, byte for byte what pf_args_json() gives, for flat annotations
 * with distinct ASCII names and scalar values (bool, int, uint, double,
 * string, interned string, pointer).  Return: false when the annotations
 * need pf_args_json() (nested dicts or arrays, legacy JSON, non-ASCII text,
 * repeated names, non-finite doubles, doubles when @fast_real is false).
 * *@access (0 on entry) becomes 1 when a name is an access-set key.
 */
static bool
pf_args_fast(struct pf_seq *s, const PfEvent *te, bool fast_real, struct tc_buf *b,
	     int *access)
{
	const char *names[16];
	size_t i, j, m = 0;

	if (te->n_debug_annotations > sizeof(names) / sizeof(names[0]))
		return false;
	tc_buf_addc(b, '{');
	for (i = 0; i < te->n_debug_annotations; i++) {
		const PfAnnot *a = te->debug_annotations[i];
		const char *n = a->name ? a->name :
				a->has_name_iid ? pf_strmap_get(&s->dnames, a->name_iid) : NULL;

		if (pf_nx_name(a->name))
			continue;
		if (a->n_dict_entries || a->n_array_values)
			return false;
		names[m] = n ? n : "arg";
		for (j = 0; j < m; j++)
			if (!strcmp(names[j], names[m]))
				return false;	/* jansson keeps the first place, the last value */
		if (m++)
			tc_buf_addc(b, ',');
		if (!pf_json_str(b, names[m - 1]))
			return false;
		if (!*access && st_access_key(names[m - 1], strlen(names[m - 1])))
			*access = 1;
		tc_buf_addc(b, ':');
		if (a->has_bool_value) {
			tc_buf_adds(b, a->bool_value ? "true" : "false");
		} else if (a->has_uint_value) {
			pf_json_int(b, (int64_t)a->uint_value);
		} else if (a->has_int_value) {
			pf_json_int(b, a->int_value);
		} else if (a->has_double_value) {
			if (!fast_real || !isfinite(a->double_value))
				return false;	/* jansson drops NaN and infinities */
			pf_json_real(b, a->double_value);
		} else if (a->string_value) {
			if (!pf_json_str(b, a->string_value))
				return false;
		} else if (a->has_string_value_iid) {
			const char *v = pf_strmap_get(&s->dvals, a->string_value_iid);

			if (!v)
				tc_buf_adds(b, "null");
			else if (!pf_json_str(b, v))
				return false;
		} else if (a->has_pointer_value) {
			tc_buf_printf(b, "\"0x%" PRIx64 "\"", a->pointer_value);
		} else if (a->legacy_json_value) {
			return false;
		} else {
			tc_buf_adds(b, "null");
		}
	}
	tc_buf_addc(b, '}');
	return true;
}

/*
 * The debug annotations as a JSON object text into *@at, borrowed from
 * c->args until the next call (text NULL when there are none), with
 * whether a top-level name is an access-set key when the fast writer knew.
 * Return: @at.
 */
static const struct pf_argtxt *
pf_args(struct pf_ctx *c, struct pf_seq *s, const PfEvent *te, struct pf_argtxt *at)
{
	char *txt;

	at->text = NULL;
	at->len = 0;
	at->access = 0;
	if (!te->n_debug_annotations)
		return at;
	tc_buf_reset(&c->args);
	if (!pf_args_fast(s, te, c->fast_real, &c->args, &at->access)) {
		at->access = -1;
		tc_buf_reset(&c->args);
		txt = pf_args_json(s, te);
		if (txt)
			tc_buf_adds(&c->args, txt);
		free(txt);
	}
	if (c->args.len <= 2)	/* "{}": only our nx.* annotations */
		return at;
	tc_buf_addc(&c->args, 0);
	at->text = c->args.data;
	at->len = c->args.len - 1;
	return at;
}

/* ---- events and flows ---- */

static uint64_t
pf_handle_new(struct pf_ctx *c, int64_t seq)
{
	if (c->nh == c->caph) {
		c->caph = c->caph ? c->caph * 2 : 1024;
		c->hseq = tc_xrealloc(c->hseq, c->caph * sizeof(*c->hseq));
		if (!c->nh)
			c->hseq[c->nh++] = 0;	/* handle 0 means "none" */
	}
	c->hseq[c->nh] = seq;
	return c->nh++;
}

static void
pf_edge_add(struct pf_ctx *c, uint64_t src, uint64_t dst, uint64_t id)
{
	if (!src || !dst || src == dst)
		return;
	if (c->nedges == c->capedges) {
		c->capedges = c->capedges ? c->capedges * 2 : 256;
		c->edges = tc_xrealloc(c->edges, c->capedges * sizeof(*c->edges));
	}
	c->edges[c->nedges].src = src;
	c->edges[c->nedges].dst = dst;
	c->edges[c->nedges].id = id;
	c->nedges++;
}

/*
 * The event a flow binds to: *@h is the handle of the current event (an
 * instant or complete slice, already added) or 0 with @open the open slice.
 */
struct pf_bind {
	uint64_t handle;
	struct pf_open *open;
};

static uint64_t
pf_bind_handle(struct pf_ctx *c, struct pf_bind *b)
{
	if (!b->handle && b->open) {
		if (!b->open->handle)
			b->open->handle = pf_handle_new(c, 0);
		b->handle = b->open->handle;
	}
	return b->handle;
}

/*
 * Flows are resolved in timestamp order, as Perfetto's trace processor does
 * after sorting: packets of different sequences interleave in file order.
 * Each flow reference is recorded as an op and replayed in pf_finish().
 */
enum { PF_OP_STEP, PF_OP_TERM, PF_OP_LOUT, PF_OP_LINOUT, PF_OP_LIN };

static void
pf_flow_op(struct pf_ctx *c, int op, uint64_t id, struct pf_bind *b, int64_t ts)
{
	uint64_t h;
	struct pf_flowop *o;

	if (c->nx)
		return;	/* our export: nx.deps has every edge, flows included */
	h = pf_bind_handle(c, b);
	if (!h)
		return;
	if (c->nops == c->capops) {
		c->capops = c->capops ? c->capops * 2 : 256;
		c->ops = tc_xrealloc(c->ops, c->capops * sizeof(*c->ops));
	}
	o = &c->ops[c->nops];
	o->ts = ts;
	o->order = c->nops++;
	o->id = id;
	o->handle = h;
	o->op = op;
}

/*
 * The current event's nx.id and nx.deps (our export), for pf_nx_event();
 * the first one switches the reader to our export's mode: the edges come
 * from nx.deps, the flow ids are left alone and nothing is derived again.
 */
static void
pf_nx_scan(struct pf_ctx *c, const PfEvent *te)
{
	c->nx_id = -1;
	c->nx_deps = NULL;
	for (size_t i = 0; i < te->n_debug_annotations; i++) {
		const PfAnnot *a = te->debug_annotations[i];

		if (!pf_nx_name(a->name))
			continue;
		if (!strcmp(a->name, PF_NX_ID) && a->has_int_value)
			c->nx_id = a->int_value;
		else if (!strcmp(a->name, PF_NX_DEPS) && a->legacy_json_value)
			c->nx_deps = a->legacy_json_value;
	}
	if (c->nx_id >= 0 && !c->nx) {
		c->nx = true;
		st_writer_edges_given(c->w);
	}
}

/* Note the current event's nx.id and nx.deps (our export) against its handle. */
static void
pf_nx_event(struct pf_ctx *c, struct pf_bind *b)
{
	pf_nx_note(&c->nxr, c->nx_id, pf_bind_handle(c, b), c->nx_deps);
	c->nx_id = -1;
	c->nx_deps = NULL;
}

static void
pf_flows(struct pf_ctx *c, const PfEvent *te, struct pf_bind *b, int64_t ts)
{
	const PfLegacy *le = te->legacy_event;
	size_t i;

	for (i = 0; i < te->n_flow_ids; i++)
		pf_flow_op(c, PF_OP_STEP, te->flow_ids[i], b, ts);
	for (i = 0; i < te->n_flow_ids_old; i++)
		pf_flow_op(c, PF_OP_STEP, te->flow_ids_old[i], b, ts);
	for (i = 0; i < te->n_terminating_flow_ids; i++)
		pf_flow_op(c, PF_OP_TERM, te->terminating_flow_ids[i], b, ts);
	for (i = 0; i < te->n_terminating_flow_ids_old; i++)
		pf_flow_op(c, PF_OP_TERM, te->terminating_flow_ids_old[i], b, ts);
	if (le && le->has_flow_direction) {
		uint64_t id = le->has_bind_id ? le->bind_id : le->has_unscoped_id ? le->unscoped_id :
			      le->has_global_id ? le->global_id : le->local_id;

		switch (le->flow_direction) {
		case PF_FLOW_OUT:
			pf_flow_op(c, PF_OP_LOUT, id, b, ts);
			break;
		case PF_FLOW_INOUT:
			pf_flow_op(c, PF_OP_LINOUT, id, b, ts);
			break;
		case PF_FLOW_IN:
			pf_flow_op(c, PF_OP_LIN, id, b, ts);
			break;
		}
	}
}

static inline bool
pf_op_less(const struct pf_flowop *x, const struct pf_flowop *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	return x->order < y->order;
}

TC_MSORT_DEFINE(pf_op_sort, struct pf_flowop, pf_op_less)

/*
 * flow_ids: the first event with an id starts the chain, each later one adds
 * the next hop; a terminating id ends the chain so the id can be reused.
 * Legacy bind ids: OUT starts, INOUT steps, IN binds without closing.
 */
static void
pf_flow_replay(struct pf_ctx *c)
{
	size_t i;

	if (c->nops) {
		struct pf_flowop *tmp = tc_xmalloc((c->nops / 2 + 1) * sizeof(*tmp));

		pf_op_sort(c->ops, tmp, c->nops);
		free(tmp);
	}
	for (i = 0; i < c->nops; i++) {
		const struct pf_flowop *o = &c->ops[i];
		struct pf_map *m = o->op <= PF_OP_TERM ? &c->flows : &c->lflows;
		uint64_t src = 0, *slot;
		bool have = pf_map_get(m, o->id, &src) && src;

		switch (o->op) {
		case PF_OP_STEP:
		case PF_OP_LINOUT:
			if (have)
				pf_edge_add(c, src, o->handle, o->id);
			slot = pf_map_slot(m, o->id, NULL);
			*slot = o->handle;
			break;
		case PF_OP_TERM:
			if (have)
				pf_edge_add(c, src, o->handle, o->id);
			if (have)
				*pf_map_slot(m, o->id, NULL) = 0;
			break;
		case PF_OP_LOUT:
			*pf_map_slot(m, o->id, NULL) = o->handle;
			break;
		case PF_OP_LIN:
			if (have)
				pf_edge_add(c, src, o->handle, o->id);
			break;
		}
	}
}

static int64_t
pf_add(struct pf_ctx *c, int unit, int kind, int64_t ts, int64_t dur, uint32_t name,
       uint32_t cat, double value, const char *args, size_t args_len, int access)
{
	struct st_event ev = {
		.unit = unit, .kind = kind, .dur = dur < 0 ? 0 : dur,
		.name = name, .cat = cat, .value = value, .args = args, .args_len = args_len,
		.args_scanned = access >= 0, .has_access = access > 0,
	};
	int64_t end, at_end;	/* in trace time, before the offset, and after it */

	if (__builtin_add_overflow(ts, c->ts_offset, &ev.ts) ||
	    __builtin_add_overflow(ts, ev.dur, &end) ||
	    __builtin_add_overflow(end, c->ts_offset, &at_end)) {
		st_writer_count_bad(c->w, "%s: event at %" PRId64 " ns lasting %" PRId64
				    " ns: out of the time range", c->name, ts, ev.dur);
		return 0;
	}
	if (end > c->max_ts)
		c->max_ts = end;
	c->events++;
	return st_event_add(c->w, &ev);
}

static void
pf_counter_value(struct pf_ctx *c, struct pf_seq *s, uint64_t uuid, double v, int64_t ts)
{
	struct pf_track *t = pf_track_find(c, uuid);

	if (!t) {
		st_writer_count_bad(c->w, "%s: counter value for undeclared track %" PRIu64,
				    c->name, uuid);
		return;
	}
	if (t->kind != PF_TRK_COUNTER) {
		st_writer_count_bad(c->w, "%s: counter value on non-counter track %" PRIu64,
				    c->name, uuid);
		return;
	}
	if (t->incremental) {
		uint64_t gen = ((uint64_t)s->id << 32) ^ s->gen;

		if (t->inc_gen != gen) {
			t->inc_gen = gen;
			t->inc_value = 0;
		}
		t->inc_value += v;
		v = t->inc_value;
	}
	if (t->mult)
		v *= (double)t->mult;
	pf_add(c, pf_unit_of(c, t), ST_EV_COUNTER, ts, 0, 0, 0, v, NULL, 0, 0);
}

static void
pf_extra_counters(struct pf_ctx *c, struct pf_seq *s, const PfEvent *te, int64_t ts)
{
	const uint64_t *uu;
	size_t n, i;

	uu = te->n_extra_counter_track_uuids ? te->extra_counter_track_uuids : s->def_extra;
	n = te->n_extra_counter_track_uuids ? te->n_extra_counter_track_uuids : s->n_def_extra;
	for (i = 0; i < te->n_extra_counter_values; i++) {
		if (i >= n) {
			st_writer_count_bad(c->w, "%s: extra_counter_values without a track", c->name);
			break;
		}
		pf_counter_value(c, s, uu[i], (double)te->extra_counter_values[i], ts);
	}
	uu = te->n_extra_double_counter_track_uuids ? te->extra_double_counter_track_uuids :
	     s->def_dextra;
	n = te->n_extra_double_counter_track_uuids ? te->n_extra_double_counter_track_uuids :
	    s->n_def_dextra;
	for (i = 0; i < te->n_extra_double_counter_values; i++) {
		if (i >= n) {
			st_writer_count_bad(c->w, "%s: extra_double_counter_values without a track",
					    c->name);
			break;
		}
		pf_counter_value(c, s, uu[i], te->extra_double_counter_values[i], ts);
	}
}

/*
 * Deprecated per-event thread time (µs) and instruction count: counters
 * "thread_time" (ns) and "thread_instruction_count" on the event's thread.
 */
static void
pf_legacy_thread_counters(struct pf_ctx *c, struct pf_seq *s, struct pf_track *thr,
			  const PfEvent *te, int64_t ts)
{
	static const char *const names[2] = { "thread_time", "thread_instruction_count" };
	bool has[2];
	int64_t v[2];
	int k;

	has[0] = te->has_thread_time_absolute_us || te->has_thread_time_delta_us;
	has[1] = te->has_thread_instruction_count_absolute || te->has_thread_instruction_count_delta;
	if ((!has[0] && !has[1]) || thr->kind != PF_TRK_THREAD)
		return;
	if (te->has_thread_time_absolute_us)
		v[0] = te->thread_time_absolute_us;
	else
		v[0] = s->legacy_tt_us += te->thread_time_delta_us;
	if (te->has_thread_instruction_count_absolute)
		v[1] = te->thread_instruction_count_absolute;
	else
		v[1] = s->legacy_ic += te->thread_instruction_count_delta;
	for (k = 0; k < 2; k++) {
		struct pf_track *t;
		bool created;

		if (!has[k])
			continue;
		t = pf_track_get(c, PF_UUID_TCOUNTER(thr->pid, thr->tid, k), &created);
		if (created) {
			t->kind = PF_TRK_COUNTER;
			t->ctype = k + 1;
			t->pid = thr->pid;
			t->has_pid = thr->has_pid;
			t->name = tc_xstrdup(names[k]);
		}
		pf_add(c, pf_unit_of(c, t), ST_EV_COUNTER, ts, 0, 0, 0,
		       (double)(k == 0 ? v[k] * 1000 : v[k]), NULL, 0, 0);
	}
}

static uint32_t
pf_event_cat(struct pf_ctx *c, struct pf_seq *s, const PfEvent *te)
{
	struct tc_buf b;
	uint32_t id;
	size_t i;

	if (te->n_categories == 1 && !te->n_category_iids)
		return pf_intern(c, te->categories[0]);
	if (!te->n_categories && te->n_category_iids == 1) {
		/* interned once per (sequence, iid), on first use */
		const char *n;
		uint64_t *slot, v;

		if (pf_map_get(&s->cat_ids, te->category_iids[0], &v) && v != PF_NO_ID)
			return (uint32_t)v;
		n = pf_strmap_get(&s->cats, te->category_iids[0]);
		if (!n)
			return 0;
		slot = pf_map_slot(&s->cat_ids, te->category_iids[0], NULL);
		*slot = pf_intern(c, n);
		return (uint32_t)*slot;
	}
	if (!te->n_categories && !te->n_category_iids)
		return 0;
	tc_buf_init(&b);
	for (i = 0; i < te->n_category_iids; i++) {
		const char *n = pf_strmap_get(&s->cats, te->category_iids[i]);

		if (n)
			tc_buf_printf(&b, "%s%s", b.len ? "," : "", n);
	}
	for (i = 0; i < te->n_categories; i++)
		tc_buf_printf(&b, "%s%s", b.len ? "," : "", te->categories[i]);
	id = st_intern(c->w, b.data ? b.data : "", b.len);
	tc_buf_free(&b);
	return id;
}

static void
pf_slice_end(struct pf_ctx *c, struct pf_track *t, const PfEvent *te, int64_t ts)
{
	struct pf_open *o;
	struct pf_bind b = { 0 };
	int64_t seq, dur;

	if (!t->nopen) {
		c->n_end_unmatched++;
		st_writer_count_unmatched(c->w);
		return;
	}
	o = &t->open[t->nopen - 1];
	if (te) {
		b.open = o;
		pf_flows(c, te, &b, ts);
	}
	if (__builtin_sub_overflow(ts, o->ts, &dur)) {
		st_writer_count_bad(c->w, "%s: slice from %" PRId64 " to %" PRId64
				    " ns: out of the time range", c->name, o->ts, ts);
		seq = 0;
	} else {
		seq = pf_add(c, pf_unit_of(c, t), ST_EV_SLICE, o->ts, dur, o->name, o->cat, 0,
			     o->args, o->args_len, o->access);
	}
	if (o->handle)
		c->hseq[o->handle] = seq;
	free(o->args);
	t->nopen--;
}

static void
pf_slice_begin(struct pf_ctx *c, struct pf_track *t, const PfEvent *te, int64_t ts,
	       uint32_t name, uint32_t cat, const struct pf_argtxt *at)
{
	struct pf_open *o;
	struct pf_bind b = { 0 };

	if (t->nopen == t->capopen) {
		t->capopen = t->capopen ? t->capopen * 2 : 8;
		t->open = tc_xrealloc(t->open, t->capopen * sizeof(*t->open));
	}
	o = &t->open[t->nopen++];
	o->ts = ts;
	o->name = name;
	o->cat = cat;
	o->args = at->text ? tc_xstrndup(at->text, at->len) : NULL;
	o->args_len = at->len;
	o->access = at->access;
	o->handle = 0;
	pf_unit_of(c, t);
	b.open = o;
	if (c->nx_id >= 0)
		pf_nx_event(c, &b);
	pf_flows(c, te, &b, ts);
}

/* An event added at once (instant, complete slice); flows bind to it. */
static void
pf_event_now(struct pf_ctx *c, struct pf_track *t, const PfEvent *te, int kind, int64_t ts,
	     int64_t dur, uint32_t name, uint32_t cat, const struct pf_argtxt *at)
{
	int64_t seq = pf_add(c, pf_unit_of(c, t), kind, ts, dur, name, cat, 0, at->text,
			     at->len, at->access);
	struct pf_bind b = { 0 };

	if (seq <= 0)
		return;
	if (c->nx_id >= 0 || te->n_flow_ids || te->n_flow_ids_old ||
	    te->n_terminating_flow_ids || te->n_terminating_flow_ids_old ||
	    (te->legacy_event && te->legacy_event->has_flow_direction)) {
		b.handle = pf_handle_new(c, seq);
		if (c->nx_id >= 0)
			pf_nx_event(c, &b);
		pf_flows(c, te, &b, ts);
	}
}

static struct pf_track *
pf_event_track(struct pf_ctx *c, struct pf_seq *s, const PfEvent *te)
{
	const PfLegacy *le = te->legacy_event;

	if (te->has_track_uuid)
		return pf_track_get(c, te->track_uuid, NULL);
	if (le && (le->has_pid_override || le->has_tid_override)) {
		int64_t pid = le->has_pid_override ? le->pid_override : s->pid;
		int64_t tid = le->has_tid_override ? le->tid_override : s->tid;

		return pf_thread_track(c, pid, tid, NULL);
	}
	if (s->has_def_track)
		return pf_track_get(c, s->def_track, NULL);
	if (s->has_thread)
		return pf_thread_track(c, s->pid, s->tid, NULL);
	return pf_track_get(c, 0, NULL);
}

/*
 * Legacy async events (phase b/e/n, S/F/T) go to a track per (id,
 * id_scope), process-scoped unless the id is a global_id, as in Perfetto's
 * legacy Chrome async tracks.
 */
static struct pf_track *
pf_async_track(struct pf_ctx *c, struct pf_track *base, const PfLegacy *le, uint32_t name)
{
	int64_t pid = 0;
	bool global = !le->has_unscoped_id && le->has_global_id, has_pid;
	uint64_t id = le->has_unscoped_id ? le->unscoped_id :
		      le->has_global_id ? le->global_id : le->local_id;
	uint64_t key = id;	/* the end of a legacy async slice carries no name */
	bool created;
	struct pf_track *t;
	const char *sc;

	for (sc = le->id_scope; sc && *sc; sc++)
		key = (key ^ (unsigned char)*sc) * 0x100000001B3ULL;
	has_pid = !global && pf_track_pid(c, base, &pid);
	t = pf_track_get(c, PF_UUID_ASYNC(has_pid ? pid : 0, key) ^ (global ? 1ULL << 56 : 0),
			 &created);
	if (created) {
		t->kind = PF_TRK_NAMED;
		t->pid = pid;
		t->has_pid = has_pid;
		t->name = tc_xasprintf("async %" PRIx64, id);
	}
	return t;
}

static void
pf_track_event(struct pf_ctx *c, struct pf_seq *s, const PfPacket *p, int64_t ts)
{
	const PfEvent *te = p->track_event;
	const PfLegacy *le = te->legacy_event;
	struct pf_argtxt at;
	struct pf_track *t;
	uint32_t name = 0, cat;
	int type = te->has_type ? te->type : PF_TE_UNSPEC;
	uint64_t v;

	if (type >= 0 && type < 5)
		c->n_type[type]++;
	/* our export writes nx.id first on every event: others pay a test */
	if (c->nx || (te->n_debug_annotations && pf_nx_name(te->debug_annotations[0]->name)))
		pf_nx_scan(c, te);
	if (type == PF_TE_UNSPEC && le && le->has_phase && le->phase > 0 && le->phase < 128)
		c->n_phase[le->phase]++;

	if (te->has_timestamp_absolute_us) {
		ts = te->timestamp_absolute_us * 1000;
	} else if (te->has_timestamp_delta_us) {
		s->legacy_ref_us += te->timestamp_delta_us;
		ts = s->legacy_ref_us * 1000;
	}
	t = pf_event_track(c, s, te);
	pf_extra_counters(c, s, te, ts);
	pf_legacy_thread_counters(c, s, t, te, ts);
	if (type == PF_TE_COUNTER) {
		double val = te->has_double_counter_value ? te->double_counter_value :
			     (double)te->counter_value;

		pf_counter_value(c, s, t->uuid, val, ts);
		return;
	}
	if (type == PF_TE_END) {
		pf_slice_end(c, t, te, ts);
		return;
	}
	if (te->name)
		name = pf_intern(c, te->name);
	else if (te->has_name_iid && pf_map_get(&s->names, te->name_iid, &v))
		name = (uint32_t)v;
	else if (le && le->has_name_iid && pf_map_get(&s->names, le->name_iid, &v))
		name = (uint32_t)v;
	cat = pf_event_cat(c, s, te);
	switch (type) {
	case PF_TE_BEGIN:
		pf_slice_begin(c, t, te, ts, name, cat, pf_args(c, s, te, &at));
		return;
	case PF_TE_INSTANT:
		pf_event_now(c, t, te, ST_EV_INSTANT, ts, 0, name, cat, pf_args(c, s, te, &at));
		return;
	}
	if (!le || !le->has_phase) {
		st_writer_count_bad(c->w, "%s: TrackEvent of type %d without a legacy phase",
				    c->name, type);
		return;
	}
	switch (le->phase) {
	case 'X':
		pf_event_now(c, t, te, ST_EV_SLICE, ts, le->duration_us * 1000, name, cat,
			     pf_args(c, s, te, &at));
		break;
	case 'B':
		pf_slice_begin(c, t, te, ts, name, cat, pf_args(c, s, te, &at));
		break;
	case 'E':
		pf_slice_end(c, t, te, ts);
		break;
	case 'b':
	case 'S':
		pf_slice_begin(c, pf_async_track(c, t, le, name), te, ts, name, cat,
			       pf_args(c, s, te, &at));
		break;
	case 'e':
	case 'F':
		pf_slice_end(c, pf_async_track(c, t, le, name), te, ts);
		break;
	case 'n':
	case 'T':
	case 'p':
		pf_event_now(c, pf_async_track(c, t, le, name), te, ST_EV_INSTANT, ts, 0, name,
			     cat, pf_args(c, s, te, &at));
		break;
	case 'i':
	case 'I':
	case 'R':
		pf_event_now(c, t, te, ST_EV_INSTANT, ts, 0, name, cat, pf_args(c, s, te, &at));
		break;
	default:
		/* object (N/O/D), metadata, sample and memory-dump phases: not
		 * timeline events, skipped like the trace processor does; counted
		 * in meta perfetto_stats. */
		break;
	}
}

static void
pf_defaults(struct pf_seq *s, const Perfetto__Protos__TracePacketDefaults *d)
{
	const Perfetto__Protos__TrackEventDefaults *te = d->track_event_defaults;

	s->def_clock = d->has_timestamp_clock_id ? d->timestamp_clock_id : 0;
	s->has_def_track = te && te->has_track_uuid;
	s->def_track = s->has_def_track ? te->track_uuid : 0;
	free(s->def_extra);
	free(s->def_dextra);
	s->def_extra = s->def_dextra = NULL;
	s->n_def_extra = s->n_def_dextra = 0;
	if (te && te->n_extra_counter_track_uuids) {
		s->n_def_extra = te->n_extra_counter_track_uuids;
		s->def_extra = tc_xmalloc(s->n_def_extra * sizeof(uint64_t));
		memcpy(s->def_extra, te->extra_counter_track_uuids, s->n_def_extra * sizeof(uint64_t));
	}
	if (te && te->n_extra_double_counter_track_uuids) {
		s->n_def_dextra = te->n_extra_double_counter_track_uuids;
		s->def_dextra = tc_xmalloc(s->n_def_dextra * sizeof(uint64_t));
		memcpy(s->def_dextra, te->extra_double_counter_track_uuids,
		       s->n_def_dextra * sizeof(uint64_t));
	}
}

/* ---- packets ---- */

static int pf_parse_mem(struct pf_ctx *c, const uint8_t *data, size_t len, uint64_t base);

static int
pf_compressed(struct pf_ctx *c, const ProtobufCBinaryData *z, uint64_t off)
{
	z_stream zs;
	uint8_t *out = NULL;
	size_t cap = z->len * 4 + 4096, len = 0;
	int zr, ret;

	if (c->depth >= PF_MAX_DEPTH)
		return tc_err_set(c->err, -EINVAL, "%s: compressed_packets nested too deep at byte %"
				  PRIu64, c->name, off);
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return tc_err_set(c->err, -ENOMEM, "%s: zlib init failed", c->name);
	zs.next_in = z->data;
	zs.avail_in = (uInt)z->len;
	do {
		if (len == cap)
			cap *= 2;
		if (cap > PF_MAX_PACKET) {
			ret = tc_err_set(c->err, -EFBIG, "%s: compressed_packets at byte %" PRIu64
					 " inflates to more than %u MiB", c->name, off,
					 PF_MAX_PACKET >> 20);
			goto out;
		}
		out = tc_xrealloc(out, cap);
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
	} while (zr == Z_OK && (zs.avail_in || !zs.avail_out));
	if (zr != Z_STREAM_END) {
		ret = tc_err_set(c->err, -EINVAL, "%s: corrupt compressed_packets at byte %" PRIu64
				 " (%s)", c->name, off, zs.msg ? zs.msg : "truncated deflate stream");
		goto out;
	}
	c->depth++;
	ret = pf_parse_mem(c, out, len, off);
	c->depth--;
out:
	inflateEnd(&zs);
	free(out);
	return ret;
}

/*
 * Handle the packet [@data, @data + @len) at byte @off, which the hand
 * decoder has seen: @dec is its result and @fast the packet when PF_DEC_OK.
 */
static int
pf_packet_decoded(struct pf_ctx *c, const uint8_t *data, size_t len, uint64_t off, int dec,
		  PfPacket *fast)
{
	PfPacket *p = NULL;
	struct pf_seq *s;
	int64_t ts;
	int ret = 0;

	/*
	 * The hand decoder takes TrackEvents and interned data; the rest
	 * (descriptors, clock snapshots, defaults, odd encodings) goes through
	 * protobuf-c.  Both allocate from an arena only (this depth's, or the
	 * batch's), so there is nothing to free but the arena.
	 */
	switch (dec) {
	case PF_DEC_OK:
		p = fast;
		break;
	case PF_DEC_SLOW:
		tc_arena_reset(&c->arena[c->depth]);
		p = perfetto__protos__trace_packet__unpack(&c->alloc[c->depth], len, data);
		break;
	}
	if (!p) {
		tc_arena_reset(&c->arena[c->depth]);
		if (!c->packets)
			return tc_err_set(c->err, -EINVAL, "%s: malformed TracePacket at byte %"
					  PRIu64 " (%zu bytes): not a Perfetto trace?",
					  c->name, off, len);
		st_writer_count_bad(c->w, "%s: malformed TracePacket at byte %" PRIu64 " skipped",
				    c->name, off);
		return 0;
	}
	c->packets++;
	s = pf_seq_get(c, p->has_trusted_packet_sequence_id ? p->trusted_packet_sequence_id : 0);
	if ((p->has_incremental_state_cleared && p->incremental_state_cleared) ||
	    (p->sequence_flags & PF_SEQ_CLEARED))
		pf_seq_reset(s);
	else if (p->has_previous_packet_dropped && p->previous_packet_dropped)
		s->valid = false;
	if (p->trace_packet_defaults)
		pf_defaults(s, p->trace_packet_defaults);
	if (p->interned_data)
		pf_interned(c, s, p->interned_data);
	if (p->clock_snapshot) {
		pf_clock_snapshot(c, s, p->clock_snapshot);
		goto out;
	}
	if (p->compressed_packets.len) {
		c->n_compressed++;
		ret = pf_compressed(c, &p->compressed_packets, off);
		goto out;
	}
	if ((p->sequence_flags & PF_SEQ_NEEDS_STATE) && !s->valid) {
		c->skipped++;
		goto out;
	}
	ts = s->last_ts;
	if (p->has_timestamp) {
		uint32_t clock = p->has_timestamp_clock_id ? p->timestamp_clock_id : s->def_clock;

		int rc = pf_to_trace(c, s, clock, p->timestamp, &ts);

		if (rc == -ENOENT) {
			st_writer_count_bad(c->w, "%s: packet at byte %" PRIu64 " uses clock %u "
					    "before any ClockSnapshot", c->name, off, clock);
			goto out;
		}
		if (rc) {
			st_writer_count_bad(c->w, "%s: packet at byte %" PRIu64 ": timestamp %" PRIu64
					    " on clock %u is out of range", c->name, off,
					    (uint64_t)p->timestamp, clock);
			goto out;
		}
		s->last_ts = ts;
	}
	if (p->process_descriptor)
		pf_process_desc(c, p->process_descriptor);
	if (p->thread_descriptor) {
		const Perfetto__Protos__ThreadDescriptor *td = p->thread_descriptor;

		s->has_thread = true;
		s->pid = td->pid;
		s->tid = td->tid;
		if (td->has_reference_timestamp_us)
			s->legacy_ref_us = td->reference_timestamp_us;
		if (td->has_reference_thread_time_us)
			s->legacy_tt_us = td->reference_thread_time_us;
		if (td->has_reference_thread_instruction_count)
			s->legacy_ic = td->reference_thread_instruction_count;
		pf_thread_track(c, td->pid, td->tid, td->thread_name);
	}
	if (p->track_descriptor)
		pf_track_desc(c, p->track_descriptor);
	if (p->track_event)
		pf_track_event(c, s, p, ts);
out:
	tc_arena_reset(&c->arena[c->depth]);
	return ret;
}

/* Decode and handle one packet (nested in compressed_packets). */
static int
pf_packet(struct pf_ctx *c, const uint8_t *data, size_t len, uint64_t off)
{
	PfPacket fast;

	return pf_packet_decoded(c, data, len, off,
				 pf_dec_packet(&c->arena[c->depth], data, len, &fast), &fast);
}

static int
pf_parse_mem(struct pf_ctx *c, const uint8_t *data, size_t len, uint64_t base)
{
	const uint8_t *p = data, *end = data + len, *pkt;
	size_t pkt_len;
	int ret;

	while (p < end) {
		long used = pf_frame(c->name, c->err, !c->depth, p, end, base, true, &pkt, &pkt_len);

		if (used < 0)
			return (int)used;
		if (pkt && (ret = pf_packet(c, pkt, pkt_len, base)) < 0)
			return ret;
		p += used;
	}
	return 0;
}

/* ---- the reader ---- */

static void
pf_ctx_free(struct pf_ctx *c)
{
	size_t i = 0;
	uint64_t k, v;

	while (pf_map_each(&c->seqs, &i, &k, &v))
		pf_seq_free((struct pf_seq *)(uintptr_t)v);
	i = 0;
	while (pf_map_each(&c->tracks, &i, &k, &v)) {
		struct pf_track *t = (struct pf_track *)(uintptr_t)v;

		while (t->nopen)
			free(t->open[--t->nopen].args);
		free(t->open);
		free(t->name);
		free(t);
	}
	i = 0;
	while (pf_map_each(&c->procs, &i, &k, &v)) {
		struct pf_proc *p = (struct pf_proc *)(uintptr_t)v;

		free(p->name);
		free(p->label);
		free(p);
	}
	pf_map_free(&c->seqs);
	pf_map_free(&c->tracks);
	pf_map_free(&c->procs);
	pf_map_free(&c->flows);
	pf_map_free(&c->lflows);
	free(c->hseq);
	free(c->edges);
	free(c->ops);
	pf_nx_free(c->nxr);
	tc_buf_free(&c->args);
	for (i = 0; i <= PF_MAX_DEPTH; i++)
		tc_arena_free(&c->arena[i]);
}

/* "flow <id>" into @label (>= 26 bytes), as snprintf would, without it. */
static void
pf_flow_label(char *label, uint64_t id)
{
	char digits[20], *p = digits + sizeof(digits);
	size_t n;

	do {
		*--p = (char)('0' + id % 10);
		id /= 10;
	} while (id);
	n = (size_t)(digits + sizeof(digits) - p);
	memcpy(label, "flow ", 5);
	memcpy(label + 5, p, n);
	label[5 + n] = '\0';
}

/* End of input: close open slices at the last timestamp, then write flow edges. */
static void
pf_finish(struct pf_ctx *c)
{
	size_t i = 0, e;
	uint64_t k, v;
	char label[40];

	while (pf_map_each(&c->tracks, &i, &k, &v)) {
		struct pf_track *t = (struct pf_track *)(uintptr_t)v;

		while (t->nopen) {
			st_writer_count_unmatched(c->w);
			pf_slice_end(c, t, NULL, c->max_ts);
		}
	}
	pf_flow_replay(c);
	for (e = 0; e < c->nedges; e++) {
		int64_t src = c->hseq[c->edges[e].src], dst = c->hseq[c->edges[e].dst];

		if (src <= 0 || dst <= 0)
			continue;
		pf_flow_label(label, c->edges[e].id);
		st_edge_add(c->w, src, dst, ST_EDGE_FLOW, label);
	}
	/* a failure leaves the writer failed, which its finish reports */
	pf_nx_resolve(c->nxr, c->hseq, c->w, c->name);
}

/* meta perfetto_stats: what the reader saw, for tests and `info`. */
static void
pf_stats_meta(struct pf_ctx *c)
{
	static const char *const types[] = { "unspecified", "slice_begin", "slice_end",
					     "instant", "counter" };
	json_t *o = json_object(), *t = json_object(), *ph = json_object();
	char key[2] = { 0 };
	char *txt;
	int i;

	json_object_set_new(o, "packets", json_integer((json_int_t)c->packets));
	json_object_set_new(o, "skipped_needs_state", json_integer((json_int_t)c->skipped));
	json_object_set_new(o, "compressed_blocks", json_integer((json_int_t)c->n_compressed));
	for (i = 0; i < 5; i++)
		json_object_set_new(t, types[i], json_integer((json_int_t)c->n_type[i]));
	json_object_set_new(o, "track_events", t);
	for (i = 1; i < 128; i++) {
		if (!c->n_phase[i])
			continue;
		key[0] = (char)i;
		json_object_set_new(ph, key, json_integer((json_int_t)c->n_phase[i]));
	}
	json_object_set_new(o, "legacy_phases", ph);
	json_object_set_new(o, "end_without_begin", json_integer((json_int_t)c->n_end_unmatched));
	json_object_set_new(o, "flow_edges", json_integer((json_int_t)c->nedges));
	txt = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	st_writer_set_meta(c->w, "perfetto_stats", txt);
	free(txt);
	json_decref(o);
}

int
ing_perfetto_read(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
		  struct tc_err *err)
{
	struct pf_ctx c;
	struct pf_ahead *ah = NULL;
	struct pf_batch *b;
	uint64_t raw_size = tc_input_raw_size(in);
	size_t i;
	char num[32];
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.w = w;
	c.opts = opts;
	c.in = in;
	c.name = tc_input_name(in);
	c.err = err;
	c.primary_clock = PF_CLOCK_BOOTTIME;
	c.max_ts = INT64_MIN;
	c.ts_offset = opts ? opts->ts_offset_ns : 0;
	for (i = 0; i <= PF_MAX_DEPTH; i++) {
		tc_arena_init(&c.arena[i], 64 << 10);
		c.alloc[i].alloc = pf_alloc;
		c.alloc[i].free = pf_nofree;
		c.alloc[i].allocator_data = &c.arena[i];
	}
	pf_map_init(&c.seqs);
	pf_map_init(&c.tracks);
	pf_map_init(&c.procs);
	pf_map_init(&c.flows);
	pf_map_init(&c.lflows);
	tc_buf_init(&c.args);
	c.fast_real = pf_args_probe();
	c.nx_id = -1;

	pf_ahead_init(&ah, in, c.name);
	while ((b = pf_ahead_next(ah))) {
		bool last = b->last;

		for (i = 0; i < b->n; i++) {
			struct pf_item *it = &b->items[i];

			ret = pf_packet_decoded(&c, it->data, it->len, it->off, it->dec, &it->pk);
			if (ret < 0)
				break;
			if (opts && opts->progress && !(c.packets & 0xffff) && raw_size &&
			    opts->progress(opts->ctx, (double)b->raw_off / (double)raw_size) < 0) {
				ret = tc_err_set(err, -ECANCELED, "%s: " ST_CANCELLED, c.name);
				break;
			}
		}
		if (ret >= 0 && b->rc < 0) {
			*err = b->err;
			ret = b->rc;
		}
		pf_ahead_done(ah, b);
		if (ret < 0)
			goto out;
		if (last)
			break;
	}
	if (!c.packets) {
		ret = tc_err_set(err, -EINVAL, "%s: empty Perfetto trace (no packets)", c.name);
		goto out;
	}
	pf_finish(&c);
	st_writer_set_meta(w, "format", "perfetto");
	snprintf(num, sizeof(num), "%" PRIu64, c.packets);
	st_writer_set_meta(w, "perfetto_packets", num);
	snprintf(num, sizeof(num), "%" PRIu64, c.skipped);
	st_writer_set_meta(w, "perfetto_skipped_packets", num);
	pf_stats_meta(&c);
out:
	pf_ahead_free(ah);
	pf_ctx_free(&c);
	return ret;
}
